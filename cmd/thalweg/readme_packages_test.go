package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README's package table matches the code: every package it names
// exists, and every package of the module outside internal/ is named in it
// (in its first column, or in the row of the package it belongs to).
func TestReadmePackageTable(t *testing.T) {
	const root = "../.."
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "\n| package | owns |\n|---|---|\n")
	if !ok {
		t.Fatal("README.md has no | package | owns | table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	tick := regexp.MustCompile("`([a-z][a-z0-9/.]*)`")
	var named, mentioned []string
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(row, "|")
		if len(cells) < 4 {
			t.Fatalf("malformed table row %q", row)
		}
		for _, m := range tick.FindAllStringSubmatch(cells[1], -1) {
			named = append(named, m[1])
		}
		for _, m := range tick.FindAllStringSubmatch(cells[2], -1) {
			mentioned = append(mentioned, m[1])
		}
	}
	if len(named) < 10 {
		t.Fatalf("found %d packages in the table; the parsing is broken", len(named))
	}

	var pkgs []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		switch name := d.Name(); {
		case rel == ".":
			return nil
		case name == "internal" || name == "testdata" || name == "third_party" || rel == "deploy" || strings.HasPrefix(name, "."):
			return filepath.SkipDir
		}
		if gos, _ := filepath.Glob(filepath.Join(path, "*.go")); len(gos) > 0 {
			pkgs = append(pkgs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range named {
		dir := strings.TrimSuffix(n, "/...")
		if n != "deploy" && dir != "internal" && !slices.Contains(pkgs, dir) {
			t.Errorf("README's package table names %s, which is not a package", n)
		}
	}
	for _, p := range pkgs {
		if !slices.Contains(named, p) && !slices.Contains(mentioned, p) {
			t.Errorf("package %s is missing from README's package table", p)
		}
	}
}
