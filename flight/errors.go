package flight

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/grpcclass"
)

// Sentinel causes, matched with errors.Is through *Error.
var (
	// ErrClosed: the Sink was closed by its owner.
	ErrClosed = errors.New("flight: sink closed")
	// ErrStreamEnded: the server ended the DoPut stream (io.EOF or an OK
	// status) while the sink still used it.
	ErrStreamEnded = errors.New("flight: server ended the DoPut stream")
	// ErrAckTimeout: batches were outstanding and the acknowledged watermark
	// did not move for Options.AckTimeout.
	ErrAckTimeout = errors.New("flight: no durable acknowledgement within the ack timeout")
	// ErrSchemaChanged is never returned: a batch with another schema is
	// sent on a new DoPut stream of the same Sink (see Sink.Send). It exists
	// so that code matching it compiles.
	ErrSchemaChanged = errors.New("flight: batch schema differs from the stream's schema")
	// ErrUnsupportedSchema: the schema has dictionary-encoded fields, which
	// the thalweg wire encoding does not carry.
	ErrUnsupportedSchema = errors.New("flight: dictionary-encoded fields are not supported")
	// ErrOffsetOrder: Send was called with an offset not greater than the
	// previous one on this stream.
	ErrOffsetOrder = errors.New("flight: offsets must increase strictly on a stream")
	// ErrRowTooLarge: a single row encodes larger than MaxMessageSize, so the
	// batch cannot be split to fit.
	ErrRowTooLarge = errors.New("flight: a single row exceeds the maximum message size")
	// ErrBadAck: the server sent a PutResult this sink cannot parse.
	ErrBadAck = errors.New("flight: malformed PutResult app_metadata")
)

// Error is the error type of Sink operations.
//
// Permanent reports whether the stream is unusable: every error that ends
// or poisons the DoPut stream is permanent, and the owner (a lane) must
// Close the Sink and Dial a new one to continue. Context cancellation of a
// WaitDurable call, or a Send whose context ended before anything was
// written, is not permanent: the stream is intact.
//
// Code is the gRPC status code when the server or the transport supplied one
// (codes.OK otherwise).
//
// Retryable (and StatusName) implement lanes.Classified structurally: it
// tells a failure that heals (the server is unreachable, restarting,
// overloaded or slow: Unavailable, DeadlineExceeded, ResourceExhausted,
// Aborted, a stream the server ended, an ack timeout) from one that a new
// stream with the same configuration and data repeats (Unauthenticated,
// PermissionDenied, InvalidArgument such as a schema the receiver refuses,
// NotFound, FailedPrecondition, Unimplemented, OutOfRange, a malformed
// PutResult, a schema or row this sink cannot encode, a TLS handshake that
// fails on a certificate, options Dial refuses such as a TLS file that is
// missing or does not parse). Permanent and
// Retryable are independent: a restarting server ends the stream
// (Permanent) but heals (Retryable).
type Error struct {
	Op        string // "dial", "send" or "ack"
	Code      codes.Code
	Err       error
	permanent bool
}

func (e *Error) Error() string {
	if e.Code != codes.OK {
		return fmt.Sprintf("flight %s: %v (%s)", e.Op, e.Err, e.Code)
	}
	return fmt.Sprintf("flight %s: %v", e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Permanent implements the lanes.Permanent contract structurally: the
// stream is dead and a new Sink is needed.
func (e *Error) Permanent() bool { return e.permanent }

// Retryable implements lanes.Classified: whether a new stream with the same
// configuration and data may succeed (see Error).
func (e *Error) Retryable() bool {
	if grpcclass.Refused(e.Code) || grpcclass.TLSRefused(e.Code, e.Err) {
		return false
	}
	for _, never := range []error{ErrBadAck, ErrUnsupportedSchema, ErrRowTooLarge, ErrOffsetOrder, ErrInvalidOptions} {
		if errors.Is(e.Err, never) {
			return false
		}
	}
	return true
}

// StatusName implements lanes.Classified: the gRPC code's name, or "" for a
// local failure.
func (e *Error) StatusName() string { return grpcclass.Name(e.Code) }

// streamError classifies an error returned by the gRPC stream. Any error
// from a stream operation means the stream is gone, so the result is always
// permanent; the code is kept for the supervisor's diagnosis.
func streamError(op string, err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	if errors.Is(err, io.EOF) {
		return &Error{Op: op, Err: ErrStreamEnded, permanent: true}
	}
	if st, ok := status.FromError(err); ok {
		return &Error{Op: op, Code: st.Code(), Err: err, permanent: true}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Op: op, Code: status.FromContextError(err).Code(), Err: err, permanent: true}
	}
	return &Error{Op: op, Code: codes.Unknown, Err: err, permanent: true}
}

// dialError classifies a failure to open the stream. Connection failures
// (Unavailable, DeadlineExceeded) are transient: nothing was created and a
// later Dial may succeed. Rejections by the server are permanent.
func dialError(err error) *Error {
	code := status.Code(err)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		code = status.FromContextError(err).Code()
	}
	switch code {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.ResourceExhausted, codes.Aborted:
		return &Error{Op: "dial", Code: code, Err: err}
	default:
		return &Error{Op: "dial", Code: code, Err: err, permanent: true}
	}
}

func permanentf(op string, cause error, format string, args ...any) *Error {
	return &Error{Op: op, Err: fmt.Errorf("%w: "+format, append([]any{cause}, args...)...), permanent: true}
}
