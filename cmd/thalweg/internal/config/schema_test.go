package config_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

func TestArrowSchema(t *testing.T) {
	cfg, err := config.Parse([]byte(doc(map[string]string{"schema": `
  mode: json
  fields:
    - {name: b, type: bool, nullable: false}
    - {name: i8, type: int8}
    - {name: i16, type: int16}
    - {name: i32, type: int32}
    - {name: i64, type: int64}
    - {name: u8, type: uint8}
    - {name: u16, type: uint16}
    - {name: u32, type: uint32}
    - {name: u64, type: uint64}
    - {name: f32, type: float32}
    - {name: f64, type: float64}
    - {name: s, type: string}
    - {name: bin, type: binary}
    - {name: d, type: date}
    - {name: ts_default, type: timestamp}
    - {name: ts_s, type: timestamp, unit: s}
    - {name: ts_ms, type: timestamp, unit: ms}
    - {name: ts_us, type: timestamp, unit: us}
    - {name: ts_ns, type: timestamp, unit: ns, nullable: false}
    - name: outer
      type: struct
      nullable: false
      fields:
        - {name: x, type: int32}
        - name: inner
          type: struct
          fields:
            - {name: at, type: timestamp, unit: us, nullable: false}
            - name: tags
              type: list
              items: {type: string, nullable: false}
    - name: matrix
      type: list
      items:
        name: row
        type: list
        nullable: false
        items: {name: cell, type: float64}
    - name: events
      type: list
      items:
        type: struct
        fields:
          - {name: kind, type: uint8}
          - {name: when, type: timestamp, unit: s}`})), noEnv)
	require.NoError(t, err)
	got, err := cfg.Schema.ArrowSchema()
	require.NoError(t, err)

	ts := func(u arrow.TimeUnit) arrow.DataType { return &arrow.TimestampType{Unit: u, TimeZone: "UTC"} }
	nn := func(name string, dt arrow.DataType) arrow.Field { return arrow.Field{Name: name, Type: dt} }
	n := func(name string, dt arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: true}
	}
	want := arrow.NewSchema([]arrow.Field{
		nn("b", arrow.FixedWidthTypes.Boolean),
		n("i8", arrow.PrimitiveTypes.Int8),
		n("i16", arrow.PrimitiveTypes.Int16),
		n("i32", arrow.PrimitiveTypes.Int32),
		n("i64", arrow.PrimitiveTypes.Int64),
		n("u8", arrow.PrimitiveTypes.Uint8),
		n("u16", arrow.PrimitiveTypes.Uint16),
		n("u32", arrow.PrimitiveTypes.Uint32),
		n("u64", arrow.PrimitiveTypes.Uint64),
		n("f32", arrow.PrimitiveTypes.Float32),
		n("f64", arrow.PrimitiveTypes.Float64),
		n("s", arrow.BinaryTypes.String),
		n("bin", arrow.BinaryTypes.Binary),
		n("d", arrow.FixedWidthTypes.Date32),
		n("ts_default", ts(arrow.Millisecond)),
		n("ts_s", ts(arrow.Second)),
		n("ts_ms", ts(arrow.Millisecond)),
		n("ts_us", ts(arrow.Microsecond)),
		nn("ts_ns", ts(arrow.Nanosecond)),
		nn("outer", arrow.StructOf(
			n("x", arrow.PrimitiveTypes.Int32),
			n("inner", arrow.StructOf(
				nn("at", ts(arrow.Microsecond)),
				n("tags", arrow.ListOfField(nn("item", arrow.BinaryTypes.String))),
			)),
		)),
		n("matrix", arrow.ListOfField(nn("row", arrow.ListOfField(n("cell", arrow.PrimitiveTypes.Float64))))),
		n("events", arrow.ListOfField(n("item", arrow.StructOf(
			n("kind", arrow.PrimitiveTypes.Uint8),
			n("when", ts(arrow.Second)),
		)))),
	}, nil)
	require.True(t, want.Equal(got), "want\n%s\ngot\n%s", want, got)

	// Spot checks that do not rely on Schema.Equal.
	outer := got.Field(19).Type.(*arrow.StructType)
	inner := outer.Field(1).Type.(*arrow.StructType)
	require.Equal(t, arrow.Microsecond, inner.Field(0).Type.(*arrow.TimestampType).Unit)
	require.False(t, inner.Field(1).Type.(*arrow.ListType).ElemField().Nullable)
	require.Equal(t, "row", got.Field(20).Type.(*arrow.ListType).ElemField().Name)
}

func TestArrowSchemaRawAndUnchecked(t *testing.T) {
	raw := config.SchemaConfig{Mode: config.SchemaRaw}
	_, err := raw.ArrowSchema()
	require.ErrorIs(t, err, config.ErrRawSchema)

	// A hand-built, never validated schema is checked, not trusted.
	bad := config.SchemaConfig{Mode: config.SchemaJSON, Fields: []config.FieldConfig{
		{Name: "l", Type: config.TypeList},
		{Name: "t", Type: config.TypeTimestamp, Unit: "fortnights"},
		{Name: "s", Type: config.TypeStruct, Fields: []config.FieldConfig{{Name: "x", Type: "complex128"}}},
	}}
	s, err := bad.ArrowSchema()
	require.Nil(t, s)
	require.ErrorIs(t, err, config.ErrInvalid)
	require.Equal(t, `schema.fields[0].items: required for type list
schema.fields[1].unit: must be one of s|ms|us|ns, got "fortnights"
schema.fields[2].fields[0].type: must be one of bool|int8|int16|int32|int64|uint8|uint16|uint32|uint64|float32|float64|string|binary|timestamp|date|struct|list, got "complex128"`, err.Error())

	// Hand-built without a unit: the default applies here too.
	ok := config.SchemaConfig{Mode: config.SchemaJSON, Fields: []config.FieldConfig{{Name: "t", Type: config.TypeTimestamp}}}
	s, err = ok.ArrowSchema()
	require.NoError(t, err)
	require.Equal(t, arrow.Millisecond, s.Field(0).Type.(*arrow.TimestampType).Unit)
}
