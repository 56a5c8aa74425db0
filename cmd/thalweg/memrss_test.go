package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// TestRSSWithinMemoryBound holds the memory bound (membound.go) against
// the real process: a `thalweg run` of its own, built without the race
// detector (whose shadow memory would count in its RSS), reads an
// unbounded generator into a real Flight receiver (the raw anchor) and a
// real Zerobus server (a secondary), both their own processes too. Each
// peer in turn is stopped with SIGSTOP, so that its stream stalls with the
// worker's buffers full, and the worker's RSS, sampled every 100 ms, must
// stay at or below 1.2 × the bound `thalweg validate` prints. The stalls
// are checked to have reached the worst case: the secondary's queue
// overflowed (its lane and queue are full), and behind the stalled anchor
// the source stopped reading (every buffer up to it is full).
func TestRSSWithinMemoryBound(t *testing.T) {
	ctx := flighttest.Ctx(t, 2*time.Minute) // the build, if nothing is cached
	dir := t.TempDir()
	bin := filepath.Join(dir, "thalweg")
	require.NoError(t, testenv.GoBuild(ctx, bin, "", "./cmd/thalweg"))

	rawAt, zbAt, metricsAt := testenv.FreeAddr(t), testenv.FreeAddr(t), testenv.FreeAddr(t)
	peer := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGCONT)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		return cmd
	}
	recv := peer("receive", "--listen", rawAt, "--dir", filepath.Join(dir, "raw"))
	zb := peer("zerobus-server", "--listen", zbAt, "--dir", filepath.Join(dir, "zb"))

	cfgText := fmt.Sprintf(`
source:
  kind: generator
  generator: {records: 0, partitions: 4, payload_size: 1KiB}
batching: {max_bytes: 512KiB}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: %q}
  - {name: zb, kind: zerobus, role: secondary, endpoint: %q, table: main.t.events}
store: {dir: %q}
metrics: {listen: %q}
log: {format: json}
`, rawAt, zbAt, filepath.Join(dir, "offsets"), metricsAt)
	cfgPath := writeConfig(t, cfgText)
	cfg, err := config.Load(cfgPath)
	require.NoError(t, err)
	bound := memoryBound(cfg).Total

	w := startRun(t, bin, cfgPath)
	base := w.waitReady(t)

	// peakUntil samples the worker's RSS every 100 ms for at least d and,
	// while full (checked every second) is false, for up to limit: how
	// fast the stalled side fills depends on the machine, and the peak
	// that counts is the one with every buffer full.
	peakUntil := func(what string, d, limit time.Duration, full func() bool) int64 {
		var top int64
		start, checked := time.Now(), time.Now()
		filled := false
		sample := time.NewTicker(100 * time.Millisecond)
		defer sample.Stop()
		for ; ; <-sample.C {
			top = max(top, rss(t, w.cmd.Process.Pid))
			if !filled && time.Since(checked) >= time.Second {
				filled, checked = full(), time.Now()
			}
			if elapsed := time.Since(start); (filled && elapsed >= d) || elapsed >= limit {
				break
			}
		}
		t.Logf("%s: peak RSS %.1f MiB = %.2f × the bound %.1f MiB (sampled %v)", what, float64(top)/(1<<20),
			float64(top)/float64(bound), float64(bound)/(1<<20), time.Since(start).Round(time.Second))
		return top
	}
	peak := func(what string, d time.Duration) int64 { return peakUntil(what, d, d, func() bool { return true }) }
	stop := func(c *exec.Cmd) { require.NoError(t, c.Process.Signal(syscall.SIGSTOP)) }
	cont := func(c *exec.Cmd) { require.NoError(t, c.Process.Signal(syscall.SIGCONT)) }

	// A stalled secondary: the anchor keeps delivering at full speed. RSS
	// is sampled for 12 s and, past them, until the secondary's lane and
	// queue are full and it drops live batches (at most 60 s).
	dropped := func() float64 {
		_, text := httpGet(t, base+"/metrics")
		return destMetric(text, "thalweg_lane_live_dropped_total", "zb")
	}
	stop(zb)
	got := peakUntil("zerobus secondary stopped", 12*time.Second, 60*time.Second, func() bool { return dropped() > 0 })
	require.Positive(t, dropped(), "the secondary's queue never overflowed: the stall did not fill it within 60 s")
	require.LessOrEqual(t, float64(got), 1.2*float64(bound), "RSS under a stalled secondary")
	cont(zb)

	// A stalled anchor: the source stops behind its full lane. RSS is
	// sampled for 6 s and, past them, until the source has read nothing
	// for a second (at most 60 s); then for 6 s more, in which it must
	// read nothing.
	records := func() float64 {
		_, text := httpGet(t, base+"/metrics")
		return metricSum(text, "thalweg_source_records_total")
	}
	stop(recv)
	last := -1.0
	got = peakUntil("raw anchor stopped", 6*time.Second, 60*time.Second, func() bool {
		n := records()
		still := n == last
		last = n
		return still
	})
	read := records()
	got = max(got, peak("raw anchor stopped, 6 s on", 6*time.Second))
	require.Equal(t, read, records(), "the source still reads: the stalled anchor did not fill the pipeline")
	require.LessOrEqual(t, float64(got), 1.2*float64(bound), "RSS under a stalled anchor")
	cont(recv)
}

// destMetric sums family's samples of one destination.
func destMetric(text, family, dest string) float64 {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, family+"{") && strings.Contains(l, `destination="`+dest+`"`) {
			lines = append(lines, l)
		}
	}
	return metricSum(strings.Join(lines, "\n"), family)
}

// rss reads a process's resident set size from /proc (Linux).
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
