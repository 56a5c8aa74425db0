package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/observability"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
)

// counters reads every counter point from a real metric reader, keyed
// "name{k=v,...}" with the attributes sorted by key.
func counters(t *testing.T, r *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]float64{}
	enc := attribute.DefaultEncoder()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					out[m.Name+"{"+p.Attributes.Encoded(enc)+"}"] = p.Value
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[m.Name+"{"+p.Attributes.Encoded(enc)+"}"] = float64(p.Value)
				}
			}
		}
	}
	return out
}

// rig is what the signal tests share: a checked allocator (asserted empty
// at the end), a real metric reader, and an offset store on disk.
type rig struct {
	mem   *memory.CheckedAllocator
	r     *sdkmetric.ManualReader
	mp    *sdkmetric.MeterProvider
	store *offsetstore.Store
}

func newRig(t *testing.T) *rig {
	g := &rig{mem: memory.NewCheckedAllocator(memory.NewGoAllocator()), r: sdkmetric.NewManualReader()}
	t.Cleanup(func() { g.mem.AssertSize(t, 0) }) // last
	g.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(g.r))
	t.Cleanup(func() { _ = g.mp.Shutdown(context.Background()) })
	var err error
	g.store, err = offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.store.Close()) })
	return g
}

// runDuring starts p, runs during, cancels p and returns Run's error.
func runDuring(t *testing.T, p *pipeline.Pipeline, during func()) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	during()
	cancel()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
		return nil
	}
}

const (
	unackedPipeline = observability.SourceUnackedWait + "{bound=pipeline}"
	rawLaneFull     = observability.LaneIntakeBlocked + "{destination=raw,reason=lane_full}"
	rawConnecting   = observability.LaneIntakeBlocked + "{destination=raw,reason=connecting}"
	rawRebuilding   = observability.LaneIntakeBlocked + "{destination=raw,reason=rebuilding}"
	rawDrains       = observability.LaneDrainTimeouts + "{destination=raw}"
)

// With the upstream acks held, the source loop stops at MaxUnacked and that
// wait is thalweg.source.unacked_wait{bound="pipeline"}, growing while it
// lasts; the anchor lane, which keeps up, shows no intake blocked on it.
func TestUnackedWaitIsCounted(t *testing.T) {
	rg := newRig(t)
	mem, r, mp, store := rg.mem, rg.r, rg.mp, rg.store
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	const records, bound = 5000, 500
	g, err := gen.NewSource(gen.Options{Seed: 3, Partitions: 2, Records: records, Mode: gen.ModeRaw})
	require.NoError(t, err)
	src := &slowAck{Source: g, gate: make(chan struct{})}
	p, err := pipeline.New(pipeline.Options{
		Source: src, Store: store, Anchor: flightDest("raw", addr, mem), MaxUnacked: bound, MeterProvider: mp,
		Assembler: batch.AssemblerOptions{Allocator: mem, MaxRows: 4096, Linger: time.Hour},
	})
	require.NoError(t, err)
	require.Zero(t, counters(t, r)[unackedPipeline], "waited before running")
	done := make(chan error, 1)
	go func() { done <- p.Run(context.Background()) }()
	require.Eventually(t, func() bool { return p.Stats().Anchor.Confirmed > 0 }, 20*time.Second, 5*time.Millisecond)
	var mid, later map[string]float64
	testenv.WaitFor(t, 10*time.Second, "0.2 s of the source loop held at max_unacked", func() bool {
		mid = counters(t, r)
		return mid[unackedPipeline] >= 0.2
	})
	testenv.WaitFor(t, 10*time.Second, "the wait in progress to grow by 0.05 s", func() bool {
		later = counters(t, r)
		return later[unackedPipeline] > mid[unackedPipeline]+0.05
	})
	require.Less(t, later[rawLaneFull], 0.05, "a lane that keeps up shows intake blocked on it: %v", later)
	close(src.gate)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not finish once acks flowed")
	}
	require.EqualValues(t, records, p.Stats().Acked)
	require.NotContains(t, counters(t, r), unackedPipeline, "the series outlives the run")
}

// A sink that holds every ack back fills the anchor lane: intake is blocked
// as lane_full (not connecting or rebuilding), and the shutdown's drain,
// cut short by the drain timeout, counts one drain timeout for the lane.
func TestSlowSinkShowsLaneFullAndDrainTimeout(t *testing.T) {
	g := newRig(t)
	src, err := gen.NewSource(gen.Options{Seed: 1, Partitions: 2})
	require.NoError(t, err)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), AckDelay: time.Minute})
	slow := flightDest("raw", addr, g.mem)
	slow.Lane.Capacity = 2
	p, err := pipeline.New(pipeline.Options{
		Source:        src,
		Assembler:     batch.AssemblerOptions{Allocator: g.mem, MaxRows: 100, Linger: 10 * time.Millisecond},
		Store:         g.store,
		Anchor:        slow,
		DrainTimeout:  500 * time.Millisecond,
		MeterProvider: g.mp,
	})
	require.NoError(t, err)
	require.Zero(t, counters(t, g.r)[rawDrains])
	err = runDuring(t, p, func() {
		require.Eventually(t, func() bool { return counters(t, g.r)[rawLaneFull] > 0 }, 10*time.Second, time.Millisecond)
		c1 := counters(t, g.r)
		var c2 map[string]float64
		testenv.WaitFor(t, 10*time.Second, "0.25 s more of intake held by the full lane", func() bool {
			c2 = counters(t, g.r)
			return c2[rawLaneFull]-c1[rawLaneFull] >= 0.25
		})
		broken := c2[rawConnecting] + c2[rawRebuilding] - c1[rawConnecting] - c1[rawRebuilding]
		require.Less(t, broken, 0.01, "a slow sink shows as a broken lane: %v", c2)
	})
	require.Error(t, err, "an undrained run is not clean")
	require.EqualValues(t, 1, counters(t, g.r)[rawDrains], "one drain cut short by shutdown.drain_timeout")
}

// An anchor whose sink is unreachable never opens a stream: intake is
// blocked as connecting, never as lane_full, and the run's error names the
// drain that ran out.
func TestUnreachableSinkShowsConnecting(t *testing.T) {
	g := newRig(t)
	src, err := gen.NewSource(gen.Options{Seed: 1, Partitions: 2})
	require.NoError(t, err)
	down := flightDest("raw", "127.0.0.1:1", g.mem) // nothing listens on port 1
	down.Lane.Capacity = 2
	down.Lane.Backoff = lanes.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond}
	p, err := pipeline.New(pipeline.Options{
		Source:        src,
		Assembler:     batch.AssemblerOptions{Allocator: g.mem, MaxRows: 100, Linger: 10 * time.Millisecond},
		Store:         g.store,
		Anchor:        down,
		DrainTimeout:  300 * time.Millisecond,
		MeterProvider: g.mp,
	})
	require.NoError(t, err)
	err = runDuring(t, p, func() {
		require.Eventually(t, func() bool { return counters(t, g.r)[rawConnecting] >= 0.3 }, 10*time.Second, time.Millisecond,
			"intake held by a lane that cannot connect")
		c := counters(t, g.r)
		require.Zero(t, c[rawLaneFull], "a lane without a stream shows as a slow sink: %v", c)
	})
	// The drain cut short while Submit waits says so, with the lane's
	// state; a bare "context canceled" was the run's last ERROR line.
	require.Error(t, err)
	require.Contains(t, err.Error(), `anchor lane "raw": shutdown.drain_timeout (300ms) ran out while the lane was connecting`)
}
