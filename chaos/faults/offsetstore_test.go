package faults_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
)

// Fault modes of diskFaults.
const (
	faultNone int32 = iota
	faultDiskFull
	faultSyncFails
	faultSlowSync
)

// diskFaults is an errorfs injector for Pebble's WAL: ENOSPC on writes,
// EIO on syncs, or a delay before each sync, switchable at run time.
type diskFaults struct {
	mode  atomic.Int32
	delay time.Duration
	hits  atomic.Int64
}

func (d *diskFaults) String() string { return "thalweg disk faults" }

func (d *diskFaults) MaybeError(op errorfs.Op) error {
	if !strings.HasSuffix(op.Path, ".log") {
		return nil
	}
	isWrite := op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileWriteAt
	isSync := op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData || op.Kind == errorfs.OpFileSyncTo
	switch d.mode.Load() {
	case faultDiskFull:
		if isWrite {
			d.hits.Add(1)
			return fmt.Errorf("injected: %w", syscall.ENOSPC)
		}
	case faultSyncFails:
		if isSync {
			d.hits.Add(1)
			return fmt.Errorf("injected: %w", syscall.EIO)
		}
	case faultSlowSync:
		if isSync {
			d.hits.Add(1)
			time.Sleep(d.delay) // the injected fault: a sync that takes d.delay
		}
	}
	return nil
}

// ackLog records what OnDurable reported per batch index.
type ackLog struct {
	mu   sync.Mutex
	errs map[int]error
	at   map[int]time.Time
	done chan struct{} // closed when want callbacks arrived
	want int
}

func newAckLog(want int) *ackLog {
	return &ackLog{errs: map[int]error{}, at: map[int]time.Time{}, done: make(chan struct{}), want: want}
}

func (a *ackLog) token(i int) lanes.RawAnchor {
	return lanes.RawAnchor{OnDurable: func(err error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.errs[i], a.at[i] = err, time.Now()
		if len(a.errs) == a.want {
			close(a.done)
		}
	}}
}

func (a *ackLog) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-a.done:
	case <-time.After(d):
		a.mu.Lock()
		defer a.mu.Unlock()
		t.Fatalf("%d of %d OnDurable callbacks after %v", len(a.errs), a.want, d)
	}
}

