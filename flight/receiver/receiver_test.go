package receiver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/apache/arrow-go/v18/arrow"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		runChild() // never returns
	}
	goleak.VerifyTestMain(m)
}

// encoded is one IPC message as FlightData fields.
type encoded struct{ hdr, body []byte }

func encodeSchema(sc *arrow.Schema) []byte {
	p := ipc.GetSchemaPayload(sc, memory.NewGoAllocator())
	defer p.Release()
	m := p.Meta()
	defer m.Release()
	return bytes.Clone(m.Bytes())
}

func encodeBatch(t testing.TB, rec arrow.RecordBatch) encoded {
	t.Helper()
	p, err := ipc.GetRecordBatchPayload(rec)
	require.NoError(t, err)
	defer p.Release()
	m := p.Meta()
	defer m.Release()
	var body bytes.Buffer
	require.NoError(t, p.SerializeBody(&body))
	return encoded{bytes.Clone(m.Bytes()), body.Bytes()}
}

func meta(offset uint64, spans ...flightwire.Span) []byte {
	b, _ := json.Marshal(map[string]any{"offset_id": offset, "spans": spans})
	return b
}

// putStream is a hand-driven DoPut for protocol tests.
type putStream struct {
	t      testing.TB
	stream arrowflight.FlightService_DoPutClient
	sent   int
}

func openPut(t testing.TB, ctx context.Context, c arrowflight.Client, token string) *putStream {
	t.Helper()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	s, err := c.DoPut(ctx)
	require.NoError(t, err)
	return &putStream{t: t, stream: s}
}

func (p *putStream) schema(path []string, sc *arrow.Schema) *putStream {
	require.NoError(p.t, p.stream.Send(&arrowflight.FlightData{
		FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: path},
		DataHeader:       encodeSchema(sc),
	}))
	return p
}

func (p *putStream) batch(e encoded, md []byte) *putStream {
	// A send may fail with io.EOF once the server ended the stream; the
	// status is then read by finish.
	_ = p.stream.Send(&arrowflight.FlightData{DataHeader: e.hdr, DataBody: e.body, AppMetadata: md})
	p.sent++
	return p
}

// finish half-closes and returns the acks and the final status.
func (p *putStream) finish() ([]flightwire.Ack, error) {
	_ = p.stream.CloseSend()
	var acks []flightwire.Ack
	for {
		r, err := p.stream.Recv()
		if errors.Is(err, io.EOF) {
			return acks, nil
		}
		if err != nil {
			return acks, err
		}
		a, perr := flightwire.ParseAck(r.AppMetadata)
		require.NoError(p.t, perr)
		acks = append(acks, a)
	}
}

func newServer(t *testing.T, opts receiver.Options) (*receiver.Server, arrowflight.Client) {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	srv, addr := flighttest.Receiver(t, opts)
	return srv, flighttest.Client(t, addr)
}

func TestRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, c := newServer(t, receiver.Options{Allocator: mem})
	ctx := flighttest.Ctx(t, 20*time.Second)
	path := []string{"raw", "events"}

	// Write through arrow-go's own Flight writer, as an independent client.
	stream, err := c.DoPut(ctx)
	require.NoError(t, err)
	w := arrowflight.NewRecordWriter(stream, ipc.WithSchema(flighttest.Schema), ipc.WithAllocator(mem), ipc.WithLZ4())
	w.SetFlightDescriptor(&arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: path})
	var sent []arrow.RecordBatch
	for i := range 20 {
		b := flighttest.MakeBatch(mem, int32(i%3), uint64(100*i), 50+i, 64)
		require.NoError(t, w.WriteWithAppMetadata(b.Rec, flightwire.AppendBatchMeta(nil, uint64(10+2*i), false, b.Spans, 0, 0)))
		sent = append(sent, b.Rec)
	}
	require.NoError(t, w.Close())
	require.NoError(t, stream.CloseSend())
	var last flightwire.Ack
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		a, err := flightwire.ParseAck(r.AppMetadata)
		require.NoError(t, err)
		require.False(t, a.Ready)
		if last.Offset > 0 {
			require.Greater(t, a.Offset, last.Offset, "acks must be monotonic")
		}
		last = a
	}
	var rows uint64
	for _, r := range sent {
		rows += uint64(r.NumRows())
	}
	require.Equal(t, uint64(10+2*19), last.Offset, "the final ack covers the last offset")
	require.Equal(t, rows, last.Records)

	got, err := flight.ReadAll(ctx, c, path, mem)
	require.NoError(t, err)
	defer flight.ReleaseAll(got)
	require.Len(t, got, len(sent))
	for i, g := range got {
		require.Equal(t, uint64(i), g.Position)
		require.Equal(t, uint64(10+2*i), g.OffsetID)
		require.Len(t, g.Spans, 1)
		require.Equal(t, flighttest.Partition(int32(i%3)), g.Spans[0].Partition)
		require.True(t, arrayEqual(sent[i], g.Rec), "batch %d differs", i)
	}
	for _, r := range sent {
		r.Release()
	}

	// Selection by partition and seq range: partition 1 holds batches
	// 1, 4, 7, ... with seqs [100i, 100i+50+i).
	p := flighttest.Partition(1)
	from, to := uint64(420), uint64(700)
	sel, err := flight.Get(ctx, c, flight.Ticket{Path: path, Partition: &p, FromSeq: &from, ToSeq: &to}, mem)
	require.NoError(t, err)
	var positions []uint64
	for _, s := range sel {
		positions = append(positions, s.Position)
	}
	flight.ReleaseAll(sel)
	require.Equal(t, []uint64{4, 7}, positions)

	// Selection by stored position.
	f, e := uint64(3), uint64(6)
	sel, err = flight.Get(ctx, c, flight.Ticket{Path: path, From: &f, To: &e}, mem)
	require.NoError(t, err)
	require.Len(t, sel, 3)
	require.Equal(t, uint64(3), sel[0].Position)
	flight.ReleaseAll(sel)

	// FlightInfo and ListFlights describe the dataset.
	info, err := c.GetFlightInfo(ctx, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: path})
	require.NoError(t, err)
	require.Equal(t, int64(rows), info.TotalRecords)
	var di receiver.DatasetInfo
	require.NoError(t, json.Unmarshal(info.AppMetadata, &di))
	require.Equal(t, 20, di.Batches)
	require.Len(t, di.Partitions, 3)
	require.Equal(t, receiver.PartitionInfo{Partition: flighttest.Partition(2), MinSeq: 200, MaxSeq: 1700 + 50 + 17 - 1, Spans: 6}, di.Partitions[2])
	sc, err := arrowflight.DeserializeSchema(info.Schema, mem)
	require.NoError(t, err)
	require.True(t, sc.Equal(flighttest.Schema))
	lf, err := c.ListFlights(ctx, &arrowflight.Criteria{})
	require.NoError(t, err)
	n := 0
	for {
		fi, err := lf.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.Equal(t, path, fi.FlightDescriptor.Path)
		n++
	}
	require.Equal(t, 1, n)

	_, err = c.GetFlightInfo(ctx, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"nope"}})
	require.Equal(t, codes.NotFound, status.Code(err))
	_, err = flight.Get(ctx, c, flight.Ticket{Path: path, From: &e, To: &f}, mem)
	require.Equal(t, codes.InvalidArgument, status.Code(err))
}

func arrayEqual(a, b arrow.RecordBatch) bool {
	if a.NumRows() != b.NumRows() || a.NumCols() != b.NumCols() {
		return false
	}
	return fmt.Sprint(flighttest.Rows(a)) == fmt.Sprint(flighttest.Rows(b))
}

