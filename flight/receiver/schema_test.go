package receiver_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// schemaB is flighttest.Schema with one more nullable field.
var schemaB = arrow.NewSchema(append(flighttest.Schema.Fields(),
	arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}), nil)

// makeBatchB is flighttest.MakeBatch with schemaB: note is "n<seq>" on even
// seqs and null on odd ones.
func makeBatchB(mem memory.Allocator, p int32, first uint64, n int) *batch.Batch {
	return makeBatchBSized(mem, p, first, n, 16)
}

func makeBatchBSized(mem memory.Allocator, p int32, first uint64, n, payloadLen int) *batch.Batch {
	a := flighttest.MakeBatch(mem, p, first, n, payloadLen)
	defer a.Release()
	nb := array.NewStringBuilder(mem)
	defer nb.Release()
	for i := range n {
		if seq := first + uint64(i); seq%2 == 0 {
			nb.Append(fmt.Sprintf("n%d", seq))
		} else {
			nb.AppendNull()
		}
	}
	note := nb.NewArray()
	defer note.Release()
	cols := append(append([]arrow.Array(nil), a.Rec.Columns()...), note)
	return &batch.Batch{Rec: array.NewRecordBatch(schemaB, cols, int64(n)), Spans: a.Spans, Reason: a.Reason}
}

// startReceiver serves a receiver on loopback; stop stops it (once).
func startReceiver(t *testing.T, opts receiver.Options) (addr string, stop func()) {
	t.Helper()
	srv, err := receiver.New(opts)
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			require.NoError(t, srv.Stop())
			<-served
		}
	}
	t.Cleanup(stop)
	return lis.Addr().String(), stop
}

// sinkSend writes bs through a fresh flight.Sink (one DoPut stream, as a
// worker's lane does after a restart) and waits until they are durable.
func sinkSend(t *testing.T, ctx context.Context, addr string, path []string, mem memory.Allocator, firstOffset uint64, bs ...*batch.Batch) error {
	t.Helper()
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	s, err := flight.Dial(ctx, flight.Options{Endpoint: addr, Path: path, Allocator: mem})
	require.NoError(t, err)
	defer s.Close()
	off := firstOffset
	for _, b := range bs {
		if err := s.Send(ctx, off, b); err != nil {
			return err
		}
		off++
	}
	return s.WaitDurable(ctx, off-1)
}

