package iceberg_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/iceberg"
)

const topic = "persistent://public/default/orders"

// part is the span name of partition i of topic.
func part(i int32) string { return batch.JoinPartition(topic, i) }

// rawBatch builds n raw rows of partition p from seq first on.
func rawBatch(mem memory.Allocator, p int32, first uint64, n int) *batch.Batch {
	b := array.NewRecordBuilder(mem, batch.RawSchema())
	defer b.Release()
	for i := range n {
		seq := first + uint64(i)
		b.Field(0).(*array.StringBuilder).Append(topic)
		b.Field(1).(*array.Int32Builder).Append(p)
		b.Field(2).(*array.Uint64Builder).Append(seq)
		b.Field(3).(*array.BinaryBuilder).Append([]byte(fmt.Sprintf("id-%d", seq)))
		b.Field(4).(*array.BinaryBuilder).AppendNull()
		b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(seq)))
		b.Field(6).(*array.TimestampBuilder).AppendNull()
		mb := b.Field(7).(*array.MapBuilder)
		mb.Append(true)
		mb.KeyBuilder().(*array.StringBuilder).Append("k")
		mb.ItemBuilder().(*array.StringBuilder).Append(fmt.Sprint(seq % 7))
		b.Field(8).(*array.BinaryBuilder).Append([]byte(fmt.Sprintf(`{"n":%d}`, seq)))
	}
	var spans []batch.OffsetSpan
	if n > 0 {
		spans = []batch.OffsetSpan{{Partition: part(p), First: first, Last: first + uint64(n) - 1}}
	}
	return &batch.Batch{Rec: b.NewRecordBatch(), Spans: spans}
}

// sqlOptions are the options of a SQL-catalog table in a fresh directory.
func sqlOptions(t testing.TB) iceberg.Options {
	dir := t.TempDir()
	return iceberg.Options{
		Catalog:        iceberg.CatalogOptions{URI: filepath.Join(dir, "catalog.db")},
		Warehouse:      filepath.Join(dir, "warehouse"),
		Table:          "raw.orders",
		CommitInterval: 20 * time.Millisecond,
		Encoders:       encoders, // several, whatever the machine's cores
	}
}

// encoders is the encoders of the tests' Sinks (Options.Encoders).
const encoders = 3

// newSink opens the table of o, with a checked allocator that t's cleanup
// checks for leaks once the table and the sink (closed by earlier-running
// cleanups) are done, and dials a Sink on it.
func newSink(t testing.TB, o iceberg.Options) (context.Context, memory.Allocator, *iceberg.Table, *iceberg.Sink) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	o.Allocator = mem
	ctx := ctxFor(t)
	tbl := openTable(t, o)
	return ctx, mem, tbl, dial(t, ctx, tbl)
}

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func openTable(t testing.TB, o iceberg.Options) *iceberg.Table {
	t.Helper()
	tbl, err := iceberg.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tbl.Close(); err != nil {
			t.Error(err)
		}
	})
	return tbl
}

func dial(t testing.TB, ctx context.Context, tbl *iceberg.Table) *iceberg.Sink {
	t.Helper()
	s, err := tbl.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// send sends b at offset and releases it.
func send(t testing.TB, ctx context.Context, s *iceberg.Sink, offset uint64, b *batch.Batch) {
	t.Helper()
	defer b.Release()
	if err := s.Send(ctx, offset, b); err != nil {
		t.Fatalf("Send(%d): %v", offset, err)
	}
}

// seqs reads the table back (Rebuild of every partition Positions names)
// and returns the seqs per partition; it checks that the spans of the
// batches are consecutive and cover the rows.
func seqs(t testing.TB, ctx context.Context, tbl *iceberg.Table) map[string][]uint64 {
	t.Helper()
	pos, err := tbl.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]uint64{}
	for p := range pos {
		bs, err := tbl.Rebuild(ctx, p, 0, math.MaxUint64)
		if err != nil {
			t.Fatalf("Rebuild(%s): %v", p, err)
		}
		next := uint64(0)
		for _, b := range bs {
			if len(b.Spans) != 1 || b.Spans[0].First != next || b.Spans[0].Partition != p {
				t.Errorf("Rebuild(%s): spans %v, want one from %d", p, b.Spans, next)
			}
			next = b.Spans[0].Last + 1
			q := b.Rec.Column(2).(*array.Uint64)
			for i := range int(b.Rec.NumRows()) {
				if !b.Spans[0].Contains(p, q.Value(i)) {
					t.Errorf("Rebuild(%s): seq %d outside its span %v", p, q.Value(i), b.Spans[0])
				}
				out[p] = append(out[p], q.Value(i))
			}
			b.Release()
		}
	}
	return out
}

