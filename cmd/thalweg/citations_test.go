package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

// citedDocs are the documents whose citations TestProseCitations checks:
// the ones a reader or an operator of thalweg reads.
func citedDocs(root string) ([]string, error) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"README.md", "CONTRIBUTING.md", "BENCHMARKS.md"} {
		docs = append(docs, filepath.Join(root, f))
	}
	return docs, nil
}

// Every test, benchmark, file, config key, Locked method, thalweg command
// and make target that README.md, CONTRIBUTING.md, BENCHMARKS.md and
// docs/*.md cite exists (the rules are on citations), so that prose cannot
// drift from the code it points at.
func TestProseCitations(t *testing.T) {
	const root = "../.."
	facts, err := repoFactsOf(root)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := citedDocs(root)
	if err != nil {
		t.Fatal(err)
	}
	count := map[citeKind]int{}
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, doc)
		rel = filepath.ToSlash(rel)
		cites := citations(string(data))
		for _, c := range cites {
			count[c.kind]++
		}
		for _, p := range facts.check(rel, cites) {
			t.Error(p)
		}
	}
	t.Logf("citations checked: %v", count)
	for k := citeTest; k <= citeIdent; k++ {
		if count[k] < 2 {
			t.Errorf("found %d citations of kind %s; the parsing is broken", count[k], k)
		}
	}
}

