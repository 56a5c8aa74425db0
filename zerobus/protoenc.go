package zerobus

import (
	"errors"
	"fmt"
	"math"
	"regexp"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// protoEncoder turns rows into protobuf messages of a type derived from the
// Arrow schema: message "Record", field i+1 for column i (named like the
// column), proto2 optional scalars; a null value is an absent field.
//
//	bool                                 -> bool
//	int8, int16, int32, uint8, uint16    -> int32
//	int64, uint32                        -> int64
//	uint64                               -> uint64
//	float32 / float64                    -> float / double
//	string, large_string, string_view    -> string
//	binary variants                      -> bytes
//	timestamp (any unit)                 -> int64 microseconds since the epoch
//	date32, date64                       -> int32 days since the epoch
//	list<T> (non-null elements)          -> repeated T
//	map<K, V>                            -> map<K, V> (K a string or integer)
//	struct                               -> a nested message
//
// Protobuf cannot tell an empty list or map from a null one: both arrive as
// an absent field.
type protoEncoder struct {
	descriptor []byte // serialized DescriptorProto, sent in create_stream
}

var protoIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func newProtoEncoder(sc *arrow.Schema) (*protoEncoder, error) {
	dp, err := messageDescriptor("Record", ".Record", sc.Fields())
	if err != nil {
		return nil, err
	}
	raw, err := proto.Marshal(dp)
	if err != nil {
		return nil, err
	}
	return &protoEncoder{descriptor: raw}, nil
}

func messageDescriptor(name, fullName string, fields []arrow.Field) (*descriptorpb.DescriptorProto, error) {
	dp := &descriptorpb.DescriptorProto{Name: proto.String(name)}
	for i, f := range fields {
		if !protoIdent.MatchString(f.Name) {
			return nil, fmt.Errorf("column %q: not a valid protobuf field name", f.Name)
		}
		fd := &descriptorpb.FieldDescriptorProto{
			Name:   proto.String(f.Name),
			Number: proto.Int32(int32(i + 1)),
			Label:  descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
		}
		dt := f.Type
		if lt, ok := dt.(arrow.ListLikeType); ok && dt.ID() != arrow.MAP {
			fd.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
			dt = lt.Elem()
		}
		switch t := dt.(type) {
		case *arrow.MapType:
			entry := camel(f.Name) + "Entry"
			kt, err := scalarType(t.KeyType())
			if err != nil {
				return nil, fmt.Errorf("column %q: map key: %w", f.Name, err)
			}
			vt, err := scalarType(t.ItemType())
			if err != nil {
				return nil, fmt.Errorf("column %q: map value: %w", f.Name, err)
			}
			dp.NestedType = append(dp.NestedType, &descriptorpb.DescriptorProto{
				Name: proto.String(entry),
				Field: []*descriptorpb.FieldDescriptorProto{
					{Name: proto.String("key"), Number: proto.Int32(1), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: kt.Enum()},
					{Name: proto.String("value"), Number: proto.Int32(2), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: vt.Enum()},
				},
				Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
			})
			fd.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
			fd.Type = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
			fd.TypeName = proto.String(fullName + "." + entry)
		case *arrow.StructType:
			nested := camel(f.Name)
			ndp, err := messageDescriptor(nested, fullName+"."+nested, t.Fields())
			if err != nil {
				return nil, fmt.Errorf("column %q: %w", f.Name, err)
			}
			dp.NestedType = append(dp.NestedType, ndp)
			fd.Type = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
			fd.TypeName = proto.String(fullName + "." + nested)
		default:
			st, err := scalarType(dt)
			if err != nil {
				return nil, fmt.Errorf("column %q: %w", f.Name, err)
			}
			fd.Type = st.Enum()
		}
		dp.Field = append(dp.Field, fd)
	}
	return dp, nil
}

func camel(s string) string {
	b := []byte(s)
	up := true
	out := b[:0]
	for _, c := range b {
		if c == '_' {
			up = true
			continue
		}
		if up && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		out = append(out, c)
	}
	return string(out)
}

func scalarType(dt arrow.DataType) (descriptorpb.FieldDescriptorProto_Type, error) {
	switch dt.ID() {
	case arrow.BOOL:
		return descriptorpb.FieldDescriptorProto_TYPE_BOOL, nil
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16, arrow.DATE32, arrow.DATE64:
		return descriptorpb.FieldDescriptorProto_TYPE_INT32, nil
	case arrow.INT64, arrow.UINT32, arrow.TIMESTAMP:
		return descriptorpb.FieldDescriptorProto_TYPE_INT64, nil
	case arrow.UINT64:
		return descriptorpb.FieldDescriptorProto_TYPE_UINT64, nil
	case arrow.FLOAT32:
		return descriptorpb.FieldDescriptorProto_TYPE_FLOAT, nil
	case arrow.FLOAT64:
		return descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return descriptorpb.FieldDescriptorProto_TYPE_STRING, nil
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return descriptorpb.FieldDescriptorProto_TYPE_BYTES, nil
	}
	return 0, fmt.Errorf("type %s has no protobuf mapping", dt)
}

// valueFn appends element i of an array as a bare protobuf value (no tag).
type valueFn func(dst []byte, i int) []byte

// fieldFn appends element i of a column as a complete field (tags
// included), or nothing when it is null.
type fieldFn func(dst []byte, i int) ([]byte, error)

var errNullElement = errors.New("null list element has no protobuf representation")

func scalarValue(arr arrow.Array) (valueFn, protowire.Type, bool) {
	switch a := arr.(type) {
	case *array.Boolean:
		return func(d []byte, i int) []byte { return protowire.AppendVarint(d, protowire.EncodeBool(a.Value(i))) }, protowire.VarintType, true
	case *array.Int8:
		return func(d []byte, i int) []byte { return protowire.AppendVarint(d, uint64(int64(a.Value(i)))) }, protowire.VarintType, true
	case *array.Int16:
		return func(d []byte, i int) []byte { return protowire.AppendVarint(d, uint64(int64(a.Value(i)))) }, protowire.VarintType, true
	case *array.Int32:
		return func(d []byte, i int) []byte { return protowire.AppendVarint(d, uint64(int64(a.Value(i)))) }, protowire.VarintType, true
	case *array.Int64:
		return func(d []byte, i int) []byte { return protowire.AppendVarint(d, uint64(a.Value(i))) }, protowire.VarintType, true
	case *array.Uint8:
		return func(d []byte, i int) []byte { return protowire.AppendVarint(d, uint64(a.Value(i))) }, protowire.VarintType, true
	case *array.Uint16:
		return func(d []byte, i int) []byte { return protowire.AppendVarint(d, uint64(a.Value(i))) }, protowire.VarintType, true
	case *array.Uint32:
		return func(d []byte, i int) []byte { return protowire.AppendVarint(d, uint64(a.Value(i))) }, protowire.VarintType, true
	case *array.Uint64:
		return func(d []byte, i int) []byte { return protowire.AppendVarint(d, a.Value(i)) }, protowire.VarintType, true
	case *array.Float32:
		return func(d []byte, i int) []byte { return protowire.AppendFixed32(d, math.Float32bits(a.Value(i))) }, protowire.Fixed32Type, true
	case *array.Float64:
		return func(d []byte, i int) []byte { return protowire.AppendFixed64(d, math.Float64bits(a.Value(i))) }, protowire.Fixed64Type, true
	case *array.String:
		return func(d []byte, i int) []byte { return protowire.AppendString(d, a.Value(i)) }, protowire.BytesType, true
	case *array.LargeString:
		return func(d []byte, i int) []byte { return protowire.AppendString(d, a.Value(i)) }, protowire.BytesType, true
	case *array.StringView:
		return func(d []byte, i int) []byte { return protowire.AppendString(d, a.Value(i)) }, protowire.BytesType, true
	case *array.Binary:
		return func(d []byte, i int) []byte { return protowire.AppendBytes(d, a.Value(i)) }, protowire.BytesType, true
	case *array.LargeBinary:
		return func(d []byte, i int) []byte { return protowire.AppendBytes(d, a.Value(i)) }, protowire.BytesType, true
	case *array.BinaryView:
		return func(d []byte, i int) []byte { return protowire.AppendBytes(d, a.Value(i)) }, protowire.BytesType, true
	case *array.FixedSizeBinary:
		return func(d []byte, i int) []byte { return protowire.AppendBytes(d, a.Value(i)) }, protowire.BytesType, true
	case *array.Timestamp:
		div, mul := int64(1), int64(1)
		switch a.DataType().(*arrow.TimestampType).Unit {
		case arrow.Second:
			mul = 1_000_000
		case arrow.Millisecond:
			mul = 1_000
		case arrow.Nanosecond:
			div = 1_000
		}
		return func(d []byte, i int) []byte { return protowire.AppendVarint(d, uint64(int64(a.Value(i))*mul/div)) }, protowire.VarintType, true
	case *array.Date32:
		return func(d []byte, i int) []byte { return protowire.AppendVarint(d, uint64(int64(a.Value(i)))) }, protowire.VarintType, true
	case *array.Date64:
		return func(d []byte, i int) []byte {
			return protowire.AppendVarint(d, uint64(int64(a.Value(i))/86_400_000))
		}, protowire.VarintType, true
	}
	return nil, 0, false
}

// compileField builds the encoder of one column with field number num.
func compileField(arr arrow.Array, num protowire.Number) (fieldFn, error) {
	if v, wt, ok := scalarValue(arr); ok {
		return func(d []byte, i int) ([]byte, error) {
			if arr.IsNull(i) {
				return d, nil
			}
			return v(protowire.AppendTag(d, num, wt), i), nil
		}, nil
	}
	switch a := arr.(type) {
	case *array.Map:
		kv, kwt, ok1 := scalarValue(a.Keys())
		vv, vwt, ok2 := scalarValue(a.Items())
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("map<%s, %s> has no protobuf mapping", a.Keys().DataType(), a.Items().DataType())
		}
		items := a.Items()
		var scratch []byte
		return func(d []byte, i int) ([]byte, error) {
			if a.IsNull(i) {
				return d, nil
			}
			start, end := a.ValueOffsets(i)
			for j := int(start); j < int(end); j++ {
				scratch = kv(protowire.AppendTag(scratch[:0], 1, kwt), j)
				if !items.IsNull(j) {
					scratch = vv(protowire.AppendTag(scratch, 2, vwt), j)
				}
				d = protowire.AppendBytes(protowire.AppendTag(d, num, protowire.BytesType), scratch)
			}
			return d, nil
		}, nil
	case array.ListLike:
		vals := a.ListValues()
		elem, err := compileField(vals, num)
		if err != nil {
			return nil, err
		}
		return func(d []byte, i int) ([]byte, error) {
			if a.IsNull(i) {
				return d, nil
			}
			start, end := a.ValueOffsets(i)
			for j := int(start); j < int(end); j++ {
				if vals.IsNull(j) {
					return nil, errNullElement
				}
				var err error
				if d, err = elem(d, j); err != nil {
					return nil, err
				}
			}
			return d, nil
		}, nil
	case *array.Struct:
		fields := make([]fieldFn, a.NumField())
		for f := range fields {
			var err error
			if fields[f], err = compileField(a.Field(f), protowire.Number(f+1)); err != nil {
				return nil, err
			}
		}
		var scratch []byte
		return func(d []byte, i int) ([]byte, error) {
			if a.IsNull(i) {
				return d, nil
			}
			scratch = scratch[:0]
			for _, f := range fields {
				var err error
				if scratch, err = f(scratch, i); err != nil {
					return nil, err
				}
			}
			return protowire.AppendBytes(protowire.AppendTag(d, num, protowire.BytesType), scratch), nil
		}, nil
	}
	return nil, fmt.Errorf("type %s has no protobuf mapping", arr.DataType())
}

// encode renders the rows of rec as protobuf records, split into frames
// within maxPayload (splitFrames). Records are sub-slices of shared arenas,
// never written again once complete.
func (p *protoEncoder) encode(rec arrow.RecordBatch, maxPayload int) ([]frame, error) {
	n := int(rec.NumRows())
	if n == 0 {
		return nil, nil
	}
	cols := make([]fieldFn, rec.NumCols())
	for c := range cols {
		var err error
		if cols[c], err = compileField(rec.Column(c), protowire.Number(c+1)); err != nil {
			return nil, fmt.Errorf("column %q: %w", rec.ColumnName(c), err)
		}
	}
	return splitFrames(n, maxPayload,
		func(arena []byte, i int) ([]byte, error) {
			for c, f := range cols {
				var err error
				if arena, err = f(arena, i); err != nil {
					return nil, fmt.Errorf("row %d, column %q: %w", i, rec.ColumnName(c), err)
				}
			}
			return arena, nil
		},
		func(b []byte) []byte { return b },
		func(recs [][]byte) frame { return frame{proto: recs, rows: len(recs)} })
}
