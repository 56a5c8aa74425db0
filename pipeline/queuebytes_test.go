package pipeline

import (
	"context"
	"log/slog"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/instruments"
)

// A secondary's queue of live batches is bounded by bytes as well as by
// count: a batch that does not fit beside the queued ones is dropped (to
// be read back from the raw anchor), one taken out of the queue frees its
// bytes, and an empty queue takes a batch of any size.
func TestSecondaryQueueBoundedByBytes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	lane := &fakeLane{acked: map[string]map[uint64]bool{}, rebuilt: map[*batch.Batch]bool{}, live: map[*batch.Batch]bool{}, prefix: frontier{}}
	gate := newCoverageGate("s", &fakeStore{cov: map[string]uint64{}})
	metrics, err := instruments.NewCoverageMetrics(noop.NewMeterProvider(), "s", func() uint64 { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	rebuild := func(_ context.Context, _ string, _, _ uint64) ([]*batch.Batch, error) { return nil, nil }
	s := newSecondary("s", lane, gate, metrics, rebuild, 1, 100, slog.New(slog.DiscardHandler))
	var bs []*batch.Batch
	for i := range 4 {
		bs = append(bs, rowsBatch(mem, batch.OffsetSpan{Partition: "p", First: uint64(i + 1), Last: uint64(i + 1)}))
	}
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	size := bs[0].AllocatedBytes()
	s.maxQueued = 2 * size

	s.offer(bs[0])
	s.offer(bs[1])
	s.offer(bs[2]) // over 2 batches' bytes, with 98 places free
	if got := len(s.queue); got != 2 {
		t.Fatalf("%d batches queued, want 2: the byte bound did not hold", got)
	}
	if s.dropped.Load() != 1 || s.queued.Load() != 2*size {
		t.Fatalf("dropped %d, queued %d bytes; want 1 and %d", s.dropped.Load(), s.queued.Load(), 2*size)
	}
	s.dequeued(<-s.queue).Release()
	s.offer(bs[3])
	if got := len(s.queue); got != 2 || s.dropped.Load() != 1 {
		t.Fatalf("after one left the queue: %d queued, %d dropped; want 2 and 1", got, s.dropped.Load())
	}
	for len(s.queue) > 0 {
		s.dequeued(<-s.queue).Release()
	}
	if q := s.queued.Load(); q != 0 {
		t.Fatalf("%d bytes queued in an empty queue", q)
	}
	s.maxQueued = size / 2 // smaller than any batch: an empty queue still takes one
	s.offer(bs[0])
	if len(s.queue) != 1 {
		t.Fatal("an empty queue refused a batch larger than its byte bound")
	}
	s.dequeued(<-s.queue).Release()
}

// rowsBatch is a batch of one int64 row per seq of sp, on mem.
func rowsBatch(mem memory.Allocator, sp batch.OffsetSpan) *batch.Batch {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for s := sp.First; s <= sp.Last; s++ {
		b.Append(int64(s))
	}
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "seq", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
	return &batch.Batch{Rec: rec, Spans: []batch.OffsetSpan{sp}}
}
