package pulsarschema

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/thalweg/thalweg/internal/fieldpath"
)

// ErrDecode is matched (errors.Is) by every *DecodeError.
var ErrDecode = errors.New("pulsarschema: payload does not decode")

// DecodeError is why one payload did not decode against its schema. The
// builders are left as they were before the payload.
type DecodeError struct {
	// Path names the field, e.g. "user.tags[2]" or "attrs{}" for a map
	// value; empty for the payload as a whole.
	Path string
	// Expected is the Arrow type of the field, when there is one.
	Expected string
	// Offset is the byte offset in the payload where decoding stopped.
	Offset int
	// Detail says what is wrong.
	Detail string
}

func (e *DecodeError) Error() string {
	if e.Expected != "" {
		return fmt.Sprintf("pulsarschema: field %s: expected %s: %s (at byte %d)", pathOrRoot(e.Path), e.Expected, e.Detail, e.Offset)
	}
	return fmt.Sprintf("pulsarschema: field %s: %s (at byte %d)", pathOrRoot(e.Path), e.Detail, e.Offset)
}

// Unwrap makes errors.Is(err, ErrDecode) true.
func (e *DecodeError) Unwrap() error { return ErrDecode }

// prefix prepends a field name to e.Path.
func (e *DecodeError) prefix(name string) *DecodeError {
	e.Path = fieldpath.Field(name, e.Path)
	return e
}

// prefixIndex prepends a list index ("[3]") or, with i < 0, a map value
// marker ("{}") to e.Path.
func (e *DecodeError) prefixIndex(i int) *DecodeError {
	seg := "{}"
	if i >= 0 {
		seg = "[" + strconv.Itoa(i) + "]"
	}
	e.Path = fieldpath.Segment(seg, e.Path)
	return e
}

// Codec is one compiled schema version: its Arrow schema, and decoders for
// its payloads. It is immutable and safe for concurrent use.
type Codec struct {
	info      Info
	schema    *arrow.Schema
	avro      *anode    // AVRO
	proto     *pmsg     // PROTOBUF_NATIVE
	prim      primKind  // primitives
	jsonBytes JSONBytes // JSON: JSONBytesBase64 or JSONBytesText
}

// Compile maps info to Arrow. A JSON schema's bytes fields are read as
// JSONBytesAuto decides for info. Errors match ErrUnsupported,
// ErrUnmappable or ErrDefinition and name the field path where there is one.
func Compile(info Info) (*Codec, error) { return CompileWith(info, JSONBytesAuto) }

// CompileWith is Compile with the encoding of a JSON schema's bytes fields
// given: JSONBytesAuto, or one of the two encodings for every version.
func CompileWith(info Info, jb JSONBytes) (*Codec, error) {
	if jb > JSONBytesText {
		return nil, fmt.Errorf("pulsarschema: JSONBytes %d is not one of JSONBytesAuto, JSONBytesBase64, JSONBytesText", jb)
	}
	c := &Codec{info: info}
	var err error
	switch info.Type {
	case TypeAvro:
		c.avro, c.schema, err = compileAvro(info.Definition)
	case TypeJSON:
		c.schema, err = compileJSON(info.Definition)
		c.jsonBytes = jb
		if jb == JSONBytesAuto {
			c.jsonBytes = jsonBytesOf(info)
		}
	case TypeProtobufNative:
		c.proto, c.schema, err = compileProtoNative(info.Definition)
	default:
		c.prim, c.schema, err = compilePrimitive(info.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("schema %s version %d: %w", info.Type, info.Version, err)
	}
	return c, nil
}

// Info returns the schema version the codec was compiled from.
func (c *Codec) Info() Info { return c.info }

// JSONBytes is how the codec reads a JSON schema's bytes fields
// (JSONBytesBase64 or JSONBytesText); JSONBytesAuto for other types.
func (c *Codec) JSONBytes() JSONBytes { return c.jsonBytes }

// Schema returns the Arrow schema of the decoded rows (without metadata).
func (c *Codec) Schema() *arrow.Schema { return c.schema }

// Decoder appends decoded payloads, one row each, to Arrow builders.
//
// Not safe for concurrent use; it holds no reference to a payload after
// Append returns.
type Decoder interface {
	// Append decodes payload into one row. On error (a *DecodeError) the
	// builders are as they were before the call, so the batch keeps its
	// other rows. The int is an estimate of the bytes the row added.
	Append(payload []byte) (int, error)
}

// NewDecoder returns a decoder appending to the builders of rb's fields
// skip, skip+1, ...: the fields of Schema(), in order (the first skip
// fields are the caller's, e.g. metadata columns). rb must have been built
// for a schema whose fields from skip on are Schema()'s.
func (c *Codec) NewDecoder(rb *array.RecordBuilder, skip int) (Decoder, error) {
	s := rb.Schema()
	if s.NumFields()-skip != c.schema.NumFields() {
		return nil, fmt.Errorf("pulsarschema: record builder has %d fields after %d, the schema %d", s.NumFields()-skip, skip, c.schema.NumFields())
	}
	for i, f := range c.schema.Fields() {
		if g := s.Field(skip + i); !arrow.TypeEqual(f.Type, g.Type) || f.Name != g.Name {
			return nil, fmt.Errorf("pulsarschema: record builder field %d is %s %s, the schema's %s %s", skip+i, g.Name, g.Type, f.Name, f.Type)
		}
	}
	switch {
	case c.avro != nil:
		return newAvroDecoder(c.avro, rb, skip), nil
	case c.proto != nil:
		return newProtoDecoder(c.proto, rb, skip), nil
	case c.info.Type == TypeJSON:
		return newJSONDecoder(c.schema, rb, skip, c.jsonBytes)
	default:
		return newPrimDecoder(c.prim, rb.Field(skip)), nil
	}
}
