package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GoBuild builds the packages pkgs (paths relative to the repository
// root, e.g. "./cmd/thalweg") with the build tags tags ("" for none) and
// without the race detector: into the file out for one package, into the
// directory out (which must end in a slash) for several. It uses the go
// command the test runs under (GoTool).
func GoBuild(ctx context.Context, out, tags string, pkgs ...string) error {
	args := []string{"build", "-o", out}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, pkgs...)
	cmd := exec.CommandContext(ctx, GoTool(), args...)
	cmd.Dir = RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// GoTool is the go command: $GOROOT/bin/go when `go test` set GOROOT for
// the test binary, else the one on PATH.
func GoTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

// FreeAddr is a loopback address no one listens on, for a child process
// to bind.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