func span(first, last uint64) []uint64 {
	var s []uint64
	for q := first; q <= last; q++ {
		s = append(s, q)
	}
	return s
}

func TestSinkCommitsAndPositions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := ctxFor(t)
	o := sqlOptions(t)
	o.Allocator = mem
	tbl := openTable(t, o)
	if p, err := tbl.Positions(ctx); err != nil || len(p) != 0 {
		t.Fatalf("Positions of a missing table = %v, %v; want empty", p, err)
	}
	s := dial(t, ctx, tbl)
	send(t, ctx, s, 1, rawBatch(mem, 0, 1, 100))
	send(t, ctx, s, 2, rawBatch(mem, 1, 1, 50))
	send(t, ctx, s, 3, rawBatch(mem, 0, 101, 100))
	if err := s.WaitDurable(ctx, 3); err != nil {
		t.Fatal(err)
	}
	p, err := tbl.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]uint64{part(0): 200, part(1): 50}; !maps(p, want) {
		t.Fatalf("Positions = %v, want %v", p, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got := seqs(t, ctx, tbl)
	if !slices.Equal(got[part(0)], span(1, 200)) || !slices.Equal(got[part(1)], span(1, 50)) {
		t.Fatalf("stored seqs = %v", got)
	}
}

func maps(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestIncompatibleSchemaFailsForGood sends a batch whose field changes
// type (v: uint32, then utf8): the Sink fails with a permanent error that
// names the field and does not heal, and the rows before it stay durable.
func TestIncompatibleSchemaFailsForGood(t *testing.T) {
	o := sqlOptions(t)
	ctx, mem, tbl, s := newSink(t, o)
	send(t, ctx, s, 1, evBatch(mem, 1, 10, false))
	if err := s.WaitDurable(ctx, 1); err != nil {
		t.Fatal(err)
	}
	bad := func() *batch.Batch {
		b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{
			{Name: "topic", Type: arrow.BinaryTypes.String},
			{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
			{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
			{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
		}, nil))
		defer b.Release()
		b.Field(0).(*array.StringBuilder).Append(topic)
		b.Field(1).(*array.Int32Builder).Append(0)
		b.Field(2).(*array.Uint64Builder).Append(11)
		b.Field(3).(*array.StringBuilder).Append("x")
		return &batch.Batch{Rec: b.NewRecordBatch(), Spans: []batch.OffsetSpan{{Partition: part(0), First: 11, Last: 11}}}
	}()
	defer bad.Release()
	err := s.Send(ctx, 2, bad)
	var ie *iceberg.Error
	if !errors.As(err, &ie) || !ie.Permanent() || ie.Retryable() || !strings.Contains(err.Error(), `"v"`) {
		t.Fatalf("Send of an incompatible schema = %v; want a permanent, non-retryable error naming \"v\"", err)
	}
	if err := s.WaitDurable(ctx, 2); !errors.Is(err, ie) && (err == nil || err.Error() != ie.Error()) {
		t.Fatalf("WaitDurable after the failure = %v, want the same error", err)
	}
	if p, err := tbl.Positions(ctx); err != nil || p[part(0)] != 10 {
		t.Fatalf("Positions = %v, %v; want %s: 10", p, err, part(0))
	}
}

// TestOptionsValidation names every invalid field.
func TestOptionsValidation(t *testing.T) {
	_, err := iceberg.Open(iceberg.Options{
		Catalog:   iceberg.CatalogOptions{Type: "hive"},
		Warehouse: "gs://bucket",
		Table:     "orders",
		S3:        iceberg.S3Options{AccessKeyID: "a"},
	})
	if !errors.Is(err, iceberg.ErrInvalidOptions) {
		t.Fatalf("Open = %v, want ErrInvalidOptions", err)
	}
	for _, want := range []string{"Catalog.Type", "Catalog.URI", "Warehouse", "Table", "AccessKeyID"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// A nanosecond timestamp (Avro timestamp-nanos) has no Iceberg type before
// format version 3, which thalweg does not write yet: the batch is refused
// for good, naming the field, before any row of it is stored.
func TestNanosecondTimestampRefused(t *testing.T) {
	ctx, mem, _, s := newSink(t, sqlOptions(t))
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "topic", Type: arrow.BinaryTypes.String},
		{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "at_ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(mem, sc, strings.NewReader(`[{"topic":"`+topic+`","partition":0,"seq":1,"at_ns":1}]`))
	if err != nil {
		t.Fatal(err)
	}
	b := &batch.Batch{Rec: rec, Spans: []batch.OffsetSpan{{Partition: part(0), First: 1, Last: 1}}}
	defer b.Release()
	err = s.Send(ctx, 1, b)
	var ie *iceberg.Error
	if !errors.As(err, &ie) || !ie.Permanent() || !strings.Contains(err.Error(), "at_ns") {
		t.Fatalf("Send of a timestamp[ns] column = %v; want a permanent error naming at_ns", err)
	}
}

// TestUnwritableWarehouseFailsForGood: a local warehouse the worker cannot
// write (its path runs through a regular file) does not heal by waiting:
// the first write fails with a permanent, named error.
func TestUnwritableWarehouseFailsForGood(t *testing.T) {
	ctx := ctxFor(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := sqlOptions(t)
	o.Allocator = mem
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o.Warehouse = filepath.Join(file, "warehouse")
	tbl := openTable(t, o)
	s := dial(t, ctx, tbl)
	b := rawBatch(mem, 0, 1, 10)
	err := s.Send(ctx, 1, b)
	b.Release()
	if err == nil {
		err = s.WaitDurable(ctx, 1)
	}
	var ie *iceberg.Error
	if !errors.As(err, &ie) || ie.Retryable() || ie.StatusName() != "InvalidArgument" {
		t.Fatalf("a warehouse through a regular file: %v, want a permanent InvalidArgument *iceberg.Error", err)
	}
	if !strings.Contains(err.Error(), o.Warehouse) {
		t.Errorf("the error does not name the warehouse: %v", err)
	}
}

// writeRounds sends, for each first in firsts, a batch of 100 rows from
// first on to partitions 0 and 1 under the next offsets (after *off), and
// waits until both are durable: one commit or more per round.
func writeRounds(t testing.TB, ctx context.Context, s *iceberg.Sink, mem memory.Allocator, off *uint64, firsts ...uint64) {
	t.Helper()
	for _, first := range firsts {
		for p := range int32(2) {
			*off++
			send(t, ctx, s, *off, rawBatch(mem, p, first, 100))
		}
		if err := s.WaitDurable(ctx, *off); err != nil {
			t.Fatal(err)
		}
	}
}

// checkPositionsAndRebuild checks that tbl names last as the position of
// partitions 0 and 1, and that Rebuild of partition 0 returns from..to.
func checkPositionsAndRebuild(t testing.TB, ctx context.Context, tbl *iceberg.Table, last, from, to uint64) {
	t.Helper()
	pos, err := tbl.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pos[part(0)] != last || pos[part(1)] != last {
		t.Errorf("Positions = %v, want %d for both partitions", pos, last)
	}
	bs, err := tbl.Rebuild(ctx, part(0), from, to)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, b := range bs {
		rows += b.Rec.NumRows()
		b.Release()
	}
	if want := int64(to - from + 1); rows != want {
		t.Errorf("Rebuild(%d..%d) = %d rows, want %d", from, to, rows, want)
	}
}
