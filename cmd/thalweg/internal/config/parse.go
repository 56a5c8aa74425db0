package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// Load reads the file at path and parses it with the process environment
// (see Parse). Problems come back as an *Error whose File is path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg, err := Parse(data, os.LookupEnv)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.File = path
		}
		return nil, err
	}
	cfg.file = path
	return cfg, nil
}

// Parse interpolates, strictly decodes and validates one YAML document (see
// the package documentation). lookupEnv resolves ${VAR} references; nil
// means os.LookupEnv. A nil error means the returned Config has its
// defaults filled in and passes Validate; otherwise the error is an *Error
// listing every problem of the first step that failed. Interpolation
// problems do not stop the later steps: the failed reference is left out
// and their problems are listed too, except those on the same line.
func Parse(data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	text, interp := interpolate(data, lookupEnv)
	cfg, err := parseText(text)
	if len(interp) == 0 {
		return cfg, err
	}
	if len(interp) > maxProblems { // capped already: nothing more helps
		return nil, &Error{Problems: interp}
	}
	// A failed reference was left out of the text; report it together with
	// every other problem, except those on the lines of failed references
	// (a value left empty there is not a second problem).
	bad := map[int]bool{}
	for _, p := range interp {
		bad[p.Line] = true
	}
	problems := interp
	var e *Error
	if errors.As(err, &e) {
		for _, p := range e.Problems {
			if p.Line == 0 || !bad[p.Line] {
				problems = append(problems, p)
			}
		}
	}
	sortByLine(problems)
	if n := len(problems) - maxProblems; n > 0 {
		problems = append(problems[:maxProblems], &FieldError{Msg: fmt.Sprintf("… and %d more problems", n)})
	}
	return nil, &Error{Problems: problems}
}

// parseText is Parse after interpolation.
func parseText(text []byte) (*Config, error) {
	root, err := parseNode(text)
	if err != nil {
		return nil, err
	}
	w := walker{lines: map[string]int{}, present: map[string]bool{}, budget: maxNodes}
	w.walk(root, configType, "", 0)
	if w.fatal {
		return nil, &Error{Problems: w.problems}
	}

	// Decode even when the walk found problems: yaml.v3 skips the values it
	// cannot decode (they keep their defaults) and decodes the rest, so that
	// validation can report its problems in the same round.
	cfg := Default()
	dec := yaml.NewDecoder(bytes.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && len(w.problems) == 0 {
		// The walk rejects everything the decoder rejects; this guards
		// against the two drifting apart and is not an expected path.
		return nil, yamlError(err)
	}
	cfg.lines, cfg.present = w.lines, w.present
	cfg.applyDefaults(func(p string) bool { return w.present[p] })
	verr := cfg.Validate()
	if len(w.problems) == 0 {
		if verr != nil {
			return nil, verr
		}
		return cfg, nil
	}
	// Merge, leaving out validation problems at or below a path the walk
	// already reported (a mapping written as a list is not also "required").
	problems := w.problems
	var ve *Error
	if errors.As(verr, &ve) {
		for _, p := range ve.Problems {
			if !w.reported(p.Path) {
				problems = append(problems, p)
			}
		}
	}
	sortByLine(problems)
	return nil, &Error{Problems: problems}
}

// parseNode returns the root value node of the single document in text.
func parseNode(text []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Problems: []*FieldError{{Msg: "configuration is empty"}}}
		}
		return nil, syntaxError(text, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(text, err)
	default:
		return nil, &Error{Problems: []*FieldError{{Line: extra.Line, Msg: "more than one YAML document; a configuration is a single document"}}}
	}
	if len(doc.Content) != 1 || doc.Content[0].ShortTag() == "!!null" {
		return nil, &Error{Problems: []*FieldError{{Line: doc.Line, Msg: "configuration is empty"}}}
	}
	return doc.Content[0], nil
}

