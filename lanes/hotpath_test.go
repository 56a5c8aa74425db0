package lanes

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
)

// TestNoCommitBurstFinishedAtOnce: a NoCommit lane finishes a confirmed
// burst as a whole (one finish for its batches). Acks stay coalesced — one
// wait per burst on its largest offset — and the finish frees every slot
// of the burst and wakes Flush.
func TestNoCommitBurstFinishedAtOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDialer(newFakeServer(), nil) // manual acks
	var (
		bmu    sync.Mutex
		bursts []int
	)
	const capacity = 16
	l, err := New[NoCommit](Options{Destination: "nc", Capacity: capacity, Dial: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	l.burstHook = func(n int) { bmu.Lock(); bursts = append(bursts, n); bmu.Unlock() }
	ctx := ctxT(t)
	submit := func(i int) error {
		b := newBatch(mem, 0, uint64(i*10), uint64(i*10+9))
		defer b.Release()
		return l.Submit(ctx, b, NoCommit{})
	}
	if err := submit(1); err != nil {
		t.Fatal(err)
	}
	tr := d.nth(t, 1)
	eventually(t, "first wait", func() bool { return len(tr.waitCalls()) == 1 })
	for i := 2; i <= 10; i++ { // queued behind the wait on 1
		if err := submit(i); err != nil {
			t.Fatal(err)
		}
	}
	tr.ackAll()
	if err := l.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if l.Delivered() != 10 || l.Pending() != 0 {
		t.Fatalf("delivered/pending = %d/%d, want 10/0", l.Delivered(), l.Pending())
	}
	// The counters of a burst are added after its finish (Flush may
	// return first).
	eventually(t, "confirmed 10", func() bool { return l.Confirmed() == 10 })
	if calls := tr.waitCalls(); !slices.Equal(calls, []uint64{1, 10}) {
		t.Fatalf("WaitDurable calls %v, want [1 10]: one wait per burst on its largest offset", calls)
	}
	var got []int
	eventually(t, "two bursts", func() bool {
		bmu.Lock()
		defer bmu.Unlock()
		got = slices.Clone(bursts)
		return len(got) >= 2
	})
	if !slices.Equal(got, []int{1, 9}) {
		t.Fatalf("bursts %v, want [1 9]: acks not coalesced", got)
	}
	// Every slot is free again: a full lane's worth goes in (a slot the
	// finish kept would block the last Submit until ctx ends).
	for i := 11; i < 11+capacity; i++ {
		if err := submit(i); err != nil {
			t.Fatal(err)
		}
	}
	tr.ackAll()
	if err := l.Flush(ctx); err != nil {
		t.Fatalf("second Flush: %v", err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestNoCommitFullLaneWokenByBurst: a Submit blocked on a full NoCommit
// lane is woken by the finish of the burst that frees its slot; no wake-up
// is lost when a whole burst is finished at once.
func TestNoCommitFullLaneWokenByBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		d := newDialer(newFakeServer(), nil) // manual acks
		const capacity = 4
		l, err := New[NoCommit](Options{Destination: "nc", Capacity: capacity, Dial: d.dial})
		if err != nil {
			t.Fatal(err)
		}
		ctx := ctxT(t)
		submit := func(i int) error {
			b := newBatch(mem, 0, uint64(i*10), uint64(i*10+9))
			defer b.Release()
			return l.Submit(ctx, b, NoCommit{})
		}
		for round := range 20 {
			for i := 1; i <= capacity; i++ {
				if err := submit(round*(capacity+1) + i); err != nil {
					t.Fatal(err)
				}
			}
			// The lane is full: this Submit waits until a burst is finished.
			blocked := make(chan error, 1)
			go func() { blocked <- submit(round*(capacity+1) + capacity + 1) }()
			synctest.Wait() // it has parked in its wait
			select {
			case err := <-blocked:
				t.Fatalf("round %d: Submit on a full lane returned %v before anything was confirmed", round, err)
			default:
			}
			tr := d.nth(t, 1)
			tr.ackAll()
			select {
			case err := <-blocked:
				if err != nil {
					t.Fatal(err)
				}
			case <-ctx.Done():
				t.Fatalf("round %d: the Submit blocked on the full lane was not woken by the finished burst", round)
			}
			tr.ackAll()
			if err := l.Flush(ctx); err != nil {
				t.Fatalf("round %d: Flush: %v", round, err)
			}
		}
		if want := uint64(20 * (capacity + 1)); l.Delivered() != want || l.Pending() != 0 {
			t.Fatalf("delivered %d, pending %d, want %d, 0", l.Delivered(), l.Pending(), want)
		}
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// instantTransport accepts every batch and reports everything durable at
// once: what is left to measure is the lane's own work.
type instantTransport struct{}

func (instantTransport) Send(context.Context, uint64, *batch.Batch) error { return nil }
func (instantTransport) WaitDurable(context.Context, uint64) error        { return nil }
func (instantTransport) Close() error                                     { return nil }

// TestSubmitDoesNotAllocate: the lane's per-batch work — Submit, the ack
// task's wait and confirmation, the slot's release — allocates nothing
// once the lane is warm (its queue and burst buffer grown). The ack task
// runs concurrently; AllocsPerRun counts its allocations too.
func TestSubmitDoesNotAllocate(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	l, err := New[NoCommit](Options{
		Destination: "alloc",
		Capacity:    64,
		Dial:        func(context.Context) (Transport, error) { return instantTransport{}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	b := newBatch(mem, 0, 0, 9)
	defer b.Release()
	submit := func() {
		if err := l.Submit(ctx, b, NoCommit{}); err != nil {
			t.Fatal(err)
		}
	}
	for range 1000 { // warm up: the first dial, the queues' growth
		submit()
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// 100 batches a run, waited out without allocating (Flush would), so
	// that an allocation once per burst counts as well as one per batch.
	allocs := testing.AllocsPerRun(20, func() {
		for range 100 {
			submit()
		}
		for l.Delivered() != l.Submitted() {
			runtime.Gosched()
		}
	})
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per 100 submitted batches, want 0", allocs)
	}
}
