package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
)

// idleRun runs a quiet stream (200 records/s) into a real receiver with a
// linger of an hour, until cond holds or the run ends, and returns the
// pipeline's stats.
func idleRun(t *testing.T, lingerWhenIdle bool, cond func(pipeline.Stats) bool) pipeline.Stats {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	g, err := gen.NewSource(gen.Options{Seed: 5, Partitions: 2, Rate: 200, Mode: gen.ModeRaw})
	require.NoError(t, err)
	p, err := pipeline.New(pipeline.Options{
		Source:         g,
		Assembler:      batch.AssemblerOptions{Allocator: mem, Linger: time.Hour},
		Store:          store,
		Anchor:         tokenDest("raw", addr, "", mem, time.Second),
		LingerWhenIdle: lingerWhenIdle,
		DrainTimeout:   30 * time.Second,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	testenv.WaitFor(t, 30*time.Second, "the condition on the stats", func() bool { return cond(p.Stats()) })
	cancel()
	require.NoError(t, <-done)
	return p.Stats()
}

// With the defaults, a quiet stream is not held for the linger: with
// nothing in flight at the anchor, records are sent as they come (and
// those that gathered behind a batch in flight as soon as it is durable),
// so 100 records are acknowledged upstream long before the hour-long
// linger could flush anything.
func TestIdleAnchorFlushesAtOnce(t *testing.T) {
	st := idleRun(t, false, func(st pipeline.Stats) bool { return st.Acked >= 100 })
	require.Positive(t, st.Assembler.FlushIdle)
	require.Zero(t, st.Assembler.FlushLinger)
}

// With LingerWhenIdle, the same stream waits for the linger: nothing is
// flushed early, and nothing is acknowledged while the records trickle in.
func TestLingerWhenIdleHoldsTheBatch(t *testing.T) {
	st := idleRun(t, true, func(st pipeline.Stats) bool { return st.SourceRecords >= 100 })
	require.Zero(t, st.Assembler.FlushIdle)
	require.Zero(t, st.Assembler.Batches-st.Assembler.FlushShutdown, "a batch flushed before the stop")
}
