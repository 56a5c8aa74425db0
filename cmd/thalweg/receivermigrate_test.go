package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReceiverMigrate: `thalweg receive` refuses a directory holding a
// dataset written before record identity, naming the command; `thalweg
// receiver migrate --dir` moves it aside and says so, and receive then
// starts.
func TestReceiverMigrate(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "v1"), os.DirFS("../../flight/receiver/testdata/v1")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "receive", "--listen", "127.0.0.1:0", "--dir", dir)
	if code != exitFail || !strings.Contains(stderr, "thalweg receiver migrate --dir "+dir) {
		t.Fatalf("receive on a version 1 dataset: exit %d, stderr:\n%s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "receiver", "migrate", "--dir", dir)
	if code != exitOK || !strings.Contains(stdout, "moved version 1 dataset v1 aside") {
		t.Fatalf("receiver migrate: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	moved, err := filepath.Glob(filepath.Join(dir, "v1~*", "v1", "00000001.arrows"))
	if err != nil || len(moved) != 1 {
		t.Fatalf("moved files: %v %v", moved, err)
	}
	code, stdout, _ = runCLI(t, "receiver", "migrate", "--dir", dir)
	if code != exitOK || !strings.Contains(stdout, "nothing to migrate") {
		t.Fatalf("second migrate: exit %d, %s", code, stdout)
	}
	if code, _, stderr := runCLI(t, "receiver", "--dir", dir); code != exitUsage || !strings.Contains(stderr, "want the subcommand migrate") {
		t.Fatalf("without the subcommand: exit %d, %s", code, stderr)
	}
}
