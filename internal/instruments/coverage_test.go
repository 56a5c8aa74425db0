package instruments

import (
	"context"
	"sync/atomic"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/observability"
)

func sumInt(t *testing.T, m metricdata.Metrics, d string) int64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s: data %T, want Sum[int64]", m.Name, m.Data)
	}
	for _, p := range s.DataPoints {
		if dest(p.Attributes) == d {
			return p.Value
		}
	}
	t.Fatalf("%s: no point for destination %q", m.Name, d)
	return 0
}

// Two secondaries keep their own series: the lag gauge reads each one's
// function at collection time, the counters add up per destination, and a
// closed set stops reporting the gauge.
func TestCoverageMetrics(t *testing.T) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(context.Background())

	var lagA, lagB atomic.Uint64
	a, err := NewCoverageMetrics(mp, "a", lagA.Load)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewCoverageMetrics(mp, "b", lagB.Load)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lagA.Store(120)
	lagB.Store(7)
	a.Rebuilt(ctx, 100)
	a.Rebuilt(ctx, 20)
	b.LiveDropped(ctx, 3)

	got := collect(t, r)
	if v := gaugeInt(t, got[observability.LaneCoverageLag], "a"); v != 120 {
		t.Errorf("lag a = %d, want 120", v)
	}
	if v := gaugeInt(t, got[observability.LaneCoverageLag], "b"); v != 7 {
		t.Errorf("lag b = %d, want 7", v)
	}
	if v := sumInt(t, got[observability.LaneRebuiltRecords], "a"); v != 120 {
		t.Errorf("rebuilt a = %d, want 120", v)
	}
	if v := sumInt(t, got[observability.LaneLiveDropped], "b"); v != 3 {
		t.Errorf("dropped b = %d, want 3", v)
	}
	if got[observability.LaneCoverageLag].Unit != "{record}" {
		t.Errorf("lag unit %q", got[observability.LaneCoverageLag].Unit)
	}

	lagA.Store(0)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	g := collect(t, r)[observability.LaneCoverageLag].Data.(metricdata.Gauge[int64])
	if len(g.DataPoints) != 1 || dest(g.DataPoints[0].Attributes) != "b" {
		t.Errorf("after Close of a: lag points %+v, want only b", g.DataPoints)
	}

	if n := testing.AllocsPerRun(100, func() { b.Rebuilt(ctx, 1); b.LiveDropped(ctx, 1) }); n != 0 {
		t.Errorf("recording allocates %.1f per call", n)
	}
}

func TestCoverageMetricsValidation(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	defer mp.Shutdown(context.Background())
	for name, f := range map[string]func() error{
		"nil provider": func() error { _, err := NewCoverageMetrics(nil, "a", func() uint64 { return 0 }); return err },
		"no dest":      func() error { _, err := NewCoverageMetrics(mp, "", func() uint64 { return 0 }); return err },
		"nil lag":      func() error { _, err := NewCoverageMetrics(mp, "a", nil); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
