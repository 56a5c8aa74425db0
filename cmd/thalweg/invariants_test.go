package main

import (
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// invariantTests is how an item of a doc.go "# Invariants" section names
// the tests that fail without it: a parenthesis closing the item, optionally
// after other text and "; ", listing test functions. A name is TestX, a test
// of the doc.go's own package, or dir.TestX, a test in the package at dir
// (relative to the module root): "(TestA, chaos.TestB)." or
// "(see jsondec.go; TestA)".
var invariantTests = regexp.MustCompile(`\((?:[^()]*; )?((?:[a-z0-9_/]+\.)?Test\w+(?:, (?:[a-z0-9_/]+\.)?Test\w+)*)\)\.?$`)

// Every item of every doc.go's "# Invariants" section ends by naming the
// tests that fail without it, and each named test exists as a func in that
// package's _test.go files (CONTRIBUTING.md, "Tested docs").
func TestDocInvariantsNameTests(t *testing.T) {
	const root = "../.."
	facts, err := repoFactsOf(root)
	if err != nil {
		t.Fatal(err)
	}
	var sections, items int
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "third_party" || name == "testdata" || (strings.HasPrefix(name, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "doc.go" {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		list, found, err := invariants(path)
		if err != nil || !found {
			return err
		}
		sections++
		for _, item := range list {
			items++
			m := invariantTests.FindStringSubmatch(item)
			if m == nil {
				t.Errorf("%s: invariant names no test; end it with (TestX): %q", rel, item)
				continue
			}
			for _, name := range strings.Split(m[1], ", ") {
				dir := filepath.ToSlash(filepath.Dir(rel))
				if i := strings.LastIndex(name, "."); i >= 0 {
					dir, name = name[:i], name[i+1:]
				}
				if !slices.Contains(facts.tests[name], dir) {
					t.Errorf("%s: invariant names %s, which is no func in %s/*_test.go: %q", rel, name, dir, item)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d doc.go Invariants sections, %d items", sections, items)
	if sections < 10 || items < 40 {
		t.Errorf("found %d Invariants sections with %d items; the walk or the parsing is broken", sections, items)
	}
}

// invariants returns the text of each top-level list item of the
// "# Invariants" section of path's package comment, whitespace collapsed,
// and whether the comment has that section.
func invariants(path string) ([]string, bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil || f.Doc == nil {
		return nil, false, err
	}
	var p comment.Parser
	var pr comment.Printer
	var items []string
	in, found := false, false
	for _, b := range p.Parse(f.Doc.Text()).Content {
		switch b := b.(type) {
		case *comment.Heading:
			in = string(pr.Text(&comment.Doc{Content: []comment.Block{b}})) == "# Invariants\n"
			found = found || in
		case *comment.List:
			if !in {
				continue
			}
			for _, it := range b.Items {
				text := pr.Text(&comment.Doc{Content: it.Content})
				items = append(items, strings.Join(strings.Fields(string(text)), " "))
			}
		}
	}
	return items, found, nil
}
