package batch_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
)

// TestIdentityOf finds the raw schema's identity columns, the JSON
// metadata columns, and refuses a schema with a wrong type or neither set.
func TestIdentityOf(t *testing.T) {
	if id, ok := batch.IdentityOf(batch.RawSchema()); !ok || id != (batch.Identity{Topic: 0, Partition: 1, Seq: 2}) {
		t.Fatalf("raw schema: %+v, %v", id, ok)
	}
	meta := arrow.NewSchema([]arrow.Field{
		{Name: "v", Type: arrow.PrimitiveTypes.Int64},
		{Name: "_seq", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "_partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "_topic", Type: arrow.BinaryTypes.String},
	}, nil)
	if id, ok := batch.IdentityOf(meta); !ok || id != (batch.Identity{Topic: 3, Partition: 2, Seq: 1}) {
		t.Fatalf("meta schema: %+v, %v", id, ok)
	}
	wrong := arrow.NewSchema([]arrow.Field{
		{Name: "topic", Type: arrow.BinaryTypes.String},
		{Name: "partition", Type: arrow.PrimitiveTypes.Int64},
		{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
	}, nil)
	if id, ok := batch.IdentityOf(wrong); ok {
		t.Fatalf("partition int64: %+v, want not found", id)
	}
	if id, ok := batch.IdentityOf(arrow.NewSchema(nil, nil)); ok {
		t.Fatalf("empty schema: %+v, want not found", id)
	}
}

// TestIdentityEach names every row's partition as JoinPartition does, in
// row order, with its seq.
func TestIdentityEach(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "_topic", Type: arrow.BinaryTypes.String},
		{Name: "_partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "_seq", Type: arrow.PrimitiveTypes.Uint64},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	rows := []struct {
		topic string
		part  int32
		seq   uint64
	}{{"t", 0, 5}, {"t", 0, 6}, {"t", 2, 1}, {"u", -1, 9}, {"t", 0, 7}}
	for _, r := range rows {
		b.Field(0).(*array.StringBuilder).Append(r.topic)
		b.Field(1).(*array.Int32Builder).Append(r.part)
		b.Field(2).(*array.Uint64Builder).Append(r.seq)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	id, ok := batch.IdentityOf(sc)
	if !ok {
		t.Fatal("no identity")
	}
	n := 0
	id.Each(rec, func(p string, seq uint64, row int) {
		want := rows[row]
		if row != n || p != batch.JoinPartition(want.topic, want.part) || seq != want.seq {
			t.Errorf("row %d (call %d): %q seq %d, want %q seq %d", row, n, p, seq, batch.JoinPartition(want.topic, want.part), want.seq)
		}
		n++
	})
	if n != len(rows) {
		t.Fatalf("%d calls, want %d", n, len(rows))
	}
}
