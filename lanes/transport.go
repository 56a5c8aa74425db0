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

// Permanent is implemented by errors that a transport knows to be
// unrecoverable on the current stream (the stream is dead, the server
// rejected the data or the credentials). A lane poisons itself on a
// permanent error and its supervisor rebuilds the transport; any other
// error is treated as transient and retried with backoff.
//
// Sink packages implement this method on their own error types; they do not
// import lanes to do so.
type Permanent interface {
	error
	Permanent() bool
}

// IsPermanent reports whether err, or any error it wraps, declares itself
// permanent.
func IsPermanent(err error) bool {
	var p Permanent
	return errors.As(err, &p) && p.Permanent()
}
