package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/observability"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
)

// pacedSource slows a generator down so that a run outlasts a lane's
// budget: 1ms every 20 records.
type pacedSource struct {
	*gen.Source
	n int
}

func (s *pacedSource) Next(ctx context.Context, r *batch.Record) error {
	if s.n++; s.n%20 == 0 {
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.Source.Next(ctx, r)
}

func tokenDest(name, addr, token string, mem memory.Allocator, budget time.Duration) pipeline.Destination {
	return pipeline.Destination{
		Name: name,
		Dial: func(ctx context.Context) (lanes.Transport, error) {
			return flight.Dial(ctx, flight.Options{Endpoint: addr, Path: []string{name}, Token: token, Allocator: mem})
		},
		Lane: pipeline.LaneOptions{Capacity: 32, PermanentBudget: budget,
			Backoff: lanes.Backoff{Initial: 10 * time.Millisecond, Max: 200 * time.Millisecond}},
	}
}

// A raw anchor whose receiver refuses its token ends the run once the
// budget is spent — not after the drain timeout — with the gRPC status in
// the error, and acknowledges nothing.
func TestAnchorRefusedForGoodStopsTheRun(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Token: "right"})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	g, err := gen.NewSource(gen.Options{Seed: 3, Partitions: 1, Mode: gen.ModeRaw})
	require.NoError(t, err)
	p, err := pipeline.New(pipeline.Options{
		Source:       &pacedSource{Source: g},
		Assembler:    batch.AssemblerOptions{Allocator: mem, MaxRows: 100, Linger: 10 * time.Millisecond},
		Store:        store,
		Anchor:       tokenDest("raw", addr, "wrong", mem, time.Second),
		DrainTimeout: 30 * time.Second,
	})
	require.NoError(t, err)
	start := time.Now()
	err = p.Run(flighttest.Ctx(t, 60*time.Second))
	took := time.Since(start)
	require.ErrorIs(t, err, lanes.ErrFailed)
	require.ErrorContains(t, err, "Unauthenticated")
	require.NotContains(t, err.Error(), "context canceled")
	require.Less(t, took, 10*time.Second, "the run waited for its drain")
	require.Zero(t, p.Stats().Acked)
	require.Equal(t, lanes.StateClosed, p.Stats().Anchor.State)
}

// refusal is a permanent failure (lanes.Classified), as a destination
// that refuses a schema for good returns it.
type refusal struct{}

func (refusal) Error() string      { return "schema refused: field \"topic\" removed" }
func (refusal) Retryable() bool    { return false }
func (refusal) StatusName() string { return "InvalidArgument" }

// refusing is a transport that refuses every batch as it is sent, so that
// the lane keeps redialling and a Submit waits for it.
type refusing struct{}

func (refusing) Send(context.Context, uint64, *batch.Batch) error { return refusal{} }
func (refusing) WaitDurable(context.Context, uint64) error        { return refusal{} }
func (refusing) Close() error                                     { return nil }

// A bounded source that runs dry while the anchor refuses every batch
// stops the run with the refusal (lanes.ErrFailed and its cause) as soon
// as intake ends — not when shutdown.drain_timeout runs out and cancels
// the Submit the dispatcher is blocked in, which would end the run with
// "context canceled": a drain cannot wait for an operator's fix, whatever
// started it.
func TestAnchorRefusedWhenTheSourceRunsDry(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	// Few enough records that the source runs dry while the dispatcher
	// waits in Submit with the first batch.
	g, err := gen.NewSource(gen.Options{Seed: 3, Partitions: 1, Records: 150, Mode: gen.ModeRaw})
	require.NoError(t, err)
	p, err := pipeline.New(pipeline.Options{
		Source:    g,
		Assembler: batch.AssemblerOptions{Allocator: mem, MaxRows: 100, Linger: 10 * time.Millisecond},
		Store:     store,
		// A budget longer than the drain: without the drain's start
		// ending the refusal, the drain deadline cancels the Submit and
		// the run ends with "context canceled".
		Anchor: pipeline.Destination{
			Name: "raw",
			Dial: func(context.Context) (lanes.Transport, error) { return refusing{}, nil },
			Lane: pipeline.LaneOptions{PermanentBudget: 10 * time.Minute,
				Backoff: lanes.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond}},
		},
		DrainTimeout: 20 * time.Second,
	})
	require.NoError(t, err)
	err = p.Run(context.Background())
	require.ErrorIs(t, err, lanes.ErrFailed)
	require.ErrorContains(t, err, "InvalidArgument")
	require.NotContains(t, err.Error(), "context canceled")
	require.Zero(t, p.Stats().Acked)
}

// A secondary whose receiver refuses its token is detached once its budget
// is spent; the anchor keeps delivering everything, Ready names the
// secondary and the cause, thalweg.lane.detached is 1, and Run ends cleanly.
func TestSecondaryRefusedForGoodDetaches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, rawAt := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	_, secAt := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Token: "right"})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	const records = 30000
	g, err := gen.NewSource(gen.Options{Seed: 5, Partitions: 2, Records: records, Mode: gen.ModeRaw})
	require.NoError(t, err)
	p, err := pipeline.New(pipeline.Options{
		Source:        &pacedSource{Source: g},
		Assembler:     batch.AssemblerOptions{Allocator: mem, MaxRows: 200, Linger: 10 * time.Millisecond},
		Store:         store,
		Anchor:        tokenDest("raw", rawAt, "", mem, time.Second),
		Secondaries:   []pipeline.Destination{tokenDest("sec", secAt, "wrong", mem, time.Second)},
		Rebuild:       flight.Rebuild(flighttest.Client(t, rawAt), []string{"raw"}, mem),
		MeterProvider: mp,
		DrainTimeout:  10 * time.Second,
	})
	require.NoError(t, err)
	ran := make(chan error, 1)
	go func() { ran <- p.Run(flighttest.Ctx(t, 60*time.Second)) }()

	var why string
	deadline := time.After(20 * time.Second)
	for !strings.Contains(why, "secondary sec detached") {
		select {
		case err := <-ran:
			t.Fatalf("Run ended before the secondary detached: %v", err)
		case <-deadline:
			t.Fatalf("secondary not detached; Ready: %q", why)
		case <-time.After(20 * time.Millisecond):
		}
		_, why = p.Ready()
	}
	require.Contains(t, why, "Unauthenticated")
	at := p.Stats().Anchor.Delivered
	require.Eventually(t, func() bool { return p.Stats().Anchor.Delivered > at }, 10*time.Second, 10*time.Millisecond,
		"the anchor stopped delivering when the secondary detached")

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	detached := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != observability.LaneDetached {
				continue
			}
			for _, dp := range m.Data.(metricdata.Gauge[int64]).DataPoints {
				d, _ := dp.Attributes.Value(observability.AttrDestination)
				detached[d.AsString()] = dp.Value
			}
		}
	}
	require.Equal(t, map[string]int64{"sec": 1}, detached)

	require.NoError(t, <-ran, "a detached secondary does not make the run fail")
	st := p.Stats()
	require.EqualValues(t, records, st.Acked)
	require.True(t, st.Secondaries[0].Detached)
	require.NotZero(t, st.Secondaries[0].CoverageLag)
	require.False(t, errors.Is(nil, lanes.ErrFailed))
}
