package lanes

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/observability"
)

// signals reads a lane's intake-blocked seconds by reason and its drain
// timeouts from a real metric reader.
type signals struct {
	blocked map[string]float64 // reason -> seconds
	drains  int64
	hasDrn  bool
}

func readSignals(t *testing.T, r *sdkmetric.ManualReader, dest string) signals {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	s := signals{blocked: map[string]float64{}}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case observability.LaneIntakeBlocked:
				for _, p := range m.Data.(metricdata.Sum[float64]).DataPoints {
					if d, _ := p.Attributes.Value(observability.AttrDestination); d.AsString() == dest {
						r, _ := p.Attributes.Value(observability.AttrReason)
						s.blocked[r.AsString()] = p.Value
					}
				}
			case observability.LaneDrainTimeouts:
				for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
					if d, _ := p.Attributes.Value(observability.AttrDestination); d.AsString() == dest {
						s.drains, s.hasDrn = p.Value, true
					}
				}
			}
		}
	}
	return s
}

func newReader(t *testing.T) (*sdkmetric.ManualReader, *sdkmetric.MeterProvider) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return r, mp
}

// submitAsync submits one batch in the background.
func submitAsync(ctx context.Context, l *Lane[NoCommit], mem memory.Allocator, seq uint64) <-chan error {
	done := make(chan error, 1)
	go func() {
		b := newBatch(mem, 0, seq, seq)
		err := l.Submit(ctx, b, NoCommit{})
		b.Release() // before the result: the test checks the allocator after it
		done <- err
	}()
	return done
}

func stillBlocked(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s: Submit returned %v, want it blocked", what, err)
	default:
	}
}

