package rowjson

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

func TestAppendStringRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "nl\n cr\r tab\t", "\x00\x1f\x7f", "é日本🙂", "bad\xffutf8", "\u2028"} {
		var got string
		require.NoError(t, json.Unmarshal(AppendString(nil, s), &got), "%q", s)
		want := strings.ToValidUTF8(s, "\ufffd")
		require.Equal(t, want, got)
		require.True(t, utf8.ValidString(got))
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("a\"b\\c\x01")
	f.Fuzz(func(t *testing.T, s string) {
		var got string
		if err := json.Unmarshal(AppendString(nil, s), &got); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if got != strings.ToValidUTF8(s, "\ufffd") {
			t.Fatalf("%q -> %q", s, got)
		}
	})
}

func TestRowsCoverTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "y", Type: arrow.BinaryTypes.LargeString})},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 5, Scale: 2}},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	b.Field(0).(*array.BooleanBuilder).AppendValues([]bool{true, false}, nil)
	b.Field(1).(*array.Int8Builder).AppendValues([]int8{-8, 7}, nil)
	b.Field(2).(*array.Uint64Builder).AppendValues([]uint64{math.MaxUint64, 0}, nil)
	b.Field(3).(*array.Float64Builder).AppendValues([]float64{math.NaN(), 0}, []bool{true, false})
	b.Field(4).(*array.BinaryBuilder).AppendValues([][]byte{{0, 1, 2}, nil}, nil)
	b.Field(5).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1_500, -2_000}, nil)
	b.Field(6).(*array.Date32Builder).AppendValues([]arrow.Date32{19000, -1}, nil)
	mb := b.Field(7).(*array.MapBuilder)
	mb.Append(true)
	mb.KeyBuilder().(*array.StringBuilder).Append("k")
	mb.ItemBuilder().(*array.Int32Builder).Append(1)
	mb.AppendNull()
	sb := b.Field(8).(*array.StructBuilder)
	sb.Append(true)
	sb.FieldBuilder(0).(*array.Int32Builder).Append(3)
	sb.FieldBuilder(1).(*array.LargeStringBuilder).Append("z")
	sb.Append(true)
	sb.FieldBuilder(0).(*array.Int32Builder).AppendNull()
	sb.FieldBuilder(1).(*array.LargeStringBuilder).Append("")
	db := b.Field(9).(*array.Decimal128Builder)
	require.NoError(t, db.AppendValueFromString("123.45"))
	require.NoError(t, db.AppendValueFromString("-1.5"))
	rec := b.NewRecordBatch()
	defer rec.Release()

	rows, err := New(rec)
	require.NoError(t, err)
	require.Equal(t,
		`{"b":true,"i8":-8,"u64":18446744073709551615,"f":"NaN","bin":"AAEC","ts":1,"d":19000,"m":{"k":1},"s":{"x":3,"y":"z"},"dec":"123.45"}`,
		string(rows.AppendRow(nil, 0)))
	require.Equal(t,
		`{"b":false,"i8":7,"u64":0,"f":null,"bin":"","ts":-2,"d":-1,"m":null,"s":{"x":null,"y":""},"dec":"-1.5"}`,
		string(rows.AppendRow(nil, 1)))
	for i := 0; i < 2; i++ {
		require.True(t, json.Valid(rows.AppendRow(nil, i)))
	}
}
