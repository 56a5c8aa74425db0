package receiver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
)

const (
	childEnv    = "THALWEG_RECEIVER_CHILD_DIR"
	childSegEnv = "THALWEG_RECEIVER_CHILD_SEGMENT"
)

// runChild is the re-executed test binary: a receiver on a loopback port
// that prints its address and serves until killed.
func runChild() {
	seg, _ := strconv.ParseInt(os.Getenv(childSegEnv), 10, 64)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv, err := receiver.New(receiver.Options{Dir: os.Getenv(childEnv), SegmentSize: seg, Logger: log})
	crashtest.ChildMain(func(lis net.Listener) error { return srv.Serve(lis) }, err)
}

// streamUntil writes offsets 0,1,2,... to path over c until ctx ends or the
// stream fails, and reports every ack on acks. It returns when the stream
// is dead.
func streamUntil(ctx context.Context, t testing.TB, c arrowflight.Client, path []string, acked func(uint64)) {
	streamFrom(ctx, t, c, path, 0, acked)
}

// streamFrom is streamUntil starting at offset from.
func streamFrom(ctx context.Context, t testing.TB, c arrowflight.Client, path []string, from uint64, acked func(uint64)) {
	mem := memory.NewGoAllocator()
	stream, err := c.DoPut(ctx)
	if err != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			r, err := stream.Recv()
			if err != nil {
				return
			}
			a, err := flightwire.ParseAck(r.AppMetadata)
			if err != nil {
				t.Errorf("bad ack: %v", err)
				return
			}
			acked(a.Offset)
		}
	}()
	w := arrowflight.NewRecordWriter(stream, ipc.WithSchema(flighttest.Schema), ipc.WithAllocator(mem))
	w.SetFlightDescriptor(&arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: path})
	for o := from; ctx.Err() == nil; o++ {
		b := flighttest.MakeBatch(mem, int32(o%4), o*1000, 20+int(o%7), 200)
		err := w.WriteWithAppMetadata(b.Rec, flightwire.AppendBatchMeta(nil, o, false, b.Spans, 0, 0))
		b.Release()
		if err != nil {
			break
		}
	}
	_ = w.Close()
	wg.Wait()
}

// verifyAcked checks that every offset <= lastAck is stored exactly as sent
// and that everything stored is intact and in offset order.
func verifyAcked(t *testing.T, c arrowflight.Client, path []string, lastAck uint64) int {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	got, err := flight.ReadAll(flighttest.Ctx(t, 20*time.Second), c, path, mem)
	require.NoError(t, err)
	defer flight.ReleaseAll(got)
	require.Greater(t, len(got), int(lastAck), "acknowledged up to %d but only %d batches recovered", lastAck, len(got))
	for i, g := range got {
		require.Equal(t, uint64(i), g.OffsetID, "one stream: stored offsets are 0,1,2,...")
		want := flighttest.MakeBatch(mem, int32(g.OffsetID%4), g.OffsetID*1000, 20+int(g.OffsetID%7), 200)
		require.Equal(t, flighttest.Rows(want.Rec), flighttest.Rows(g.Rec), "offset %d", g.OffsetID)
		want.Release()
	}
	checkPositions(t, c, path, got)
	return len(got)
}

// checkPositions checks that the positions the receiver serves are, per
// partition, the highest seq of the rows it serves (read from the rows'
// seq column, flighttest.Schema), no more and no less: after a crash
// anywhere, they describe exactly what recovery kept.
func checkPositions(t *testing.T, c arrowflight.Client, path []string, got []flight.Stored) {
	t.Helper()
	want := map[string]uint64{}
	for _, g := range got {
		require.Len(t, g.Spans, 1)
		seqs := g.Rec.Column(1).(*array.Uint64)
		for i := range seqs.Len() {
			want[g.Spans[0].Partition] = max(want[g.Spans[0].Partition], seqs.Value(i))
		}
	}
	p, err := flight.Positions(flighttest.Ctx(t, 10*time.Second), c, path)
	require.NoError(t, err)
	require.Equal(t, want, p, "positions = highest seq of the rows that survived, per partition")
}

// TestSIGKILLRecoversAcknowledged runs the receiver in a child process,
// kills it with SIGKILL in the middle of a stream, restarts it on the same
// directory and checks that every acknowledged batch is served intact.
func TestSIGKILLRecoversAcknowledged(t *testing.T) {
	dir := t.TempDir()
	path := []string{"crash"}
	for round := range 3 {
		cmd, addr := startChild(t, dir, os.Stderr)

		c := flighttest.Client(t, addr)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var mu sync.Mutex
		var last uint64
		var any bool
		killAt := uint64(60 + 40*round)
		done := make(chan struct{})
		go func() {
			defer close(done)
			streamUntil(ctx, t, c, append(path, strconv.Itoa(round)), func(o uint64) {
				mu.Lock()
				defer mu.Unlock()
				last, any = o, true
				if o >= killAt && cmd.Process != nil {
					_ = cmd.Process.Signal(syscall.SIGKILL) // mid-stream: writes continue until the socket dies
				}
			})
		}()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatal("stream did not end after SIGKILL")
		}
		cancel()
		_ = cmd.Wait()
		require.True(t, any)
		require.GreaterOrEqual(t, last, killAt)

		// Restart in-process on the same directory.
		srv, raddr := flighttest.Receiver(t, receiver.Options{Dir: dir, SegmentSize: 200000})
		n := verifyAcked(t, flighttest.Client(t, raddr), append(path, strconv.Itoa(round)), last)
		t.Logf("round %d: acked through %d, recovered %d batches", round, last, n)
		require.NoError(t, srv.Stop())
	}
}

