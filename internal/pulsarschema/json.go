package pulsarschema

import (
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

// jsonRows adapts batch.JSONRows to Decoder, turning its rejections into
// *DecodeError.
type jsonRows struct{ rows *batch.JSONRows }

func newJSONDecoder(s *arrow.Schema, rb *array.RecordBuilder, skip int) (Decoder, error) {
	r, err := batch.NewJSONRows(s, rb, skip)
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