// TestProtocolViolations: every violation ends the offending stream with a
// precise status, the batches before it are stored and acknowledged at most
// up to them, and a concurrent healthy stream is unaffected.
func TestProtocolViolations(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, c := newServer(t, receiver.Options{Allocator: mem, MaxMessageSize: 256 << 10})
	ctx := flighttest.Ctx(t, 30*time.Second)

	b := flighttest.MakeBatch(mem, 0, 0, 10, 16)
	defer b.Release()
	good := encodeBatch(t, b.Rec)
	big := flighttest.MakeBatch(mem, 0, 0, 300, 1024)
	defer big.Release()
	huge := encodeBatch(t, big.Rec)
	other := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)

	// A healthy stream stays open across all the violations below.
	healthy := openPut(t, ctx, c, "").schema([]string{"healthy"}, flighttest.Schema)
	healthy.batch(good, meta(1))

	cases := []struct {
		name   string
		run    func(p *putStream)
		code   codes.Code
		stored int // batches of this stream that end up stored
	}{
		{"missing metadata", func(p *putStream) { p.batch(good, meta(1)).batch(good, nil) }, codes.InvalidArgument, 1},
		{"garbled metadata", func(p *putStream) { p.batch(good, []byte(`{"offset_id":`)) }, codes.InvalidArgument, 0},
		{"no offset", func(p *putStream) { p.batch(good, []byte(`{"spans":[]}`)) }, codes.InvalidArgument, 0},
		{"offset not increasing", func(p *putStream) { p.batch(good, meta(5)).batch(good, meta(5)) }, codes.InvalidArgument, 1},
		{"offset decreasing", func(p *putStream) { p.batch(good, meta(5)).batch(good, meta(6)).batch(good, meta(2)) }, codes.InvalidArgument, 2},
		{"schema mid-stream", func(p *putStream) {
			p.batch(good, meta(1))
			_ = p.stream.Send(&arrowflight.FlightData{DataHeader: encodeSchema(other)})
		}, codes.InvalidArgument, 1},
		{"garbled header", func(p *putStream) { p.batch(encoded{[]byte("not a flatbuffer at all"), good.body}, meta(1)) }, codes.InvalidArgument, 0},
		{"truncated body", func(p *putStream) { p.batch(encoded{good.hdr, good.body[:len(good.body)/2]}, meta(1)) }, codes.InvalidArgument, 0},
		{"oversized message", func(p *putStream) { p.batch(good, meta(1)).batch(huge, meta(2)) }, codes.ResourceExhausted, 1},
		{"bad part sequence", func(p *putStream) {
			p.batch(good, []byte(`{"offset_id":1,"part":0,"parts":2}`)).batch(good, []byte(`{"offset_id":2,"part":1,"parts":2}`))
		}, codes.InvalidArgument, 0},
		{"ends inside split batch", func(p *putStream) {
			p.batch(good, meta(1)).batch(good, []byte(`{"offset_id":2,"part":0,"parts":3}`)).batch(good, []byte(`{"offset_id":2,"part":1,"parts":3}`))
		}, codes.InvalidArgument, 1},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := []string{"bad", fmt.Sprint(i)}
			p := openPut(t, ctx, c, "").schema(path, flighttest.Schema)
			tc.run(p)
			acks, err := p.finish()
			require.Equal(t, tc.code, status.Code(err), "err: %v", err)
			if tc.stored == 0 {
				require.Empty(t, acks)
			}
			// Batches appended before the violation are synced by the
			// dataset's committer even though their stream is gone. A
			// sentinel batch on a new stream is appended after them: once
			// it is acknowledged, everything the violating stream left is
			// durable, and nothing else can still arrive.
			const sentinel = 1000
			sacks, err := openPut(t, ctx, c, "").schema(path, flighttest.Schema).batch(good, meta(sentinel)).finish()
			require.NoError(t, err)
			require.NotEmpty(t, sacks)
			require.EqualValues(t, sentinel, sacks[len(sacks)-1].Offset)
			got, err := flight.ReadAll(ctx, c, path, mem)
			require.NoError(t, err)
			defer flight.ReleaseAll(got)
			// Only whole, valid batches are ever stored; acks never go
			// beyond them (stored batches may be unacknowledged when the
			// stream ended before their sync).
			require.Len(t, got, tc.stored+1)
			require.EqualValues(t, sentinel, got[tc.stored].OffsetID)
			for _, a := range acks {
				require.LessOrEqual(t, a.Records, uint64(10*tc.stored))
			}
		})
	}

	// Schema differing from the dataset's, on a new stream.
	p := openPut(t, ctx, c, "").schema([]string{"healthy"}, other)
	_, err := p.finish()
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	// No descriptor.
	p = openPut(t, ctx, c, "")
	require.NoError(t, p.stream.Send(&arrowflight.FlightData{DataHeader: encodeSchema(flighttest.Schema)}))
	_, err = p.finish()
	require.Equal(t, codes.InvalidArgument, status.Code(err))

	healthy.batch(good, meta(2))
	acks, err := healthy.finish()
	require.NoError(t, err)
	require.NotEmpty(t, acks)
	require.Equal(t, uint64(2), acks[len(acks)-1].Offset)
	require.Equal(t, uint64(20), acks[len(acks)-1].Records)
}