// TestSchemaEvolutionFlight: a dataset takes batches of schema A, then a
// stream of A plus a nullable field, then A again (the field omitted), each
// through a fresh flight.Sink; DoGet (flight.Get), the rebuild path
// (flight.Rebuild), GetFlightInfo's endpoints and ListFlights serve
// every batch with its own schema, before and after a restart (recovery of
// three schema segments). An incompatible change is then refused with
// InvalidArgument and a short message naming the field.
func TestSchemaEvolutionFlight(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	path := []string{"evo", "events"}
	ctx := flighttest.Ctx(t, 60*time.Second)
	addr, stop := startReceiver(t, receiver.Options{Dir: dir, Allocator: mem})

	require.NoError(t, sinkSend(t, ctx, addr, path, mem, 1,
		flighttest.MakeBatch(mem, 0, 1, 10, 16), flighttest.MakeBatch(mem, 0, 11, 10, 16), flighttest.MakeBatch(mem, 0, 21, 10, 16)))
	require.NoError(t, sinkSend(t, ctx, addr, path, mem, 4, makeBatchB(mem, 0, 31, 10), makeBatchB(mem, 0, 41, 10)))
	require.NoError(t, sinkSend(t, ctx, addr, path, mem, 6, flighttest.MakeBatch(mem, 0, 51, 10, 16)))

	wantSchemas := []*arrow.Schema{flighttest.Schema, flighttest.Schema, flighttest.Schema, schemaB, schemaB, flighttest.Schema}
	check := func(addr string) {
		t.Helper()
		c := flighttest.Client(t, addr)
		got, err := flight.ReadAll(ctx, c, path, mem)
		require.NoError(t, err)
		require.Len(t, got, len(wantSchemas))
		var seqs []uint64
		for i, s := range got {
			require.Equal(t, uint64(i), s.Position)
			require.Equal(t, uint64(i+1), s.OffsetID)
			require.True(t, s.Rec.Schema().Equal(wantSchemas[i]), "batch %d has schema %s", i, s.Rec.Schema())
			col := s.Rec.Column(1).(*array.Uint64)
			for r := range int(s.Rec.NumRows()) {
				seqs = append(seqs, col.Value(r))
			}
			if wantSchemas[i] == schemaB {
				note := s.Rec.Column(3).(*array.String)
				require.Equal(t, 5, note.NullN(), "batch %d", i)
			}
		}
		flight.ReleaseAll(got)
		require.Len(t, seqs, 60)
		for i, s := range seqs {
			require.Equal(t, uint64(i+1), s)
		}

		// The rebuild path: a partition seq range across the three runs.
		bs, err := flight.Rebuild(c, path, mem)(ctx, flighttest.Partition(0), 25, 55)
		require.NoError(t, err)
		var rows int64
		for i, b := range bs {
			require.True(t, b.Rec.Schema().Equal(wantSchemas[i+2]), "rebuilt batch %d", i)
			rows += b.Rec.NumRows()
			b.Release()
		}
		require.Len(t, bs, 4)
		require.Equal(t, int64(40), rows)

		// GetFlightInfo: one endpoint per run, each served with its schema.
		info, err := c.GetFlightInfo(ctx, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: path})
		require.NoError(t, err)
		require.Equal(t, int64(60), info.TotalRecords)
		var di receiver.DatasetInfo
		require.NoError(t, json.Unmarshal(info.AppMetadata, &di))
		require.Equal(t, 2, di.Schemas)
		require.Len(t, info.Endpoint, 3)
		runSchemas := []*arrow.Schema{flighttest.Schema, schemaB, flighttest.Schema}
		runRows := []int64{30, 20, 10}
		for i, ep := range info.Endpoint {
			stream, err := c.DoGet(ctx, ep.Ticket)
			require.NoError(t, err)
			rdr, err := arrowflight.NewRecordReader(stream, ipc.WithAllocator(mem))
			require.NoError(t, err)
			require.True(t, rdr.Schema().Equal(runSchemas[i]), "endpoint %d", i)
			var n int64
			for rdr.Next() {
				n += rdr.RecordBatch().NumRows()
			}
			require.NoError(t, ignoreEOF(rdr.Err()))
			rdr.Release()
			require.Equal(t, runRows[i], n, "endpoint %d", i)
		}

		// ListFlights describes the same.
		lf, err := c.ListFlights(ctx, &arrowflight.Criteria{})
		require.NoError(t, err)
		li, err := lf.Recv()
		require.NoError(t, err)
		require.Len(t, li.Endpoint, 3)
		require.Equal(t, int64(60), li.TotalRecords)
	}
	check(addr)

	stop()
	addr, _ = startReceiver(t, receiver.Options{Dir: dir, Allocator: mem})
	check(addr)

	// Incompatible changes: refused at the schema, permanent, naming the
	// field, short.
	c := flighttest.Client(t, addr)
	seqInt := arrow.NewSchema([]arrow.Field{
		{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "payload", Type: arrow.BinaryTypes.Binary},
	}, nil)
	required := arrow.NewSchema(append(flighttest.Schema.Fields(), arrow.Field{Name: "extra", Type: arrow.PrimitiveTypes.Int32}), nil)
	for _, tc := range []struct {
		sc   *arrow.Schema
		want string
	}{
		{seqInt, `field "seq": type uint64 -> int64`},
		{required, `field "extra": non-nullable field added`},
	} {
		_, err := openPut(t, ctx, c, "").schema(path, tc.sc).finish()
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
		msg := status.Convert(err).Message()
		require.Contains(t, msg, tc.want)
		require.Less(t, len(msg), 200, "message is not short: %s", msg)
		require.NotContains(t, msg, "payload", "message dumps the schema: %s", msg)
	}
	// The real sink sees the same refusal.
	err := sinkSend(t, ctx, addr, path, mem, 100, makeBatchWith(mem, required))
	require.Error(t, err)
	require.Contains(t, err.Error(), `field "extra": non-nullable field added`)
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	check(addr) // nothing changed
}

