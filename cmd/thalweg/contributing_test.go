package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// CONTRIBUTING.md points at the code that shows each rule; every file it
// names exists and every test or function it names is defined, so the
// house style cannot drift from the examples it cites.
func TestContributingPointsAtRealCode(t *testing.T) {
	const root = "../.."
	doc, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "third_party" || (strings.HasPrefix(d.Name(), ".") && path != root)) {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			src.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	code := src.String()

	var files, funcs int
	for _, m := range regexp.MustCompile("`([^`\\s]+)`").FindAllStringSubmatch(string(doc), -1) {
		ref := m[1]
		switch {
		case regexp.MustCompile(`^[a-z][a-z0-9_/]*\.(go|md)$`).MatchString(ref) || strings.HasPrefix(ref, "internal/"):
			files++
			if _, err := os.Stat(filepath.Join(root, ref)); err != nil {
				t.Errorf("CONTRIBUTING.md names %s, which does not exist", ref)
			}
		case regexp.MustCompile(`^([a-z]+\.)?(Test|Example)[A-Za-z]*$`).MatchString(ref):
			funcs++
			name := ref[strings.LastIndex(ref, ".")+1:]
			if !strings.Contains(code, "func "+name+"(") {
				t.Errorf("CONTRIBUTING.md names %s, which no Go file defines", ref)
			}
		case regexp.MustCompile(`^[a-z]+Locked$`).MatchString(ref):
			funcs++
			if !regexp.MustCompile(`func \([^)]*\) ` + ref + `\(`).MatchString(code) {
				t.Errorf("CONTRIBUTING.md names %s, which no Go file defines", ref)
			}
		}
	}
	if files < 5 || funcs < 5 {
		t.Fatalf("found %d file and %d function references; the parsing is broken", files, funcs)
	}
}