// startChild runs the receiver in a child process on dir; its stderr (the
// receiver's log) goes to logs.
func startChild(t *testing.T, dir string, logs io.Writer) (*exec.Cmd, string) {
	return crashtest.StartChild(t, []string{childEnv + "=" + dir, childSegEnv + "=200000"}, logs)
}

// TestSIGKILLRepeatedSameDataset kills the receiver process with SIGKILL
// mid-stream again and again on one dataset, each restart resuming the
// stream after the last acknowledged offset, as the worker does. Then every
// acknowledged offset must be stored intact, every stored batch must be
// exactly a batch that was sent (no batch merged with or cut into
// another), and no restart may have found anything but torn tails.
func TestSIGKILLRepeatedSameDataset(t *testing.T) {
	dir := t.TempDir()
	path := []string{"kills"}
	rng := rand.New(rand.NewPCG(14, 1))
	var next uint64 // first offset not yet acknowledged
	logs := &crashtest.LogBuffer{}
	for round := range 6 {
		cmd, addr := startChild(t, dir, logs)
		c := flighttest.Client(t, addr)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		killAt := next + 20 + uint64(rng.IntN(60))
		var (
			mu      sync.Mutex
			lastAck = int64(next) - 1
			killing bool
		)
		done := make(chan struct{})
		go func() {
			defer close(done)
			streamFrom(ctx, t, c, path, next, func(o uint64) {
				mu.Lock()
				defer mu.Unlock()
				lastAck = int64(o)
				if o >= killAt && !killing {
					// A little later, so that the kill lands anywhere in
					// the committer's write-sync cycle.
					killing = true
					time.AfterFunc(time.Duration(rng.IntN(3000))*time.Microsecond, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
				}
			})
		}()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatal("stream did not end after SIGKILL")
		}
		cancel()
		_ = cmd.Wait()
		require.GreaterOrEqual(t, lastAck, int64(killAt), "round %d", round)
		t.Logf("round %d: offsets %d..%d acknowledged, killed", round, next, lastAck)
		next = uint64(lastAck) + 1
	}
	require.NotContains(t, logs.String(), "level=ERROR", "a SIGKILL leaves only torn tails")
	t.Logf("restarts trimmed %d torn segment tails and rebuilt %d indexes behind their segments",
		strings.Count(logs.String(), "trimming a torn tail"), strings.Count(logs.String(), "rebuilt it from the segment"))

	log, startLog := newLog()
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: dir, SegmentSize: 200000, Logger: log})
	require.NotContains(t, startLog.String(), "level=ERROR")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	got, err := flight.ReadAll(flighttest.Ctx(t, 20*time.Second), flighttest.Client(t, addr), path, mem)
	require.NoError(t, err)
	defer flight.ReleaseAll(got)
	seen := make(map[uint64]int)
	for _, g := range got {
		want := flighttest.MakeBatch(mem, int32(g.OffsetID%4), g.OffsetID*1000, 20+int(g.OffsetID%7), 200)
		require.Equal(t, flighttest.Rows(want.Rec), flighttest.Rows(g.Rec), "position %d (offset %d) is not the batch sent", g.Position, g.OffsetID)
		require.Equal(t, want.Spans, g.Spans, "position %d", g.Position)
		want.Release()
		seen[g.OffsetID]++
	}
	for o := range next {
		require.Positive(t, seen[o], "acknowledged offset %d is not stored", o)
	}
	checkPositions(t, flighttest.Client(t, addr), path, got)
	t.Logf("%d offsets acknowledged over 6 kills, %d batches stored (%d unacknowledged ones stored before a kill, then resent)",
		next, len(got), len(got)-int(next))
}

