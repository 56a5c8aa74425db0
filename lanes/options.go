package lanes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/thalweg/thalweg/batch"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Defaults of Options.
const (
	// DefaultCapacity and DefaultMaxBytes bound a lane's unfinished
	// batches by count and by memory. The byte bound is the one that
	// binds for large batches (64 of the worker's default 8 MiB ones);
	// the count lets small ones pipeline (a full lane bounds the
	// receiver's group commit, see Options.Capacity).
	DefaultCapacity             = 4096
	DefaultMaxBytes       int64 = 512 << 20
	DefaultInitialBackoff       = 50 * time.Millisecond
	DefaultMaxBackoff           = 5 * time.Second
	DefaultMaxRetries           = 5
	// DefaultPermanentBudget is how long permanent failures may persist,
	// with no progress in between, before a lane fails for good.
	DefaultPermanentBudget = time.Minute
	// DefaultFailureLogInterval is the least time between two summary lines
	// of a lane that stays broken.
	DefaultFailureLogInterval = 30 * time.Second
)

// Errors.
var (
	// ErrClosed is returned by Submit once Close has been called, and given to
	// the OnDurable callback of every RawAnchor token the lane discarded.
	ErrClosed = errors.New("lanes: lane closed")
	// ErrCommitFailed wraps the first offset-store error a lane saw. From then
	// on no RawAnchor token of the lane is released with a nil error.
	ErrCommitFailed = errors.New("lanes: offset commit failed")
	// ErrFailed wraps the error of a lane that failed for good: permanent
	// failures persisted for Options.PermanentBudget with no progress (see
	// [Lane.Failure]). The lane no longer dials; Submit and Flush return it.
	ErrFailed = errors.New("lanes: lane failed for good")
	// ErrInvalidOptions wraps every Options validation error.
	ErrInvalidOptions = errors.New("lanes: invalid options")
)

// Backoff is an exponential backoff with jitter.
type Backoff struct {
	Initial time.Duration // first delay; default DefaultInitialBackoff
	Max     time.Duration // cap; default DefaultMaxBackoff
}

// delay returns the wait before attempt n (n >= 1): Initial·2^(n-1), capped at
// Max, with the upper half randomised so that lanes rebuilding after a shared
// outage do not reconnect in lockstep.
func (b Backoff) delay(n int) time.Duration {
	d := b.Initial
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	half := d / 2
	return half + rand.N(half+1)
}

// Options configures a Lane. The zero value of every optional field selects
// its documented default.
type Options struct {
	// Destination names the lane: it is the offset-store key and the metric
	// destination attribute. Required.
	Destination string

	// Capacity bounds the batches the lane holds unfinished: submitted but
	// not yet confirmed durable by the transport and, for committing lanes,
	// not yet committed. A full lane blocks Submit. It is also the most the
	// transport ever has un-acked from this lane. Default DefaultCapacity
	// (4096); pipelined throughput is about Capacity / ack latency, so a
	// sink with 10 ms acks needs a few hundred to a few thousand to keep up
	// with a fast source. Against a sink that commits in groups and
	// acknowledges each group (the flight receiver syncs whatever arrived
	// during its previous sync), a full lane also bounds the group: about
	// Capacity/2 batches, one sync being written while the next fills, so
	// small batches pay more syncs each than they would with a Capacity
	// that keeps the lane from filling (BENCHMARKS.md, "Small batches:
	// lane against raw DoPut"). MaxBytes bounds the same batches by memory.
	Capacity int

	// MaxBytes bounds the memory of the batches the lane holds unfinished
	// (every one is retained for replay): the allocated size of their
	// Arrow buffers, batch.(*Batch).AllocatedBytes. A Submit whose batch
	// does not fit blocks like one on a full lane; a batch larger than
	// MaxBytes is taken alone, once the lane holds nothing, so the lane
	// never holds more than max(MaxBytes, the largest batch). Default
	// DefaultMaxBytes (512 MiB).
	MaxBytes int64

	// Dial builds a transport. The lane's supervisor calls it for the first
	// stream and again after every poisoning, with backoff, until it succeeds
	// or the lane is closed. ctx is cancelled when the lane is closed. Required.
	Dial func(ctx context.Context) (Transport, error)

	// Committer receives delivered spans (Lane[RawAnchor]) or coverage
	// (Lane[Coverage]); its callbacks must come in commit order, one at a
	// time (see Committer). Required for those two kinds, ignored by
	// Lane[NoCommit].
	Committer Committer

	// MeterProvider provides the lane's instruments, bound to Destination.
	// Default: a no-op provider.
	MeterProvider metric.MeterProvider

	// Backoff paces retries of transient errors on a stream, and every
	// redial and rebuild. The wait before a rebuild grows with the lane's
	// consecutive failures — dials, replays and poisoned streams alike,
	// counted across incarnations — from Initial to Max (with jitter), and
	// the count resets only when the lane made progress: a durable
	// acknowledgement confirmed a batch. A stream that opens and dies at
	// its first send therefore backs off as much as a dial that fails.
	// Defaults DefaultInitialBackoff (50ms) and DefaultMaxBackoff (5s).
	Backoff Backoff

	// PermanentBudget is how long failures of [ClassPermanent] (a sink that
	// will not accept the stream as it is: bad credentials, a refused
	// schema, a missing table) may persist, uninterrupted by progress or by
	// a retryable failure, before the lane fails for good: it stops
	// dialling, moves to StateFailed, and Submit, Flush and [Lane.Failure]
	// return an error wrapping ErrFailed with the last cause. The lane
	// keeps retrying with backoff until then, so a fix made within the
	// budget (a token rotated, a schema accepted) heals it. Once Drain or
	// Close has been called, a permanent failure ends the lane at once: a
	// drain cannot wait for a fix. Retryable failures never end a lane. Default
	// DefaultPermanentBudget (1m); negative means never give up.
	PermanentBudget time.Duration

	// FailureLogInterval is the least time between the summary lines
	// ("lane still failing", with the attempts so far and the last cause)
	// a broken lane logs. The first failure, a change of failure class, the
	// recovery and the end are logged at once; every other failed attempt
	// only at Debug. Default DefaultFailureLogInterval (30s).
	FailureLogInterval time.Duration

	// MaxRetries is how many consecutive transient errors of one operation
	// (a Send or a durable wait) the lane retries before it poisons itself.
	// Default DefaultMaxRetries; negative means poison on the first error.
	MaxRetries int

	// AckTimeout bounds one durable wait; an expired wait counts as a
	// transient error. Zero (the default) means no bound: transports detect
	// dead streams themselves (keepalives) and return a permanent error.
	AckTimeout time.Duration

	// OnConfirm, when set, is called by the ack task for every confirmed
	// batch, in ascending offset order, after the lane's delivered watermark
	// reached offset and before the commit is enqueued. It is for progress
	// reporting and tests and must not block; spans are immutable and may be
	// retained. It is not a commit path: durable positions come from the
	// Committer only.
	OnConfirm func(offset uint64, spans []batch.OffsetSpan)

	// OnStateChange, when set, is called for every state transition of the
	// lane (From != To) and for every failed attempt to dial or replay while
	// the lane is connecting or rebuilding (From == To, Err the attempt's
	// error, Attempt its number in the lane's failure streak), so that an
	// embedding program sees an endpoint that keeps failing instead of a
	// Submit that silently blocks. A lane that fails for good reports a
	// transition to StateFailed with the final error.
	// Calls are serialised, in the order the transitions happen, each From
	// equal to the previous To; they come from the lane's own goroutines (or
	// from Submit and Close), must not block and must not call Close.
	OnStateChange func(StateChange)

	// Logger receives state transitions and errors; New adds the
	// destination and lane kind to every record. Default: slog.Default(),
	// so that a failing dial is logged even when nobody configured a logger.
	// A lane logs one line when it starts failing ("lane failing", with the
	// step, class, gRPC code and the error truncated to a few hundred
	// bytes), one per FailureLogInterval while it stays broken, one when it
	// recovers or fails for good; the individual attempts go to Debug, so
	// an endpoint that stays down for hours does not flood the log.
	Logger *slog.Logger
}

