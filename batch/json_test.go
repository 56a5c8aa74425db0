package batch_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
)

var tsMs = &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}

// allTypes covers every supported type, nullable and not, and nesting.
var allTypes = arrow.NewSchema([]arrow.Field{
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
	{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "ts", Type: tsMs, Nullable: true},
	{Name: "tsus", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "user", Nullable: true, Type: arrow.StructOf(
		arrow.Field{Name: "name", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "age", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	)},
	{Name: "items", Nullable: true, Type: arrow.ListOfNonNullable(arrow.StructOf(
		arrow.Field{Name: "sku", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "qty", Type: arrow.PrimitiveTypes.Int32},
	))},
	{Name: "matrix", Nullable: true, Type: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64))},
}, nil)

func newJSONAssembler(t testing.TB, schema *arrow.Schema) (*batch.Assembler, *sink) {
	t.Helper()
	a, s := newAssembler(t, batch.AssemblerOptions{Mode: batch.ModeJSON, Schema: schema})
	return a, s
}

// arrowReference decodes lines with arrow-go's own JSON reader, the
// independent implementation the assembler's output is compared with.
func arrowReference(t *testing.T, mem memory.Allocator, schema *arrow.Schema, lines []string) arrow.RecordBatch {
	t.Helper()
	r := array.NewJSONReader(strings.NewReader(strings.Join(lines, "\n")), schema,
		array.WithAllocator(mem), array.WithChunk(-1))
	defer r.Release()
	if !r.Next() {
		t.Fatalf("arrow reference reader: %v", r.Err())
	}
	rec := r.RecordBatch()
	rec.Retain()
	return rec
}

func addPayloads(t *testing.T, a *batch.Assembler, payloads []string) {
	t.Helper()
	for i, p := range payloads {
		if err := a.Add(&batch.Record{Seq: uint64(i + 1), Payload: []byte(p)}); err != nil {
			t.Fatal(err)
		}
	}
}

var goodRows = []string{
	`{"b":true,"i8":-128,"i16":32767,"i32":-5,"i64":9007199254740993,"u8":255,"u16":65535,"u32":4000000000,"u64":12345678901234,` +
		`"f32":1.5,"f64":-2.25e-3,"s":"héllo \"q\" \u00e9 \ud83d\ude00","bin":"AAEC/w==","ts":"2024-02-29T23:59:59.123Z",` +
		`"tsus":"2024-01-02T03:04:05.123456+02:00","d":"2024-02-29",` +
		`"user":{"name":"ann","age":41,"tags":["a","b",null]},"items":[{"sku":"x","qty":1},{"qty":2,"sku":"y"}],"matrix":[[1,2],[],null,[3]]}`,
	// Every nullable field null or absent; required i64 present; unknown fields skipped.
	`{"i64":0,"b":null,"user":null,"items":null,"matrix":null,"extra":{"deep":[1,{"x":"y"},"\u0041"]},"more":[true,false,null,1e5]}`,
	// Nested nullable fields absent; empty lists; keys out of schema order.
	`{"user":{"name":""},"items":[],"i64":-9223372036854775808,"matrix":[[]],"s":"","bin":""}`,
	// Whitespace everywhere.
	" \t\n{ \"i64\" : 1 , \"user\" : { \"name\" : \"z\" , \"tags\" : [ ] } }\r\n",
}

