package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A store an older thalweg wrote (testdata/offsetstore-v1: format 1, its
// own partition ids, two destinations and two partitions, written by the
// previous release's offsetstore) is refused by `offsets` and `run` with
// exit 2 and a message naming `thalweg offsets migrate --store DIR`; the
// migration prints what it dropped, and the store then works.
func TestOffsetsMigrate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "offsets")
	if err := os.CopyFS(dir, os.DirFS("testdata/offsetstore-v1")); err != nil {
		t.Fatal(err)
	}
	want := "thalweg offsets migrate --store " + dir
	code, stdout, stderr := runCLI(t, "offsets", "--store", dir)
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Fatalf("offsets on a format-1 store: exit %d, stderr %q, stdout %q; want exit %d naming %q", code, stderr, stdout, exitUsage, want)
	}
	cfg := pipelineYAML{Partitions: 1, Records: 10, FlightAt: "127.0.0.1:1", StoreDir: dir}.write(t)
	code, _, stderr = runCLI(t, "run", "--config", cfg)
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Fatalf("run on a format-1 store: exit %d, stderr %q; want exit %d naming %q", code, stderr, exitUsage, want)
	}

	code, stdout, stderr = runCLI(t, "offsets", "migrate", "--store", dir)
	if code != exitOK || !strings.Contains(stdout, "migrated "+dir+" to offset store format 2: dropped 4 position(s) of format 1.") ||
		!strings.Contains(stdout, "takes its positions from the raw anchor") {
		t.Fatalf("offsets migrate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "offsets", "--store", dir)
	if code != exitOK || !strings.Contains(stdout, "(empty)") {
		t.Fatalf("offsets after the migration: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "offsets", "migrate", "--store", dir)
	if code != exitOK || !strings.Contains(stdout, "0 positions dropped") {
		t.Fatalf("a second migration: exit %d\n%s", code, stdout)
	}
	code, _, stderr = runCLI(t, "offsets", "migrate", "--store", filepath.Join(dir, "typo"))
	if code != exitUsage || !strings.Contains(stderr, "not an offset store") {
		t.Fatalf("migrate of a directory without a store: exit %d, %q", code, stderr)
	}
	if code, _, stderr = runCLI(t, "offsets", "migrate"); code != exitUsage || !strings.Contains(stderr, "--store is required") {
		t.Fatalf("migrate without --store: exit %d, %q", code, stderr)
	}
}
