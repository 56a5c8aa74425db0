package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
)

// frozen is a transport that accepts every batch and never acknowledges
// one: a secondary sink that stays connected but has stalled.
type frozen struct {
	once   sync.Once
	closed chan struct{}
}

func newFrozen() *frozen { return &frozen{closed: make(chan struct{})} }

func (f *frozen) Send(context.Context, uint64, *batch.Batch) error { return nil }
func (f *frozen) WaitDurable(ctx context.Context, _ uint64) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-f.closed:
		return context.Canceled
	}
}
func (f *frozen) Close() error { f.once.Do(func() { close(f.closed) }); return nil }

// TestFrozenSecondaryNeverGatesTheAnchor: a secondary whose sink never
// acknowledges overflows its queue; the anchor lane still delivers and
// acknowledges every record — all of them before Run even starts waiting
// for the frozen secondary to drain — and the secondary's coverage never
// leads what it confirmed (here: nothing).
func TestFrozenSecondaryNeverGatesTheAnchor(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()

	const records = 20000
	g, err := gen.NewSource(gen.Options{Seed: 11, Partitions: 2, Records: records})
	require.NoError(t, err)
	src := &countingSource{Source: g, n: records, done: make(chan struct{})}
	stalled := pipeline.Destination{
		Name: "stalled",
		Dial: func(context.Context) (lanes.Transport, error) { return newFrozen(), nil },
		Lane: pipeline.LaneOptions{Capacity: 4},
	}
	p, err := pipeline.New(pipeline.Options{
		Source:       src,
		Assembler:    batch.AssemblerOptions{Allocator: mem, MaxRows: 200, Linger: 20 * time.Millisecond},
		Store:        store,
		Anchor:       flightDest("raw", addr, mem),
		Secondaries:  []pipeline.Destination{stalled},
		Rebuild:      flight.Rebuild(flighttest.Client(t, addr), []string{"raw"}, mem),
		DrainTimeout: 2 * time.Second,
	})
	require.NoError(t, err)
	ran := make(chan error, 1)
	start := time.Now()
	go func() { ran <- p.Run(flighttest.Ctx(t, 60*time.Second)) }()
	var ackedAt time.Duration
	select {
	case <-src.done:
		ackedAt = time.Since(start)
	case err := <-ran:
		t.Fatalf("Run returned before every record was acknowledged: %v", err)
	}
	err = <-ran
	runFor := time.Since(start)
	// The stalled lane cannot drain: Run reports it, and only it.
	require.ErrorContains(t, err, "stalled")
	require.Less(t, ackedAt, runFor-time.Second,
		"the upstream acks finished only %v before Run returned: they waited for the frozen secondary", runFor-ackedAt)

	st := p.Stats()
	require.EqualValues(t, records, st.Acked, "the anchor acknowledged everything despite the frozen secondary")
	require.False(t, st.Secondaries[0].Detached, "with a Rebuild a secondary never gives up")
	require.NotZero(t, st.Secondaries[0].Dropped)
	require.Zero(t, st.Secondaries[0].Delivered)
	require.EqualValues(t, records, st.Secondaries[0].CoverageLag)

	rep := readStored(t, addr, []string{"raw"}).Check(src.Acked(), nil)
	require.True(t, rep.OK(), rep.String())
	cov, err := store.Coverage("stalled")
	require.NoError(t, err)
	require.Empty(t, cov, "coverage never leads what the secondary durably confirmed")
}

// instant is a transport that acknowledges every batch at once.
type instant struct{}

func (instant) Send(context.Context, uint64, *batch.Batch) error { return nil }
func (instant) WaitDurable(context.Context, uint64) error        { return nil }
func (instant) Close() error                                     { return nil }

// TestSecondaryAddedWithoutRebuildDetaches: a secondary added to a
// deployment whose anchor has already delivered records starts with a hole
// it cannot fill without Options.Rebuild. It is detached for the run, and
// its coverage stays empty although its (instant) sink would acknowledge
// every live batch: coverage past a hole would lead what the destination
// holds.
func TestSecondaryAddedWithoutRebuildDetaches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	asm := batch.AssemblerOptions{Allocator: mem, MaxRows: 200, Linger: 20 * time.Millisecond}

	genOpts := gen.Options{Seed: 4, Partitions: 2, Records: 2000}
	src1, err := gen.NewSource(genOpts)
	require.NoError(t, err)
	p1, err := pipeline.New(pipeline.Options{Source: src1, Assembler: asm, Store: store, Anchor: flightDest("raw", addr, mem)})
	require.NoError(t, err)
	require.NoError(t, p1.Run(flighttest.Ctx(t, 30*time.Second)))
	del, err := store.Delivered("raw")
	require.NoError(t, err)

	genOpts.Records = 4000
	g2, err := gen.NewSource(genOpts)
	require.NoError(t, err)
	late := pipeline.Destination{Name: "late", Dial: func(context.Context) (lanes.Transport, error) { return instant{}, nil }}
	p2, err := pipeline.New(pipeline.Options{Source: &resumed{Source: g2, after: del}, Assembler: asm, Store: store,
		Anchor: flightDest("raw", addr, mem), Secondaries: []pipeline.Destination{late}})
	require.NoError(t, err)
	require.NoError(t, p2.Run(flighttest.Ctx(t, 30*time.Second)))
	st := p2.Stats()
	require.EqualValues(t, 2000, st.Acked)
	require.True(t, st.Secondaries[0].Detached)
	require.EqualValues(t, 4000, st.Secondaries[0].CoverageLag)
	cov, err := store.Coverage("late")
	require.NoError(t, err)
	require.Empty(t, cov)
}