// storeLane runs a raw-anchor lane to a real receiver, committing to st.
func storeLane(t *testing.T, r *flightRig, st *offsetstore.Store, dest string) *lanes.Lane[lanes.RawAnchor] {
	lane, err := lanes.New[lanes.RawAnchor](lanes.Options{
		Destination: dest, Capacity: 8, Committer: st,
		Dial: func(ctx context.Context) (lanes.Transport, error) {
			return flight.Dial(ctx, flight.Options{Endpoint: r.addr, Path: []string{dest}, Allocator: r.mem})
		},
		Backoff: lanes.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	return lane
}

func submitRange(t *testing.T, lane *lanes.Lane[lanes.RawAnchor], mem memory.Allocator, acks *ackLog, from, to int) {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	for i := from; i < to; i++ {
		b := flighttest.MakeBatch(mem, 0, uint64(i*rowsPerBatch), rowsPerBatch, 16)
		err := lane.Submit(ctx, b, acks.token(i))
		b.Release()
		if err != nil {
			t.Fatalf("Submit %d: %v", i, err)
		}
	}
}

// TestOffsetStoreDiskFullStallsThenRecovers: with the offset store's disk
// full, the store waits for space (Stalled) instead of failing; no batch
// submitted meanwhile is released upstream, and the lane stops taking
// batches once its capacity is held. When space returns the store recovers
// in the same process: every held batch is released with nil, in order, and
// the delivered watermark covers all of them.
func TestOffsetStoreDiskFullStallsThenRecovers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := newFlightRig(t, mem)
	inj := &diskFaults{}
	st, err := offsetstore.Open("/offsets", offsetstore.Options{FS: errorfs.Wrap(vfs.NewMem(), inj), TeardownTimeout: 5 * time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const dest = "raw"
	lane := storeLane(t, r, st, dest)

	healthy := newAckLog(10)
	submitRange(t, lane, mem, healthy, 0, 10)
	healthy.wait(t, 10*time.Second)

	inj.mode.Store(faultDiskFull)
	held := newAckLog(10)
	submitted := make(chan error, 1)
	go func() { // Submit blocks once the lane's capacity is held: not on the test goroutine
		ctx := ctxT(t, 30*time.Second)
		for i := 10; i < 20; i++ {
			b := flighttest.MakeBatch(mem, 0, uint64(i*rowsPerBatch), rowsPerBatch, 16)
			err := lane.Submit(ctx, b, held.token(i))
			b.Release()
			if err != nil {
				submitted <- fmt.Errorf("Submit %d: %w", i, err)
				return
			}
		}
		submitted <- nil
	}()
	testenv.WaitFor(t, 10*time.Second, "the store to stall on injected ENOSPC writes", func() bool { _, err := st.Stalled(); return err != nil })
	if _, err := st.Stalled(); !errors.Is(err, offsetstore.ErrNoSpace) {
		t.Fatalf("Stalled() = %v, want ErrNoSpace", err)
	}
	// Retries that meet the full disk again: the held batches stay held
	// across them.
	stalledAt := inj.hits.Load()
	testenv.WaitFor(t, 10*time.Second, "the stalled store to retry twice", func() bool { return inj.hits.Load() >= stalledAt+2 })
	held.mu.Lock()
	for i, err := range held.errs {
		if err == nil {
			t.Errorf("batch %d was released upstream while the disk was full", i)
		}
	}
	held.mu.Unlock()
	if st.Err() != nil {
		t.Fatalf("a full disk failed the store for good: %v", st.Err())
	}

	inj.mode.Store(faultNone)
	if err := <-submitted; err != nil {
		t.Fatal(err)
	}
	held.wait(t, 20*time.Second)
	for i := 10; i < 20; i++ {
		if err := held.errs[i]; err != nil {
			t.Fatalf("batch %d after space returned: %v", i, err)
		}
	}
	if err := lane.Close(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if d, _ := st.Delivered(dest); d[flighttest.Partition(0)].Seq != 20*rowsPerBatch-1 {
		t.Fatalf("delivered %v after recovery, want seq %d", d[flighttest.Partition(0)], 20*rowsPerBatch-1)
	}
}

// TestOffsetStoreWriteAndSyncFailures: with the offset store's syncs
// failing (an I/O error, not a full disk), no batch submitted during the
// fault is ever released upstream (OnDurable never reports nil for it), the
// store reports itself failed (what /healthz shows), and once the fault
// clears a reopened store holds at least every acknowledged position and
// works again.
func TestOffsetStoreWriteAndSyncFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode int32
	}{{"sync fails", faultSyncFails}} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			r := newFlightRig(t, mem)
			inner := vfs.NewMem()
			inj := &diskFaults{}
			st, err := offsetstore.Open("/offsets", offsetstore.Options{FS: errorfs.Wrap(inner, inj), TeardownTimeout: 5 * time.Second, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			const dest = "raw"
			lane := storeLane(t, r, st, dest)

			healthy := newAckLog(10)
			submitRange(t, lane, mem, healthy, 0, 10)
			healthy.wait(t, 10*time.Second)
			for i, err := range healthy.errs {
				if err != nil {
					t.Fatalf("healthy batch %d: %v", i, err)
				}
			}

			inj.mode.Store(tc.mode)
			faulty := newAckLog(10)
			submitRange(t, lane, mem, faulty, 10, 20)
			// Every batch of the fault window is confirmed by the receiver;
			// its commit fails, or waits behind one that failed.
			testenv.WaitFor(t, 10*time.Second, "the store to fail on injected sync errors", func() bool { return st.Err() != nil })
			if !errors.Is(st.Err(), offsetstore.ErrFailed) {
				t.Fatalf("store.Err() = %v after %d injected faults; want ErrFailed", st.Err(), inj.hits.Load())
			}
			if err := lane.Close(ctxT(t, 10*time.Second)); err != nil {
				t.Logf("lane close: %v", err)
			}
			faulty.wait(t, 5*time.Second)
			for i, err := range faulty.errs {
				if err == nil {
					t.Fatalf("batch %d was released upstream while the offset store was failing", i)
				}
			}
			_ = st.Close() // reports the failure; what matters is what reopens

			inj.mode.Store(faultNone)
			st, err = offsetstore.Open("/offsets", offsetstore.Options{FS: inner, Logger: quiet})
			if err != nil {
				t.Fatalf("reopen after the fault cleared: %v", err)
			}
			defer st.Close()
			d, err := st.Delivered(dest)
			if err != nil || d[flighttest.Partition(0)].Seq < 10*rowsPerBatch-1 {
				t.Fatalf("reopened delivered %v (%v): lost acknowledged position %d", d, err, 10*rowsPerBatch-1)
			}
			if st.Err() != nil {
				t.Fatal(st.Err())
			}
			lane = storeLane(t, r, st, dest)
			after := newAckLog(5)
			submitRange(t, lane, mem, after, 20, 25)
			after.wait(t, 10*time.Second)
			for i, err := range after.errs {
				if err != nil {
					t.Fatalf("batch %d after recovery: %v", i, err)
				}
			}
			if err := lane.Close(ctxT(t, 10*time.Second)); err != nil {
				t.Fatal(err)
			}
			if d, _ := st.Delivered(dest); d[flighttest.Partition(0)].Seq != 25*rowsPerBatch-1 {
				t.Fatalf("delivered %v after recovery, want seq %d", d[flighttest.Partition(0)], 25*rowsPerBatch-1)
			}
		})
	}
}

// TestOffsetStoreSlowSync: syncs that take 40 ms delay upstream
// acknowledgements and nothing else: every batch is released with nil, in
// order, and the store stays healthy.
func TestOffsetStoreSlowSync(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := newFlightRig(t, mem)
	inj := &diskFaults{delay: 40 * time.Millisecond}
	st, err := offsetstore.Open("/offsets", offsetstore.Options{FS: errorfs.Wrap(vfs.NewMem(), inj), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	inj.mode.Store(faultSlowSync)
	lane := storeLane(t, r, st, "raw")
	const n = 30
	acks := newAckLog(n)
	start := time.Now()
	submitRange(t, lane, mem, acks, 0, n)
	acks.wait(t, 20*time.Second)
	if err := lane.Close(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	var prev time.Time
	for i := range n {
		if acks.errs[i] != nil {
			t.Fatalf("batch %d: %v", i, acks.errs[i])
		}
		if acks.at[i].Before(prev) {
			t.Fatalf("batch %d released before batch %d", i, i-1)
		}
		prev = acks.at[i]
	}
	if first := acks.at[0].Sub(start); first < 40*time.Millisecond {
		t.Fatalf("first release after %v, before one slow sync could finish", first)
	}
	if st.Err() != nil || inj.hits.Load() == 0 {
		t.Fatalf("store err %v, slow syncs %d", st.Err(), inj.hits.Load())
	}
	t.Logf("%d batches through %d slow syncs in %v", n, inj.hits.Load(), time.Since(start))
}

// quiet discards the store's log output (the failures are expected).
var quiet = slog.New(slog.DiscardHandler)