func TestSplitBatchAckedWhenComplete(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, c := newServer(t, receiver.Options{Allocator: mem})
	ctx := flighttest.Ctx(t, 20*time.Second)
	b := flighttest.MakeBatch(mem, 3, 0, 30, 16)
	defer b.Release()
	p := openPut(t, ctx, c, "").schema([]string{"split"}, flighttest.Schema)
	for i := range 3 {
		part := b.Rec.NewSlice(int64(10*i), int64(10*i+10))
		p.batch(encodeBatch(t, part), []byte(fmt.Sprintf(`{"offset_id":7,"part":%d,"parts":3,"spans":[{"partition":"persistent://public/default/flighttest-partition-3","first":0,"last":29}]}`, i)))
		part.Release()
	}
	acks, err := p.finish()
	require.NoError(t, err)
	require.Equal(t, []flightwire.Ack{{Offset: 7, Records: 30, HasRecords: true}}, acks[len(acks)-1:])
	got, err := flight.ReadAll(ctx, c, []string{"split"}, mem)
	require.NoError(t, err)
	defer flight.ReleaseAll(got)
	require.Len(t, got, 3)
	var recs []arrow.RecordBatch
	for i, g := range got {
		require.Equal(t, i, g.Part)
		require.Equal(t, 3, g.Parts)
		recs = append(recs, g.Rec)
	}
	require.Equal(t, flighttest.Rows(b.Rec), flighttest.Rows(recs...))
}

func TestToken(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, c := newServer(t, receiver.Options{Allocator: mem, Token: "s3cret"})
	ctx := flighttest.Ctx(t, 20*time.Second)
	b := flighttest.MakeBatch(mem, 0, 0, 5, 8)
	defer b.Release()
	e := encodeBatch(t, b.Rec)
	for _, tok := range []string{"", "wrong", "s3cret-but-longer"} {
		p := openPut(t, ctx, c, tok)
		_ = p.stream.Send(&arrowflight.FlightData{
			FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"auth"}},
			DataHeader:       encodeSchema(flighttest.Schema),
		})
		p.batch(e, meta(1))
		_, err := p.finish()
		require.Equal(t, codes.Unauthenticated, status.Code(err), "token %q", tok)
	}
	// Nothing was stored, and reads need the token too.
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer s3cret")
	_, err := flight.ReadAll(authed, c, []string{"auth"}, mem)
	require.Equal(t, codes.NotFound, status.Code(err))
	_, err = c.GetFlightInfo(ctx, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"auth"}})
	require.Equal(t, codes.Unauthenticated, status.Code(err))

	p := openPut(t, ctx, c, "s3cret").schema([]string{"auth"}, flighttest.Schema).batch(e, meta(1))
	acks, err := p.finish()
	require.NoError(t, err)
	require.Equal(t, uint64(1), acks[len(acks)-1].Offset)
}

// TestGroupCommit: with a slow sync, acknowledgements are coalesced and
// cumulative, and none arrives before its sync.
func TestGroupCommit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, c := newServer(t, receiver.Options{Allocator: mem, AckDelay: 30 * time.Millisecond})
	ctx := flighttest.Ctx(t, 20*time.Second)
	b := flighttest.MakeBatch(mem, 0, 0, 5, 8)
	defer b.Release()
	e := encodeBatch(t, b.Rec)
	p := openPut(t, ctx, c, "").schema([]string{"group"}, flighttest.Schema)
	start := time.Now()
	for i := range 200 {
		p.batch(e, meta(uint64(i)))
	}
	acks, err := p.finish()
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	require.Equal(t, uint64(199), acks[len(acks)-1].Offset)
	require.Less(t, len(acks), 50, "200 batches sent back to back must share syncs")
}

