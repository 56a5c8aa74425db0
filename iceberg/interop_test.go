package iceberg_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
)

// sqlPeerProps are pyiceberg's properties for the SQL catalog of o.
func sqlPeerProps(o iceberg.Options) map[string]string {
	return icebergpeer.SQLProps(o.Catalog.URI, o.Warehouse)
}

// TestPyicebergReadsRawTable writes raw batches of two partitions in
// several commits and reads the table with pyiceberg from the same SQLite
// catalog: every row once, Iceberg types of the raw schema, the positions
// in the summaries and the table properties, and a DuckDB count over the
// scan.
func TestPyicebergReadsRawTable(t *testing.T) {
	o := sqlOptions(t)
	o.Ordered = true
	ctx, mem, tbl, s := newSink(t, o)
	off := uint64(0)
	writeRounds(t, ctx, s, mem, &off, 1, 101, 201, 301, 401)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	v := icebergpeer.Read(t, ctx, sqlPeerProps(o), o.Table)
	if v.Rows != 1000 {
		t.Errorf("pyiceberg reads %d rows, want 1000", v.Rows)
	}
	for p := range int32(2) {
		key := topic + "/" + string(rune('0'+p))
		if !slices.Equal(v.Seqs[key], span(1, 500)) {
			t.Errorf("pyiceberg: seqs of %s = %v, want 1..500 once each", key, v.Seqs[key])
		}
	}
	wantTypes := map[string]string{"topic": "string", "partition": "int", "seq": "long", "message_id": "binary",
		"key": "binary", "publish_time": "timestamptz", "event_time": "timestamptz", "payload": "binary"}
	for name, typ := range wantTypes {
		if v.Schema[name] != typ {
			t.Errorf("pyiceberg: column %s is %q, want %q (schema %v)", name, v.Schema[name], typ, v.Schema)
		}
	}
	if v.FormatVersion != 2 {
		t.Errorf("format version %d, want 2", v.FormatVersion)
	}
	// Five waits for durability: at least five commits, at most one per
	// batch.
	if n := len(v.Snapshots); n < 5 || n > 10 {
		t.Errorf("%d snapshots, want 5 to 10: %v", n, v.Snapshots)
	}
	var last map[string]uint64
	if len(v.Snapshots) > 0 {
		sn := v.Snapshots[len(v.Snapshots)-1]
		if sn["thalweg.commit-id"] == "" || sn["thalweg.format"] != "1" {
			t.Errorf("last snapshot summary %v lacks thalweg.commit-id or thalweg.format", sn)
		}
		if err := json.Unmarshal([]byte(sn["thalweg.positions"]), &last); err != nil {
			t.Errorf("last snapshot's thalweg.positions %q: %v", sn["thalweg.positions"], err)
		}
	}
	if last[part(0)] != 500 || last[part(1)] != 500 {
		t.Errorf("positions in the last summary = %v, want 500 for both partitions", last)
	}
	if v.Properties["thalweg.positions"] == "" {
		t.Errorf("table property thalweg.positions missing")
	}
	if v.DuckDBCount == nil || *v.DuckDBCount != 1000 {
		t.Errorf("DuckDB count = %v, want 1000", v.DuckDBCount)
	}
	if n, err := tbl.Rows(ctx); err != nil || n != int64(v.Rows) {
		t.Errorf("Rows = %d, %v; pyiceberg reads %d", n, err, v.Rows)
	}
}

