package instruments

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/observability"
)

// sumFloat returns the points of a float64 counter by the value of key.
func sumFloat(t *testing.T, m metricdata.Metrics, key string) map[string]float64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[float64])
	if !ok {
		t.Fatalf("%s: data %T, want Sum[float64]", m.Name, m.Data)
	}
	if !s.IsMonotonic || s.Temporality != metricdata.CumulativeTemporality {
		t.Errorf("%s: monotonic %v, temporality %v: want a cumulative counter", m.Name, s.IsMonotonic, s.Temporality)
	}
	out := map[string]float64{}
	for _, p := range s.DataPoints {
		v, _ := p.Attributes.Value(attribute.Key(key))
		out[dest(p.Attributes)+"/"+v.AsString()] = p.Value
	}
	return out
}

// The block reasons are the reason values the catalogue's help text of
// thalweg.lane.intake_blocked names.
func TestBlockReasonNames(t *testing.T) {
	if got := []string{BlockLaneFull.String(), BlockConnecting.String(), BlockRebuilding.String()}; !slices.Equal(got, []string{"lane_full", "connecting", "rebuilding"}) {
		t.Errorf("block reasons %v", got)
	}
	help := lookup(observability.LaneIntakeBlocked).Help
	for r := range numBlockReasons {
		if !strings.Contains(help, r.String()) {
			t.Errorf("the catalogue's help of %s does not name the reason %s", observability.LaneIntakeBlocked, r)
		}
	}
}

// Intake-blocked time is exported per destination and reason, at 0 from the
// start, grows while a wait is still in progress, and keeps what ended; the
// drain-timeout counter starts at 0 and counts each call.
func TestLaneSignals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
		defer mp.Shutdown(context.Background())
		var raw, cov marks
		rawM, err := NewLaneMetrics(mp, "raw", 4, &raw)
		if err != nil {
			t.Fatal(err)
		}
		defer rawM.Close()
		covM, err := NewLaneMetrics(mp, "cov", 4, &cov)
		if err != nil {
			t.Fatal(err)
		}
		defer covM.Close()

		got := collect(t, r)
		blocked := sumFloat(t, got[observability.LaneIntakeBlocked], observability.AttrReason)
		if len(blocked) != 6 {
			t.Errorf("intake_blocked points %v, want 3 reasons x 2 lanes", blocked)
		}
		for k, v := range blocked {
			if v != 0 {
				t.Errorf("intake_blocked %s = %v before any wait", k, v)
			}
		}
		if m := got[observability.LaneIntakeBlocked]; m.Unit != "s" {
			t.Errorf("intake_blocked unit %q", m.Unit)
		}
		drains := got[observability.LaneDrainTimeouts].Data.(metricdata.Sum[int64])
		if len(drains.DataPoints) != 2 || drains.DataPoints[0].Value != 0 || drains.DataPoints[1].Value != 0 {
			t.Errorf("drain_timeouts %+v, want 0 for both lanes", drains.DataPoints)
		}

		// Sleeping in the bubble advances its clock by exactly d, at once.
		w := rawM.IntakeBlocked(BlockConnecting)
		time.Sleep(30 * time.Millisecond) // fake clock: exactly 30 ms
		mid := sumFloat(t, collect(t, r)[observability.LaneIntakeBlocked], observability.AttrReason)
		if v := mid["raw/connecting"]; v != 0.03 {
			t.Errorf("a wait in progress for 30ms shows %vs", v)
		}
		time.Sleep(20 * time.Millisecond) // fake clock
		w.End()
		after := sumFloat(t, collect(t, r)[observability.LaneIntakeBlocked], observability.AttrReason)
		if v := after["raw/connecting"]; v != 0.05 {
			t.Errorf("after a 50ms wait: %vs (mid-wait %vs)", v, mid["raw/connecting"])
		}
		time.Sleep(10 * time.Millisecond) // fake clock
		if v := sumFloat(t, collect(t, r)[observability.LaneIntakeBlocked], observability.AttrReason)["raw/connecting"]; v != after["raw/connecting"] {
			t.Errorf("an ended wait still grows: %v then %v", after["raw/connecting"], v)
		}
		for _, k := range []string{"raw/lane_full", "raw/rebuilding", "cov/lane_full", "cov/connecting", "cov/rebuilding"} {
			if after[k] != 0 {
				t.Errorf("%s = %v: another reason's or lane's wait leaked into it", k, after[k])
			}
		}
		Wait{}.End() // the zero Wait is inert
		rawM.IntakeBlocked(numBlockReasons).End()

		rawM.DrainTimedOut(context.Background())
		rawM.DrainTimedOut(context.Background())
		for _, p := range collect(t, r)[observability.LaneDrainTimeouts].Data.(metricdata.Sum[int64]).DataPoints {
			if want := map[string]int64{"raw": 2, "cov": 0}[dest(p.Attributes)]; p.Value != want {
				t.Errorf("drain_timeouts %s = %d, want %d", dest(p.Attributes), p.Value, want)
			}
		}
		if n := testing.AllocsPerRun(100, func() { rawM.DrainTimedOut(context.Background()) }); n != 0 {
			t.Errorf("DrainTimedOut allocates %.1f per call", n)
		}
		if n := testing.AllocsPerRun(100, func() { rawM.IntakeBlocked(BlockLaneFull).End() }); n != 0 {
			t.Errorf("IntakeBlocked allocates %.1f per wait", n)
		}
	})
}

