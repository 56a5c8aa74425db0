package batch

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// JSONRows is ModeJSON's decoder for callers that assemble their own record
// batches (internal/pulsarschema decodes a topic's JSON schema with it): it
// appends each JSON object payload as one row to the builders of a
// RecordBuilder's fields, with exactly ModeJSON's rules (see the package
// documentation and AssemblerOptions.Schema).
//
// Not safe for concurrent use. A rejected payload leaves the builders as
// they were (the decoder validates the whole payload before it appends).
type JSONRows struct {
	dec *jsonDecoder
}

// NewJSONRows compiles s, which must be ModeJSON-compatible, and binds the
// decoder to the builders of rb's fields skip, skip+1, ...: those fields
// must be s's fields, in order. Binary fields read their strings as bin
// says (ModeJSON's is JSONBinaryBase64). Errors wrap ErrInvalidOptions.
func NewJSONRows(s *arrow.Schema, rb *array.RecordBuilder, skip int, bin JSONBinary) (*JSONRows, error) {
	if bin > JSONBinaryText {
		return nil, fmt.Errorf("%w: JSONBinary %d is neither JSONBinaryBase64 nor JSONBinaryText", ErrInvalidOptions, bin)
	}
	root, err := compileJSONSchema(s, bin)
	if err != nil {
		return nil, err
	}
	bs := rb.Schema()
	if skip < 0 || bs.NumFields()-skip != s.NumFields() {
		return nil, fmt.Errorf("%w: record builder has %d fields, want %d after %d", ErrInvalidOptions, bs.NumFields(), s.NumFields(), skip)
	}
	for i, f := range s.Fields() {
		if !arrow.TypeEqual(f.Type, bs.Field(skip+i).Type) {
			return nil, fmt.Errorf("%w: record builder field %d is %s, want %s", ErrInvalidOptions, skip+i, bs.Field(skip+i).Type, f.Type)
		}
	}
	bindBuilders(root, rb, skip)
	return &JSONRows{dec: &jsonDecoder{root: root}}, nil
}

// Append decodes payload into one row and returns the estimated bytes it
// added, or the *RejectError that says why the payload does not fit (and
// then appends nothing). It keeps no reference to payload.
func (j *JSONRows) Append(payload []byte) (int, error) {
	defer j.dec.release()
	if err := j.dec.decode(payload); err != nil {
		return 0, err
	}
	return j.dec.replay(), nil
}
