package instruments

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/thalweg/thalweg/observability"
)

// Watermarks is what a lane exposes to its observable gauges. Both methods
// are called from the SDK's collection goroutine and must be safe for
// concurrent use (the lane reads its atomics).
type Watermarks interface {
	Submitted() uint64
	Delivered() uint64
}

// ByteWatermarks is what a lane bounded by bytes as well as by batches
// adds to Watermarks: its saturation is then the fuller of the two
// bounds. Both methods must be safe to call from any goroutine.
type ByteWatermarks interface {
	HeldBytes() int64
	MaxBytes() int64
}

// Bucket boundaries. Burst sizes are powers of two up to the largest lane
// capacity anyone should configure; latency spans sub-millisecond loopback
// to the tens of seconds of a struggling remote sink.
var (
	coalesceBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}
	latencyBuckets  = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
)

// LaneMetrics is the instrument set of one ack lane (one destination).
//
// The destination attribute is bound once in [NewLaneMetrics]; the record
// methods allocate nothing of their own. All methods are safe for concurrent
// use. Close unregisters the gauge callback; a closed LaneMetrics still
// accepts recordings (they are simply exported without the gauges and the
// intake-blocked time).
type LaneMetrics struct {
	destination string

	coalesce metric.Int64Histogram
	latency  metric.Float64Histogram
	retries  metric.Int64Counter
	poisoned metric.Int64Counter
	drains   metric.Int64Counter

	// blocked holds one wait clock per BlockReason, read by the gauge
	// callback into thalweg.lane.intake_blocked.
	blocked [numBlockReasons]*waitClock

	rec []metric.RecordOption
	add []metric.AddOption
	// poisonAdd holds one precomputed option per known cause.
	poisonAdd map[string][]metric.AddOption

	closeOnce sync.Once
	reg       metric.Registration
}

// NewLaneMetrics creates the instruments of the lane for destination on mp
// and registers the gauges (pending, saturation, submitted and delivered
// offsets) as observable gauges that read w at collection time, and the
// intake-blocked time, an observable counter fed by IntakeBlocked. capacity is
// the lane's channel capacity, the denominator of saturation; it must be
// positive. A w that is also a ByteWatermarks makes saturation the fuller
// of pending/capacity and held/max bytes.
func NewLaneMetrics(mp metric.MeterProvider, destination string, capacity int, w Watermarks) (*LaneMetrics, error) {
	switch {
	case mp == nil:
		return nil, errors.New("instruments: NewLaneMetrics: nil MeterProvider")
	case destination == "":
		return nil, errors.New("instruments: NewLaneMetrics: empty destination")
	case capacity <= 0:
		return nil, fmt.Errorf("instruments: NewLaneMetrics: capacity %d must be > 0", capacity)
	case w == nil:
		return nil, errors.New("instruments: NewLaneMetrics: nil Watermarks")
	}
	m := meter(mp)
	set := attribute.NewSet(attribute.String(observability.AttrDestination, destination))
	opt := metric.WithAttributeSet(set)
	lm := &LaneMetrics{
		destination: destination,
		rec:         []metric.RecordOption{opt},
		add:         []metric.AddOption{opt},
		poisonAdd:   make(map[string][]metric.AddOption, len(observability.Causes())),
	}
	for _, c := range observability.Causes() {
		lm.poisonAdd[c] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(
			attribute.String(observability.AttrDestination, destination), attribute.String(observability.AttrCause, c)))}
	}

	var errs []error
	collect := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	lm.coalesce, err = m.Int64Histogram(observability.LaneCoalesceRatio, describe(observability.LaneCoalesceRatio), unit(observability.LaneCoalesceRatio), metric.WithExplicitBucketBoundaries(coalesceBuckets...))
	collect(err)
	lm.latency, err = m.Float64Histogram(observability.LaneDeliveryLatency, describe(observability.LaneDeliveryLatency), unit(observability.LaneDeliveryLatency), metric.WithExplicitBucketBoundaries(latencyBuckets...))
	collect(err)
	lm.retries, err = m.Int64Counter(observability.LaneRetries, describe(observability.LaneRetries), unit(observability.LaneRetries))
	collect(err)
	lm.poisoned, err = m.Int64Counter(observability.LanePoisoned, describe(observability.LanePoisoned), unit(observability.LanePoisoned))
	collect(err)
	lm.drains, err = m.Int64Counter(observability.LaneDrainTimeouts, describe(observability.LaneDrainTimeouts), unit(observability.LaneDrainTimeouts))
	collect(err)
	blocked, err := m.Float64ObservableCounter(observability.LaneIntakeBlocked, describe(observability.LaneIntakeBlocked), unit(observability.LaneIntakeBlocked))
	collect(err)
	pending, err := m.Int64ObservableGauge(observability.LanePending, describe(observability.LanePending), unit(observability.LanePending))
	collect(err)
	saturation, err := m.Float64ObservableGauge(observability.LaneSaturation, describe(observability.LaneSaturation), unit(observability.LaneSaturation))
	collect(err)
	submitted, err := m.Int64ObservableGauge(observability.LaneSubmittedOffset, describe(observability.LaneSubmittedOffset), unit(observability.LaneSubmittedOffset))
	collect(err)
	delivered, err := m.Int64ObservableGauge(observability.LaneDeliveredOffset, describe(observability.LaneDeliveredOffset), unit(observability.LaneDeliveredOffset))
	collect(err)
	if len(errs) > 0 {
		return nil, fmt.Errorf("instruments: lane %q instruments: %w", destination, errors.Join(errs...))
	}

	// Counters appear in an exposition only once they were added to; start
	// every series at zero so that a healthy lane shows "0 retries, never
	// poisoned" instead of nothing, and rate() has a baseline.
	ctx := context.Background()
	lm.retries.Add(ctx, 0, lm.add...)
	lm.drains.Add(ctx, 0, lm.add...)
	for _, c := range lm.poisonAdd {
		lm.poisoned.Add(ctx, 0, c...)
	}

	obs := []metric.ObserveOption{opt}
	var blockedObs [numBlockReasons][]metric.ObserveOption
	for r := range numBlockReasons {
		lm.blocked[r] = newWaitClock()
		blockedObs[r] = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(
			attribute.String(observability.AttrDestination, destination), attribute.String(observability.AttrReason, r.String())))}
	}
	fcap := float64(capacity)
	bw, _ := w.(ByteWatermarks)
	lm.reg, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		// Read delivered first: it never passes submitted, so reading it
		// first keeps pending >= 0 even while both move.
		d := w.Delivered()
		s := w.Submitted()
		p := uint64(0)
		if s > d {
			p = s - d
		}
		o.ObserveInt64(pending, int64(p), obs...)
		sat := float64(p) / fcap
		if bw != nil {
			if mb := bw.MaxBytes(); mb > 0 {
				sat = max(sat, float64(bw.HeldBytes())/float64(mb))
			}
		}
		o.ObserveFloat64(saturation, sat, obs...)
		o.ObserveInt64(submitted, int64(s), obs...)
		o.ObserveInt64(delivered, int64(d), obs...)
		for r, c := range lm.blocked {
			o.ObserveFloat64(blocked, c.seconds(), blockedObs[r]...)
		}
		return nil
	}, pending, saturation, submitted, delivered, blocked)
	if err != nil {
		return nil, fmt.Errorf("instruments: lane %q gauge callback: %w", destination, err)
	}
	return lm, nil
}

