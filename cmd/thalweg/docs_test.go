package main

import (
	"fmt"
	"os"
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
	for _, code := range []int{exitOK, exitFail, exitUsage, exitForced} {
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