// A sink that withholds its acks fills the lane: the time Submit then waits
// is lane_full, and grows while it waits; connecting and rebuilding do not.
func TestIntakeBlockedLaneFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		r, mp := newReader(t)
		d := newDialer(newFakeServer(), nil) // manual acks: none until the test acks
		l, err := New[NoCommit](Options{Destination: "slow", Capacity: 2, Dial: d.dial, MeterProvider: mp})
		if err != nil {
			t.Fatal(err)
		}
		ctx := ctxT(t)
		eventually(t, "open", func() bool { return l.State() == StateOpen })
		for i := range 2 {
			if err := <-submitAsync(ctx, l, mem, uint64(i)); err != nil {
				t.Fatal(err)
			}
		}
		if s := readSignals(t, r, "slow"); s.blocked["lane_full"] != 0 || s.blocked["connecting"] != 0 || s.blocked["rebuilding"] != 0 {
			t.Fatalf("intake blocked %v before any Submit had to wait", s.blocked)
		}
		done := submitAsync(ctx, l, mem, 2)
		// The wait counts while it lasts: it grows between two reads 60ms apart.
		eventually(t, "lane_full time", func() bool { return readSignals(t, r, "slow").blocked["lane_full"] > 0 })
		mid := readSignals(t, r, "slow")
		time.Sleep(60 * time.Millisecond) // fake clock
		stillBlocked(t, done, "full lane")
		later := readSignals(t, r, "slow")
		if grew := later.blocked["lane_full"] - mid.blocked["lane_full"]; grew < 0.05 {
			t.Errorf("lane_full grew by %vs in 60ms of Submit waiting on a full lane", grew)
		}
		d.nth(t, 1).ackAll()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		end := readSignals(t, r, "slow")
		if end.blocked["connecting"] != 0 || end.blocked["rebuilding"] != 0 {
			t.Errorf("a slow sink shows as a broken lane: %v", end.blocked)
		}
		if end.blocked["lane_full"] < later.blocked["lane_full"] {
			t.Errorf("lane_full went back: %v then %v", later.blocked["lane_full"], end.blocked["lane_full"])
		}
		d.nth(t, 1).ackAll()
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A lane whose dial fails has no transport: Submit's wait is connecting,
// and grows while it waits; a lane that loses its stream with the lane full
// waits for slots only a rebuilt stream can free: that is rebuilding, not
// lane_full.
func TestIntakeBlockedConnectingAndRebuilding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		r, mp := newReader(t)
		d := newDialer(newFakeServer(), nil)
		d.failNext(1 << 30)
		opts := Options{Destination: "broken", Capacity: 2, Dial: d.dial, MeterProvider: mp}
		fastBackoff(&opts)
		l, err := New[NoCommit](opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx := ctxT(t)
		done := submitAsync(ctx, l, mem, 0)
		eventually(t, "connecting time", func() bool { return readSignals(t, r, "broken").blocked["connecting"] > 0 })
		mid := readSignals(t, r, "broken")
		time.Sleep(60 * time.Millisecond) // fake clock
		stillBlocked(t, done, "no transport")
		if grew := readSignals(t, r, "broken").blocked["connecting"] - mid.blocked["connecting"]; grew < 0.05 {
			t.Errorf("connecting grew by %vs in 60ms of Submit waiting for a dial that fails", grew)
		}
		d.failNext(0)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		connected := readSignals(t, r, "broken")
		if connected.blocked["lane_full"] != 0 || connected.blocked["rebuilding"] != 0 {
			t.Errorf("a lane that cannot connect shows %v", connected.blocked)
		}

		// Fill the lane, then kill its stream and keep the next dial failing.
		if err := <-submitAsync(ctx, l, mem, 1); err != nil {
			t.Fatal(err)
		}
		blocked := submitAsync(ctx, l, mem, 2)
		synctest.Wait() // the Submit waits for a slot
		stillBlocked(t, blocked, "full lane")
		d.failNext(1 << 30)
		d.nth(t, 1).kill()
		eventually(t, "rebuilding", func() bool { return l.State() == StateRebuilding })
		// Past the switch: the waiter has moved to rebuilding.
		eventually(t, "rebuilding time", func() bool { return readSignals(t, r, "broken").blocked["rebuilding"] > 0 })
		before := readSignals(t, r, "broken")
		time.Sleep(60 * time.Millisecond) // fake clock
		stillBlocked(t, blocked, "rebuilding lane")
		after := readSignals(t, r, "broken")
		if grew := after.blocked["rebuilding"] - before.blocked["rebuilding"]; grew < 0.05 {
			t.Errorf("rebuilding grew by %vs in 60ms of a rebuild that cannot dial (%v)", grew, after.blocked)
		}
		if grew := after.blocked["lane_full"] - before.blocked["lane_full"]; grew > 0.01 {
			t.Errorf("lane_full kept growing by %vs while the lane was broken: a broken lane shows as a slow sink", grew)
		}
		d.failNext(0)
		eventually(t, "open again", func() bool { return l.State() == StateOpen })
		d.latest().ackAll()
		if err := <-blocked; err != nil {
			t.Fatal(err)
		}
		d.latest().ackAll()
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Close with a short ctx on a lane whose transport never acks counts one
// drain timeout; a lane that drains counts none (its series is at 0).
func TestDrainTimeoutCounted(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r, mp := newReader(t)
	stuck, err := New[NoCommit](Options{Destination: "stuck", Capacity: 4, Dial: newDialer(newFakeServer(), nil).dial, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	okd := newDialer(newFakeServer(), nil)
	ok, err := New[NoCommit](Options{Destination: "ok", Capacity: 4, Dial: okd.dial, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	for _, l := range []*Lane[NoCommit]{stuck, ok} {
		if err := <-submitAsync(ctx, l, mem, 1); err != nil {
			t.Fatal(err)
		}
	}
	if s := readSignals(t, r, "stuck"); !s.hasDrn || s.drains != 0 {
		t.Fatalf("drain_timeouts before Close: %d (exported %v), want 0", s.drains, s.hasDrn)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := stuck.Close(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close of a lane that never acks: %v, want DeadlineExceeded", err)
	}
	if err := stuck.Close(short); !errors.Is(err, context.DeadlineExceeded) { // once: the second call waits for the first
		t.Fatalf("second Close: %v", err)
	}
	okd.nth(t, 1).ackAll()
	if err := ok.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s := readSignals(t, r, "stuck"); s.drains != 1 {
		t.Errorf("drain_timeouts{stuck} = %d, want 1", s.drains)
	}
	if stuck.DrainTimeouts() != 1 || ok.DrainTimeouts() != 0 {
		t.Errorf("DrainTimeouts() stuck %d ok %d, want 1 and 0 (the run summary reads them)", stuck.DrainTimeouts(), ok.DrainTimeouts())
	}
	if s := readSignals(t, r, "ok"); !s.hasDrn || s.drains != 0 {
		t.Errorf("drain_timeouts{ok} = %d (exported %v), want 0", s.drains, s.hasDrn)
	}

	// An idle lane closed with a context that has already ended drained
	// everything: no error, no drain timeout.
	idle, err := New[NoCommit](Options{Destination: "idle", Capacity: 4, Dial: newDialer(newFakeServer(), nil).dial, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	gone, cancelGone := context.WithCancel(ctx)
	cancelGone()
	if err := idle.Close(gone); err != nil {
		t.Errorf("Close of an idle lane with an ended ctx: %v", err)
	}
	if s := readSignals(t, r, "idle"); s.drains != 0 {
		t.Errorf("drain_timeouts{idle} = %d, want 0", s.drains)
	}
}
