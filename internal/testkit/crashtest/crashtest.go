// Package crashtest holds what the servers' crash tests share: a
// re-executed test binary that serves on a loopback port until it is
// killed, and a buffer for the logs they check.
//
// It stays thalweg's own: re-executing the test binary is the standard
// library's pattern (os/exec on os.Args[0]); what is shared is thalweg's
// servers' start-up and log checks.
package crashtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// LogBuffer collects a logger's (or a child process's) output. It is safe
// for concurrent use.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Lines returns the lines of a text-handler (slog) log at level ("WARN",
// "ERROR", ...): those holding level=<level>.
func (l *LogBuffer) Lines(level string) []string {
	var out []string
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, "level="+level) {
			out = append(out, line)
		}
	}
	return out
}

// ChildMain is the body of the re-executed test binary: it listens on a
// loopback port, prints "ADDR <address>" on stdout and serves with serve
// until the process is killed. A server that failed to start is passed as
// err: it is printed and the process exits 2. ChildMain never returns.
func ChildMain(serve func(net.Listener) error, err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	fmt.Printf("ADDR %s\n", lis.Addr())
	_ = serve(lis)
	os.Exit(0)
}

// StartChild re-executes the test binary with env added (which makes its
// TestMain call ChildMain), sends its stderr to stderr and returns the
// process and the address it serves on.
func StartChild(t testing.TB, env []string, stderr io.Writer) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the child did not start (see its log)")
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	require.True(t, ok, "child said %q", line)
	return cmd, addr
}