// The checker reports each kind of citation that names nothing, with the
// document's line, and accepts the ones that exist.
func TestProseCitationsFlagMissing(t *testing.T) {
	type leaf struct {
		Budget int `yaml:"permanent_budget"`
	}
	type dest struct {
		Name string `yaml:"name"`
		Lane leaf   `yaml:"lane"`
	}
	facts := &repoFacts{
		tests:    map[string][]string{"TestReal": {"lanes"}, "BenchmarkSend": {"flight/receiver"}},
		funcs:    map[string]bool{"flushLocked": true},
		idents:   map[string][]string{"lanes": {"Transport", "Lane.Close"}},
		files:    map[string]bool{"lanes/lane.go": true, "docs/iceberg.md": true, "lanes": true, "docs": true},
		topLevel: map[string]bool{"lanes": true, "docs": true, "Makefile": true},
		keys: keyTree(reflect.TypeFor[struct {
			Destinations []dest `yaml:"destinations"`
		}]()),
		commands: map[string]bool{"run": true},
		targets:  map[string]bool{"test": true},
	}
	doc := strings.Join([]string{
		"`TestReal` and `lanes.TestReal`, `BenchmarkSend/rows=10` in `receiver`; `lane.go` in `lanes/lane.go:12`.",
		"`destinations[].lane.permanent_budget`, `lane.permanent_budget`, `flushLocked`, `thalweg run --config x`, `make test`",
		"[the doc](docs/iceberg.md#keys) and `lanes/...`, `lanes/*.go`, `docs/iceberg.md#keys`, `lanes.Transport`, `lanes.Lane.Close`, `time.Sleep`",
		"TestGone, `flight.TestReal`, `lanes/gone.go`, `gone.go`, `lane.budget`, `goneLocked`, `thalweg nope`, `make nope`, `docs/gone.md#x`, `lanes.Lane.Open`",
		"[gone](docs/gone.md) and `destinations.raw.delivered`, a log attribute, no key",
		"```",
		"thalweg run --config x.yaml",
		"thalweg nope2",
		"go test -bench 'BenchmarkSen' -run TestRe ./lanes/   # prefixes of names in a regexp",
		"go test -run TestGone2 ./lanes/",
		"make nope3",
		"```",
	}, "\n")
	got := facts.check("X.md", citations(doc))
	want := []string{
		"X.md:4 cites TestGone, which no _test.go declares",
		"X.md:4 cites flight.TestReal, which no _test.go in flight declares",
		"X.md:4 cites lanes/gone.go, which does not exist",
		"X.md:4 cites gone.go, which no file of the repository is called",
		"X.md:4 cites config key lane.budget, which the config schema has not",
		"X.md:4 cites goneLocked, which no Go file defines",
		"X.md:4 cites thalweg nope, which is no command of thalweg",
		"X.md:4 cites make nope, which is no target of the Makefile",
		"X.md:4 cites docs/gone.md, which does not exist",
		"X.md:4 cites lanes.Lane.Open, which package lanes does not declare",
		"X.md:5 cites docs/gone.md, which does not exist",
		"X.md:8 cites thalweg nope2, which is no command of thalweg",
		"X.md:10 cites TestGone2, which no _test.go declares",
		"X.md:11 cites make nope3, which is no target of the Makefile",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type citeKind int

const (
	citeTest    citeKind = iota // TestX, BenchmarkX, FuzzX, ExampleX, optionally dir.TestX
	citeFile                    // a repository path, a file name or a link target
	citeKey                     // a dotted config key
	citeFunc                    // a method that expects its lock held: xxxLocked
	citeCommand                 // thalweg <command>
	citeMake                    // make <target>
	citeIdent                   // pkg.Name or pkg.Type.Member of a package of the module
)

func (k citeKind) String() string {
	return [...]string{"test", "file", "config key", "Locked func", "command", "make target", "identifier"}[k]
}

// citation is one name a document cites, on its 1-based line. prefix marks
// a test name inside a code block, where it may be the start of a -run or
// -bench regular expression; link marks a Markdown link target, relative to
// the document.
type citation struct {
	kind   citeKind
	name   string
	line   int
	prefix bool
	link   bool
}

var (
	// A test function, anywhere in prose: Test, Benchmark, Fuzz or Example
	// and an upper-case letter or underscore, optionally after a package
	// directory and a dot (chaos.TestX, flight/receiver.TestX).
	citeTestRE  = regexp.MustCompile(`(?:^|[^\w./])((?:[a-z][a-z0-9_/]*\.)?(?:Test|Benchmark|Fuzz|Example)[A-Z_][A-Za-z0-9_]*)`)
	citeSpanRE  = regexp.MustCompile("`([^`]+)`")
	citeLinkRE  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	citeKeyRE   = regexp.MustCompile(`^[a-z][a-z0-9_]*(?:\[\])?(?:\.[a-z][a-z0-9_]*(?:\[\])?)+$`)
	citeFuncRE  = regexp.MustCompile(`^[a-z]\w*Locked$`)
	citeIdentRE = regexp.MustCompile(`^[a-z][a-z0-9]*\.[A-Z]\w*(?:\.[A-Z]\w*)?$`)
	testNameRE  = regexp.MustCompile(`\.(?:Test|Benchmark|Fuzz|Example)[A-Z_]`)
	citeFileRE  = regexp.MustCompile(`^[A-Za-z0-9_.*-]+(?:/[A-Za-z0-9_.*-]+)*/?$`)
	citeBaseRE  = regexp.MustCompile(`^[a-z][\w-]*\.(?:go|md|sh|py|proto|java)$`)
	citeWordRE  = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	citeLineRE  = regexp.MustCompile(`:\d+(?:-\d+)?$`)
	citeShellRE = regexp.MustCompile(`^(?:\$ )?(thalweg|make) (.*)$`)
)

// citations returns what doc (Markdown) cites:
//
//   - a test function named anywhere (TestX, BenchmarkX/sub, chaos.TestX);
//     inside a fenced code block the name may be a -run or -bench pattern
//     and only has to begin some test's name;
//   - in a code span: a path whose first element is a top-level entry of
//     the repository (lanes/lane.go, scripts/test.sh, internal/..., with an
//     optional :line or #section suffix; * globs), or a bare file name
//     (lane.go); a dotted lower-case config key (store.dir,
//     lane.permanent_budget, destinations[].tls.ca_file; a key may start
//     below the top level, a list is written with []);
//     an xxxLocked method; an exported identifier of a package of the
//     module, pkg.Name or pkg.Type.Member (a package of another module,
//     time.Sleep, is not checked); `thalweg <command> ...`;
//     `make <target> ...`;
//   - a Markdown link to a file of the repository;
//   - in a fenced code block, a line that runs thalweg or make.
//
// Which path or key is a citation is decided by check, which knows the
// repository: a dotted span whose first element is no config section, or a
// path whose first element is no top-level entry, is not a citation.
func citations(doc string) []citation {
	var out []citation
	fenced := false
	for i, line := range strings.Split(doc, "\n") {
		n := i + 1
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		for _, m := range citeTestRE.FindAllStringSubmatch(line, -1) {
			out = append(out, citation{kind: citeTest, name: m[1], line: n, prefix: fenced})
		}
		if fenced {
			if c, ok := shellCitation(strings.TrimSpace(line), n); ok {
				out = append(out, c)
			}
			continue
		}
		for _, m := range citeLinkRE.FindAllStringSubmatch(line, -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, citation{kind: citeFile, name: target, line: n, link: true})
		}
		for _, m := range citeSpanRE.FindAllStringSubmatch(line, -1) {
			span := strings.TrimSpace(m[1])
			if c, ok := shellCitation(span, n); ok {
				out = append(out, c)
				continue
			}
			if strings.ContainsAny(span, " \t") {
				continue
			}
			switch {
			case citeFuncRE.MatchString(span):
				out = append(out, citation{kind: citeFunc, name: span, line: n})
			case citeIdentRE.MatchString(span):
				if !testNameRE.MatchString(span) {
					out = append(out, citation{kind: citeIdent, name: span, line: n})
				}
			case citeKeyRE.MatchString(span) && !citeBaseRE.MatchString(span):
				out = append(out, citation{kind: citeKey, name: span, line: n})
			default:
				p, _, _ := strings.Cut(span, "#") // a section of a document
				if p = citeLineRE.ReplaceAllString(p, ""); citeFileRE.MatchString(p) {
					out = append(out, citation{kind: citeFile, name: p, line: n})
				}
			}
		}
	}
	return out
}

// shellCitation reads "thalweg <command> ..." or "make <target> ..."
// (optionally after a "$ " prompt).
func shellCitation(s string, line int) (citation, bool) {
	m := citeShellRE.FindStringSubmatch(s)
	if m == nil {
		return citation{}, false
	}
	word, _, _ := strings.Cut(m[2], " ")
	if !citeWordRE.MatchString(word) {
		return citation{}, false
	}
	if m[1] == "make" {
		return citation{kind: citeMake, name: word, line: line}, true
	}
	return citation{kind: citeCommand, name: word, line: line}, true
}

// repoFacts is what citations are checked against.
type repoFacts struct {
	tests    map[string][]string // test function -> the directories (slash-separated, from the root) declaring it
	funcs    map[string]bool     // every function and method name of the module
	idents   map[string][]string // package name -> "Name" and "Type.Member" declared by its non-test files
	files    map[string]bool     // every file and directory, slash-separated from the root
	topLevel map[string]bool     // the top-level entries a cited path may start with
	keys     *keyNode            // the config schema
	commands map[string]bool     // thalweg's commands
	targets  map[string]bool     // the Makefile's targets
}

// check returns one problem per citation of doc (a path from the root)
// that names nothing.
func (f *repoFacts) check(doc string, cites []citation) []string {
	var out []string
	bad := func(c citation, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s:%d cites %s, which ", doc, c.line, c.name)+fmt.Sprintf(format, args...))
	}
	for _, c := range cites {
		switch c.kind {
		case citeTest:
			if problem := f.checkTest(c); problem != "" {
				bad(c, "%s", problem)
			}
		case citeFile:
			if problem := f.checkFile(doc, c); problem != "" {
				bad(c, "%s", problem)
			}
		case citeKey:
			first, _, _ := strings.Cut(c.name, ".")
			if f.keys.findAll(first) == nil {
				continue // not a config section: a file name, a metric, a host name
			}
			if !f.keys.has(c.name) {
				out = append(out, fmt.Sprintf("%s:%d cites config key %s, which the config schema has not", doc, c.line, c.name))
			}
		case citeFunc:
			if !f.funcs[c.name] {
				bad(c, "no Go file defines")
			}
		case citeIdent:
			pkg, name, _ := strings.Cut(c.name, ".")
			if decls, ok := f.idents[pkg]; ok && !slices.Contains(decls, name) {
				bad(c, "package %s does not declare", pkg)
			}
		case citeCommand:
			if !f.commands[c.name] {
				out = append(out, fmt.Sprintf("%s:%d cites thalweg %s, which is no command of thalweg", doc, c.line, c.name))
			}
		case citeMake:
			if !f.targets[c.name] {
				out = append(out, fmt.Sprintf("%s:%d cites make %s, which is no target of the Makefile", doc, c.line, c.name))
			}
		}
	}
	return out
}

func (f *repoFacts) checkTest(c citation) string {
	name, _, _ := strings.Cut(c.name, "/") // a subtest or sub-benchmark
	var qual string
	if i := strings.LastIndex(name, "."); i >= 0 {
		qual, name = name[:i], name[i+1:]
	}
	matches := func(dir string) bool {
		return qual == "" || dir == qual || path.Base(dir) == qual
	}
	for fn, dirs := range f.tests {
		if fn != name && !(c.prefix && strings.HasPrefix(fn, name)) {
			continue
		}
		if slices.ContainsFunc(dirs, matches) {
			return ""
		}
	}
	if qual != "" {
		return fmt.Sprintf("no _test.go in %s declares", qual)
	}
	return "no _test.go declares"
}

func (f *repoFacts) checkFile(doc string, c citation) string {
	p := strings.TrimSuffix(strings.TrimSuffix(c.name, "/..."), "/")
	if c.link {
		p = path.Join(path.Dir(doc), p)
	} else if first, _, found := strings.Cut(p, "/"); !found || !f.topLevel[first] {
		if found || !citeBaseRE.MatchString(p) {
			return "" // not a path of this repository: /proc/self, a URL path, a user's file
		}
		for file := range f.files {
			if path.Base(file) == p {
				return ""
			}
		}
		return "no file of the repository is called"
	}
	if strings.Contains(p, "*") {
		for file := range f.files {
			if ok, _ := path.Match(p, file); ok {
				return ""
			}
		}
		return "matches no file"
	}
	if !f.files[p] {
		return "does not exist"
	}
	return ""
}

// keyNode is one key of the config schema; a nil children map with any
// set means a map of free keys (iceberg.catalog.properties.<anything>).
type keyNode struct {
	name     string
	children map[string]*keyNode
	any      bool
	list     bool // a list of sections, cited as name[]
}

// keyTree builds the schema from the yaml tags of t (slices are
// transparent; a type that contains itself is expanded once).
func keyTree(t reflect.Type) *keyNode { return keyTreeOf(t, map[reflect.Type]bool{}) }

func keyTreeOf(t reflect.Type, open map[reflect.Type]bool) *keyNode {
	n := &keyNode{children: map[string]*keyNode{}}
	for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
		n.list = n.list || t.Kind() == reflect.Slice
		t = t.Elem()
	}
	if open[t] {
		return n
	}
	open[t] = true
	defer delete(open, t)
	switch t.Kind() {
	case reflect.Map:
		n.any = true
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			c := keyTreeOf(f.Type, open)
			c.name = tag
			n.children[tag] = c
		}
	}
	return n
}

