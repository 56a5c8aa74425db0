package batch

import "fmt"

// RejectKind classifies why a record was rejected. Its String form is a
// short, fixed label suitable as a metric attribute (thalweg.dlq.records
// {reason}).
type RejectKind uint8

const (
	RejectSyntax      RejectKind = iota + 1 // the payload is not one valid JSON object
	RejectType                              // a value has the wrong JSON type for its column
	RejectMissing                           // a non-nullable field is absent
	RejectNull                              // a non-nullable field is JSON null
	RejectRange                             // a number does not fit its column, or a string is not a valid timestamp/date/base64/UTF-8
	RejectTooDeep                           // nesting exceeds the decoder's depth limit
	RejectNoSchema                          // ModeDecoded: the record's schema could not be resolved or bound
	RejectUndecodable                       // ModeDecoded: the payload does not decode against its schema version
)

func (k RejectKind) String() string {
	switch k {
	case RejectSyntax:
		return "invalid_json"
	case RejectType:
		return "type_mismatch"
	case RejectMissing:
		return "missing_field"
	case RejectNull:
		return "null_value"
	case RejectRange:
		return "invalid_value"
	case RejectTooDeep:
		return "too_deep"
	case RejectNoSchema:
		return "no_schema"
	case RejectUndecodable:
		return "undecodable"
	default:
		return "unknown"
	}
}

// RejectError is the reason handed to OnReject. It matches ErrRejected.
type RejectError struct {
	Kind RejectKind
	// Path names the field, e.g. "user.tags[2]"; empty for the top-level
	// value (e.g. when the payload is not an object).
	Path string
	// Expected is the Arrow type the column wants, e.g. "int64" or
	// "timestamp[ms, tz=UTC]"; empty for syntax errors.
	Expected string
	// Offset is the byte offset in the payload where decoding stopped.
	Offset int
	// Detail says what was found instead.
	Detail string
}

func (e *RejectError) Error() string {
	path := e.Path
	if path == "" {
		path = "<root>"
	}
	if e.Expected != "" {
		return fmt.Sprintf("batch: record rejected (%s): field %s: expected %s: %s (at byte %d)",
			e.Kind, path, e.Expected, e.Detail, e.Offset)
	}
	return fmt.Sprintf("batch: record rejected (%s): field %s: %s (at byte %d)", e.Kind, path, e.Detail, e.Offset)
}

// Unwrap makes errors.Is(err, ErrRejected) true.
func (e *RejectError) Unwrap() error { return ErrRejected }
