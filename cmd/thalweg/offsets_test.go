package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/offsetstore"
)

// storePartition is the partition makeStore commits besides gen-0 when
// asked for two.
const storePartition = "persistent://public/default/orders-partition-2"

// makeStore leaves a closed store in dir with one delivered watermark
// (gen-0 at 9), or with two (and storePartition at 9).
func makeStore(t *testing.T, dir string, two ...bool) {
	t.Helper()
	s, err := offsetstore.Open(dir, offsetstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spans := []batch.OffsetSpan{{Partition: "gen-0", First: 1, Last: 9}}
	if len(two) > 0 && two[0] {
		spans = append(spans, batch.OffsetSpan{Partition: storePartition, First: 1, Last: 9})
	}
	done := make(chan error, 1)
	s.CommitDelivered("raw", spans, func(err error) { done <- err })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// `thalweg offsets` never creates a store: a missing directory (a typo),
// an empty one, and --reset on a missing one are refused with exit 2 and
// leave nothing behind.
func TestOffsetsRefusesWhatIsNotAStore(t *testing.T) {
	root := t.TempDir()
	typo := filepath.Join(root, "offest")
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"offsets", "--store", typo}, "does not exist"},
		{[]string{"offsets", "--store", typo, "--reset", "raw", "--yes"}, "does not exist"},
		{[]string{"offsets", "--store", empty}, "holds no offset store"},
		{[]string{"offsets", "--store", empty, "--reset", "raw", "--yes"}, "holds no offset store"},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "not an offset store") {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit %d naming %q", c.args, code, stderr, stdout, exitUsage, c.want)
		}
	}
	if _, err := os.Stat(typo); !os.IsNotExist(err) {
		t.Errorf("%s was created (%v)", typo, err)
	}
	if names, _ := os.ReadDir(empty); len(names) != 0 {
		t.Errorf("files were created in %s: %v", empty, names)
	}

	// A real store still works, read-only and with --reset.
	dir := filepath.Join(root, "store")
	makeStore(t, dir, true)
	code, stdout, stderr := runCLI(t, "offsets", "--store", dir)
	if code != exitOK || !strings.Contains(stdout, "raw") || !regexp.MustCompile(`raw +`+regexp.QuoteMeta(storePartition)+` +9 `).MatchString(stdout) {
		t.Fatalf("offsets on a store: exit %d, want a row naming %s at 9\n%s\n%s", code, storePartition, stdout, stderr)
	}
	// One partition, by the name the listing shows.
	code, stdout, stderr = runCLI(t, "offsets", "--store", dir, "--reset", "raw", "--partition", storePartition, "--yes")
	if code != exitOK || strings.Contains(stdout, storePartition) || !strings.Contains(stdout, "gen-0") {
		t.Fatalf("--reset --partition on a store: exit %d, want %s gone and gen-0 kept\n%s\n%s", code, storePartition, stdout, stderr)
	}
	if code, stdout, stderr := runCLI(t, "offsets", "--store", dir, "--reset", "raw", "--yes"); code != exitOK || !strings.Contains(stdout, "reset raw") {
		t.Fatalf("--reset on a store: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// A store held by a running worker is named as locked by it, with its pid,
// instead of "resource temporarily unavailable".
func TestOffsetsNamesARunningWorker(t *testing.T) {
	flightAt := startFlight(t, receiver.Options{})
	storeDir := filepath.Join(t.TempDir(), "offsets")
	cfg := pipelineYAML{Partitions: 1, Rate: 1000, FlightAt: flightAt, StoreDir: storeDir, Metrics: "127.0.0.1:0"}.write(t)
	p := startRun(t, binary(t), cfg)
	p.waitReady(t)
	for _, args := range [][]string{{"offsets", "--store", storeDir}, {"offsets", "--store", storeDir, "--reset", "raw", "--yes"}} {
		start := time.Now()
		code, _, stderr := runCLI(t, args...)
		want := "thalweg offsets: store " + storeDir + " is locked by a running worker (pid " + strconv.Itoa(p.cmd.Process.Pid) + "); stop it first\n"
		if code != exitFail || !strings.Contains(stderr, want) || strings.Contains(stderr, "temporarily unavailable") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", args, code, stderr, exitFail, want)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%v took %v", args, d)
		}
	}
	p.signal(t, syscall.SIGTERM)
	if code := p.exitCode(t, 15*time.Second); code != exitOK {
		t.Fatalf("worker exit %d", code)
	}
}

// On a full disk `thalweg offsets` prints (read-only: it writes nothing)
// and --reset fails in bounded time instead of spinning.
func TestOffsetsOnAFullDisk(t *testing.T) {
	vol := testenv.Tmpfs(t, "2m")
	dir := filepath.Join(vol, "offsets")
	makeStore(t, dir)
	fill := filepath.Join(vol, "fill")
	testenv.Fill(t, fill)
	code, stdout, stderr := runCLI(t, "offsets", "--store", dir)
	if code != exitOK || !strings.Contains(stdout, "raw") {
		t.Fatalf("offsets on a full disk: exit %d\n%s\n%s", code, stdout, stderr)
	}
	start := time.Now()
	code, _, stderr = runCLI(t, "offsets", "--store", dir, "--reset", "raw", "--yes")
	if code != exitFail || !strings.Contains(stderr, "no space left on device") {
		t.Errorf("--reset on a full disk: exit %d, stderr %q; want exit 1 naming the full disk", code, stderr)
	}
	if d := time.Since(start); d > offsetsOpenTimeout+5*time.Second {
		t.Errorf("--reset on a full disk took %v", d)
	}
	if n := strings.Count(stderr, "\n"); n > 3 {
		t.Errorf("%d lines on stderr:\n%s", n, stderr)
	}
	// In-process, the Pebble open --reset gave up on goes on in the
	// background (a real command has exited); let it finish so that the
	// volume can be unmounted.
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "the abandoned open to let go of the store", func() bool {
		s, err := offsetstore.Open(dir, offsetstore.Options{})
		return err == nil && s.Close() == nil
	})
}
