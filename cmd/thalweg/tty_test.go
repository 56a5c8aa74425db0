package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/thalweg/thalweg/flight/receiver"
)

// openPTY opens a pseudo-terminal pair: what is written to slave is read
// from master.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	return m, s
}

// On a terminal `thalweg run` redraws one live progress line in place
// (carriage return, erase line) every second; a pipe or a file gets no
// such control sequences (see TestRunStatsAndSummary for the log lines).
func TestRunProgressOnTerminal(t *testing.T) {
	master, slave := openPTY(t)
	if !isTerminal(slave) {
		t.Fatal("the pty slave is not seen as a terminal")
	}
	if f, err := os.Open(os.DevNull); err == nil {
		if isTerminal(f) {
			t.Error("/dev/null is taken for a terminal")
		}
		f.Close()
	}
	var out bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()

	flightAt := startFlight(t, receiver.Options{})
	cfg := pipelineYAML{Records: 5000, Partitions: 1, Rate: 2000, FlightAt: flightAt,
		StoreDir: filepath.Join(t.TempDir(), "offsets")}.write(t)
	env := &cliEnv{stdout: os.Stdout, stderr: slave, getenv: func(string) string { return "" }}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if code := dispatch(ctx, []string{"run", "--config", cfg}, env); code != exitOK {
		t.Errorf("run: exit %d", code)
	}
	slave.Close() // the master reads what is buffered, then EIO
	<-read
	master.Close()
	text := out.String()
	redraws := regexp.MustCompile(`\r\x1b\[K *\d+\.\ds +\d+ rec/s [^\r]*\[raw `).FindAllString(text, -1)
	if len(redraws) < 2 {
		t.Errorf("%d live progress redraws on the terminal, want >= 2 with rec/s and the lane:\n%q", len(redraws), text)
	}
	// A log line erases the progress line first instead of continuing it.
	if !strings.Contains(text, "\r\x1b[K{\"time\"") || strings.Contains(text, "]{\"time\"") || !strings.Contains(text, `"msg":"run summary"`) {
		t.Errorf("log lines do not start on an erased line:\n%q", text)
	}
}