// Concurrent waits add up and the total never goes back, read while they
// begin and end (a decrease would be a counter reset to rate()).
func TestWaitClockMonotonic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newWaitClock()
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					w := c.begin()
					time.Sleep(time.Millisecond) // fake clock: a wait that lasts
					w.End()
				}
			})
		}
		// Read at every tick of the bubble's clock, in the same instants as
		// the waits begin and end.
		last := 0.0
		for range 100 {
			v := c.seconds()
			if v < last {
				t.Fatalf("total went back from %v to %v", last, v)
			}
			last = v
			time.Sleep(time.Millisecond) // fake clock: read again later
		}
		close(stop)
		wg.Wait()
		// Four goroutines waited 100ms each, or 101ms for one that began
		// another wait in the instant stop was closed.
		if v := c.seconds(); v < 0.4 || v > 0.404 {
			t.Errorf("total %vs, want about 0.4s for 4 x 100ms", v)
		}
	})
}

// The unacked wait is exported per bound, at 0 until a wait, and
// unregistered by Close.
func TestUnackedWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
		defer mp.Shutdown(context.Background())
		pw, err := NewUnackedWait(mp, observability.BoundPipeline)
		if err != nil {
			t.Fatal(err)
		}
		sw, err := NewUnackedWait(mp, observability.BoundPulsar)
		if err != nil {
			t.Fatal(err)
		}
		w := sw.Begin()
		time.Sleep(20 * time.Millisecond) // fake clock: exactly 20 ms
		got := sumFloat(t, collect(t, r)[observability.SourceUnackedWait], observability.AttrBound)
		if got["/pipeline"] != 0 || got["/pulsar"] != 0.02 || len(got) != 2 {
			t.Errorf("unacked_wait %v, want pipeline 0 and pulsar >= 20ms (in progress)", got)
		}
		w.End()
		if err := sw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := sw.Close(); err != nil {
			t.Fatal("second Close:", err)
		}
		got = sumFloat(t, collect(t, r)[observability.SourceUnackedWait], observability.AttrBound)
		if _, ok := got["/pulsar"]; ok || len(got) != 1 {
			t.Errorf("after Close: %v, want only the pipeline's series", got)
		}
		if err := pw.Close(); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			bound string
			nilMP bool
		}{{"", false}, {observability.BoundPipeline, true}} {
			m := sdkmetric.NewMeterProvider()
			var err error
			if tc.nilMP {
				_, err = NewUnackedWait(nil, tc.bound)
			} else {
				_, err = NewUnackedWait(m, tc.bound)
			}
			if err == nil {
				t.Errorf("NewUnackedWait(%+v) accepted", tc)
			}
			_ = m.Shutdown(context.Background())
		}
	})
}
