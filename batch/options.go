package batch

import (
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Defaults applied by NewAssembler to zero-valued AssemblerOptions fields.
const (
	DefaultMaxRows  = 8192
	DefaultMaxBytes = 8 << 20
	DefaultLinger   = 100 * time.Millisecond

	// MaxMaxBytes caps MaxBytes so that a batch's variable-length columns
	// stay well inside Arrow's int32 offsets.
	MaxMaxBytes = 1 << 30
)

var (
	// ErrInvalidOptions is wrapped by every error NewAssembler returns for
	// unusable options.
	ErrInvalidOptions = errors.New("batch: invalid options")
	// ErrSeqOrder is returned by Add for a record whose Seq is not strictly
	// greater than the last Seq added for its partition, unless
	// AssemblerOptions.Unordered is set. The record is not added and not
	// covered by any span.
	ErrSeqOrder = errors.New("batch: sequence number not strictly increasing within partition")
	// ErrClosed is returned by Add after Close.
	ErrClosed = errors.New("batch: assembler closed")
	// ErrRejected is matched (errors.Is) by every reason handed to OnReject.
	ErrRejected = errors.New("batch: record rejected")
)

// SchemaMode selects how records become rows.
type SchemaMode uint8

const (
	// ModeRaw stores every record as one row of RawSchema: metadata columns
	// plus the payload as opaque binary. Nothing is ever rejected.
	ModeRaw SchemaMode = iota
	// ModeJSON decodes each payload, a JSON object, into the columns of the
	// user-declared AssemblerOptions.Schema. Payloads that do not fit are
	// rejected to OnReject (see RejectError).
	ModeJSON
	// ModeDecoded decodes each payload with the schema version the source
	// resolved for it (Record.Schema, a RowSchema): one batch holds the rows
	// of one schema version, so a record of another version flushes the
	// batch (FlushSchema). See decoded.go.
	ModeDecoded
)

func (m SchemaMode) String() string {
	switch m {
	case ModeRaw:
		return "raw"
	case ModeJSON:
		return "json"
	case ModeDecoded:
		return "decoded"
	default:
		return fmt.Sprintf("SchemaMode(%d)", uint8(m))
	}
}

// AssemblerOptions configures an Assembler. Zero values take the documented
// defaults; negative limits are invalid.
type AssemblerOptions struct {
	// Allocator backs every Arrow buffer the assembler builds. Default:
	// memory.DefaultAllocator (the Go allocator).
	Allocator memory.Allocator

	// Mode selects raw (default) or JSON-typed assembly.
	Mode SchemaMode
	// Schema is the user-declared schema of ModeJSON and must be nil in
	// ModeRaw. Supported field types: bool, int8..int64, uint8..uint64,
	// float32, float64, string, binary (base64 in JSON), timestamp (RFC 3339
	// string or epoch-milliseconds number, stored in the field's unit), date32
	// ("YYYY-MM-DD" or days since the epoch), and struct / list / map (utf8
	// keys: a JSON object with any keys) of these, nested to any depth. Schema metadata is carried to the batches.
	Schema *arrow.Schema
	// IncludeMeta, in ModeJSON and ModeDecoded, prepends the identity columns of RawSchema
	// as "_topic" (utf8), "_partition" (int32, the Pulsar partition index),
	// "_seq" (uint64) and "_message_id" (binary) to the user's fields so each
	// row can be traced to its source record. The user's schema must not
	// already use those names. Ignored in ModeRaw, whose schema always has
	// them.
	IncludeMeta bool

	// Unordered accepts, per partition, a Seq at or below the last one
	// added: the record starts a new span of its partition instead of
	// being refused with ErrSeqOrder. It is for sources that are not
	// monotone — a Shared or KeyShared Pulsar subscription with several
	// consumers, where one consumer takes over messages another dropped
	// and so receives a lower seq after a higher one. Batch.Spans may then
	// hold several spans of one partition, in the order their records were
	// added, and spans of one partition may overlap across batches.
	// Default false: ErrSeqOrder stays the guard of ordered sources, whose
	// spans never overlap.
	Unordered bool

	// MaxRows flushes a batch once it holds this many rows. Default
	// DefaultMaxRows (8192).
	MaxRows int
	// MaxBytes flushes a batch once the estimated size of its column data
	// (values, offsets and validity; see Stats.Bytes) reaches this many
	// bytes. A single record larger than MaxBytes becomes a one-row batch.
	// Default DefaultMaxBytes (8 MiB); at most MaxMaxBytes.
	MaxBytes int
	// Linger flushes a non-empty batch once its oldest record has waited this
	// long. Default DefaultLinger (100ms).
	Linger time.Duration

	// Emit receives every batch, in order, and takes ownership of it: it must
	// call Batch.Release exactly once (possibly later, on another goroutine).
	// It is called with the assembler's lock held, from the goroutine of
	// Add, Flush or Close or from the linger timer's goroutine; so it is
	// never called concurrently with itself, may block to apply backpressure
	// (which blocks Add), and must not call back into the Assembler.
	// Required.
	Emit func(*Batch)
	// OnReject is the dead-letter callback of ModeJSON and ModeDecoded: it receives each
	// record that could not be decoded, with a reason that matches
	// ErrRejected and is a *RejectError. The record and the slices it refers
	// to are only valid during the call; copy what you keep. It runs under
	// the same lock and rules as Emit. Optional: rejected records are
	// counted and covered by spans either way.
	OnReject func(rec *Record, reason error)
}

// validate reports every problem of the caller's values at once, each
// naming its field and the value it got, wrapped in ErrInvalidOptions. It
// runs before withDefaults, so that messages name what the user wrote.
func (o *AssemblerOptions) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.Emit == nil {
		bad("Options.Emit is required")
	}
	if o.MaxRows < 0 {
		bad("Options.MaxRows %d is negative", o.MaxRows)
	}
	if o.MaxBytes < 0 || o.MaxBytes > MaxMaxBytes {
		bad("Options.MaxBytes %d is not in [0, %d]", o.MaxBytes, MaxMaxBytes)
	}
	if o.Linger < 0 {
		bad("Options.Linger %v is negative", o.Linger)
	}
	switch o.Mode {
	case ModeRaw:
		if o.Schema != nil {
			bad("Options.Schema is only used in ModeJSON (Options.Mode is %v)", o.Mode)
		}
	case ModeJSON:
		if o.Schema == nil {
			bad("Options.Schema is required in ModeJSON")
		}
	case ModeDecoded:
		if o.Schema != nil {
			bad("Options.Schema is not used in ModeDecoded (each Record.Schema says its own)")
		}
	default:
		bad("Options.Mode %v is unknown", o.Mode)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

// withDefaults returns a copy of o with zero fields set to their defaults;
// it runs after validate and never overwrites a field the caller set.
func (o AssemblerOptions) withDefaults() AssemblerOptions {
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.MaxRows == 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Linger == 0 {
		o.Linger = DefaultLinger
	}
	return o
}