// TestLargeAndSmallBodiesShareSyncs: bodies above the size the committer
// writes by reference and bodies below it (copied into its buffer) are
// interleaved in the same group syncs, across segment rolls, and every
// batch reads back intact — served, and after a restart, whose recovery
// verifies every frame's CRC and logs nothing. On Linux the segments are
// written with direct writes (direct.go), so this is also their test
// against the server's own reads and recovery.
func TestLargeAndSmallBodiesShareSyncs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	opts := receiver.Options{Dir: dir, Allocator: mem, AckDelay: 20 * time.Millisecond, SegmentSize: 1 << 20}
	srv, c := newServer(t, opts)
	ctx := flighttest.Ctx(t, 30*time.Second)
	var want []string
	p := openPut(t, ctx, c, "").schema([]string{"mixed"}, flighttest.Schema)
	for i := range 40 {
		rows, payload := 3, 20 // a body of a few hundred bytes
		if i%3 == 0 {
			rows, payload = 100, 1000 // ~100 KB
		}
		b := flighttest.MakeBatch(mem, int32(i%2), uint64(i*1000), rows, payload)
		want = append(want, flighttest.Rows(b.Rec)...)
		p.batch(encodeBatch(t, b.Rec), meta(uint64(i+1)))
		b.Release()
	}
	acks, err := p.finish()
	require.NoError(t, err)
	require.Equal(t, uint64(40), acks[len(acks)-1].Offset)
	require.Less(t, len(acks), 40, "batches share syncs")

	readBack := func(c arrowflight.Client) []string {
		got, err := flight.ReadAll(ctx, c, []string{"mixed"}, mem)
		require.NoError(t, err)
		defer flight.ReleaseAll(got)
		var rows []string
		for _, g := range got {
			rows = append(rows, flighttest.Rows(g.Rec)...)
		}
		return rows
	}
	require.Equal(t, want, readBack(c))
	// Where the file system takes them, the segments above were written
	// with direct writes and only their partial last blocks through the
	// page cache; elsewhere every byte went through the page cache.
	{
		var stored int64
		entries, err := os.ReadDir(filepath.Join(dir, "mixed"))
		require.NoError(t, err)
		for _, e := range entries {
			if filepath.Ext(e.Name()) == ".arrows" {
				fi, err := e.Info()
				require.NoError(t, err)
				stored += fi.Size()
			}
		}
		require.Greater(t, stored, int64(1<<20))
		if receiver.DirectIOSupported(t.TempDir()) {
			require.Greater(t, receiver.DirectBytes(srv), stored*9/10, "of %d segment bytes", stored)
		} else {
			t.Logf("the test's file system (%s) refuses direct writes: the buffered path was tested", runtime.GOOS)
			require.Zero(t, receiver.DirectBytes(srv))
		}
	}
	require.NoError(t, srv.Stop())

	log, logs := newLog()
	opts.Logger = log
	_, c = newServer(t, opts)
	require.Equal(t, want, readBack(c))
	require.Empty(t, logs.String(), "recovery found every frame intact")
}

// TestStaleCachedPageReadAgain: a read whose bytes fail their checksum
// because the page cache held a stale copy (what a direct write that
// rewrites a block a reader holds can leave behind) is read once more from
// the disk after the cached pages are dropped, and served without a damage
// report. The file system here hands out every segment's first read
// corrupted, as a stale page would be.
func TestStaleCachedPageReadAgain(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Log("no direct writes on " + runtime.GOOS + ": nothing to drop")
		return
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	log, logs := newLog()
	fs := &staleFS{FS: vfs.Default}
	srv, c := newServer(t, receiver.Options{FS: fs, Logger: log, Allocator: mem})
	ctx := flighttest.Ctx(t, 20*time.Second)
	b := flighttest.MakeBatch(mem, 0, 0, 50, 100)
	want := flighttest.Rows(b.Rec)
	p := openPut(t, ctx, c, "").schema([]string{"stale"}, flighttest.Schema)
	p.batch(encodeBatch(t, b.Rec), meta(1))
	b.Release()
	_, err := p.finish()
	require.NoError(t, err)

	got, err := flight.ReadAll(ctx, c, []string{"stale"}, mem)
	require.NoError(t, err, "the second read, from the disk, verifies")
	defer flight.ReleaseAll(got)
	require.Len(t, got, 1)
	require.Equal(t, want, flighttest.Rows(got[0].Rec))
	require.Equal(t, int32(1), fs.corrupted.Load(), "the first read was served corrupted")
	require.NoError(t, srv.Stop())
	require.NotContains(t, logs.String(), "failed its checksum", "no damage reported")
}

// staleFS corrupts the first read of each segment file opened for reading.
type staleFS struct {
	vfs.FS
	corrupted atomic.Int32
}

func (fs *staleFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	if err != nil || filepath.Ext(name) != ".arrows" {
		return f, err
	}
	return &staleFile{File: f, fs: fs}, nil
}

type staleFile struct {
	vfs.File
	fs   *staleFS
	read bool
}

func (f *staleFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	if !f.read && n > 0 {
		f.read = true
		p[n-1] ^= 0xff
		f.fs.corrupted.Add(1)
	}
	return n, err
}
