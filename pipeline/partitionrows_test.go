package pipeline

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
)

// identityBatch builds a batch of schema (topic, partition, seq, payload), or
// without the identity columns' names when plain, holding rows of topic
// t's partitions (index, seq) in the order given, with one span per
// partition.
func identityBatch(t *testing.T, mem memory.Allocator, plain bool, rows ...[2]uint64) *batch.Batch {
	t.Helper()
	names := []string{"topic", "partition", "seq", "payload"}
	if plain {
		names = []string{"t", "p", "s", "payload"}
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: names[0], Type: arrow.BinaryTypes.String},
		{Name: names[1], Type: arrow.PrimitiveTypes.Int32},
		{Name: names[2], Type: arrow.PrimitiveTypes.Uint64},
		{Name: names[3], Type: arrow.BinaryTypes.Binary},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	spans := map[string]*batch.OffsetSpan{}
	var order []string
	for _, r := range rows {
		b.Field(0).(*array.StringBuilder).Append("t")
		b.Field(1).(*array.Int32Builder).Append(int32(r[0]))
		b.Field(2).(*array.Uint64Builder).Append(r[1])
		b.Field(3).(*array.BinaryBuilder).Append(fmt.Appendf(nil, "%d/%d", r[0], r[1]))
		name := batch.JoinPartition("t", int32(r[0]))
		if sp := spans[name]; sp != nil {
			sp.Last = r[1]
		} else {
			spans[name] = &batch.OffsetSpan{Partition: name, First: r[1], Last: r[1]}
			order = append(order, name)
		}
	}
	out := &batch.Batch{Rec: b.NewRecordBatch()}
	for _, n := range order {
		out.Spans = append(out.Spans, *spans[n])
	}
	return out
}

func payloadsOf(b *batch.Batch) []string {
	var out []string
	col := b.Rec.Column(3).(*array.Binary)
	for i := range int(b.Rec.NumRows()) {
		out = append(out, string(col.Value(i)))
	}
	return out
}

// A batch read back for one partition's catch-up is narrowed to that
// partition's rows above the fed prefix, with the span they cover; a batch
// of that partition alone above it is passed as it is, and one whose
// schema has no identity columns whole.
func TestPartitionRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	p0 := batch.JoinPartition("t", 0)

	mixed := identityBatch(t, mem, false, [2]uint64{0, 1}, [2]uint64{1, 7}, [2]uint64{0, 2}, [2]uint64{0, 3}, [2]uint64{1, 8}, [2]uint64{0, 4})
	defer mixed.Release()
	got := partitionRows(ctx, mixed, mixed.Spans[0], 2, mem)
	if p := fmt.Sprint(payloadsOf(got)); p != "[0/3 0/4]" {
		t.Errorf("rows of %s above 2: %s, want [0/3 0/4]", p0, p)
	}
	if s := fmt.Sprint(got.Spans); s != "["+p0+"[3..4]]" {
		t.Errorf("spans %s, want [%s[3..4]]", s, p0)
	}
	got.Release()

	one := identityBatch(t, mem, false, [2]uint64{0, 5}, [2]uint64{0, 6})
	defer one.Release()
	if got := partitionRows(ctx, one, one.Spans[0], 4, mem); got != one {
		t.Errorf("a batch of the partition alone above the prefix was copied")
	} else {
		got.Release()
	}

	plain := identityBatch(t, mem, true, [2]uint64{0, 1}, [2]uint64{1, 7}, [2]uint64{0, 2})
	defer plain.Release()
	got = partitionRows(ctx, plain, plain.Spans[0], 1, mem)
	if got != plain || got.Rec.NumRows() != 3 {
		t.Errorf("a batch without identity columns was narrowed to %d rows", got.Rec.NumRows())
	}
	got.Release()
}
