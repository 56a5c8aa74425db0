package batch

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// jkind is the decoding strategy of one schema node.
type jkind uint8

const (
	jBool jkind = iota + 1
	jInt8
	jInt16
	jInt32
	jInt64
	jUint8
	jUint16
	jUint32
	jUint64
	jFloat32
	jFloat64
	jString
	jBinary     // base64 text
	jBinaryText // the string's UTF-8 bytes (JSONBinaryText)
	jTimestamp
	jDate32
	jStruct
	jList
	jMap // map<utf8, T>: a JSON object with any keys
)

// jnode is one field of the compiled JSON schema. The tree mirrors the Arrow
// schema; each node holds the builder its values are appended to.
type jnode struct {
	name     string
	kind     jkind
	nullable bool
	expected string         // type name used in rejection reasons
	children []*jnode       // struct fields, or the list element / map value at [0]
	unit     arrow.TimeUnit // jTimestamp only
	width    int            // fixed bytes per value, for the size estimate
	b        array.Builder  // nil for the root
}

// metaFields are the metadata columns IncludeMeta prepends in ModeJSON, in
// order: the identity columns of RawSchema with a leading underscore.
var metaFields = []struct {
	name string
	raw  int // column of RawSchema
}{{MetaPrefix + TopicColumn, rawTopic}, {MetaPrefix + PartitionColumn, rawPartition}, {MetaPrefix + SeqColumn, rawSeq}, {MetaPrefix + MessageIDColumn, rawMessageID}}

// JSONBinary says how a JSON string holds the bytes of a binary field.
type JSONBinary uint8

const (
	// JSONBinaryBase64 reads the string as standard, padded base64 (RFC 4648),
	// as Jackson (the Pulsar Java client's JSON schema) and Go's
	// encoding/json write byte arrays. ModeJSON's encoding.
	JSONBinaryBase64 JSONBinary = iota
	// JSONBinaryText takes the string's own UTF-8 encoding as the bytes, as
	// the Pulsar Python client's JsonSchema writes a Bytes field (it decodes
	// the bytes as UTF-8 text, bytes.decode(), and cannot send bytes that
	// are not UTF-8). A string whose bytes are not UTF-8, or with a \u escape
	// of an unpaired surrogate, has no such bytes and is rejected.
	JSONBinaryText
)

// compileJSONSchema checks that every field of s has a supported type and
// returns the root node (without builders; see bindBuilders); binary
// fields read their strings as bin says.
func compileJSONSchema(s *arrow.Schema, bin JSONBinary) (*jnode, error) {
	root := &jnode{kind: jStruct, expected: "object"}
	for _, f := range s.Fields() {
		n, err := compileField(f.Name, f.Type, f.Nullable, bin)
		if err != nil {
			return nil, err
		}
		root.children = append(root.children, n)
	}
	return root, nil
}

