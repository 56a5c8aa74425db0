package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// cpuTime is the user+system CPU the process has used so far.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

func lines(s string) int { return strings.Count(s, "\n") }

// cpuOver returns the CPU p uses over the next d of wall-clock time.
func cpuOver(t *testing.T, p *process, d time.Duration) time.Duration {
	t.Helper()
	cpu0 := cpuTime(t, p.cmd.Process.Pid)
	time.Sleep(d) // what is bounded is a rate (CPU, log lines): it takes a stretch of wall-clock time
	return cpuTime(t, p.cmd.Process.Pid) - cpu0
}

// TestWorkerOnAFullDisk runs `thalweg run` with its offset store on a real,
// small tmpfs. At start-up on a full volume (a WAL to replay: Pebble's
// flush retry loop) the worker serves /healthz and /readyz — not ready,
// naming the full disk — without spinning or flooding the log, and stops at
// once on SIGTERM; started again, it comes up by itself once space is
// freed. Filled while streaming, it pauses (not ready, the reason given,
// a handful of log lines) and resumes once space is back; the final
// SIGTERM is clean and every durable position is at the sink.
func TestWorkerOnAFullDisk(t *testing.T) {
	// 2 MiB: below the size Pebble preallocates a WAL file with (~4 MiB), so
	// that its writes meet the full disk at once, not only at the next WAL.
	vol := testenv.Tmpfs(t, "2m")
	bin := binary(t)
	flightAt := startFlight(t, receiver.Options{})
	storeDir := filepath.Join(vol, "offsets")
	fill := filepath.Join(vol, "fill")

	makeStore(t, storeDir) // its last commit is only in its WAL: Open must replay and flush it
	cfg := pipelineYAML{Partitions: 2, Rate: 5000, FlightAt: flightAt, StoreDir: storeDir,
		Drain: 3 * time.Second, Metrics: "127.0.0.1:0"}.write(t)

	serving := func(t *testing.T, p *process) string {
		t.Helper()
		var addr string
		testenv.WaitFor(t, 20*time.Second, "the metrics address in the log", func() bool {
			addr = logAttr(p.stderr.String(), "serving /metrics", "addr")
			return addr != ""
		})
		return "http://" + addr
	}

	t.Run("start-up on a full disk, SIGTERM", func(t *testing.T) {
		testenv.Fill(t, fill)
		defer os.Remove(fill)
		p := startRun(t, bin, cfg)
		base := serving(t, p)
		var body string
		testenv.WaitFor(t, 10*time.Second, "/readyz naming the full disk", func() bool {
			var st int
			st, body = httpGet(t, base+"/readyz")
			return st == 503 && strings.Contains(body, "offset store: no space left on device")
		})
		t.Logf("/readyz: %s", body)
		st, body := httpGet(t, base+"/healthz")
		t.Logf("/healthz: %s", body)
		if st != 200 || !strings.Contains(body, "no space left on device") {
			t.Errorf("/healthz on a full disk: %d %q, want 200 naming the condition (a restart would not help)", st, body)
		}
		lines0 := lines(p.stderr.String())
		cpu := cpuOver(t, p, 3*time.Second)
		if cpu > 600*time.Millisecond {
			t.Errorf("the worker used %v of CPU in 3 s waiting for space: a busy loop", cpu)
		}
		if n := lines(p.stderr.String()); n > 10 {
			t.Errorf("%d log lines (%d in the last 3 s) waiting for space:\n%s", n, n-lines0, p.stderr.String())
		}
		start := time.Now()
		p.signal(t, syscall.SIGTERM)
		if code := p.exitCode(t, 5*time.Second); code != exitOK {
			t.Fatalf("exit %d after SIGTERM on a full disk, want 0:\n%s", code, p.stderr.String())
		}
		t.Logf("SIGTERM → exit in %v; CPU in 3 s: %v; %d log lines", time.Since(start), cpu, lines(p.stderr.String()))
	})

	var p *process
	parent := t
	t.Run("start-up on a full disk, space freed", func(t *testing.T) {
		testenv.Fill(t, fill)
		p = startRun(parent, bin, cfg) // lives on into the next subtest
		base := serving(t, p)
		testenv.WaitFor(t, 10*time.Second, "/readyz 503 on a full disk", func() bool { return httpStatus(t, base+"/readyz") == 503 })
		if err := os.Remove(fill); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 20*time.Second, "/readyz 200 once space is back", func() bool { return httpStatus(t, base+"/readyz") == 200 })
	})
	if p == nil || t.Failed() {
		return
	}

	t.Run("full while streaming, then freed", func(t *testing.T) {
		base := "http://" + logAttr(p.stderr.String(), "serving /metrics", "addr")
		acked := func() float64 { return metricSum(httpBody(t, base+"/metrics"), "thalweg_source_acked_total") }
		streamed := func(what string) {
			t.Helper()
			from := acked()
			testenv.WaitFor(t, 20*time.Second, what, func() bool { return acked() > from })
		}
		streamed("records acknowledged before the disk fills")
		lines0 := lines(p.stderr.String())
		filled := testenv.Fill(t, fill)
		var (
			st   int
			body string
		)
		full := false
		defer func() {
			if !full {
				out, _ := exec.Command("df", vol).CombinedOutput()
				ls, _ := exec.Command("ls", "-la", storeDir).CombinedOutput()
				t.Logf("filled %d bytes; /readyz %d %q\n%s\n%s\n%s", filled, st, body, out, ls, p.stderr.String())
			}
		}()
		testenv.WaitFor(t, 20*time.Second, "/readyz naming the full disk", func() bool {
			st, body = httpGet(t, base+"/readyz")
			return st == 503 && strings.Contains(body, "no space left on device")
		})
		full = true
		t.Logf("filled %d bytes; /readyz: %s", filled, body)
		t.Logf("CPU in 3 s of a full disk while streaming: %v", cpuOver(t, p, 3*time.Second))
		if n := lines(p.stderr.String()) - lines0; n > 12 {
			t.Errorf("%d log lines during ~3 s of a full disk while streaming:\n%s", n, p.stderr.String()[len(p.stderr.String())/2:])
		}
		if err := os.Remove(fill); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 30*time.Second, "/readyz 200 once space is back", func() bool { return httpStatus(t, base+"/readyz") == 200 })
		streamed("records acknowledged once space is back")
		p.signal(t, syscall.SIGTERM)
		if code := p.exitCode(t, 10*time.Second); code != exitOK {
			t.Fatalf("exit %d after SIGTERM, want 0:\n%s", code, p.stderr.String())
		}
		delivered, _ := durable(t, storeDir, "raw")
		// makeStore's partition is not one of the generator's: only the
		// generator's two reach the receiver.
		delete(delivered, storePartition)
		if len(delivered) != 2 {
			t.Fatalf("delivered watermarks %v, want 2 partitions", delivered)
		}
		checkFlight(t, flightAt, "raw", delivered, nil)
	})
}