// syntaxError is yamlError for a document that does not parse, with the
// line corrected. yaml.v3 reports a parser error at the line where the
// enclosing block starts (its "context"), not where the problem is: a key
// indented wrongly on line 6 inside a mapping opened on line 1 is reported
// at line 1. The parser reads the text front to back, so the first line at
// which a prefix of the document fails with the same message is where the
// problem is; it is found by bisection between the reported line and the
// end (a prefix that ends early may fail differently, e.g. an unclosed
// flow mapping, which is why the message must match).
func syntaxError(text []byte, err error) error {
	e := yamlError(err)
	var ye *Error
	if !errors.As(e, &ye) || len(ye.Problems) != 1 || ye.Problems[0].Line == 0 {
		return e
	}
	p := ye.Problems[0]
	ends := lineEnds(text)
	failsAt := func(n int) bool { // does the prefix of n lines fail with p.Msg?
		var node yaml.Node
		perr := yaml.Unmarshal(text[:ends[n-1]], &node)
		if perr == nil {
			return false
		}
		var pe *Error
		return errors.As(yamlError(perr), &pe) && len(pe.Problems) == 1 && pe.Problems[0].Msg == p.Msg
	}
	lo, hi := p.Line, len(ends) // the problem is on a line in [lo, hi]
	if lo > hi || !failsAt(hi) {
		return e
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if failsAt(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	p.Line = lo
	return e
}

// lineEnds returns, for each line of text, the offset just past it.
func lineEnds(text []byte) []int {
	var ends []int
	for i, c := range text {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(text) > 0 && text[len(text)-1] != '\n' {
		ends = append(ends, len(text))
	}
	return ends
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError turns a yaml.v3 error into an *Error, lifting "line N:" out of
// each message so that Load can prefix the file name.
func yamlError(err error) error {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	e := &Error{}
	for _, m := range msgs {
		fe := &FieldError{Msg: strings.TrimPrefix(m, "yaml: ")}
		if sm := yamlLineRE.FindStringSubmatch(m); sm != nil {
			fe.Line, _ = strconv.Atoi(sm[1])
			fe.Msg = sm[2]
		}
		e.Problems = append(e.Problems, fe)
	}
	return e
}

// maxNodes bounds the nodes the walk visits, counting every expansion of an
// alias, so that an alias bomb costs an error instead of the machine.
const maxNodes = 100_000

// maxDepth bounds the nesting the walk follows.
const maxDepth = 100

var (
	configType   = reflect.TypeFor[Config]()
	durationType = reflect.TypeFor[time.Duration]()
	byteSizeType = reflect.TypeFor[ByteSize]()
)

// walker checks a node tree against a Go type the way the yaml.v3 decoder
// will read it, but reports each problem with its field path, and records
// where every field was written.
type walker struct {
	lines    map[string]int  // path → line of its key or list element
	present  map[string]bool // path written with a non-null value
	problems []*FieldError
	budget   int
	fatal    bool // the walk stopped early; decoding must not be attempted
}

// reported reports whether the walk reported path or one of its ancestors
// (the empty path is the document itself).
func (w *walker) reported(path string) bool {
	for _, p := range w.problems {
		if p.Path == "" || p.Path == path || (p.Path != "" && strings.HasPrefix(path, p.Path) &&
			(path[len(p.Path)] == '.' || path[len(p.Path)] == '[')) {
			return true
		}
	}
	return false
}

func (w *walker) addf(n *yaml.Node, path, format string, args ...any) {
	if len(w.problems) == maxProblems {
		// Stop: the decoder's duplicate-key check is quadratic, so a
		// document this broken is not worth decoding.
		w.problems = append(w.problems, &FieldError{Line: n.Line, Msg: fmt.Sprintf("more than %d problems; stopped here", maxProblems)})
		w.budget, w.fatal = 0, true
		return
	}
	w.problems = append(w.problems, &FieldError{Path: path, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
}

func (w *walker) walk(n *yaml.Node, t reflect.Type, path string, depth int) {
	n = w.resolve(n)
	if n == nil {
		return
	}
	if depth > maxDepth {
		w.addf(n, path, "nested deeper than %d levels", maxDepth)
		w.budget, w.fatal = 0, true // one message is enough
		return
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return // null keeps the default
	}
	switch {
	case t == durationType:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
			w.addf(n, path, "want a duration with a unit such as 100ms, 30s or 1m30s, got %s", describe(n))
			return
		}
		if _, err := time.ParseDuration(n.Value); err != nil {
			w.addf(n, path, "want a duration with a unit such as 100ms, 30s or 1m30s, got %q", clip(n.Value))
		}
		return
	case t == byteSizeType:
		if _, err := byteSizeFromNode(n); err != nil {
			w.addf(n, path, "%v", err)
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		w.walk(n, t.Elem(), path, depth)
	case reflect.Struct:
		w.walkStruct(n, t, path, depth)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			w.addf(n, path, "want a list, got %s", describe(n))
			return
		}
		for i, item := range n.Content {
			p := indexPath(path, i)
			w.lines[p] = item.Line
			if !isNull(w.peek(item)) {
				w.present[p] = true
			}
			w.walk(item, t.Elem(), p, depth+1)
		}
	case reflect.Map: // string keys (metrics.otlp.headers)
		if n.Kind != yaml.MappingNode {
			w.addf(n, path, "want a mapping, got %s", describe(n))
			return
		}
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := w.resolve(n.Content[i]), n.Content[i+1]
			if k == nil {
				return
			}
			if k.ShortTag() == "!!merge" {
				w.addf(k, path, "want a key, got %s", describe(k))
				continue
			}
			p, ok := w.key(k, path, seen)
			if !ok {
				continue
			}
			w.enter(p, k, v)
			w.walk(v, t.Elem(), p, depth+1)
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			w.addf(n, path, "want a string, got %s", describe(n))
		}
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
			w.addf(n, path, "want true or false, got %s", describe(n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		// The decoder would truncate 1.5 to 1; only integers are accepted.
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			w.addf(n, path, "want an integer, got %s", describe(n))
			return
		}
		if n.Decode(reflect.New(t).Interface()) != nil {
			w.addf(n, path, "integer %s is out of range", clip(n.Value))
		}
	case reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") ||
			n.Decode(reflect.New(t).Interface()) != nil {
			w.addf(n, path, "want a number, got %s", describe(n))
		}
	default:
		// Every field type of Config is handled above; a new one must be too.
		panic(fmt.Sprintf("config: walker has no rule for %v at %s", t, path))
	}
}

func (w *walker) walkStruct(n *yaml.Node, t reflect.Type, path string, depth int) {
	if n.Kind != yaml.MappingNode {
		w.addf(n, path, "want a mapping, got %s", describe(n))
		return
	}
	fields := structFields(t)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := w.resolve(n.Content[i]), n.Content[i+1]
		if k == nil {
			return
		}
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
			w.walkMerge(v, t, path, depth+1)
			continue
		}
		p, ok := w.key(k, path, seen)
		if !ok {
			continue
		}
		f, ok := fields.byName[k.Value]
		if !ok {
			w.addf(k, p, "%s", unknownKeyMsg(k.Value, fields))
			continue
		}
		w.enter(p, k, v)
		w.walk(v, f.Type, p, depth+1)
	}
}

// key checks one mapping key k under path (a scalar, not seen before in
// this mapping) and returns the field path it names.
func (w *walker) key(k *yaml.Node, path string, seen map[string]int) (string, bool) {
	if k.Kind != yaml.ScalarNode {
		w.addf(k, path, "want a key, got %s", describe(k))
		return "", false
	}
	p := joinPath(path, k.Value)
	if first, dup := seen[k.Value]; dup {
		w.addf(k, p, "duplicate key (first written on line %d)", first)
		return "", false
	}
	seen[k.Value] = k.Line
	return p, true
}

// enter records the line of the key at path p and whether its value v is written.
func (w *walker) enter(p string, k, v *yaml.Node) {
	w.lines[p] = k.Line
	if !isNull(w.peek(v)) {
		w.present[p] = true
	}
}

// walkMerge walks the mapping(s) of a YAML merge key (<<: *anchor) into the
// same struct, as the decoder merges them.
func (w *walker) walkMerge(v *yaml.Node, t reflect.Type, path string, depth int) {
	v = w.resolve(v)
	if v == nil {
		return
	}
	if depth > maxDepth {
		w.addf(v, path, "merge (<<) nested deeper than %d levels", maxDepth)
		w.budget, w.fatal = 0, true
		return
	}
	switch v.Kind {
	case yaml.MappingNode:
		w.walkStruct(v, t, path, depth)
	case yaml.SequenceNode:
		for _, m := range v.Content {
			if m = w.resolve(m); m != nil && m.Kind == yaml.MappingNode {
				w.walkStruct(m, t, path, depth)
			} else if m != nil {
				w.addf(m, path, "merge (<<) wants mappings, got %s", describe(m))
			}
		}
	default:
		w.addf(v, path, "merge (<<) wants a mapping or a list of mappings, got %s", describe(v))
	}
}

// resolve follows aliases and charges the node budget; nil means stop.
func (w *walker) resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	if n == nil || n.Kind == yaml.AliasNode {
		return nil
	}
	w.budget--
	if w.budget == 0 {
		w.addf(n, "", "document too large: more than %d nodes after alias expansion", maxNodes)
		w.fatal = true
	}
	if w.budget <= 0 {
		return nil
	}
	return n
}

// peek follows aliases without charging the budget.
func (w *walker) peek(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe names what a node is, quoting scalars (clipped).
func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return strconv.Quote(clip(n.Value))
	}
	return "a " + kindName(n)
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	default:
		return "document"
	}
}

