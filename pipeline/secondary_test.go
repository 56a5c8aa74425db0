package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight/flighttest"
	"github.com/thalweg/thalweg/flight/receiver"
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
// acknowledges is detached; the anchor lane still delivers and acknowledges
// every record, and the secondary's coverage never leads what it confirmed
// (here: nothing).
func TestFrozenSecondaryNeverGatesTheAnchor(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()

	const records = 20000
	src, err := gen.NewSource(gen.Options{Seed: 11, Partitions: 2, Records: records})
	require.NoError(t, err)
	stalled := pipeline.Destination{
		Name: "stalled",
		Dial: func(context.Context) (lanes.Transport, error) { return newFrozen(), nil },
		Lane: lanes.Options{Capacity: 4},
	}
	p, err := pipeline.New(pipeline.Options{
		Source:       src,
		Assembler:    batch.AssemblerOptions{Allocator: mem, MaxRows: 200, Linger: 20 * time.Millisecond},
		Store:        store,
		Anchor:       flightDest("raw", addr, mem),
		Secondaries:  []pipeline.Destination{stalled},
		DrainTimeout: 2 * time.Second,
	})
	require.NoError(t, err)
	err = p.Run(flighttest.Ctx(t, 60*time.Second))
	// The stalled lane cannot drain: Run reports it, and only it.
	require.ErrorContains(t, err, "stalled")

	st := p.Stats()
	require.EqualValues(t, records, st.Acked, "the anchor acknowledged everything despite the frozen secondary")
	require.True(t, st.Secondaries[0].Detached)
	require.Zero(t, st.Secondaries[0].Delivered)

	rep := readStored(t, addr, []string{"raw"}).Check(src.Acked(), nil)
	require.True(t, rep.OK(), rep.String())
	cov, err := store.Coverage("stalled")
	require.NoError(t, err)
	require.Empty(t, cov, "coverage never leads what the secondary durably confirmed")
}
