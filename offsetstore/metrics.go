package offsetstore

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/metric"
)

const meterName = "github.com/thalweg/thalweg/offsetstore"

// instruments are the store's OpenTelemetry instruments. They carry no
// attributes: one store serves every destination of a process, and a group
// commit mixes destinations.
type instruments struct {
	commitLatency metric.Float64Histogram // thalweg.offsetstore.commit_latency
	syncs         metric.Int64Counter     // thalweg.offsetstore.syncs
	failures      metric.Int64Counter     // thalweg.offsetstore.commit_failures
	perSync       metric.Int64Histogram   // thalweg.offsetstore.confirmations_per_sync
}

func newInstruments(mp metric.MeterProvider) (*instruments, error) {
	m := mp.Meter(meterName)
	var inst instruments
	var err error
	if inst.commitLatency, err = m.Float64Histogram("thalweg.offsetstore.commit_latency",
		metric.WithDescription("Time from handing a group commit to Pebble until its WAL sync returned."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
	); err != nil {
		return nil, fmt.Errorf("offsetstore: commit_latency instrument: %w", err)
	}
	if inst.syncs, err = m.Int64Counter("thalweg.offsetstore.syncs",
		metric.WithDescription("Synced group commits whose WAL sync returned, successful or not."),
		metric.WithUnit("{sync}"),
	); err != nil {
		return nil, fmt.Errorf("offsetstore: syncs instrument: %w", err)
	}
	if inst.failures, err = m.Int64Counter("thalweg.offsetstore.commit_failures",
		metric.WithDescription("Group commits that failed; each one leaves the store failed until reopened."),
		metric.WithUnit("{commit}"),
	); err != nil {
		return nil, fmt.Errorf("offsetstore: commit_failures instrument: %w", err)
	}
	// A healthy store shows "0 failures" rather than no series at all.
	inst.failures.Add(context.Background(), 0)
	inst.syncs.Add(context.Background(), 0)
	if inst.perSync, err = m.Int64Histogram("thalweg.offsetstore.confirmations_per_sync",
		metric.WithDescription("CommitDelivered/CommitCoverage calls made durable by one synced group commit."),
		metric.WithUnit("{confirmation}"),
		metric.WithExplicitBucketBoundaries(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096),
	); err != nil {
		return nil, fmt.Errorf("offsetstore: confirmations_per_sync instrument: %w", err)
	}
	return &inst, nil
}

// recordSync records one group commit whose sync returned (or whose write
// failed before a sync was issued).
func (i *instruments) recordSync(latency time.Duration, confirmations int, err error) {
	ctx := context.Background()
	i.syncs.Add(ctx, 1)
	i.commitLatency.Record(ctx, latency.Seconds())
	if err != nil {
		i.failures.Add(ctx, 1)
		return
	}
	i.perSync.Record(ctx, int64(confirmations))
}