// makeBatchWith builds a 3-row batch of sc (int32 and int64 columns only
// besides flighttest.Schema's).
func makeBatchWith(mem memory.Allocator, sc *arrow.Schema) *batch.Batch {
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := range 3 {
		b.Field(0).(*array.Int32Builder).Append(0)
		b.Field(1).(*array.Uint64Builder).Append(uint64(1000 + i))
		b.Field(2).(*array.BinaryBuilder).Append([]byte("x"))
		b.Field(3).(*array.Int32Builder).Append(int32(i))
	}
	return &batch.Batch{Rec: b.NewRecordBatch(), Spans: []batch.OffsetSpan{{Partition: flighttest.Partition(0), First: 1000, Last: 1002}}}
}

func ignoreEOF(err error) error {
	if err != nil && strings.Contains(err.Error(), "EOF") {
		return nil
	}
	return err
}

// TestSchemaEvolutionPyarrow: pyarrow reads a dataset of two schemas through
// GetFlightInfo's endpoints (one DoGet per endpoint, each with its schema)
// and every segment file directly, and concatenates the endpoints' tables
// into the union schema.
func TestSchemaEvolutionPyarrow(t *testing.T) {
	py := testenv.Python(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	path := []string{"evo", "py"}
	ctx := flighttest.Ctx(t, 60*time.Second)
	addr, _ := startReceiver(t, receiver.Options{Dir: dir, Allocator: mem})
	require.NoError(t, sinkSend(t, ctx, addr, path, mem, 1, flighttest.MakeBatch(mem, 0, 1, 10, 16), flighttest.MakeBatch(mem, 0, 11, 7, 16)))
	require.NoError(t, sinkSend(t, ctx, addr, path, mem, 3, makeBatchB(mem, 0, 18, 5)))

	cmd := exec.CommandContext(ctx, py, filepath.Join(testenv.RepoRoot(), "testdata", "flight", "read_schemas.py"),
		"--port", addr[strings.LastIndexByte(addr, ':')+1:], "--path", "evo/py", "--dir", filepath.Join(dir, "evo.py"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "read_schemas.py failed")
	type part struct {
		Fields []string `json:"fields"`
		Rows   int      `json:"rows"`
	}
	var got struct {
		Endpoints    []part   `json:"endpoints"`
		Segments     []part   `json:"segments"`
		ConcatRows   int      `json:"concat_rows"`
		ConcatFields []string `json:"concat_fields"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	a, b := []string{"partition", "seq", "payload"}, []string{"partition", "seq", "payload", "note"}
	require.Equal(t, []part{{a, 17}, {b, 5}}, got.Endpoints)
	require.Equal(t, []part{{a, 17}, {b, 5}}, got.Segments)
	require.Equal(t, 22, got.ConcatRows)
	require.Equal(t, b, got.ConcatFields)
}

// TestSchemaEvolutionRecovery: the last segment (of the second schema) loses
// its index and gets a torn frame at its end, as a crash can leave it;
// recovery rebuilds it and serves both schemas, and new streams of either
// schema append after it.
func TestSchemaEvolutionRecovery(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	path := []string{"evo", "crash"}
	ctx := flighttest.Ctx(t, 60*time.Second)
	addr, stop := startReceiver(t, receiver.Options{Dir: dir, Allocator: mem})
	require.NoError(t, sinkSend(t, ctx, addr, path, mem, 1, flighttest.MakeBatch(mem, 0, 1, 10, 16), flighttest.MakeBatch(mem, 0, 11, 10, 16)))
	require.NoError(t, sinkSend(t, ctx, addr, path, mem, 3, makeBatchB(mem, 0, 21, 10), makeBatchB(mem, 0, 31, 10)))
	stop()

	ds := filepath.Join(dir, "evo.crash")
	require.NoError(t, os.Remove(filepath.Join(ds, "00000002.idx")))
	f, err := os.OpenFile(filepath.Join(ds, "00000002.arrows"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte{0xff, 0xff, 0xff, 0xff, 0x00, 0x10, 0x00, 0x00, 1, 2, 3})
	require.NoError(t, err)
	require.NoError(t, f.Close())

	addr, _ = startReceiver(t, receiver.Options{Dir: dir, Allocator: mem})
	require.NoError(t, sinkSend(t, ctx, addr, path, mem, 5, makeBatchB(mem, 0, 41, 10)))
	require.NoError(t, sinkSend(t, ctx, addr, path, mem, 6, flighttest.MakeBatch(mem, 0, 51, 10, 16)))
	got, err := flight.ReadAll(ctx, flighttest.Client(t, addr), path, mem)
	require.NoError(t, err)
	defer flight.ReleaseAll(got)
	want := []*arrow.Schema{flighttest.Schema, flighttest.Schema, schemaB, schemaB, schemaB, flighttest.Schema}
	require.Len(t, got, len(want))
	for i, s := range got {
		require.True(t, s.Rec.Schema().Equal(want[i]), "batch %d", i)
		require.Equal(t, uint64(1+10*i), s.Rec.Column(1).(*array.Uint64).Value(0), "batch %d", i)
	}
}

// TestSchemaEvolutionConcurrentStreams: two streams of different
// (compatible) schemas write one dataset at once; the dataset alternates
// segments and every batch is stored and served with its schema.
func TestSchemaEvolutionConcurrentStreams(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	path := []string{"evo", "both"}
	ctx := flighttest.Ctx(t, 60*time.Second)
	addr, _ := startReceiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem})
	const n = 20
	errs := make(chan error, 2)
	for k := range 2 {
		go func() {
			var bs []*batch.Batch
			for i := range n {
				first := uint64(1000*k + 10*i)
				if k == 0 {
					bs = append(bs, flighttest.MakeBatch(mem, int32(k), first, 10, 16))
				} else {
					bs = append(bs, makeBatchB(mem, int32(k), first, 10))
				}
			}
			errs <- sinkSend(t, ctx, addr, path, mem, 1, bs...)
		}()
	}
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	got, err := flight.ReadAll(ctx, flighttest.Client(t, addr), path, mem)
	require.NoError(t, err)
	defer flight.ReleaseAll(got)
	require.Len(t, got, 2*n)
	perPartition := map[int32]int{}
	for i, s := range got {
		p := s.Rec.Column(0).(*array.Int32).Value(0)
		want := flighttest.Schema
		if p == 1 {
			want = schemaB
		}
		require.True(t, s.Rec.Schema().Equal(want), "batch %d of partition %d", i, p)
		perPartition[p]++
	}
	require.Equal(t, map[int32]int{0: n, 1: n}, perPartition)
}

// TestSchemaEvolutionDamagedSchemaFrame: a segment whose whole schema frame
// (prefix, flatbuffer and trailer) is damaged takes the schema of an earlier
// segment with the field count of its batches (here the dataset's first,
// although a newer one exists). Where no earlier segment has its schema, the
// receiver does not start and names the file, rather than serve the
// batches with another schema.
func TestSchemaEvolutionDamagedSchemaFrame(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	path := []string{"evo", "frame"}
	ctx := flighttest.Ctx(t, 60*time.Second)
	opts := receiver.Options{Dir: dir, Allocator: mem, SegmentSize: 1 << 10}
	addr, stop := startReceiver(t, opts)
	// Segments: A, B, B, A, A.
	want := []*arrow.Schema{flighttest.Schema, schemaB, schemaB, flighttest.Schema, flighttest.Schema}
	for i, sc := range want {
		b := flighttest.MakeBatch(mem, 0, uint64(1+10*i), 10, 200)
		if sc == schemaB {
			b.Release()
			b = makeBatchBSized(mem, 0, uint64(1+10*i), 10, 200)
		}
		require.NoError(t, sinkSend(t, ctx, addr, path, mem, uint64(1+i), b))
	}
	stop()
	segs, err := filepath.Glob(filepath.Join(dir, "evo.frame", "*.arrows"))
	require.NoError(t, err)
	require.Len(t, segs, 5, "one segment per batch (SegmentSize 1 KiB)")

	zeroSchema := func(seg string) []byte {
		data, err := os.ReadFile(seg)
		require.NoError(t, err)
		orig := bytes.Clone(data)
		n := int(binary.LittleEndian.Uint32(data[4:]))
		clear(data[:8+n])
		require.NoError(t, os.WriteFile(seg, data, 0o644))
		return orig
	}
	zeroSchema(segs[4]) // an A segment after B ones: A, the older schema, is the one
	addr, stop = startReceiver(t, opts)
	got, err := flight.ReadAll(ctx, flighttest.Client(t, addr), path, mem)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i, s := range got {
		require.True(t, s.Rec.Schema().Equal(want[i]), "batch %d has %s", i, s.Rec.Schema())
	}
	flight.ReleaseAll(got)
	stop()

	zeroSchema(segs[1]) // the first of schema B: no earlier segment has it
	_, err = receiver.New(opts)
	require.Error(t, err)
	require.Contains(t, err.Error(), "00000002.arrows")
}

// TestSchemaUnionIsOfStoredBatches: a stream with a new schema that stores
// nothing leaves the dataset's schemas as they were (as a restart would find
// them): a later stream may add the same field with another type. Once a
// batch with it is stored, the field's type holds.
func TestSchemaUnionIsOfStoredBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	path := []string{"evo", "union"}
	ctx := flighttest.Ctx(t, 30*time.Second)
	addr, _ := startReceiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem})
	c := flighttest.Client(t, addr)
	require.NoError(t, sinkSend(t, ctx, addr, path, mem, 1, flighttest.MakeBatch(mem, 0, 1, 5, 8)))
	noteInt := arrow.NewSchema(append(flighttest.Schema.Fields(), arrow.Field{Name: "note", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), nil)
	_, err := openPut(t, ctx, c, "").schema(path, noteInt).finish()
	require.NoError(t, err, "a schema without batches")
	require.NoError(t, sinkSend(t, ctx, addr, path, mem, 2, makeBatchB(mem, 0, 6, 5)), "note as utf8: nothing stored has note")
	_, err = openPut(t, ctx, c, "").schema(path, noteInt).finish()
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	require.Contains(t, status.Convert(err).Message(), `field "note": type utf8 -> int64`)
}

// TestSchemaRefusalLogged: a stream refused for an incompatible schema
// change is logged by the receiver (WARN "DoPut stream ended with an error",
// with the message naming the field), as docs/operations.md#schema-changes
// says: a client that hides the status leaves the operator only this line.
func TestSchemaRefusalLogged(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	log, buf := newLog()
	ctx := flighttest.Ctx(t, 30*time.Second)
	addr, _ := startReceiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem, Logger: log})
	path := []string{"refused"}
	require.NoError(t, sinkSend(t, ctx, addr, path, mem, 1, flighttest.MakeBatch(mem, 0, 1, 10, 16)))

	seqInt := arrow.NewSchema([]arrow.Field{
		{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "payload", Type: arrow.BinaryTypes.Binary},
	}, nil)
	_, err := openPut(t, ctx, flighttest.Client(t, addr), "").schema(path, seqInt).finish()
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	out := buf.String()
	require.Contains(t, out, "DoPut stream ended with an error")
	require.Contains(t, out, `field \"seq\": type uint64 -> int64`)
	require.Equal(t, 1, strings.Count(out, "DoPut stream ended with an error"), "%s", out)
}
