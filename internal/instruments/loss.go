package instruments

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/thalweg/thalweg/observability"
)

// SourceLoss holds the instruments of what a source could not hand out:
// thalweg.source.discarded (messages the Pulsar client dropped) and
// thalweg.source.gap_records (seqs missing in a partition, by cause). Both
// are recorded rarely, never per record. Safe for concurrent use.
type SourceLoss struct {
	discarded metric.Int64Counter
	gap       metric.Int64Counter
}

// NewSourceLoss creates the instruments on mp.
func NewSourceLoss(mp metric.MeterProvider) (*SourceLoss, error) {
	if mp == nil {
		return nil, errors.New("instruments: NewSourceLoss: nil MeterProvider")
	}
	m := meter(mp)
	l := &SourceLoss{}
	var e [2]error
	l.discarded, e[0] = m.Int64Counter(observability.SourceDiscarded, describe(observability.SourceDiscarded), unit(observability.SourceDiscarded))
	l.gap, e[1] = m.Int64Counter(observability.SourceGapRecords, describe(observability.SourceGapRecords), unit(observability.SourceGapRecords))
	if err := errors.Join(e[:]...); err != nil {
		return nil, fmt.Errorf("instruments: source loss instruments: %w", err)
	}
	// Watched for their first increase: the gap series exist from the
	// start (a discard's reason is known only when it happens).
	for _, c := range []string{observability.GapClient, observability.GapBroker} {
		l.gap.Add(context.Background(), 0, reasonOpt(observability.AttrCause, c))
	}
	return l, nil
}

// Discarded counts one message the client discarded, for reason (the
// client's validation error, e.g. ChecksumMismatch).
func (l *SourceLoss) Discarded(ctx context.Context, reason string) {
	l.discarded.Add(ctx, 1, reasonOpt(observability.AttrReason, reason))
}

// Gap counts n seqs missing in a partition, for cause
// (observability.GapClient, observability.GapBroker).
func (l *SourceLoss) Gap(ctx context.Context, cause string, n int64) {
	l.gap.Add(ctx, n, reasonOpt(observability.AttrCause, cause))
}

func reasonOpt(key, value string) metric.AddOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String(key, value)))
}
