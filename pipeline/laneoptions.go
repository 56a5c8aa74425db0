package pipeline

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/lanes"
)

// LaneOptions are the settings of a destination's lane that a user tunes.
// The pipeline sets the rest of lanes.Options itself — Destination (from
// Destination.Name), Dial, Committer (the offset store, or the coverage
// gate), MeterProvider and Logger (from Options) — which is why they are not
// fields here. Every zero value selects the lanes default.
type LaneOptions struct {
	// Capacity is lanes.Options.Capacity: the batches the lane holds
	// unfinished. Default lanes.DefaultCapacity.
	Capacity int
	// MaxBytes is lanes.Options.MaxBytes: the memory of the batches the
	// lane holds unfinished. Default lanes.DefaultMaxBytes.
	MaxBytes int64
	// Backoff is lanes.Options.Backoff. Default lanes.DefaultInitialBackoff
	// to lanes.DefaultMaxBackoff.
	Backoff lanes.Backoff
	// MaxRetries is lanes.Options.MaxRetries. Default
	// lanes.DefaultMaxRetries; negative poisons on the first error.
	MaxRetries int
	// AckTimeout is lanes.Options.AckTimeout. Default 0: no bound.
	AckTimeout time.Duration
	// PermanentBudget is lanes.Options.PermanentBudget: how long permanent
	// failures may persist with no progress before the lane fails for good
	// (the anchor then stops the run, a secondary is detached). Default
	// lanes.DefaultPermanentBudget; negative means never give up.
	PermanentBudget time.Duration
	// FailureLogInterval is lanes.Options.FailureLogInterval. Default
	// lanes.DefaultFailureLogInterval.
	FailureLogInterval time.Duration
	// OnConfirm is lanes.Options.OnConfirm (progress reporting; must not
	// block).
	OnConfirm func(offset uint64, spans []batch.OffsetSpan)
	// OnStateChange is lanes.Options.OnStateChange (must not block).
	OnStateChange func(lanes.StateChange)
}

// lanesOptions is the lane's full options: o plus what the pipeline owns.
func (o LaneOptions) lanesOptions(d Destination, committer lanes.Committer, mp metric.MeterProvider, log *slog.Logger) lanes.Options {
	return lanes.Options{
		Destination:        d.Name,
		Capacity:           o.Capacity,
		MaxBytes:           o.MaxBytes,
		Dial:               d.Dial,
		Committer:          committer,
		MeterProvider:      mp,
		Backoff:            o.Backoff,
		MaxRetries:         o.MaxRetries,
		AckTimeout:         o.AckTimeout,
		PermanentBudget:    o.PermanentBudget,
		FailureLogInterval: o.FailureLogInterval,
		OnConfirm:          o.OnConfirm,
		OnStateChange:      o.OnStateChange,
		// The lane adds the destination (and its kind) to every line itself.
		Logger: log,
	}
}
