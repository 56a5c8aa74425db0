package pulsar

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/observability"
)

// unackedWait reads thalweg.source.unacked_wait{bound="pulsar"}; ok is false
// when the series is not exported.
func unackedWait(t *testing.T, r *sdkmetric.ManualReader) (v float64, ok bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != observability.SourceUnackedWait {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[float64]).DataPoints {
				if b, _ := p.Attributes.Value(observability.AttrBound); b.AsString() == observability.BoundPulsar {
					return p.Value, true
				}
			}
		}
	}
	return 0, false
}

// Against the real broker: with MaxUnacked records handed out and none
// acknowledged, Next waits, and that wait is thalweg.source.unacked_wait
// {bound="pulsar"}, growing while it lasts; reading below the bound (and
// waiting for the broker) is not counted; Close unregisters the series.
func TestUnackedWaitIsMeasured(t *testing.T) {
	b := newBroker(t)
	short := topicName(t, "uw")
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(context.Background())
	s := open(t, Options{URL: b.url, Topics: []string{short}, Subscription: "sub", Type: Shared, MaxUnacked: 5, MeterProvider: mp})
	b.produce(t, fullTopic(short), 0, 10)
	recs := take(t, s, 5, 30*time.Second)
	if v, ok := unackedWait(t, r); !ok || v != 0 {
		t.Fatalf("unacked_wait %v (exported %v) after reading up to the bound without waiting, want 0", v, ok)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var rec batch.Record
	go func() { done <- s.Next(ctx, &rec) }()
	// The sixth message is there already: Next waits at the bound, not for
	// the broker. A wait in progress counts: it grows between two reads.
	testenv.WaitFor(t, 10*time.Second, "unacked_wait above 0 with Next at the bound", func() bool {
		v, _ := unackedWait(t, r)
		return v > 0
	})
	mid, _ := unackedWait(t, r)
	testenv.WaitFor(t, 10*time.Second, "unacked_wait to grow by 0.25 s while Next waits at the bound", func() bool {
		later, _ := unackedWait(t, r)
		return later >= mid+0.25
	})
	select {
	case err := <-done:
		t.Fatalf("Next returned %v with MaxUnacked records unacknowledged", err)
	default:
	}
	if err := s.Ack(spansOf(t, recs)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Next after the acks: %v", err)
	}
	end, _ := unackedWait(t, r)
	// The last four records, read below the bound, come after the wait
	// ended: neither they nor the time they take are counted.
	take(t, s, 4, 30*time.Second)
	if v, _ := unackedWait(t, r); v != end {
		t.Errorf("unacked_wait still grows after the wait ended: %v then %v", end, v)
	}
	if end < mid+0.25 {
		t.Errorf("unacked_wait %vs after a wait of more than 0.25 s (%v at its start)", end, mid)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := unackedWait(t, r); ok {
		t.Error("a closed Source still exports unacked_wait")
	}
}
