package lanes

import (
	"context"
	"errors"

	"github.com/thalweg/thalweg/batch"
)

// Transport is what a sink offers a lane: a pipelined, acknowledging stream.
// Sink packages satisfy it structurally and never import lanes.
//
// Offsets are the lane's logical offsets: strictly increasing across the
// Send calls made on one Transport value, not necessarily starting at 0 and
// not necessarily contiguous. A transport that speaks a protocol with
// physical per-connection offsets maps them back.
//
// Goroutine safety: a lane calls Send from one goroutine (its submitter) and
// WaitDurable from another (its ack task), concurrently. Close may be called
// from any goroutine, at most once, and unblocks both.
type Transport interface {
	// Send hands b to the transport under offset and returns as soon as the
	// transport accepted it (queued or written to the wire), never waiting
	// for a server acknowledgement. Send does not take ownership of b: a
	// transport that keeps b after Send returns must Retain it and Release it
	// when done.
	Send(ctx context.Context, offset uint64, b *batch.Batch) error

	// WaitDurable blocks until the server has durably acknowledged every
	// batch sent with an offset <= offset, or ctx is done, or the stream
	// failed. A nil error means everything up to offset is durable.
	WaitDurable(ctx context.Context, offset uint64) error

	// Close tears the stream down and releases everything the transport
	// retained. Pending WaitDurable and Send calls return an error.
	Close() error
}

// Permanent is implemented by errors that a transport knows to end the
// current stream (the stream is dead, or the server refused it). A lane
// poisons itself on such an error and its supervisor rebuilds the
// transport; any other error of Send or WaitDurable is retried on the same
// stream, up to Options.MaxRetries times, before the lane poisons itself.
//
// Permanent says nothing about whether a new stream will fare better: that
// is the error's [Class] (see [Classified]). A restarting sink ends the
// stream (Permanent) but heals (retryable); a wrong token ends it and does
// not heal (permanent class).
//
// Sink packages implement this method on their own error types; they do not
// import lanes to do so.
type Permanent interface {
	error
	Permanent() bool
}

// IsPermanent reports whether err, or any error it wraps, declares itself
// permanent: the current stream is dead and must be rebuilt.
func IsPermanent(err error) bool {
	var p Permanent
	return errors.As(err, &p) && p.Permanent()
}

// Class is what a failure says about the future: whether a new stream with
// the same configuration and data may succeed.
type Class int

const (
	// ClassRetryable: the sink is unreachable, restarting, overloaded or
	// slow (gRPC Unavailable, DeadlineExceeded, ResourceExhausted, Aborted,
	// a reset connection, an ack timeout). The lane retries it with growing
	// backoff for as long as it lives.
	ClassRetryable Class = iota
	// ClassPermanent: the sink will not accept this stream as it is
	// (Unauthenticated, PermissionDenied, InvalidArgument such as a schema
	// mismatch, NotFound, FailedPrecondition, Unimplemented, OutOfRange,
	// malformed acknowledgements). The lane keeps retrying, with backoff,
	// for Options.PermanentBudget and then fails for good.
	ClassPermanent
)

func (c Class) String() string {
	if c == ClassPermanent {
		return "permanent"
	}
	return "retryable"
}

// MarshalText makes log handlers (text and JSON alike) write the name.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Classified is implemented by sink errors that know their [Class].
// Retryable reports whether a new attempt with the same configuration and
// data may succeed; StatusName is the name of the failure's gRPC status
// code ("Unauthenticated", "Unavailable", ...), or "" when the failure has
// none (a local error). Sink packages implement it structurally, as they do
// Permanent.
type Classified interface {
	error
	Retryable() bool
	StatusName() string
}

// Classify returns err's class and status code name. An error that does
// not implement [Classified] (anywhere in its chain) is retryable: a lane
// never gives up on a failure it cannot name.
func Classify(err error) (Class, string) {
	var c Classified
	if err == nil || !errors.As(err, &c) {
		return ClassRetryable, ""
	}
	if c.Retryable() {
		return ClassRetryable, c.StatusName()
	}
	return ClassPermanent, c.StatusName()
}