func compileField(path string, dt arrow.DataType, nullable bool, bin JSONBinary) (*jnode, error) {
	n := &jnode{name: fieldName(path), nullable: nullable, expected: dt.String()}
	switch t := dt.(type) {
	case *arrow.BooleanType:
		n.kind, n.width = jBool, 1
	case *arrow.Int8Type:
		n.kind, n.width = jInt8, 1
	case *arrow.Int16Type:
		n.kind, n.width = jInt16, 2
	case *arrow.Int32Type:
		n.kind, n.width = jInt32, 4
	case *arrow.Int64Type:
		n.kind, n.width = jInt64, 8
	case *arrow.Uint8Type:
		n.kind, n.width = jUint8, 1
	case *arrow.Uint16Type:
		n.kind, n.width = jUint16, 2
	case *arrow.Uint32Type:
		n.kind, n.width = jUint32, 4
	case *arrow.Uint64Type:
		n.kind, n.width = jUint64, 8
	case *arrow.Float32Type:
		n.kind, n.width = jFloat32, 4
	case *arrow.Float64Type:
		n.kind, n.width = jFloat64, 8
	case *arrow.StringType:
		n.kind, n.width = jString, 4
		n.expected = "string"
	case *arrow.BinaryType:
		n.kind, n.width = jBinary, 4
		n.expected = "binary (base64 string)"
		if bin == JSONBinaryText {
			n.kind = jBinaryText
			n.expected = "binary (UTF-8 text)"
		}
	case *arrow.TimestampType:
		if t.TimeZone != "" && t.TimeZone != "UTC" && t.TimeZone != "Z" {
			// Values are instants; a zone other than UTC would only change how
			// readers display them, and silently relabelling is worse than
			// asking the user to say UTC.
			return nil, fmt.Errorf("%w: Options.Schema field %s: timestamp time zone %q: only UTC or none is supported",
				ErrInvalidOptions, path, t.TimeZone)
		}
		n.kind, n.width, n.unit = jTimestamp, 8, t.Unit
		n.expected = t.String() + " (RFC 3339 string or epoch milliseconds)"
	case *arrow.Date32Type:
		n.kind, n.width = jDate32, 4
		n.expected = "date32 (\"YYYY-MM-DD\" or days since epoch)"
	case *arrow.StructType:
		n.kind = jStruct
		n.expected = "struct (JSON object)"
		for _, f := range t.Fields() {
			c, err := compileField(path+"."+f.Name, f.Type, f.Nullable, bin)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, c)
		}
	case *arrow.ListType:
		n.kind, n.width = jList, 4
		n.expected = "list (JSON array)"
		ef := t.ElemField()
		c, err := compileField(path+"[]", ef.Type, ef.Nullable, bin)
		if err != nil {
			return nil, err
		}
		n.children = []*jnode{c}
	case *arrow.MapType:
		if t.KeyType().ID() != arrow.STRING {
			return nil, fmt.Errorf("%w: Options.Schema field %s: map key type %s: JSON object keys are strings (want utf8)",
				ErrInvalidOptions, path, t.KeyType())
		}
		n.kind, n.width = jMap, 4
		n.expected = "map (JSON object)"
		it := t.ItemField()
		c, err := compileField(path+"{}", it.Type, it.Nullable, bin)
		if err != nil {
			return nil, err
		}
		n.children = []*jnode{c}
	default:
		return nil, fmt.Errorf("%w: Options.Schema field %s: unsupported type %s", ErrInvalidOptions, path, dt)
	}
	return n, nil
}

// fieldName is the last segment of a compile path, used when reporting.
func fieldName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[i+1:]
		}
	}
	return path
}

// bindBuilders points every node below root at its builder inside rb,
// skipping the first skip record fields (the metadata columns).
func bindBuilders(root *jnode, rb *array.RecordBuilder, skip int) {
	for i, c := range root.children {
		bindNode(c, rb.Field(skip+i))
	}
}

func bindNode(n *jnode, b array.Builder) {
	n.b = b
	switch n.kind {
	case jStruct:
		sb := b.(*array.StructBuilder)
		for i, c := range n.children {
			bindNode(c, sb.FieldBuilder(i))
		}
	case jList:
		bindNode(n.children[0], b.(*array.ListBuilder).ValueBuilder())
	case jMap:
		bindNode(n.children[0], b.(*array.MapBuilder).ItemBuilder())
	}
}

// jsonOutputSchema is the schema of the batches ModeJSON emits.
func jsonOutputSchema(user *arrow.Schema, includeMeta bool) (*arrow.Schema, error) {
	if !includeMeta {
		return user, nil
	}
	raw := RawSchema()
	fields := make([]arrow.Field, 0, len(metaFields)+user.NumFields())
	for _, m := range metaFields {
		f := raw.Field(m.raw)
		f.Name = m.name
		fields = append(fields, f)
	}
	for _, f := range user.Fields() {
		for _, m := range metaFields {
			if f.Name == m.name {
				return nil, fmt.Errorf("%w: Options.Schema field %q clashes with the Options.IncludeMeta column", ErrInvalidOptions, f.Name)
			}
		}
		fields = append(fields, f)
	}
	md := user.Metadata()
	return arrow.NewSchema(fields, &md), nil
}