// TestSchemaEvolution writes batches of a schema, then of the schema with
// a field added: the table's schema gains the field, pyiceberg reads old
// rows with it null, and Rebuild returns every row in the newest Arrow
// schema (uint32 restored from long).
func TestSchemaEvolution(t *testing.T) {
	o := sqlOptions(t)
	ctx, mem, tbl, s := newSink(t, o)
	send(t, ctx, s, 1, evBatch(mem, 1, 10, false))
	send(t, ctx, s, 2, evBatch(mem, 11, 10, true))
	if err := s.WaitDurable(ctx, 2); err != nil {
		t.Fatal(err)
	}
	v := icebergpeer.Read(t, ctx, sqlPeerProps(o), o.Table)
	if v.Rows != 20 || v.Schema["w"] != "string" || v.Schema["v"] != "long" {
		t.Fatalf("pyiceberg: %d rows, schema %v; want 20 rows, w string, v long", v.Rows, v.Schema)
	}
	bs, err := tbl.Rebuild(ctx, part(0), 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	if len(bs) != 1 || bs[0].NumRows() != 20 {
		t.Fatalf("Rebuild: %d batches", len(bs))
	}
	r := bs[0].Rec
	if !arrow.TypeEqual(r.Schema().Field(3).Type, arrow.PrimitiveTypes.Uint32) || r.Schema().Field(4).Name != "w" {
		t.Fatalf("Rebuild schema %v, want v uint32 and w", r.Schema())
	}
	w := r.Column(4).(*array.String)
	if !w.IsNull(0) || w.IsNull(19) || w.Value(19) != "w-20" {
		t.Errorf("w: row 0 null %v, row 19 %q; want null and w-20", w.IsNull(0), w.Value(19))
	}
	if got := r.Column(3).(*array.Uint32).Value(19); got != 60 {
		t.Errorf("v of seq 20 = %d, want 60", got)
	}
}

// evBatch builds rows (topic, partition 0, seq, v uint32[, w utf8]).
func evBatch(mem memory.Allocator, first uint64, n int, withW bool) *batch.Batch {
	fields := []arrow.Field{
		{Name: "topic", Type: arrow.BinaryTypes.String},
		{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "v", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	}
	if withW {
		fields = append(fields, arrow.Field{Name: "w", Type: arrow.BinaryTypes.String, Nullable: true})
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i := range n {
		seq := first + uint64(i)
		b.Field(0).(*array.StringBuilder).Append(topic)
		b.Field(1).(*array.Int32Builder).Append(0)
		b.Field(2).(*array.Uint64Builder).Append(seq)
		b.Field(3).(*array.Uint32Builder).Append(uint32(seq * 3))
		if withW {
			b.Field(4).(*array.StringBuilder).Append("w-" + itoa(seq))
		}
	}
	return &batch.Batch{Rec: b.NewRecordBatch(),
		Spans: []batch.OffsetSpan{{Partition: part(0), First: first, Last: first + uint64(n) - 1}}}
}

func itoa(u uint64) string { return strconv.FormatUint(u, 10) }

// Every Arrow type the assembler builds (raw, JSON-typed and registry
// schemas) lands in an Iceberg type pyiceberg reads, with the values
// intact, and Rebuild returns each column in its Arrow type again.
func TestEveryAssemblerTypeReadsBack(t *testing.T) {
	o := sqlOptions(t)
	ctx, mem, tbl, s := newSink(t, o)

	cols := []struct {
		name    string
		typ     arrow.DataType
		value   string // the row's value as JSON
		iceberg string // the Iceberg type pyiceberg reports
	}{
		{"b", arrow.FixedWidthTypes.Boolean, `true`, "boolean"},
		{"i32", arrow.PrimitiveTypes.Int32, `-7`, "int"},
		{"i64", arrow.PrimitiveTypes.Int64, `-9000000000`, "long"},
		{"u32", arrow.PrimitiveTypes.Uint32, `4000000000`, "long"},
		{"u64", arrow.PrimitiveTypes.Uint64, `9000000000000000000`, "long"},
		{"f32", arrow.PrimitiveTypes.Float32, `1.5`, "float"},
		{"f64", arrow.PrimitiveTypes.Float64, `2.25`, "double"},
		{"s", arrow.BinaryTypes.String, `"é"`, "string"},
		{"bin", arrow.BinaryTypes.Binary, `"AAE="`, "binary"},
		{"fix", &arrow.FixedSizeBinaryType{ByteWidth: 2}, `"AAE="`, "fixed[2]"},
		{"day", arrow.FixedWidthTypes.Date32, `19000`, "date"},
		{"tms", arrow.FixedWidthTypes.Time32ms, `3600000`, "time"},
		{"tus", arrow.FixedWidthTypes.Time64us, `3600000000`, "time"},
		{"tsms", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, `1700000000000`, "timestamptz"},
		{"tsus", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, `1700000000000000`, "timestamptz"},
		{"local", &arrow.TimestampType{Unit: arrow.Microsecond}, `1700000000000000`, "timestamp"},
		{"dec", &arrow.Decimal128Type{Precision: 10, Scale: 2}, `"12.34"`, "decimal(10, 2)"},
		{"tags", arrow.ListOf(arrow.BinaryTypes.String), `["a","b"]`, "list<string>"},
		{"attrs", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), `[{"key":"k","value":1}]`, "map<string, long>"},
		{"user", arrow.StructOf(arrow.Field{Name: "name", Type: arrow.BinaryTypes.String}), `{"name":"x"}`, "struct<"},
	}
	fields := []arrow.Field{
		{Name: "topic", Type: arrow.BinaryTypes.String},
		{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
	}
	row := fmt.Sprintf(`{"topic":%q,"partition":0,"seq":1`, topic)
	for _, c := range cols {
		fields = append(fields, arrow.Field{Name: c.name, Type: c.typ, Nullable: true})
		row += fmt.Sprintf(",%q:%s", c.name, c.value)
	}
	sc := arrow.NewSchema(fields, nil)
	rec, _, err := array.RecordFromJSON(mem, sc, strings.NewReader("["+row+"}]"))
	if err != nil {
		t.Fatal(err)
	}
	rec.Retain() // send releases the batch; the comparison needs rec
	defer rec.Release()
	send(t, ctx, s, 1, &batch.Batch{Rec: rec, Spans: []batch.OffsetSpan{{Partition: part(0), First: 1, Last: 1}}})
	if err := s.WaitDurable(ctx, 1); err != nil {
		t.Fatal(err)
	}

	v := icebergpeer.Read(t, ctx, sqlPeerProps(o), o.Table)
	if v.Rows != 1 {
		t.Fatalf("pyiceberg reads %d rows, want 1", v.Rows)
	}
	for _, c := range cols {
		if got := v.Schema[c.name]; !strings.HasPrefix(got, c.iceberg) {
			t.Errorf("%s (%s): Iceberg type %q, want %q", c.name, c.typ, got, c.iceberg)
		}
	}

	bs, err := tbl.Rebuild(ctx, part(0), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	if len(bs) != 1 {
		t.Fatalf("Rebuild: %d batches, want 1", len(bs))
	}
	got := bs[0].Rec
	for i, c := range cols {
		col := got.Column(3 + i)
		if !arrow.TypeEqual(col.DataType(), c.typ) {
			t.Errorf("%s: Rebuild type %s, want %s", c.name, col.DataType(), c.typ)
			continue
		}
		if want := rec.Column(3 + i); !array.Equal(col, want) {
			t.Errorf("%s: Rebuild value %v, want %v", c.name, col, want)
		}
	}
}
