package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Tmpfs mounts a tmpfs of the given size (e.g. "8m") on a fresh directory
// and unmounts it at cleanup: a real small volume that full-disk tests can
// fill. It needs root (mount); without it the test skips, or fails under
// THALWEG_REQUIRE_PEERS=1.
func Tmpfs(t testing.TB, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vol")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput()
	if err != nil {
		missing(t, fmt.Sprintf("a tmpfs mount (root; mount said %v: %s)", err, out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// Fill writes path until the volume is full (ENOSPC) and returns the
// number of bytes written.
func Fill(t testing.TB, path string) int64 {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	var n int64
	for {
		w, err := f.Write(buf)
		n += int64(w)
		if err != nil {
			return n
		}
	}
}
