package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/source/gen"
)

// binary returns the path of an executable that behaves as the thalweg
// command: this test binary, re-executed with asCLI set (see TestMain).
func binary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// process is a `thalweg run` subprocess.
type process struct {
	cmd    *exec.Cmd
	stderr crashtest.LogBuffer
	done   chan struct{}
	err    error // Wait's result, valid once done is closed
}

func startRun(t *testing.T, bin, config string) *process {
	t.Helper()
	p := &process{done: make(chan struct{})}
	p.cmd = exec.Command(bin, "run", "--config", config)
	p.cmd.Stderr = &p.stderr
	p.cmd.Env = append(os.Environ(), asCLI+"=1", "GOTRACEBACK=all")
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// exitCode waits at most d for the process and returns its exit code.
func (p *process) exitCode(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("thalweg run did not exit within %v; stderr:\n%s", d, p.stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	return 0
}

// waitReady waits for the worker's /readyz to answer 200 and returns the
// metrics base URL.
func (p *process) waitReady(t *testing.T) string {
	t.Helper()
	var addr string
	testenv.WaitFor(t, 20*time.Second, "the metrics address in the log", func() bool {
		select {
		case <-p.done:
			t.Fatalf("thalweg run exited early: %v\n%s", p.err, p.stderr.String())
		default:
		}
		addr = logAttr(p.stderr.String(), "serving /metrics", "addr")
		return addr != ""
	})
	base := "http://" + addr
	testenv.WaitFor(t, 10*time.Second, "/readyz 200", func() bool { return httpStatus(t, base+"/readyz") == 200 })
	return base
}

func (p *process) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// TestSignals runs thalweg in a subprocess: the first SIGINT stops `thalweg run`
// gracefully (exit 0, everything delivered is durable at the sink), a second
// SIGINT during a slow drain forces exit 3, and what was recorded as
// delivered is at the sink either way.
func TestSignals(t *testing.T) {
	bin := binary(t)

	t.Run("graceful", func(t *testing.T) {
		flightAt := startFlight(t, receiver.Options{})
		storeDir := filepath.Join(t.TempDir(), "offsets")
		const drain = 5 * time.Second
		cfg := pipelineYAML{Partitions: 3, Rate: 5000, FlightAt: flightAt, StoreDir: storeDir,
			Drain: drain, Metrics: "127.0.0.1:0"}.write(t)
		p := startRun(t, bin, cfg)
		base := p.waitReady(t)
		if s := httpStatus(t, base+"/healthz"); s != 200 {
			t.Errorf("/healthz: %d", s)
		}
		testenv.WaitFor(t, 10*time.Second, "records of each of the 3 partitions at the sink", func() bool {
			tally, err := readFlight(flightAt, []string{"raw"}, false)
			if err != nil {
				return false // nothing delivered yet
			}
			for p := range 3 {
				if tally.Count(gen.PartitionName(p), 1) == 0 {
					return false
				}
			}
			return true
		})

		p.signal(t, syscall.SIGINT)
		if code := p.exitCode(t, drain+5*time.Second); code != exitOK {
			t.Fatalf("exit %d after one SIGINT, want %d; stderr:\n%s", code, exitOK, p.stderr.String())
		}
		logs := p.stderr.String()
		for _, want := range []string{"interrupt: shutting down gracefully", `"msg":"pipeline stopped cleanly"`} {
			if !strings.Contains(logs, want) {
				t.Errorf("stderr lacks %q:\n%s", want, logs)
			}
		}
		delivered, _ := durable(t, storeDir, "raw")
		if len(delivered) != 3 {
			t.Fatalf("delivered watermarks %v, want 3 partitions", delivered)
		}
		checkFlight(t, flightAt, "raw", delivered, nil)
	})

	t.Run("forced", func(t *testing.T) {
		// A receiver that holds every sync back makes the drain slow enough
		// for the second signal to arrive during it.
		flightAt := startFlight(t, receiver.Options{AckDelay: 2 * time.Second})
		storeDir := filepath.Join(t.TempDir(), "offsets")
		cfg := pipelineYAML{Partitions: 2, Rate: 5000, FlightAt: flightAt, StoreDir: storeDir,
			Drain: 30 * time.Second, Metrics: "127.0.0.1:0"}.write(t)
		p := startRun(t, bin, cfg)
		base := p.waitReady(t)
		// The drain has batches to wait for: the receiver holds their acks.
		testenv.WaitFor(t, 10*time.Second, "batches in flight to the receiver", func() bool {
			g := pendingGauge.FindStringSubmatch(httpBody(t, base+"/metrics"))
			return g != nil && g[1] != "0"
		})

		p.signal(t, syscall.SIGINT)
		testenv.WaitFor(t, 5*time.Second, "the graceful-shutdown notice", func() bool {
			return strings.Contains(p.stderr.String(), "shutting down gracefully")
		})
		started := time.Now()
		p.signal(t, syscall.SIGINT)
		if code := p.exitCode(t, 5*time.Second); code != exitForced {
			t.Fatalf("exit %d after a second SIGINT, want %d; stderr:\n%s", code, exitForced, p.stderr.String())
		}
		if d := time.Since(started); d > time.Second {
			t.Errorf("the forced exit took %v", d)
		}
		if !strings.Contains(p.stderr.String(), "forced exit") {
			t.Errorf("stderr lacks the forced-exit notice:\n%s", p.stderr.String())
		}
		// A forced stop loses nothing: whatever the store holds as delivered
		// is at the sink (the rest is redelivered on restart).
		delivered, _ := durable(t, storeDir, "raw")
		checkFlight(t, flightAt, "raw", delivered, nil)
	})
}
