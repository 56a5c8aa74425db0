package instruments

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/thalweg/thalweg/observability"
)

// Flush reasons of thalweg.batch.flushes, mirroring batch.FlushReason's
// String values (this package does not import batch).
var flushReasons = []string{"rows", "bytes", "linger", "shutdown", "schema", "idle"}

var (
	rowBuckets  = []float64{1, 10, 100, 1000, 4096, 16384, 65536, 262144, 1048576}
	byteBuckets = []float64{1 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20}
)

// PipelineMetrics holds the instruments that are not per lane: the
// assembler's flushes, the source's received and acknowledged records and
// the dead-letter path. Safe for concurrent use.
type PipelineMetrics struct {
	flushes metric.Int64Counter
	rows    metric.Int64Histogram
	bytes   metric.Int64Histogram
	records metric.Int64Counter
	acked   metric.Int64Counter
	ackErrs metric.Int64Counter
	dlq     metric.Int64Counter

	reasonAdd map[string][]metric.AddOption // flush reasons, precomputed
	dlqOpts   syncMap                       // dead-letter reasons, computed on first use
}

// NewPipelineMetrics creates the pipeline-wide instruments on mp.
func NewPipelineMetrics(mp metric.MeterProvider) (*PipelineMetrics, error) {
	if mp == nil {
		return nil, errors.New("instruments: NewPipelineMetrics: nil MeterProvider")
	}
	m := meter(mp)
	p := &PipelineMetrics{reasonAdd: make(map[string][]metric.AddOption, len(flushReasons))}
	for _, r := range flushReasons {
		p.reasonAdd[r] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String(observability.AttrReason, r)))}
	}
	var e [7]error
	p.flushes, e[0] = m.Int64Counter(observability.BatchFlushes, describe(observability.BatchFlushes), unit(observability.BatchFlushes))
	p.rows, e[1] = m.Int64Histogram(observability.BatchRows, describe(observability.BatchRows), unit(observability.BatchRows), metric.WithExplicitBucketBoundaries(rowBuckets...))
	p.bytes, e[2] = m.Int64Histogram(observability.BatchBytes, describe(observability.BatchBytes), unit(observability.BatchBytes), metric.WithExplicitBucketBoundaries(byteBuckets...))
	p.records, e[3] = m.Int64Counter(observability.SourceRecords, describe(observability.SourceRecords), unit(observability.SourceRecords))
	p.acked, e[4] = m.Int64Counter(observability.SourceAcked, describe(observability.SourceAcked), unit(observability.SourceAcked))
	p.dlq, e[5] = m.Int64Counter(observability.DLQRecords, describe(observability.DLQRecords), unit(observability.DLQRecords))
	p.ackErrs, e[6] = m.Int64Counter(observability.SourceAckErrors, describe(observability.SourceAckErrors), unit(observability.SourceAckErrors))
	if err := errors.Join(e[:]...); err != nil {
		return nil, fmt.Errorf("instruments: pipeline instruments: %w", err)
	}
	// A failure counter is watched for its first increase: its series
	// exists from the start, at 0.
	p.ackErrs.Add(context.Background(), 0)
	return p, nil
}

// BatchFlushed records one emitted batch: its flush reason (batch.FlushReason.String()),
// its row count and its Arrow buffer size in bytes.
func (p *PipelineMetrics) BatchFlushed(ctx context.Context, reason string, rows, bytes int64) {
	if opts, ok := p.reasonAdd[reason]; ok {
		p.flushes.Add(ctx, 1, opts...)
	} else {
		p.flushes.Add(ctx, 1, metric.WithAttributes(attribute.String(observability.AttrReason, reason)))
	}
	p.rows.Record(ctx, rows)
	p.bytes.Record(ctx, bytes)
}

// SourceRecords counts n records received from the source.
func (p *PipelineMetrics) SourceRecords(ctx context.Context, n int64) { p.records.Add(ctx, n) }

// SourceAckFailed counts one failed upstream acknowledgement request.
func (p *PipelineMetrics) SourceAckFailed(ctx context.Context) { p.ackErrs.Add(ctx, 1) }

// SourceAcked counts n records acknowledged upstream.
func (p *PipelineMetrics) SourceAcked(ctx context.Context, n int64) { p.acked.Add(ctx, n) }

// DLQRecords counts n records sent to the dead-letter path for reason. The
// attribute set of a reason is built on its first use and cached.
func (p *PipelineMetrics) DLQRecords(ctx context.Context, reason string, n int64) {
	p.dlq.Add(ctx, n, p.dlqOpts.get(reason)...)
}
