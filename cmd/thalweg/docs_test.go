package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/thalweg/thalweg/observability"
)

// docs/operations.md documents every command, every exit code and every
// metric the worker exports, under its Prometheus name.
func TestOperationsDoc(t *testing.T) {
	data, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for name := range commands() {
		if !strings.Contains(doc, "`thalweg "+name) {
			t.Errorf("operations.md does not document `thalweg %s`", name)
		}
	}
	for _, code := range []int{exitOK, exitFail, exitUsage, exitForced, exitRestart, exitAnchorFailed} {
		if !strings.Contains(doc, fmt.Sprintf("\n| %d | ", code)) {
			t.Errorf("operations.md does not document exit code %d", code)
		}
	}
	for _, in := range observability.Instruments() {
		if !strings.Contains(doc, "`"+in.Prometheus+"`") {
			t.Errorf("operations.md does not document %s (%s)", in.Prometheus, in.Name)
		}
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz", "testdata/configs/full.yaml"} {
		if !strings.Contains(doc, path) {
			t.Errorf("operations.md does not mention %s", path)
		}
	}
}

// The design is cited only as docs/design.md#<section>, every cited anchor
// exists, and no document outside the repository is cited (the patterns are
// split so that this file does not match them itself).
func TestDesignCitations(t *testing.T) {
	const root = "../.."
	design, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([a-z0-9-]+)"></a>`).FindAllStringSubmatch(string(design), -1) {
		anchors[m[1]] = true
	}
	if len(anchors) < 10 {
		t.Fatalf("docs/design.md has %d anchors, want its sections' anchors", len(anchors))
	}
	foreign := regexp.MustCompile(`A` + `DR-[0-9]|DESI` + `GN\.md|work/` + `shared`)
	cite := regexp.MustCompile(`design\.md#([a-z0-9-]+)((?:, #[a-z0-9-]+)*)`)
	local := regexp.MustCompile(`\]\(#([a-z0-9-]+)\)`)
	var cited int
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "third_party" || (strings.HasPrefix(name, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !citesChecked(path) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for i, line := range strings.Split(string(data), "\n") {
			if m := foreign.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, which is not in the repository; cite docs/design.md#<section>", rel, i+1, m)
			}
			for _, m := range cite.FindAllStringSubmatch(line, -1) {
				ids := append([]string{m[1]}, strings.Split(m[2], ", #")[1:]...)
				for _, id := range ids {
					cited++
					if !anchors[id] {
						t.Errorf("%s:%d cites docs/design.md#%s, which has no such anchor", rel, i+1, id)
					}
				}
			}
			if rel == filepath.Join("docs", "design.md") {
				for _, m := range local.FindAllStringSubmatch(line, -1) {
					if !anchors[m[1]] {
						t.Errorf("docs/design.md:%d links #%s, which has no such anchor", i+1, m[1])
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited < 15 {
		t.Errorf("found %d citations of docs/design.md; the walk is broken", cited)
	}
}

// citesChecked reports whether TestDesignCitations reads path: every text
// file a reader or operator meets (code, docs, the dashboard, manifests,
// configs, scripts), not only Go and Markdown.
func citesChecked(path string) bool {
	switch filepath.Ext(path) {
	case ".go", ".md", ".json", ".yaml", ".yml", ".sh", ".py", ".txt", ".proto":
		return true
	}
	return filepath.Base(path) == "Makefile"
}