// StateChange is one call of Options.OnStateChange.
type StateChange struct {
	From, To State
	// Err is the cause: the dial or replay error of a failed attempt, the
	// error that poisoned the transport, the final error of StateFailed
	// (wrapping ErrFailed); nil for the other transitions.
	Err error
	// Class is Err's class (see [Classify]); ClassRetryable when Err is nil.
	Class Class
	// Attempt numbers a failed dial/replay attempt within the lane's
	// current failure streak (consecutive failures since the last progress,
	// poisonings included); 0 for transitions.
	Attempt int
}

func (o *Options) validate(kind confirmKind) error {
	var errs []error
	if o.Destination == "" {
		errs = append(errs, errors.New("Options.Destination is required"))
	}
	if o.Capacity < 0 {
		errs = append(errs, fmt.Errorf("Options.Capacity %d must be >= 0 (0 selects %d)", o.Capacity, DefaultCapacity))
	}
	if o.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("Options.MaxBytes %d must be >= 0 (0 selects %d)", o.MaxBytes, DefaultMaxBytes))
	}
	if o.Dial == nil {
		errs = append(errs, errors.New("Options.Dial is required"))
	}
	if o.Committer == nil && kind != kindNoCommit {
		errs = append(errs, fmt.Errorf("Options.Committer is required for a %s lane", kind))
	}
	if o.Backoff.Initial < 0 || o.Backoff.Max < 0 {
		errs = append(errs, errors.New("Options.Backoff durations must be >= 0"))
	}
	if o.AckTimeout < 0 {
		errs = append(errs, errors.New("Options.AckTimeout must be >= 0"))
	}
	if o.FailureLogInterval < 0 {
		errs = append(errs, errors.New("Options.FailureLogInterval must be >= 0"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

func (o *Options) withDefaults() {
	if o.Capacity == 0 {
		o.Capacity = DefaultCapacity
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MeterProvider == nil {
		o.MeterProvider = noop.NewMeterProvider()
	}
	if o.Backoff.Initial == 0 {
		o.Backoff.Initial = DefaultInitialBackoff
	}
	if o.Backoff.Max == 0 {
		o.Backoff.Max = DefaultMaxBackoff
	}
	o.Backoff.Max = max(o.Backoff.Max, o.Backoff.Initial)
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	} else if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PermanentBudget == 0 {
		o.PermanentBudget = DefaultPermanentBudget
	}
	if o.FailureLogInterval == 0 {
		o.FailureLogInterval = DefaultFailureLogInterval
	}
}