// An offset store that fails for good — an I/O error that is not a full
// disk, which Pebble keeps — ends `thalweg run` with exit 4 and one clear
// message, in bounded time, instead of streaming data it can never commit.
func TestRunExitsForARestartWhenTheStoreFails(t *testing.T) {
	var broken atomic.Bool
	var walWrites atomic.Int64
	testStoreFS = errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if strings.HasSuffix(op.Path, ".log") && op.Kind == errorfs.OpFileWrite {
			if broken.Load() {
				return &os.PathError{Op: "write", Path: op.Path, Err: syscall.EIO}
			}
			walWrites.Add(1)
		}
		return nil
	}))
	defer func() { testStoreFS = nil }()
	flightAt := startFlight(t, receiver.Options{})
	cfg := pipelineYAML{Partitions: 2, Rate: 5000, FlightAt: flightAt, StoreDir: filepath.Join(t.TempDir(), "offsets"),
		Drain: 3 * time.Second}.write(t)
	var c cli
	code := make(chan int, 1)
	go func() { code <- c.run(t.Context(), "run", "--config", cfg) }()
	testenv.WaitFor(t, 20*time.Second, "the pipeline to start", func() bool { return strings.Contains(c.stderr.String(), "pipeline started") })
	// The store breaks while it commits delivered positions.
	from := walWrites.Load()
	testenv.WaitFor(t, 20*time.Second, "the store writing its WAL", func() bool { return walWrites.Load() >= from+10 })
	broken.Store(true)
	select {
	case got := <-code:
		if got != exitRestart {
			t.Fatalf("exit %d, want %d; stderr:\n%s", got, exitRestart, c.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("thalweg run kept running on a failed offset store:\n%s", c.stderr.String())
	}
	logs := c.stderr.String()
	t.Logf("%d lines on stderr; the last:\n%s", strings.Count(logs, "\n"), logs[strings.LastIndex(logs[:len(logs)-1], "\n")+1:])
	for _, want := range []string{"offset store failed, restart needed (exit 4)", "input/output error"} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, logs)
		}
	}
}