// findAll returns every node of the schema that has keys of its own and
// is called name: "x[]" for a list of sections, "x" for one section.
func (n *keyNode) findAll(name string) []*keyNode {
	var out []*keyNode
	for _, c := range n.children {
		if c.name+map[bool]string{true: "[]"}[c.list] == name && (len(c.children) > 0 || c.any) {
			out = append(out, c)
		}
		out = append(out, c.findAll(name)...)
	}
	return out
}

// has reports whether key (dotted, "[]" after a list) is a path of the
// schema, from the top or from any section called like its first element.
func (n *keyNode) has(key string) bool {
	parts := strings.Split(key, ".")
	for _, start := range n.findAll(parts[0]) {
		cur := start
		for _, p := range parts[1:] {
			if cur.any {
				break
			}
			if cur = cur.children[strings.TrimSuffix(p, "[]")]; cur == nil {
				break
			}
		}
		if cur != nil {
			return true
		}
	}
	return false
}

// addIdents records the exported names that the Go file at p (holding
// data) declares: its functions, types, constants and variables, and its
// types' methods and struct fields as Type.Member.
func (f *repoFacts) addIdents(p string, data []byte) error {
	file, err := parser.ParseFile(token.NewFileSet(), p, data, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	pkg := file.Name.Name
	add := func(name string) { f.idents[pkg] = append(f.idents[pkg], name) }
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				add(d.Name.Name)
				continue
			}
			t := d.Recv.List[0].Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			switch x := t.(type) {
			case *ast.IndexExpr:
				t = x.X
			case *ast.IndexListExpr:
				t = x.X
			}
			if id, ok := t.(*ast.Ident); ok {
				add(id.Name + "." + d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						add(n.Name)
					}
				case *ast.TypeSpec:
					add(spec.Name.Name)
					st, ok := spec.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, field := range st.Fields.List {
						for _, n := range field.Names {
							add(spec.Name.Name + "." + n.Name)
						}
					}
				}
			}
		}
	}
	return nil
}

