package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"gocloud.dev/gcerrors"

	"github.com/thalweg/thalweg/internal/schemaevo"
)

// Sentinel causes, matched with errors.Is through *Error.
var (
	// ErrClosed: the Sink or the Table was closed by its owner.
	ErrClosed = errors.New("iceberg: closed")
	// ErrOffsetOrder: Send was called with an offset not greater than the
	// previous one.
	ErrOffsetOrder = errors.New("iceberg: offsets must increase strictly on a sink")
	// ErrValueRange: an unsigned value does not fit the signed Iceberg type
	// it maps to (a uint64 above 2^63-1).
	ErrValueRange = errors.New("iceberg: value out of the range of its Iceberg type")
	// ErrCloseTimeout: Sink.Close gave up waiting for the catalog or the
	// object store after CloseTimeout.
	ErrCloseTimeout = errors.New("iceberg: close timed out waiting for the catalog or object store")
	// ErrNoTable: the table does not exist (Rebuild of a table nothing was
	// written to).
	ErrNoTable = errors.New("iceberg: table does not exist")
)

// Error is the error type of the package's operations.
//
// Permanent reports whether the Sink is unusable: once a Sink failed (a
// commit refused for good, a write that failed), every later Send and
// WaitDurable returns the same error and its owner (a lane) must Close it
// and Dial a new Sink, which starts from what the table holds. A
// WaitDurable that ended with its context is not permanent.
//
// Retryable and StatusName implement lanes.Classified structurally:
// Retryable tells a failure that heals (a catalog or object store that is
// unreachable, slow or failing with a server error) from one that repeats
// with the same configuration and data (credentials refused, a missing
// bucket, a schema change the table refuses, a malformed table identifier).
// StatusName names the kind of failure for logs and metrics
// ("PermissionDenied", "NotFound", "InvalidArgument", "Unavailable"), ""
// when there is none.
type Error struct {
	Op        string // "open", "write", "commit", "schema", "positions", "rows" or "rebuild"
	Err       error
	permanent bool
	class     class
}

// class is what a failure says about the future, with the gRPC-style name
// of its kind.
type class struct {
	retryable bool
	status    string
}

func (e *Error) Error() string { return fmt.Sprintf("iceberg %s: %v", e.Op, e.Err) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Permanent reports whether the Sink is unusable (see Error).
func (e *Error) Permanent() bool { return e.permanent }

// Retryable reports whether a new attempt with the same configuration may
// succeed (lanes.Classified).
func (e *Error) Retryable() bool { return e.class.retryable }

// StatusName names the failure's kind (lanes.Classified).
func (e *Error) StatusName() string { return e.class.status }

// newError wraps err for op, classified by classify; permanent says the
// Sink cannot go on.
func newError(op string, err error, permanent bool) *Error {
	var e *Error
	if errors.As(err, &e) && e.Op == op {
		if permanent && !e.permanent {
			return &Error{Op: op, Err: e.Err, permanent: true, class: e.class}
		}
		return e
	}
	return &Error{Op: op, Err: err, permanent: permanent, class: classify(err)}
}

// classify decides whether err heals by waiting. An error it does not
// recognise is retryable: a failure nobody can name is waited out, never
// given up on at once.
func classify(err error) class {
	var e *Error
	if errors.As(err, &e) {
		return e.class
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return class{true, "DeadlineExceeded"}
	case errors.Is(err, schemaevo.ErrIncompatible), errors.Is(err, ErrValueRange),
		errors.Is(err, errNoIcebergType), errors.Is(err, iceberg.ErrInvalidSchema),
		errors.Is(err, ErrPartitionBy), errors.Is(err, errMissingPartitionColumn), errors.Is(err, ErrPartitionValue),
		errors.Is(err, ErrTemplate), errors.Is(err, ErrUnsplittable):
		// A schema the table format (or its partition spec) cannot hold
		// does not heal either.
		return class{false, "InvalidArgument"}
	case errors.Is(err, rest.ErrUnauthorized), errors.Is(err, rest.ErrAuthorizationExpired), errors.Is(err, rest.ErrOAuthError):
		return class{false, "Unauthenticated"}
	case errors.Is(err, rest.ErrForbidden):
		return class{false, "PermissionDenied"}
	case errors.Is(err, rest.ErrBadRequest), errors.Is(err, catalog.ErrInvalidIdentifier):
		return class{false, "InvalidArgument"}
	case errors.Is(err, rest.ErrServiceUnavailable), errors.Is(err, rest.ErrServerError):
		return class{true, "Unavailable"}
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		// A local warehouse or catalog file the worker may not write.
		return class{false, "PermissionDenied"}
	case errors.Is(err, syscall.ENOTDIR):
		// A local warehouse path through a regular file.
		return class{false, "InvalidArgument"}
	}
	switch gcerrors.Code(err) {
	case gcerrors.PermissionDenied:
		return class{false, "PermissionDenied"}
	case gcerrors.NotFound:
		// A bucket or a table file that is not there does not appear by
		// waiting.
		return class{false, "NotFound"}
	case gcerrors.InvalidArgument:
		return class{false, "InvalidArgument"}
	case gcerrors.Unimplemented:
		return class{false, "Unimplemented"}
	case gcerrors.ResourceExhausted:
		return class{true, "ResourceExhausted"}
	case gcerrors.DeadlineExceeded:
		return class{true, "DeadlineExceeded"}
	}
	return class{true, "Unavailable"}
}
