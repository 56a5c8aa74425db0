package instruments

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/thalweg/thalweg/observability"
)

// CoverageMetrics is the instrument set of one secondary destination's
// coverage (docs/design.md#coverage-lag-never-lead, #rebuild-from-raw): how
// many records its coverage is behind the raw anchor's delivered
// watermark, how many records were replayed to it from the raw anchor, and
// how many live batches it had to let go because its queue was full (the
// cause of a catch-up).
//
// Like [LaneMetrics] it binds the destination attribute once and shares
// nothing with any other destination. All methods are safe for concurrent
// use; Close unregisters the lag gauge.
type CoverageMetrics struct {
	rebuilt  metric.Int64Counter
	dropped  metric.Int64Counter
	detached metric.Int64Gauge
	add      []metric.AddOption
	rec      []metric.RecordOption

	closeOnce sync.Once
	reg       metric.Registration
}

// NewCoverageMetrics creates the coverage instruments of destination on mp
// and registers thalweg.lane.coverage_lag as an observable gauge that calls
// lag at collection time. lag is called from the SDK's collection goroutine
// and must be safe for concurrent use and must not block.
func NewCoverageMetrics(mp metric.MeterProvider, destination string, lag func() uint64) (*CoverageMetrics, error) {
	switch {
	case mp == nil:
		return nil, errors.New("instruments: NewCoverageMetrics: nil MeterProvider")
	case destination == "":
		return nil, errors.New("instruments: NewCoverageMetrics: empty destination")
	case lag == nil:
		return nil, errors.New("instruments: NewCoverageMetrics: nil lag function")
	}
	m := meter(mp)
	opt := metric.WithAttributeSet(attribute.NewSet(attribute.String(observability.AttrDestination, destination)))
	cm := &CoverageMetrics{add: []metric.AddOption{opt}, rec: []metric.RecordOption{opt}}
	var e [4]error
	cm.rebuilt, e[0] = m.Int64Counter(observability.LaneRebuiltRecords, describe(observability.LaneRebuiltRecords), unit(observability.LaneRebuiltRecords))
	cm.dropped, e[1] = m.Int64Counter(observability.LaneLiveDropped, describe(observability.LaneLiveDropped), unit(observability.LaneLiveDropped))
	cm.detached, e[3] = m.Int64Gauge(observability.LaneDetached, describe(observability.LaneDetached), unit(observability.LaneDetached))
	gauge, err := m.Int64ObservableGauge(observability.LaneCoverageLag, describe(observability.LaneCoverageLag), unit(observability.LaneCoverageLag))
	e[2] = err
	if err := errors.Join(e[:]...); err != nil {
		return nil, fmt.Errorf("instruments: coverage %q instruments: %w", destination, err)
	}
	// Start both counters' series at zero (see NewLaneMetrics).
	cm.rebuilt.Add(context.Background(), 0, cm.add...)
	cm.dropped.Add(context.Background(), 0, cm.add...)
	cm.detached.Record(context.Background(), 0, cm.rec...)
	obs := []metric.ObserveOption{opt}
	cm.reg, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(gauge, int64(min(lag(), 1<<63-1)), obs...)
		return nil
	}, gauge)
	if err != nil {
		return nil, fmt.Errorf("instruments: coverage %q gauge callback: %w", destination, err)
	}
	return cm, nil
}

// Rebuilt counts n records replayed to the destination from the raw anchor.
func (m *CoverageMetrics) Rebuilt(ctx context.Context, n int64) {
	m.rebuilt.Add(ctx, n, m.add...)
}

// LiveDropped counts n live batches not queued for the destination because
// its queue was full; their records are rebuilt from the raw anchor.
func (m *CoverageMetrics) LiveDropped(ctx context.Context, n int64) {
	m.dropped.Add(ctx, n, m.add...)
}

// Detached sets thalweg.lane.detached to 1: the secondary stopped receiving
// for this run.
func (m *CoverageMetrics) Detached(ctx context.Context) {
	m.detached.Record(ctx, 1, m.rec...)
}

// Close unregisters the lag gauge. It is safe to call more than once.
func (m *CoverageMetrics) Close() error {
	var err error
	m.closeOnce.Do(func() { err = m.reg.Unregister() })
	return err
}
