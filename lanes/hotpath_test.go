package lanes

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
)

// TestNoCommitBurstFinishedAtOnce: a NoCommit lane finishes a confirmed
// burst as a whole (one finish for its batches): one wait per burst on the
// largest offset, every slot of the burst freed, Flush woken, and a Submit
// blocked on the full lane woken by that one finish, not left waiting for
// a slot nobody frees.
func TestNoCommitBurstFinishedAtOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srv := newFakeServer()
	d := newDialer(srv, nil) // manual acks
	var (
		bmu    sync.Mutex
		bursts []int
	)
	const capacity = 8
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
	for i := 2; i <= capacity; i++ {
		if err := submit(i); err != nil {
			t.Fatal(err)
		}
	}
	// The lane is full: the next Submit blocks until a burst is finished.
	blocked := make(chan error, 1)
	go func() { blocked <- submit(capacity + 1) }()
	// Give it time to park in its wait (if it has not yet, the test only
	// checks less).
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-blocked:
		t.Fatalf("Submit on a full lane returned %v before anything was confirmed", err)
	default:
	}

	tr.ackAll() // offsets 1..capacity: bursts [1] and [2..capacity]
	select {
	case err := <-blocked:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the Submit blocked on the full lane was not woken by the finished bursts")
	}
	tr.ackAll()
	if err := l.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if l.Delivered() != capacity+1 || l.Confirmed() != capacity+1 || l.Pending() != 0 {
		t.Fatalf("delivered/confirmed/pending = %d/%d/%d, want %d/%d/0",
			l.Delivered(), l.Confirmed(), l.Pending(), capacity+1, capacity+1)
	}
	if calls := tr.waitCalls(); !slices.Equal(calls, []uint64{1, capacity, capacity + 1}) {
		t.Fatalf("WaitDurable calls %v, want [1 %d %d]: one wait per burst on its largest offset", calls, capacity, capacity+1)
	}
	bmu.Lock()
	got := slices.Clone(bursts)
	bmu.Unlock()
	if !slices.Equal(got, []int{1, capacity - 1, 1}) {
		t.Fatalf("bursts %v, want [1 %d 1]: acks not coalesced", got, capacity-1)
	}
	// Every slot is free again: a full lane's worth goes in without blocking.
	for i := capacity + 2; i <= 2*capacity+1; i++ {
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
