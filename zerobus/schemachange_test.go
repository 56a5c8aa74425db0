package zerobus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/zerobus"
	"github.com/thalweg/thalweg/zerobus/server"
)

// withNote returns b with a nullable string column "note" appended
// ("note-<id>" on odd ids, null on even ones); it takes over b.
func withNote(mem memory.Allocator, b *batch.Batch) *batch.Batch {
	nb := array.NewStringBuilder(mem)
	ids := b.Rec.Column(0).(*array.Int64)
	for i := 0; i < ids.Len(); i++ {
		if ids.Value(i)%2 == 0 {
			nb.AppendNull()
		} else {
			nb.Append(fmt.Sprintf("note-%d", ids.Value(i)))
		}
	}
	note := nb.NewArray()
	nb.Release()
	wider := arrow.NewSchema(append(b.Rec.Schema().Fields(), arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
	rec := array.NewRecordBatch(wider, append(b.Rec.Columns(), note), b.Rec.NumRows())
	note.Release()
	b.Rec.Release()
	b.Rec = rec
	return b
}

// TestEphemeralSchemaChangeThroughLane: batches A, A, A+nullable "note", A
// through one lane whose Dial is the ephemeral sink's, for PROTO and JSON
// records, against the real server: no poisoning, one Dial, every row
// stored and readable, the new field's values present. This is a Zerobus
// secondary caught up from the raw anchor after a worker restarted with one
// more nullable field: older batches come with the old schema, newer ones
// with the new.
func TestEphemeralSchemaChangeThroughLane(t *testing.T) {
	for _, enc := range []zerobus.Encoding{zerobus.EncodingProto, zerobus.EncodingJSON} {
		t.Run(enc.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			h := startServer(t, server.Options{Token: token, SyncInterval: 2 * time.Millisecond})
			ctx := ctxT(t, 20*time.Second)
			opts := h.options(zerobus.ModeEphemeral, mem)
			opts.Encoding = enc
			var poisons, dials atomic.Int64
			lane, err := lanes.New[lanes.NoCommit](lanes.Options{
				Destination: "zerobus-evolve",
				Dial: func(ctx context.Context) (lanes.Transport, error) {
					dials.Add(1)
					return zerobus.Dial(ctx, opts)
				},
				OnStateChange: func(c lanes.StateChange) {
					if c.To == lanes.StatePoisoned {
						poisons.Add(1)
						t.Logf("poisoned: %v", c.Err)
					}
				},
			})
			require.NoError(t, err)
			const n = 30
			for i := 0; i < 4; i++ {
				b := makeBatch(mem, i*n, n, 4)
				if i == 2 {
					b = withNote(mem, b)
				}
				err := lane.Submit(ctx, b, lanes.NoCommit{})
				b.Release() // the lane took its own reference
				require.NoError(t, err)
			}
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			require.NoError(t, lane.Close(cctx))
			require.Zero(t, poisons.Load(), "the lane was poisoned")
			require.EqualValues(t, 1, dials.Load(), "one Sink for all four batches")
			streams := int64(1) // a JSON stream's setup does not depend on the schema
			if enc == zerobus.EncodingProto {
				streams = 3 // one per descriptor: A, A+note, A
			}
			require.EqualValues(t, streams, h.srv.Stats().Streams)

			ids := storedIDs(t, h.srv.Dir())
			requireAll(t, ids, 4*n)
			lines, err := server.ReadTable(h.srv.Dir(), table)
			require.NoError(t, err)
			notes := 0
			for _, l := range lines {
				var row struct {
					ID   int64
					Note *string
				}
				require.NoError(t, json.Unmarshal(l, &row), "%s", l)
				if row.Note != nil {
					require.Equal(t, fmt.Sprintf("note-%d", row.ID), *row.Note)
					require.True(t, row.ID >= 2*n && row.ID < 3*n, "note on row %d outside the widened batch", row.ID)
					notes++
				}
			}
			require.Equal(t, n/2, notes, "the new field's values")
		})
	}
}

// TestEphemeralProtoIncompatibleChange: within one Sink, a batch whose
// schema changes a field's type goes on a new stream, which the server
// refuses naming the field: the Sink fails with a permanent InvalidArgument
// error instead of writing it.
func TestEphemeralProtoIncompatibleChange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := startServer(t, server.Options{Token: token, SyncInterval: 2 * time.Millisecond})
	ctx := ctxT(t, 10*time.Second)
	opts := h.options(zerobus.ModeEphemeral, mem)
	opts.Encoding = zerobus.EncodingProto
	s, err := zerobus.Dial(ctx, opts)
	require.NoError(t, err)
	defer s.Close()
	a := makeBatch(mem, 0, 5, 4)
	require.NoError(t, s.Send(ctx, 1, a))
	a.Release()
	require.NoError(t, s.WaitDurable(ctx, 1))

	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, nil)
	bld := array.NewRecordBuilder(mem, sc)
	bld.Field(0).(*array.StringBuilder).Append("x")
	rec := bld.NewRecordBatch()
	bld.Release()
	require.NoError(t, s.Send(ctx, 2, &batch.Batch{Rec: rec}))
	rec.Release()
	err = s.WaitDurable(ctx, 2)
	require.Error(t, err)
	require.True(t, zerobus.IsPermanentCode(err), "%v", err)
	require.Contains(t, err.Error(), `field "id"`)
	require.Contains(t, err.Error(), "InvalidArgument")
	require.Len(t, storedIDs(t, h.srv.Dir()), 5)
}