func TestJSONMatchesArrowReader(t *testing.T) {
	mem := checkedMem(t)
	a, s := newAssembler(t, batch.AssemblerOptions{Allocator: mem, Mode: batch.ModeJSON, Schema: allTypes})
	addPayloads(t, a, goodRows)
	a.Flush()
	if len(s.rejected) != 0 {
		t.Fatalf("rejected: %v", s.rejected[0].reason)
	}
	if len(s.batches) != 1 {
		t.Fatalf("batches = %d", len(s.batches))
	}
	got := s.batches[0].Rec
	want := arrowReference(t, mem, allTypes, goodRows)
	defer want.Release()
	if !array.RecordEqual(got, want) {
		for i := range got.NumCols() {
			if !array.Equal(got.Column(int(i)), want.Column(int(i))) {
				t.Errorf("column %s:\n got %v\nwant %v", got.ColumnName(int(i)), got.Column(int(i)), want.Column(int(i)))
			}
		}
	}
	// Spot checks the reference cannot be trusted with (precision, zones).
	if v := got.Column(4).(*array.Int64).Value(0); v != 9007199254740993 {
		t.Errorf("i64 = %d, lost precision", v)
	}
	if v := got.Column(14).(*array.Timestamp).Value(0); v != 1704157445123456 {
		t.Errorf("tsus = %d, want 2024-01-02T01:04:05.123456Z", v)
	}
	if v := got.Column(11).(*array.String).Value(0); v != "héllo \"q\" é 😀" {
		t.Errorf("s = %q", v)
	}
}

func TestJSONEdgeValues(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "ms", Type: tsMs},
		{Name: "s", Type: &arrow.TimestampType{Unit: arrow.Second}},
		{Name: "ns", Type: arrow.FixedWidthTypes.Timestamp_ns},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "bad", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	a, s := newJSONAssembler(t, schema)
	addPayloads(t, a, []string{
		`{"u64":18446744073709551615,"i64":-9223372036854775808,"ms":-1500,"s":-1500,"ns":1700000000000,"d":-1}`,
		`{"u64":0,"i64":9223372036854775807,"ms":"1969-12-31T23:59:58.5Z","s":"1969-12-31T23:59:58.5Z","ns":"2000-01-01T00:00:00.123456789123Z","d":"1900-03-01"}`,
		`{"u64":1,"i64":1,"ms":0,"s":0,"ns":0,"d":19000,"bad":"\ud800 lone"}`,
	})
	a.Flush()
	if len(s.rejected) > 0 {
		t.Fatal(s.rejected[0].reason)
	}
	r := s.batches[0].Rec
	check := func(col int, want any) {
		t.Helper()
		var got any
		switch c := r.Column(col).(type) {
		case *array.Uint64:
			got = c.Values()
		case *array.Int64:
			got = c.Values()
		case *array.Timestamp:
			got = c.Values()
		case *array.Date32:
			got = c.Date32Values()
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("column %s = %v, want %v", r.ColumnName(col), got, want)
		}
	}
	check(0, []uint64{18446744073709551615, 0, 1})
	check(1, []int64{-9223372036854775808, 9223372036854775807, 1})
	check(2, []arrow.Timestamp{-1500, -1500, 0})
	check(3, []arrow.Timestamp{-2, -2, 0}) // floor, not truncation toward zero
	check(4, []arrow.Timestamp{1700000000000 * 1e6, 946684800123456789, 0})
	check(5, []arrow.Date32{-1, -25508, 19000})
	if v := r.Column(6).(*array.String).Value(2); v != "\uFFFD lone" {
		t.Errorf("lone surrogate = %q, want U+FFFD", v)
	}
}

