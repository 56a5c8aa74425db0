package iceberg_test

import (
	"errors"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	iceio "github.com/apache/iceberg-go/io"

	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// gatedFS holds the creation of every data file the Sink writes (an
// encoder's first step for a batch after a commit) until gate is closed,
// or fails it with err; entered receives once per data file asked.
type gate struct {
	open    chan struct{}
	entered chan string
	err     error
}

type gatedFS struct {
	iceio.WriteFileIO
	*gate
}

func (g gatedFS) Create(name string) (iceio.FileWriter, error) {
	if strings.HasPrefix(path.Base(name), "thalweg-") {
		select {
		case g.entered <- name:
		default:
		}
		if g.err != nil {
			return nil, g.err
		}
		<-g.open
	}
	return g.WriteFileIO.Create(name)
}

func gated(o iceberg.Options, err error) (iceberg.Options, *gate) {
	g := &gate{open: make(chan struct{}), entered: make(chan string, 16), err: err}
	return iceberg.WithFSHook(o, func(fs iceio.IO) iceio.IO {
		return gatedFS{WriteFileIO: fs.(iceio.WriteFileIO), gate: g}
	}), g
}

// TestWriterQueuesInOrder: the Sink's encoders write batches at once,
// each into a data file of its own; Send returns while they are busy,
// until QueueDepth batches wait beside the ones being written; WaitDurable
// does not return before the batches' files are written and committed;
// the rows are stored once, in offset order.
func TestWriterQueuesInOrder(t *testing.T) {
	o, g := gated(sqlOptions(t), nil)
	ctx, mem, tbl, s := newSink(t, o)
	// The first batch creates the table (in Send); each encoder's batch
	// its data file, held by the gate.
	n := uint64(iceberg.QueueDepth + encoders)
	for i := range n {
		send(t, ctx, s, i+1, rawBatch(mem, 0, 1+100*i, 100))
	}
	for range encoders { // one data file per encoder, all being created at once
		<-g.entered
	}
	sent := make(chan error, 1)
	go func() {
		b := rawBatch(mem, 0, 1+100*n, 100)
		defer b.Release()
		sent <- s.Send(ctx, n+1, b)
	}()
	durable := make(chan error, 1)
	go func() { durable <- s.WaitDurable(ctx, 1) }()
	// Nothing can be written while the gate is shut: neither the Send past
	// the queue nor the wait may have returned.
	select {
	case err := <-sent:
		t.Fatalf("Send of batch %d returned (%v) with %d queued and %d being written", n+1, err, iceberg.QueueDepth, encoders)
	case err := <-durable:
		t.Fatalf("WaitDurable(1) returned (%v) before the batch's data file was written", err)
	default:
	}
	if p, err := tbl.Positions(ctx); err != nil || len(p) != 0 {
		t.Fatalf("Positions before any file was written = %v, %v; want none", p, err)
	}
	close(g.open)
	if err := <-sent; err != nil {
		t.Fatalf("Send(%d): %v", n+1, err)
	}
	if err := <-durable; err != nil {
		t.Fatal(err)
	}
	if err := s.WaitDurable(ctx, n+1); err != nil {
		t.Fatal(err)
	}
	got := seqs(t, ctx, tbl)[part(0)]
	slices.Sort(got)
	if want := span(1, 100*(n+1)); !slices.Equal(got, want) {
		t.Fatalf("stored seqs %v, want 1..%d once each", got, 100*(n+1))
	}
	old := rawBatch(mem, 0, 1, 1)
	defer old.Release()
	if err := s.Send(ctx, n, old); !errors.Is(err, iceberg.ErrOffsetOrder) {
		t.Fatalf("Send of an offset not above the last = %v, want ErrOffsetOrder", err)
	}
}

// TestWriterFailureSurfaces: a data file the writer cannot create fails
// the Sink for good; the next WaitDurable and Send return that failure,
// and every batch the Sink held is released.
func TestWriterFailureSurfaces(t *testing.T) {
	refused := errors.New("create refused")
	o, g := gated(sqlOptions(t), refused)
	ctx, mem, _, s := newSink(t, o)
	send(t, ctx, s, 1, rawBatch(mem, 0, 1, 100)) // queued: the failure is the writer's
	<-g.entered
	err := s.WaitDurable(ctx, 1)
	var ie *iceberg.Error
	if !errors.Is(err, refused) || !errors.As(err, &ie) || !ie.Permanent() {
		t.Fatalf("WaitDurable after a failed write = %v; want a permanent error wrapping %v", err, refused)
	}
	b := rawBatch(mem, 0, 101, 100)
	err = s.Send(ctx, 2, b)
	b.Release()
	if !errors.Is(err, refused) {
		t.Fatalf("Send after a failed write = %v, want the failure", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checked := mem.(*memory.CheckedAllocator)
	testenv.WaitFor(t, 30*time.Second, "the queued batches released", func() bool { return checked.CurrentAlloc() == 0 })
}

// TestCloseWhileWriterBusy: Close with every encoder held in a data
// file's creation and batches queued returns within CloseTimeout; Send
// then returns ErrClosed, and once the store answers every batch is
// released.
func TestCloseWhileWriterBusy(t *testing.T) {
	o, g := gated(sqlOptions(t), nil)
	ctx, mem, _, s := newSink(t, o)
	for i := range uint64(iceberg.QueueDepth + encoders) {
		send(t, ctx, s, i+1, rawBatch(mem, 0, 1+100*i, 100))
	}
	for range encoders {
		<-g.entered
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil && !errors.Is(err, iceberg.ErrCloseTimeout) {
			t.Fatalf("Close with the writer busy = %v, want nil or ErrCloseTimeout", err)
		}
	case <-time.After(iceberg.CloseTimeout + 30*time.Second): // a deadline, far past the bound
		t.Fatalf("Close still blocked past CloseTimeout %v with the writer busy", iceberg.CloseTimeout)
	}
	b := rawBatch(mem, 0, 1000, 1)
	err := s.Send(ctx, 10, b)
	b.Release()
	if !errors.Is(err, iceberg.ErrClosed) {
		t.Fatalf("Send after Close = %v, want ErrClosed", err)
	}
	close(g.open)
	checked := mem.(*memory.CheckedAllocator)
	testenv.WaitFor(t, 30*time.Second, "the queued batches released", func() bool { return checked.CurrentAlloc() == 0 })
}

// secondFailsFS holds the first data file's creation until the second is
// asked for, and refuses the second: two encoders at once, one failing.
type secondFailsFS struct {
	iceio.WriteFileIO
	n      *atomic.Int32
	second chan struct{}
	err    error
}

func (f secondFailsFS) Create(name string) (iceio.FileWriter, error) {
	if strings.HasPrefix(path.Base(name), "thalweg-") {
		switch f.n.Add(1) {
		case 1:
			select {
			case <-f.second:
			case <-time.After(time.Minute): // a deadline: the test fails below
			}
		case 2:
			close(f.second)
			return nil, f.err
		}
	}
	return f.WriteFileIO.Create(name)
}

// TestEncoderFailureSurfaces: one encoder's write failure, while another
// encoder writes the batch before it, fails the Sink for good: no batch
// becomes durable (the commit would hold the failed one), the next
// WaitDurable and Send return the failure, and every batch is released.
func TestEncoderFailureSurfaces(t *testing.T) {
	refused := errors.New("create refused")
	var n atomic.Int32
	second := make(chan struct{})
	o := iceberg.WithFSHook(sqlOptions(t), func(fs iceio.IO) iceio.IO {
		return secondFailsFS{WriteFileIO: fs.(iceio.WriteFileIO), n: &n, second: second, err: refused}
	})
	ctx, mem, tbl, s := newSink(t, o)
	// Batch 1's encoder is held in its file's creation, so batch 2 goes to
	// another encoder, whose file is refused.
	send(t, ctx, s, 1, rawBatch(mem, 0, 1, 100))
	send(t, ctx, s, 2, rawBatch(mem, 0, 101, 100))
	err := s.WaitDurable(ctx, 1)
	var ie *iceberg.Error
	if !errors.Is(err, refused) || !errors.As(err, &ie) || !ie.Permanent() {
		t.Fatalf("WaitDurable(1) after another encoder's failed write = %v; want a permanent error wrapping %v", err, refused)
	}
	if got := n.Load(); got != 2 {
		t.Fatalf("%d data files asked for, want 2 (one per encoder)", got)
	}
	b := rawBatch(mem, 0, 201, 100)
	err = s.Send(ctx, 3, b)
	b.Release()
	if !errors.Is(err, refused) {
		t.Fatalf("Send after a failed write = %v, want the failure", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if p, err := tbl.Positions(ctx); err != nil || len(p) != 0 {
		t.Fatalf("Positions after the failure = %v, %v; want none committed", p, err)
	}
	checked := mem.(*memory.CheckedAllocator)
	testenv.WaitFor(t, 30*time.Second, "the batches released", func() bool { return checked.CurrentAlloc() == 0 })
}
