package flight

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/internal/flightwire"
)

// TestPlanDoesNotAllocate: Send plans every batch, so a batch that fits
// one message must be planned without an allocation (an errors.As target
// that escapes would cost one per batch).
func TestPlanDoesNotAllocate(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// 10 rows of 100 B: the benchmarks' small batch.
	bld := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{
		{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "payload", Type: arrow.BinaryTypes.Binary},
	}, nil))
	defer bld.Release()
	for i := range 10 {
		bld.Field(0).(*array.Uint64Builder).Append(uint64(i))
		bld.Field(1).(*array.BinaryBuilder).Append(make([]byte, 100))
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	o := Options{Endpoint: "127.0.0.1:1", Path: []string{"x"}, Allocator: mem}
	require.NoError(t, o.validate())
	o.withDefaults()
	s := &Sink{opts: o, ipcOpts: flightwire.IPCOptions(mem, "")}

	parts, err := s.plan(rec, 64)
	require.NoError(t, err)
	require.Nil(t, parts, "a 1.2 KB batch is sent whole")
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.plan(rec, 64); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs, "allocations per plan of a batch sent whole")
}
