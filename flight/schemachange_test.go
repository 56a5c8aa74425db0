package flight_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/lanes"
)

// anySchemaServer is an arrow-go Flight server that accepts any schema on
// each DoPut stream and acknowledges every complete batch with the wire
// encoding (after "storing" it in memory): a stand-in for a receiver that
// allows schema evolution.
type anySchemaServer struct {
	arrowflight.BaseFlightServer
	mem     memory.Allocator
	streams atomic.Int64
	mu      sync.Mutex
	stored  map[uint64]storedBatch // by offset_id
}

type storedBatch struct {
	schema *arrow.Schema
	rows   int64
	stream int64
}

func (a *anySchemaServer) DoPut(stream arrowflight.FlightService_DoPutServer) error {
	id := a.streams.Add(1)
	rdr, err := arrowflight.NewRecordReader(stream, ipc.WithAllocator(a.mem))
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return err
	}
	defer rdr.Release()
	var records uint64
	for rdr.Next() {
		m, err := flightwire.ParseBatchMeta(rdr.LatestAppMetadata())
		if err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
		rec := rdr.RecordBatch()
		records += uint64(rec.NumRows())
		a.mu.Lock()
		sb := a.stored[m.OffsetID]
		sb.schema, sb.rows, sb.stream = rec.Schema(), sb.rows+rec.NumRows(), id
		a.stored[m.OffsetID] = sb
		a.mu.Unlock()
		if m.Parts > 1 && m.Part < m.Parts-1 {
			continue
		}
		if err := stream.Send(&arrowflight.PutResult{AppMetadata: flightwire.AppendAck(nil, m.OffsetID, records)}); err != nil {
			return err
		}
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// startAnySchemaServer serves an anySchemaServer on loopback until the end
// of the test.
func startAnySchemaServer(t *testing.T, mem memory.Allocator) (*anySchemaServer, string) {
	t.Helper()
	srv := &anySchemaServer{mem: mem, stored: map[uint64]storedBatch{}}
	g := grpc.NewServer()
	arrowflight.RegisterFlightServiceServer(g, srv)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return srv, lis.Addr().String()
}

// evolvingBatches are A, A, A plus a nullable field, A plus that and one
// more nullable field: a compatible evolution, rows seq 0..4n-1.
func evolvingBatches(mem memory.Allocator, n int) []*batch.Batch {
	extra := [][]arrow.Field{nil, nil,
		{{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}},
		{{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "score", Type: arrow.PrimitiveTypes.Int64, Nullable: true}},
	}
	var out []*batch.Batch
	for i, fields := range extra {
		b := flighttest.MakeBatch(mem, 0, uint64(i*n), n, 8)
		if fields == nil {
			out = append(out, b)
			continue
		}
		cols := append([]arrow.Array(nil), b.Rec.Columns()...)
		all := append(append([]arrow.Field(nil), b.Rec.Schema().Fields()...), fields...)
		var owned []arrow.Array
		for j, f := range fields {
			bld := array.NewBuilder(mem, f.Type)
			for r := 0; r < n; r++ {
				switch bb := bld.(type) {
				case *array.StringBuilder:
					if r%2 == 0 {
						bb.AppendNull()
					} else {
						bb.Append(fmt.Sprintf("n%d.%d", j, r))
					}
				case *array.Int64Builder:
					bb.Append(int64(r))
				}
			}
			a := bld.NewArray()
			bld.Release()
			owned = append(owned, a)
			cols = append(cols, a)
		}
		rec := array.NewRecordBatch(arrow.NewSchema(all, nil), cols, int64(n))
		for _, a := range owned {
			a.Release()
		}
		b.Rec.Release()
		b.Rec = rec
		out = append(out, b)
	}
	return out
}

// runEvolvingLane sends evolvingBatches through one lane and one flight
// transport to addr/path and returns how often the lane was poisoned and
// how many DoPut-level transports it dialled.
func runEvolvingLane(t *testing.T, mem memory.Allocator, addr string, path []string, n int) (poisoned, dials int64, laneErr error) {
	t.Helper()
	ctx := flighttest.Ctx(t, 20*time.Second)
	var poisons, dialled atomic.Int64
	lane, err := lanes.New[lanes.NoCommit](lanes.Options{
		Destination: "evolve",
		Dial: func(ctx context.Context) (lanes.Transport, error) {
			dialled.Add(1)
			return flight.Dial(ctx, flight.Options{Endpoint: addr, Path: path, Allocator: mem})
		},
		OnStateChange: func(c lanes.StateChange) {
			if c.To == lanes.StatePoisoned {
				poisons.Add(1)
				t.Logf("poisoned: %v", c.Err)
			}
		},
	})
	require.NoError(t, err)
	for _, b := range evolvingBatches(mem, n) {
		err := lane.Submit(ctx, b, lanes.NoCommit{})
		b.Release() // the lane took its own reference
		require.NoError(t, err)
	}
	// Close drains: it returns once every batch is confirmed durable (or
	// ctx ends with batches unconfirmed).
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	laneErr = lane.Close(cctx)
	return poisons.Load(), dialled.Load(), laneErr
}

// TestSchemaChangeStartsNewStream: batches A, A, A+nullable, A+another
// field through one lane and one Sink reach a server that accepts any
// schema with no poisoning and no new Dial: the Sink opens a DoPut stream
// per schema, WaitDurable covers the old stream's and the new one's
// batches, and every row is stored with its own schema.
func TestSchemaChangeStartsNewStream(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srv, addr := startAnySchemaServer(t, memory.NewGoAllocator()) // mem checks the sink side

	const n = 50
	poisoned, dials, err := runEvolvingLane(t, mem, addr, []string{"evolve"}, n)
	require.NoError(t, err)
	require.Zero(t, poisoned, "the lane was poisoned")
	require.EqualValues(t, 1, dials, "one transport for all four batches")
	require.EqualValues(t, 3, srv.streams.Load(), "one DoPut stream per schema")

	srv.mu.Lock()
	defer srv.mu.Unlock()
	require.Len(t, srv.stored, 4)
	var widths []int
	var streams []int64
	for off := uint64(1); off <= 4; off++ {
		sb, ok := srv.stored[off]
		require.True(t, ok, "offset %d not stored", off)
		require.EqualValues(t, n, sb.rows)
		widths = append(widths, sb.schema.NumFields())
		streams = append(streams, sb.stream)
	}
	require.Equal(t, []int{3, 3, 4, 5}, widths)
	require.Equal(t, []int64{1, 1, 2, 3}, streams)
}

// TestSchemaChangeDirect is the Sink contract without a lane: Send of a
// batch with another schema succeeds, WaitDurable of the last offset covers
// the earlier streams' batches, and the Sink stays healthy.
func TestSchemaChangeDirect(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srv, addr := startAnySchemaServer(t, memory.NewGoAllocator()) // mem checks the sink side

	ctx := flighttest.Ctx(t, 10*time.Second)
	s := dial(t, flight.Options{Endpoint: addr, Path: []string{"d"}, Allocator: mem})
	bs := evolvingBatches(mem, 10)
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	for i, b := range bs {
		require.NoError(t, s.Send(ctx, uint64(10*(i+1)), b))
	}
	require.NoError(t, s.WaitDurable(ctx, 40))
	off, _, ok := s.Acked()
	require.True(t, ok)
	require.EqualValues(t, 40, off)
	require.NoError(t, s.Err())
	require.EqualValues(t, 3, srv.streams.Load())
}

// TestSchemaChangeToReceiver is the end-to-end case with the durable
// receiver: the same evolving batches through one lane, zero poisonings,
// every row stored and readable with its own schema. It needs the
// receiver's acceptance of a compatible changed schema for a dataset.
func TestSchemaChangeToReceiver(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem})
	const n = 40
	poisoned, _, err := runEvolvingLane(t, mem, addr, []string{"evolve"}, n)
	require.NoError(t, err)
	require.Zero(t, poisoned, "the lane was poisoned")

	ctx := flighttest.Ctx(t, 10*time.Second)
	got, err := flight.ReadAll(ctx, flighttest.Client(t, addr), []string{"evolve"}, mem)
	require.NoError(t, err)
	defer flight.ReleaseAll(got)
	var rows int64
	var widths []int
	for _, st := range got {
		rows += st.Rec.NumRows()
		widths = append(widths, st.Rec.Schema().NumFields())
	}
	require.EqualValues(t, 4*n, rows)
	require.Equal(t, []int{3, 3, 4, 5}, widths)
}
