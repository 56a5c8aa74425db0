package zerobus

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/grpcclass"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrClosed is returned by Send and WaitDurable after Close.
	ErrClosed = errors.New("zerobus: sink closed")
	// ErrAckTimeout: the server acknowledged nothing for Options.AckTimeout
	// while records were outstanding.
	ErrAckTimeout = errors.New("zerobus: no acknowledgement progress within the ack timeout")
	// ErrProtocol: the server sent something the protocol does not allow
	// (an ack beyond what was sent, an unexpected message).
	ErrProtocol = errors.New("zerobus: protocol violation by the server")
	// ErrStreamEnded: the server ended the stream without a close signal.
	ErrStreamEnded = errors.New("zerobus: server ended the stream")
	// ErrRecordTooLarge: one encoded record exceeds Options.MaxPayload.
	ErrRecordTooLarge = errors.New("zerobus: record larger than the payload limit")
	// ErrSchemaMismatch: a batch's schema differs from the stream's and
	// cannot go on a new stream (Flight mode's mapping of
	// flight.ErrUnsupportedSchema; the ephemeral mode opens a new stream).
	ErrSchemaMismatch = errors.New("zerobus: batch schema differs from the stream schema")
	// ErrOffsetOrder: Send was called with an offset not above the last one.
	ErrOffsetOrder = errors.New("zerobus: offsets must be strictly increasing")
)

// permanentCodes are the gRPC codes the Zerobus service uses for requests
// that can never succeed as sent (bad data, bad credentials, missing table,
// unsupported feature): retrying them only repeats the failure.
var permanentCodes = map[codes.Code]bool{
	codes.InvalidArgument:  true,
	codes.Unauthenticated:  true,
	codes.PermissionDenied: true,
	codes.OutOfRange:       true,
	codes.Unimplemented:    true,
	codes.NotFound:         true,
}

// Error is every failure the sink reports from the wire. Its Permanent
// method is what a lane uses (structurally, through lanes.Permanent) to
// tell "rebuild the transport" from "retry with backoff".
type Error struct {
	// Op is the step that failed: "dial", "create_stream", "send", "recv",
	// "ack", "encode".
	Op string
	// Code is the gRPC status code (codes.OK when the failure is local).
	Code codes.Code
	// StreamDead is set when the physical stream is gone: this Sink cannot
	// deliver anything any more, whatever the code, and must be replaced by a
	// new Dial (which replays from the lane's durable watermark).
	StreamDead bool
	Err        error
}

func (e *Error) Error() string {
	s := "zerobus: " + e.Op
	if e.Code != codes.OK {
		s += " (" + e.Code.String() + ")"
	}
	if e.StreamDead {
		s += " [stream dead]"
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Permanent reports whether the error is unrecoverable on this Sink: the
// stream is dead or the server rejected the request with a code that
// retrying cannot fix (InvalidArgument, Unauthenticated, PermissionDenied,
// OutOfRange, Unimplemented, NotFound). Everything else (Unavailable,
// Internal, ResourceExhausted, a Dial that could not connect) is transient.
func (e *Error) Permanent() bool { return e.StreamDead || permanentCodes[e.Code] }

// Retryable implements lanes.Classified structurally: whether a new stream
// with the same configuration and data may succeed. A dead stream alone is
// retryable (the server restarted, the connection reset: Unavailable,
// Internal, a stream ended, an ack timeout); a refusal is not — a code
// grpcclass.Refused names, a TLS handshake that fails on a certificate
// (grpcclass.TLSRefused), a protocol violation by the server (malformed
// acks), a record larger than the payload limit, options Dial refuses
// (ErrInvalidOptions: a TLS file that is missing or does not parse).
func (e *Error) Retryable() bool {
	switch {
	case grpcclass.Refused(e.Code), grpcclass.TLSRefused(e.Code, e.Err):
		return false
	case errors.Is(e.Err, ErrProtocol), errors.Is(e.Err, ErrRecordTooLarge), errors.Is(e.Err, ErrInvalidOptions):
		return false
	}
	return true
}

// StatusName implements lanes.Classified: the gRPC code's name, or "" for a
// local failure.
func (e *Error) StatusName() string { return grpcclass.Name(e.Code) }

// wireError wraps err from gRPC, keeping its status code.
func wireError(op string, err error, dead bool) *Error {
	var ze *Error
	if errors.As(err, &ze) {
		return &Error{Op: op, Code: ze.Code, StreamDead: dead || ze.StreamDead, Err: ze.Err}
	}
	return &Error{Op: op, Code: status.Code(err), StreamDead: dead, Err: err}
}

func protocolError(format string, args ...any) *Error {
	return &Error{Op: "recv", Code: codes.Internal, StreamDead: true,
		Err: fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)}
}
