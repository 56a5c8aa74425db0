package pulsarschema

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/thalweg/thalweg/batch"
)

// compileJSON maps a JSON schema's Avro record definition to the Arrow
// schema batch's JSON decoder fills. The payload is JSON text, so the
// mapping is the Avro one narrowed to what a JSON value can say (see the
// package documentation): a timestamp that is not in milliseconds and the
// time types are their integers, and decimals and unions of several
// non-null types are refused.
func compileJSON(def []byte) (*arrow.Schema, error) {
	root, _, err := compileAvro(def)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(root.children))
	for i, c := range root.children {
		dt, err := jsonType(c, c.name)
		if err != nil {
			return nil, err
		}
		fields[i] = arrow.Field{Name: c.name, Type: dt, Nullable: c.nullable}
	}
	return arrow.NewSchema(fields, nil), nil
}

func jsonType(n *anode, path string) (arrow.DataType, error) {
	switch n.out {
	case oNull:
		return nil, unmappable(path, "a field that is always null has no JSON column type")
	case oTimestamp:
		if n.dt.(*arrow.TimestampType).Unit != arrow.Millisecond {
			return arrow.PrimitiveTypes.Int64, nil
		}
	case oTime32:
		return arrow.PrimitiveTypes.Int32, nil
	case oTime64:
		return arrow.PrimitiveTypes.Int64, nil
	case oFixed:
		return arrow.BinaryTypes.Binary, nil
	case oDecimal:
		return nil, unmappable(path, "decimal in a JSON schema (JSON numbers are not exact)")
	case oMap:
		v := n.children[0]
		dt, err := jsonType(v, path+"{}")
		if err != nil {
			return nil, err
		}
		mt := arrow.MapOf(arrow.BinaryTypes.String, dt)
		mt.SetItemNullable(v.nullable)
		return mt, nil
	case oUnion:
		return nil, unmappable(path, "union of several non-null types in a JSON schema: JSON values do not say their branch")
	case oStruct:
		fs := make([]arrow.Field, len(n.children))
		for i, c := range n.children {
			dt, err := jsonType(c, path+"."+c.name)
			if err != nil {
				return nil, err
			}
			fs[i] = arrow.Field{Name: c.name, Type: dt, Nullable: c.nullable}
		}
		return arrow.StructOf(fs...), nil
	case oList:
		it := n.children[0]
		dt, err := jsonType(it, path+"[]")
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: "item", Type: dt, Nullable: it.nullable}), nil
	}
	return n.dt, nil
}

// JSONBytes says how the payloads of a JSON schema write a bytes (or
// fixed) field: JSON has no bytes type, and the Pulsar clients disagree.
type JSONBytes uint8

const (
	// JSONBytesAuto decides per schema version, from how it was registered
	// (jsonBytesOf): the rule docs/pulsar-schemas.md states.
	JSONBytesAuto JSONBytes = iota
	// JSONBytesBase64: a base64 string (standard alphabet, padded), as the
	// Java client (Jackson) and the Go client (encoding/json) write it.
	JSONBytesBase64
	// JSONBytesText: the bytes are the string's UTF-8 encoding, as the Python
	// client's JsonSchema writes them (bytes.decode(): it cannot send bytes
	// that are not UTF-8, and json.dumps escapes the rest as \uXXXX).
	JSONBytesText
)

// String returns the name the configuration uses (schema.json_bytes).
func (jb JSONBytes) String() string {
	switch jb {
	case JSONBytesAuto:
		return "auto"
	case JSONBytesBase64:
		return "base64"
	case JSONBytesText:
		return "text"
	}
	return "JSONBytes(" + strconv.Itoa(int(jb)) + ")"
}

// javaSchemaProperty is a property the Java client's SchemaDefinition
// registers with every JSON (and AVRO) schema it derives, whether from a
// class or from a JSON definition the user wrote; no other client sets it.
const javaSchemaProperty = "__alwaysAllowNull"

// jsonBytesOf is JSONBytesAuto's rule for one registered JSON schema
// version:
//
//  1. registered by the Java client (its properties carry
//     __alwaysAllowNull): base64, as Jackson writes byte[] and ByteBuffer;
//  2. a definition laid out exactly as the Python client registers it,
//     json.dumps(definition, indent=True) (every member on its own line,
//     indented by one space per level, ": " after keys): text, as its
//     JsonSchema writes Bytes fields;
//  3. anything else (the Go client registers its user's definition
//     written back compact, and encoding/json writes []byte in base64):
//     base64.
//
// A version is registered once, by the first producer that brings its
// definition, so every message that names it was written by a producer
// whose definition (and properties) matched: in practice the same client.
func jsonBytesOf(info Info) JSONBytes {
	if _, ok := info.Properties[javaSchemaProperty]; ok {
		return JSONBytesBase64
	}
	if pythonLayout(info.Definition) {
		return JSONBytesText
	}
	return JSONBytesBase64
}

// pythonLayout reports whether def is byte for byte what Python's
// json.dumps(..., indent=True) makes of its own value: compacted and
// re-indented by one space it is unchanged (string tokens, and so Python's
// \uXXXX escapes, pass through both steps verbatim). A compact definition
// (the Java client's, or most written by hand) has no newline and fails.
func pythonLayout(def []byte) bool {
	if bytes.IndexByte(def, '\n') < 0 {
		return false
	}
	var compact, indented bytes.Buffer
	if json.Compact(&compact, def) != nil || json.Indent(&indented, compact.Bytes(), "", " ") != nil {
		return false
	}
	return bytes.Equal(indented.Bytes(), def)
}

// jsonRows adapts batch.JSONRows to Decoder, turning its rejections into
// *DecodeError.
type jsonRows struct{ rows *batch.JSONRows }

func newJSONDecoder(s *arrow.Schema, rb *array.RecordBuilder, skip int, jb JSONBytes) (Decoder, error) {
	bin := batch.JSONBinaryBase64
	if jb == JSONBytesText {
		bin = batch.JSONBinaryText
	}
	r, err := batch.NewJSONRows(s, rb, skip, bin)
	if err != nil {
		return nil, err
	}
	return jsonRows{r}, nil
}

func (j jsonRows) Append(payload []byte) (int, error) {
	n, err := j.rows.Append(payload)
	if err != nil {
		re := err.(*batch.RejectError)
		return 0, &DecodeError{Path: re.Path, Expected: re.Expected, Offset: re.Offset, Detail: re.Kind.String() + ": " + re.Detail}
	}
	return n, nil
}