// Destination is the destination attribute of this instrument set.
func (m *LaneMetrics) Destination() string { return m.destination }

// Burst records the size of one coalesced burst (batches confirmed by one
// durable wait).
func (m *LaneMetrics) Burst(ctx context.Context, n int) {
	m.coalesce.Record(ctx, int64(n), m.rec...)
}

// DeliveryLatency records the submit-to-confirmation time of one batch.
func (m *LaneMetrics) DeliveryLatency(ctx context.Context, d time.Duration) {
	m.latency.Record(ctx, d.Seconds(), m.rec...)
}

// Retry counts one transient error that the lane retries.
func (m *LaneMetrics) Retry(ctx context.Context) {
	m.retries.Add(ctx, 1, m.add...)
}

// Poisoned counts one lane failure with its cause (one of [observability.Causes]; any other string is accepted but costs an attribute set per
// call).
func (m *LaneMetrics) Poisoned(ctx context.Context, cause string) {
	if opts, ok := m.poisonAdd[cause]; ok {
		m.poisoned.Add(ctx, 1, opts...)
		return
	}
	m.poisoned.Add(ctx, 1, metric.WithAttributes(
		attribute.String(observability.AttrDestination, m.destination), attribute.String(observability.AttrCause, cause)))
}

// DrainTimedOut counts one graceful drain (the lane's Close) that its
// context cut short with batches still unconfirmed.
func (m *LaneMetrics) DrainTimedOut(ctx context.Context) {
	m.drains.Add(ctx, 1, m.add...)
}

// IntakeBlocked starts one wait of Submit for reason; End the returned Wait
// when it is over (or when the reason changes, then start the next). Call it
// only on the slow path, when Submit is about to block: a Submit that does
// not wait records nothing. The time counts in thalweg.lane.intake_blocked
// while the wait lasts. An unknown reason records nothing.
func (m *LaneMetrics) IntakeBlocked(reason BlockReason) Wait {
	if reason >= numBlockReasons {
		return Wait{}
	}
	return m.blocked[reason].begin()
}

// Close unregisters the gauge callback so that a closed lane stops being
// reported. It is safe to call more than once.
func (m *LaneMetrics) Close() error {
	var err error
	m.closeOnce.Do(func() { err = m.reg.Unregister() })
	return err
}

// describe and unit return the description and unit options of the named
// instrument from the catalogue in names.go, the single source of truth for
// both the SDK and the Prometheus names.
func describe(name string) metric.InstrumentOption { return metric.WithDescription(lookup(name).Help) }

func unit(name string) metric.InstrumentOption { return metric.WithUnit(lookup(name).Unit) }

// lookup returns the catalogue entry of name (observability.Instruments).
func lookup(name string) observability.Instrument {
	for _, in := range observability.Instruments() {
		if in.Name == name {
			return in
		}
	}
	panic("instruments: unknown instrument " + name) // programming error in this package
}

// meter returns thalweg's meter from mp.
func meter(mp metric.MeterProvider) metric.Meter {
	return mp.Meter(observability.ScopeName)
}