var (
	testDeclRE = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)\w*)\(`)
	funcDeclRE = regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?(\w+)[\[(]`)
	targetRE   = regexp.MustCompile(`(?m)^([a-z][a-z0-9_-]*):`)
)

// repoFactsOf reads the facts from the repository at root: its files
// (skipping dot-directories and what .gitignore keeps out of it at the top),
// its Go declarations, the config schema, thalweg's commands and the
// Makefile's targets.
func repoFactsOf(root string) (*repoFacts, error) {
	f := &repoFacts{
		tests:    map[string][]string{},
		funcs:    map[string]bool{},
		idents:   map[string][]string{},
		files:    map[string]bool{},
		topLevel: map[string]bool{},
		keys:     keyTree(reflect.TypeFor[config.Config]()),
		commands: map[string]bool{},
		targets:  map[string]bool{},
	}
	for name := range commands() {
		f.commands[name] = true
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		return nil, err
	}
	ignored := map[string]bool{}
	for _, l := range strings.Split(string(ignore), "\n") {
		if strings.HasPrefix(l, "/") {
			ignored[strings.Trim(l, "/")] = true
		}
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") || ignored[rel] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		f.files[rel] = true
		if !strings.Contains(rel, "/") {
			f.topLevel[rel] = true
		}
		if d.IsDir() || !strings.HasSuffix(rel, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range funcDeclRE.FindAllSubmatch(data, -1) {
			f.funcs[string(m[1])] = true
		}
		if strings.HasSuffix(rel, "_test.go") {
			for _, m := range testDeclRE.FindAllSubmatch(data, -1) {
				f.tests[string(m[1])] = append(f.tests[string(m[1])], path.Dir(rel))
			}
			return nil
		}
		return f.addIdents(p, data)
	})
	if err != nil {
		return nil, err
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil, err
	}
	for _, m := range targetRE.FindAllSubmatch(mk, -1) {
		f.targets[string(m[1])] = true
	}
	return f, nil
}