// TestCrashCloneRecovers crashes an in-memory file system at random points
// of a stream, keeping a random share of unsynced blocks (the others read
// as zeros), and checks that recovery serves every acknowledged batch and
// nothing corrupt, reports no corruption, and leaves files that the next
// restart accepts silently.
func TestCrashCloneRecovers(t *testing.T) {
	for seed := range 16 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			opts := receiver.Options{Dir: "/data", FS: fs, SegmentSize: 100000}
			srv, addr := flighttest.Receiver(t, opts)
			c := flighttest.Client(t, addr)
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			crashAt := uint64(20 + rng.IntN(150))

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var (
				mu    sync.Mutex
				last  uint64
				clone *vfs.MemFS
			)
			streamUntil(ctx, t, c, []string{"mem"}, func(o uint64) {
				mu.Lock()
				defer mu.Unlock()
				last = o
				if o >= crashAt && clone == nil {
					clone = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(100), RNG: rand.New(rand.NewPCG(uint64(seed), 9))})
					cancel()
				}
			})
			require.NotNil(t, clone)
			require.NoError(t, srv.Stop())

			opts.FS = clone
			log, logs := newLog()
			opts.Logger = log
			srv, raddr := flighttest.Receiver(t, opts)
			verifyAcked(t, flighttest.Client(t, raddr), []string{"mem"}, crashAt)
			require.NotContains(t, logs.String(), "level=ERROR", "a crash is not corruption")
			require.NoError(t, srv.Stop())
			log, logs = newLog()
			opts.Logger = log
			_, raddr = flighttest.Receiver(t, opts)
			verifyAcked(t, flighttest.Client(t, raddr), []string{"mem"}, crashAt)
			require.Empty(t, logs.String(), "the first restart left consistent files")
			_ = last
		})
	}
}

// TestTornTailDiscarded appends garbage to the last segment and a partial
// index frame, as a crash during a write would, and checks that restart
// keeps every complete batch and cuts the files back.
func TestTornTailDiscarded(t *testing.T) {
	dir := t.TempDir()
	opts := receiver.Options{Dir: dir}
	srv, addr := flighttest.Receiver(t, opts)
	c := flighttest.Client(t, addr)
	ctx, cancel := context.WithCancel(context.Background())
	streamUntil(ctx, t, c, []string{"torn"}, func(o uint64) {
		if o >= 30 {
			cancel()
		}
	})
	require.NoError(t, srv.Stop())

	segs, err := filepath.Glob(filepath.Join(dir, "torn", "*.arrows"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	seg := segs[0]
	idx := strings.TrimSuffix(seg, ".arrows") + ".idx"
	segSize, idxSize := fileSize(t, seg), fileSize(t, idx)
	appendBytes(t, seg, []byte{0xff, 0xff, 0xff, 0xff, 0x10, 0, 0, 0, 1, 2, 3})
	appendBytes(t, idx, []byte{40, 0, 0, 0, 1, 2})

	_, addr = flighttest.Receiver(t, opts)
	n := verifyAcked(t, flighttest.Client(t, addr), []string{"torn"}, 30)
	require.Equal(t, segSize, fileSize(t, seg), "torn segment tail cut")
	require.Equal(t, idxSize, fileSize(t, idx), "torn index tail cut")
	require.GreaterOrEqual(t, n, 31)
}

func fileSize(t *testing.T, name string) int64 {
	st, err := os.Stat(name)
	require.NoError(t, err)
	return st.Size()
}

func appendBytes(t *testing.T, name string, b []byte) {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(b)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestSIGKILLOrderedNoDuplicates kills the receiver process with SIGKILL
// mid-stream again and again while a worker streams ordered batches, each
// restart replaying from an earlier point than the last acknowledgement
// (a worker that lost its offset store replays from the start): at the
// end every acknowledged row is stored, and no row is stored twice.
func TestSIGKILLOrderedNoDuplicates(t *testing.T) {
	dir := t.TempDir()
	path := []string{"ordered-kills"}
	rng := rand.New(rand.NewPCG(21, 3))
	var next uint64 // first batch not yet acknowledged
	for round := range 5 {
		cmd, addr := startChild(t, dir, io.Discard)
		c := flighttest.Client(t, addr)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		from := uint64(0)
		if round%2 == 1 && next > 0 {
			from = uint64(rng.IntN(int(next))) // a stale store
		}
		killAt := next + 20 + uint64(rng.IntN(40))
		var (
			mu      sync.Mutex
			acked   = next
			killing bool
		)
		orderedStream(ctx, t, c, path, from, 1<<20, func(o uint64) {
			mu.Lock()
			defer mu.Unlock()
			acked = max(acked, o) // offset o covers batches < o
			if o >= killAt && !killing {
				killing = true
				time.AfterFunc(time.Duration(rng.IntN(3000))*time.Microsecond, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
			}
		})
		cancel()
		_ = cmd.Wait()
		mu.Lock()
		require.GreaterOrEqual(t, acked, killAt, "round %d", round)
		t.Logf("round %d: replayed from batch %d, batches < %d acknowledged, killed", round, from, acked)
		next = acked
		mu.Unlock()
	}
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: dir, SegmentSize: 200000})
	stored := storedRows(t, addr, path)
	seen := map[string]int{}
	for _, r := range stored {
		seen[r]++
		require.Equal(t, 1, seen[r], "row %s stored twice", r)
	}
	for o := range next {
		for _, r := range orderedBatch(o) {
			require.Equal(t, 1, seen[r.String()], "acknowledged row %v", r)
		}
	}
	p := positionsOf(t, addr, path)
	for _, r := range orderedBatch(next - 1) {
		require.GreaterOrEqual(t, p[r.name()], r.seq)
	}
	t.Logf("%d batches acknowledged over 5 kills, %d rows stored once each", next, len(stored))
}