func TestJSONRejects(t *testing.T) {
	good := `{"i64":1}`
	tests := []struct {
		payload  string
		kind     batch.RejectKind
		path     string
		expected string // substring of RejectError.Expected
	}{
		{``, batch.RejectSyntax, "", ""},
		{`   `, batch.RejectSyntax, "", ""},
		{`{"i64":1`, batch.RejectSyntax, "", ""},
		{`{"i64":1}x`, batch.RejectSyntax, "", ""},
		{`{"i64":1}{}`, batch.RejectSyntax, "", ""},
		{`{"i64":1,}`, batch.RejectSyntax, "", ""},
		{`{i64:1}`, batch.RejectSyntax, "", ""},
		{`{"i64" 1}`, batch.RejectSyntax, "", ""},
		{`{"i64":1 "b":true}`, batch.RejectSyntax, "", ""},
		{`{"i64":01}`, batch.RejectSyntax, "", ""},
		{`{"i64":1,"x":[1,2}`, batch.RejectSyntax, "", ""},
		{`{"i64":1,"x":"\q"}`, batch.RejectSyntax, "", ""},
		{`{"i64":1,"x":"a` + "\n" + `"}`, batch.RejectSyntax, "", ""},
		{`{"i64":1,"x":tru}`, batch.RejectSyntax, "", ""},
		{`{"i64":1,"x":-}`, batch.RejectSyntax, "", ""},
		{`{"i64":1,"x":1.}`, batch.RejectSyntax, "", ""},
		{`{"i64":1,"x":1e}`, batch.RejectSyntax, "", ""},
		{`{"i64":1,"s":"\u12"}`, batch.RejectSyntax, "s", ""},
		{`[1]`, batch.RejectType, "", "object"},
		{`"str"`, batch.RejectType, "", "object"},
		{`{}`, batch.RejectMissing, "i64", "int64"},
		{`{"i64":null}`, batch.RejectNull, "i64", "int64"},
		{`{"i64":"1"}`, batch.RejectType, "i64", "int64"},
		{`{"i64":1.5}`, batch.RejectType, "i64", "int64"},
		{`{"i64":1e3}`, batch.RejectType, "i64", "int64"},
		{`{"i64":9223372036854775808}`, batch.RejectRange, "i64", "int64"},
		{`{"i64":-9223372036854775809}`, batch.RejectRange, "i64", "int64"},
		{`{"i64":99999999999999999999999}`, batch.RejectRange, "i64", "int64"},
		{`{"i64":1,"b":1}`, batch.RejectType, "b", "bool"},
		{`{"i64":1,"b":"true"}`, batch.RejectType, "b", "bool"},
		{`{"i64":1,"i8":128}`, batch.RejectRange, "i8", "int8"},
		{`{"i64":1,"i8":-129}`, batch.RejectRange, "i8", "int8"},
		{`{"i64":1,"i16":40000}`, batch.RejectRange, "i16", "int16"},
		{`{"i64":1,"i32":2147483648}`, batch.RejectRange, "i32", "int32"},
		{`{"i64":1,"u8":256}`, batch.RejectRange, "u8", "uint8"},
		{`{"i64":1,"u16":-1}`, batch.RejectRange, "u16", "uint16"},
		{`{"i64":1,"u32":4294967296}`, batch.RejectRange, "u32", "uint32"},
		{`{"i64":1,"u64":18446744073709551616}`, batch.RejectRange, "u64", "uint64"},
		{`{"i64":1,"u64":true}`, batch.RejectType, "u64", "uint64"},
		{`{"i64":1,"f32":1e39}`, batch.RejectRange, "f32", "float32"},
		{`{"i64":1,"f64":1e400}`, batch.RejectRange, "f64", "float64"},
		{`{"i64":1,"f64":"1.0"}`, batch.RejectType, "f64", "float64"},
		{`{"i64":1,"s":5}`, batch.RejectType, "s", "string"},
		{`{"i64":1,"s":"` + "\xff" + `"}`, batch.RejectRange, "s", "string"},
		{`{"i64":1,"bin":"***"}`, batch.RejectRange, "bin", "base64"},
		{`{"i64":1,"bin":[1]}`, batch.RejectType, "bin", "binary"},
		{`{"i64":1,"ts":"2024-13-01T00:00:00Z"}`, batch.RejectRange, "ts", "timestamp"},
		{`{"i64":1,"ts":"2024-02-30T00:00:00Z"}`, batch.RejectRange, "ts", "timestamp"},
		{`{"i64":1,"ts":"2024-01-01T00:00:00"}`, batch.RejectRange, "ts", "timestamp"},
		{`{"i64":1,"ts":"yesterday"}`, batch.RejectRange, "ts", "timestamp"},
		{`{"i64":1,"ts":1.5}`, batch.RejectType, "ts", "timestamp"},
		{`{"i64":1,"ts":true}`, batch.RejectType, "ts", "timestamp"},
		{`{"i64":1,"tsus":9223372036854775807}`, batch.RejectRange, "tsus", "timestamp"},
		{`{"i64":1,"d":"2023-02-29"}`, batch.RejectRange, "d", "date32"},
		{`{"i64":1,"d":"2023-2-2"}`, batch.RejectRange, "d", "date32"},
		{`{"i64":1,"d":3000000000}`, batch.RejectRange, "d", "date32"},
		{`{"i64":1,"d":{}}`, batch.RejectType, "d", "date32"},
		{`{"i64":1,"user":[]}`, batch.RejectType, "user", "struct"},
		{`{"i64":1,"user":{}}`, batch.RejectMissing, "user.name", "string"},
		{`{"i64":1,"user":{"name":null}}`, batch.RejectNull, "user.name", "string"},
		{`{"i64":1,"user":{"name":"a","age":"x"}}`, batch.RejectType, "user.age", "int32"},
		{`{"i64":1,"user":{"name":"a","tags":"x"}}`, batch.RejectType, "user.tags", "list"},
		{`{"i64":1,"user":{"name":"a","tags":["x","y",3]}}`, batch.RejectType, "user.tags[2]", "string"},
		{`{"i64":1,"items":[{"sku":"a","qty":1},{"sku":"b"}]}`, batch.RejectMissing, "items[1].qty", "int32"},
		{`{"i64":1,"items":[null]}`, batch.RejectNull, "items[0]", "struct"},
		{`{"i64":1,"matrix":[[1],[2,"x"]]}`, batch.RejectType, "matrix[1][1]", "int64"},
		{`{"i64":1,"matrix":[[1],[2 3]]}`, batch.RejectSyntax, "matrix[1]", ""},
		{`{"i64":1,"x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, batch.RejectTooDeep, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.payload, func(t *testing.T) {
			mem := checkedMem(t)
			a, s := newAssembler(t, batch.AssemblerOptions{Allocator: mem, Mode: batch.ModeJSON, Schema: allTypes})
			// The bad record sits between two good ones: it must leave no
			// trace in the builders, only in the spans.
			addPayloads(t, a, []string{good, tt.payload, good})
			a.Flush()
			if len(s.rejected) != 1 {
				t.Fatalf("rejected %d records, want 1", len(s.rejected))
			}
			reason := s.rejected[0].reason
			var re *batch.RejectError
			if !errors.As(reason, &re) || !errors.Is(reason, batch.ErrRejected) {
				t.Fatalf("reason %T %v is not a *RejectError matching ErrRejected", reason, reason)
			}
			if re.Kind != tt.kind || re.Path != tt.path || !strings.Contains(re.Expected, tt.expected) {
				t.Fatalf("reason = %v\n kind %v path %q expected %q; want %v %q %q", re, re.Kind, re.Path, re.Expected,
					tt.kind, tt.path, tt.expected)
			}
			if s.rejected[0].seq != 2 {
				t.Fatalf("rejected seq %d", s.rejected[0].seq)
			}
			b := s.batches[0]
			if b.NumRows() != 2 || b.Rejected != 1 || b.NumRecords() != 3 ||
				!reflect.DeepEqual(b.Spans, []batch.OffsetSpan{{First: 1, Last: 3}}) {
				t.Fatalf("batch rows=%d rejected=%d spans=%v", b.NumRows(), b.Rejected, b.Spans)
			}
			want := arrowReference(t, mem, allTypes, []string{good, good})
			defer want.Release()
			if !array.RecordEqual(b.Rec, want) {
				t.Fatalf("batch differs from two good rows:\n%v", b.Rec)
			}
			if st := a.Stats(); st.Rejected != 1 || st.Rows != 2 || st.Records != 3 {
				t.Fatalf("stats = %+v", st)
			}
		})
	}
}

// TestJSONRejectLateInRow rejects records whose error comes after many
// columns (including nested ones) were already decoded, the case a
// decode-straight-into-builders design gets wrong.
func TestJSONRejectLateInRow(t *testing.T) {
	mem := checkedMem(t)
	a, s := newAssembler(t, batch.AssemblerOptions{Allocator: mem, Mode: batch.ModeJSON, Schema: allTypes})
	bad := []string{
		strings.Replace(goodRows[0], `"matrix":[[1,2],[],null,[3]]`, `"matrix":[[1,2],[],null,[3,"x"]]`, 1),
		strings.Replace(goodRows[0], `{"qty":2,"sku":"y"}`, `{"qty":2}`, 1),
		goodRows[0][:len(goodRows[0])-1],
	}
	payloads := []string{goodRows[0], bad[0], goodRows[1], bad[1], bad[2], goodRows[2]}
	addPayloads(t, a, payloads)
	a.Flush()
	if len(s.rejected) != 3 {
		t.Fatalf("rejected = %d", len(s.rejected))
	}
	want := arrowReference(t, mem, allTypes, []string{goodRows[0], goodRows[1], goodRows[2]})
	defer want.Release()
	if !array.RecordEqual(s.batches[0].Rec, want) {
		t.Fatalf("rejected rows leaked into the batch:\n%v", s.batches[0].Rec)
	}
}

func TestJSONIncludeMeta(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	a, s := newAssembler(t, batch.AssemblerOptions{Mode: batch.ModeJSON, Schema: schema, IncludeMeta: true})
	for i, p := range []string{`{"v":10}`, `{"v":"bad"}`, `{"v":30}`} {
		if err := a.Add(&batch.Record{Partition: pn(4), Seq: uint64(100 + i), ID: fmt.Appendf(nil, "m%d", i), Payload: []byte(p)}); err != nil {
			t.Fatal(err)
		}
	}
	a.Flush()
	r := s.batches[0].Rec
	var names []string
	for _, f := range r.Schema().Fields() {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "_topic,_partition,_seq,_message_id,v" {
		t.Fatalf("fields = %s", got)
	}
	if !a.Schema().Equal(r.Schema()) {
		t.Fatalf("Assembler.Schema() differs from the batch schema")
	}
	if got := r.Column(2).(*array.Uint64).Values(); !reflect.DeepEqual(got, []uint64{100, 102}) {
		t.Fatalf("_seq = %v", got)
	}
	if got := r.Column(1).(*array.Int32).Values(); !reflect.DeepEqual(got, []int32{4, 4}) {
		t.Fatalf("_partition = %v", got)
	}
	if got := r.Column(0).(*array.String); got.Value(0) != "persistent://public/default/t" || got.Value(1) != got.Value(0) {
		t.Fatalf("_topic = %v", got)
	}
	if got := r.Column(3).(*array.Binary); string(got.Value(0)) != "m0" || string(got.Value(1)) != "m2" {
		t.Fatalf("_message_id = %v", got)
	}
}

// TestJSONOnlyRejectedBatch: a batch of only rejected records is still
// emitted (zero rows) so the watermark advances past them.
func TestJSONOnlyRejectedBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
		a, s := newAssembler(t, batch.AssemblerOptions{Mode: batch.ModeJSON, Schema: schema, Linger: batch.DefaultLinger})
		addPayloads(t, a, []string{`nope`, `{"v":true}`})
		time.Sleep(batch.DefaultLinger) // the bubble's fake clock reaches the linger
		synctest.Wait()                 // the linger flush has emitted
		if len(s.batches) != 1 {
			t.Fatalf("batches = %d", len(s.batches))
		}
		b := s.batches[0]
		if b.NumRows() != 0 || b.Rejected != 2 || b.Reason != batch.FlushLinger ||
			!reflect.DeepEqual(b.Spans, []batch.OffsetSpan{{First: 1, Last: 2}}) {
			t.Fatalf("batch rows=%d rejected=%d reason=%v spans=%v", b.NumRows(), b.Rejected, b.Reason, b.Spans)
		}
	})
}
