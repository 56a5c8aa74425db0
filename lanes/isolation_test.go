package lanes

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/observability"
)

// Per-lane isolation (docs/design.md#lane-separation, load-bearing): the coverage lane's transport
// never acknowledges anything, yet the raw lane — same committer, same meter
// provider — keeps confirming at full rate, and each lane's gauges show only
// its own state.
func TestLaneIsolation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	com := newFakeCommitter(func() time.Duration { return 0 })
	ctx := ctxT(t)

	stalled := newDialer(newFakeServer(), func() time.Duration { return 0 })
	cov, err := New[Coverage](Options{Destination: "derived", Capacity: 8, Dial: stalled.dial, Committer: com, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	healthy := newDialer(newFakeServer(), func() time.Duration { return 0 })
	raw, err := New[RawAnchor](Options{Destination: "raw", Capacity: 64, Dial: healthy.dial, Committer: com, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}

	// Fill the coverage lane and stall its transport forever.
	stalled.nth(t, 1).with(func(t *fakeTransport) { t.mu.stall = true })
	for i := range 8 {
		b := newBatch(mem, 0, uint64(i), uint64(i))
		if err := cov.Submit(ctx, b, Coverage{}); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	b := newBatch(mem, 0, 8, 8)
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	if err := cov.Submit(short, b, Coverage{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stalled coverage lane accepted a 9th batch: %v", err)
	}
	cancel()
	b.Release()

	// The raw lane confirms N batches, each one upstream-acked, within a
	// generous bound.
	const n = 2000
	released := make(chan struct{}, n)
	b = newBatch(mem, 0, 0, 0)
	start := time.Now()
	for i := range n {
		if err := raw.Submit(ctx, b, RawAnchor{OnDurable: func(err error) {
			if err != nil {
				t.Errorf("raw token %d: %v", i, err)
			}
			released <- struct{}{}
		}}); err != nil {
			t.Fatal(err)
		}
	}
	b.Release()
	for i := range n {
		select {
		case <-released:
		case <-time.After(waitBound):
			t.Fatalf("raw lane stuck after %d/%d upstream releases while the coverage lane is stalled", i, n)
		}
	}
	el := time.Since(start)
	t.Logf("raw lane: %d batches confirmed and committed in %v (%.0f/s) while the coverage lane is stalled",
		n, el, n/el.Seconds())
	if raw.Delivered() != n || cov.Delivered() != 0 || cov.Pending() != 8 {
		t.Fatalf("raw delivered %d, cov delivered %d pending %d", raw.Delivered(), cov.Delivered(), cov.Pending())
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	pending := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != observability.LanePending {
				continue
			}
			for _, p := range m.Data.(metricdata.Gauge[int64]).DataPoints {
				d, _ := p.Attributes.Value(observability.AttrDestination)
				pending[d.AsString()] = p.Value
			}
		}
	}
	if pending["raw"] != 0 || pending["derived"] != 8 || len(pending) != 2 {
		t.Fatalf("pending gauges %v, want raw 0 derived 8", pending)
	}

	if err := raw.Close(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := cov.Close(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("closing the stalled lane: %v", err)
	}
	com.shutdown()
}