type fieldSet struct {
	byName map[string]reflect.StructField
	names  []string // in declaration order
}

var fieldSets sync.Map // reflect.Type → *fieldSet

func structFields(t reflect.Type) *fieldSet {
	if fs, ok := fieldSets.Load(t); ok {
		return fs.(*fieldSet)
	}
	fs := &fieldSet{byName: map[string]reflect.StructField{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		fs.byName[name] = f
		fs.names = append(fs.names, name)
	}
	actual, _ := fieldSets.LoadOrStore(t, fs)
	return actual.(*fieldSet)
}

func unknownKeyMsg(key string, fs *fieldSet) string {
	if _, ok := fs.byName["token_env"]; ok && isSecretKey(key) {
		hint := "token_env (the name of an environment variable that holds it)"
		if _, ok := fs.byName["token_file"]; ok {
			hint += " or token_file (a file that holds it)"
		}
		return "literal secrets are not accepted in the configuration; use " + hint
	}
	// Suggest the nearest key when it is a plausible typo: at most two
	// edits, and fewer than half the key's length.
	best, bestD := "", 3
	for _, name := range fs.names {
		if d := editDistance(key, name); d < bestD && d < len(key)/2 {
			best, bestD = name, d
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown key %q, did you mean %q?", clip(key), best)
	}
	sorted := append([]string(nil), fs.names...)
	sort.Strings(sorted)
	return fmt.Sprintf("unknown key %q (want one of %s)", clip(key), strings.Join(sorted, ", "))
}

func isSecretKey(k string) bool {
	switch strings.ToLower(k) {
	case "token", "password", "secret", "api_key", "apikey":
		return true
	}
	return false
}

// editDistance is the Levenshtein distance of two short keys.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
