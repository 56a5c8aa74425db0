package receiver_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/hostileclient"
)

// fakePut is an in-memory DoPut server stream: Recv replays msgs, then
// io.EOF; Send records PutResults. It lets the fuzzer drive Server.DoPut
// directly, without a network round trip per input.
type fakePut struct {
	grpc.ServerStream
	ctx  context.Context
	msgs []*flight.FlightData
	mu   sync.Mutex
	acks [][]byte
}

func (f *fakePut) Context() context.Context { return f.ctx }

func (f *fakePut) Recv() (*flight.FlightData, error) {
	if len(f.msgs) == 0 {
		return nil, io.EOF
	}
	m := f.msgs[0]
	f.msgs = f.msgs[1:]
	return m, nil
}

// RecvMsg is Recv through the server's codec, as gRPC would call it.
func (f *fakePut) RecvMsg(m any) error {
	fd, err := f.Recv()
	if err != nil {
		return err
	}
	b, err := proto.Marshal(fd)
	if err != nil {
		return err
	}
	return flightwire.ServerCodec{}.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, m)
}

func (f *fakePut) Send(r *flight.PutResult) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acks = append(f.acks, bytes.Clone(r.AppMetadata))
	return nil
}

// capAllocator fails (by panicking, as arrow-go allocators signal failure)
// instead of allocating more than limit in one call, and remembers the
// largest request. It guards the fuzzer's own process against a receiver
// that would allocate a declared size unchecked.
type capAllocator struct {
	memory.Allocator
	limit int
	mu    sync.Mutex
	worst int
}

func (c *capAllocator) note(n int) {
	c.mu.Lock()
	c.worst = max(c.worst, n)
	c.mu.Unlock()
	if n > c.limit {
		panic(fmt.Sprintf("unchecked allocation of %d bytes", n))
	}
}

func (c *capAllocator) Allocate(n int) []byte { c.note(n); return c.Allocator.Allocate(n) }
func (c *capAllocator) Reallocate(n int, b []byte) []byte {
	c.note(n)
	return c.Allocator.Reallocate(n, b)
}

const fuzzDecodeLimit = 1 << 20

// captureWriter collects the FlightData a flight.Writer emits.
type captureWriter struct{ fds []*flight.FlightData }

func (c *captureWriter) Send(fd *flight.FlightData) error {
	c.fds = append(c.fds, fd)
	return nil
}

// encodeCompressed encodes rec as an IPC record batch message with body
// compression, the way a sink with Compression lz4/zstd sends it.
func encodeCompressed(t testing.TB, rec arrow.RecordBatch, opt ipc.Option) encoded {
	t.Helper()
	var c captureWriter
	w := flight.NewRecordWriter(&c, ipc.WithSchema(rec.Schema()), opt)
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if len(c.fds) < 2 {
		t.Fatalf("writer emitted %d messages", len(c.fds))
	}
	return encoded{bytes.Clone(c.fds[1].DataHeader), bytes.Clone(c.fds[1].DataBody)}
}

// FuzzDoPutMessages feeds a schema message and two record batch messages,
// each header, body and app_metadata chosen by the fuzzer, to Server.DoPut.
// Seeds are valid messages (plain, lz4, zstd, split parts) and the known
// bad shapes: truncated body, corrupted header, a compressed buffer
// declaring a 1 TiB uncompressed size, buffers over the message limit only
// together, a Null column declaring 300 M rows, negative string offsets,
// wrong schema. It asserts: no panic;
// the stream either succeeds or ends with InvalidArgument or
// ResourceExhausted and a non-empty message; no allocation above the decode
// limit reaches the allocator (the declared size is checked first); no Arrow
// memory is leaked on any path.
func FuzzDoPutMessages(f *testing.F) {
	mem := memory.NewGoAllocator()
	b := flighttest.MakeBatch(mem, 0, 0, 4, 8)
	defer b.Release()
	schemaHdr := encodeSchema(flighttest.Schema)
	plain := encodeBatch(f, b.Rec)
	lz4 := encodeCompressed(f, b.Rec, ipc.WithLZ4())
	zstd := encodeCompressed(f, b.Rec, ipc.WithZstd())
	bomb := encoded{lz4.hdr, bytes.Clone(lz4.body)}
	// The first non-empty buffer starts the body; its first 8 bytes are the
	// declared uncompressed length.
	binary.LittleEndian.PutUint64(bomb.body, 1<<40)
	negative := encoded{zstd.hdr, bytes.Clone(zstd.body)}
	binary.LittleEndian.PutUint64(negative.body, uint64(1<<63+12))
	other := encodeSchema(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil))
	corrupt := bytes.Clone(plain.hdr)
	for i := 8; i < len(corrupt); i += 7 {
		corrupt[i] ^= 0xff
	}

	m1, m2 := meta(1), meta(2)
	p0 := []byte(`{"offset_id":3,"part":0,"parts":2}`)
	p1 := []byte(`{"offset_id":3,"part":1,"parts":2}`)
	for _, e := range []encoded{plain, lz4, zstd} {
		f.Add(schemaHdr, e.hdr, e.body, m1, m2)
		f.Add(schemaHdr, e.hdr, e.body, p0, p1)
	}
	f.Add(schemaHdr, plain.hdr, plain.body[:len(plain.body)/2], m1, m2)
	f.Add(schemaHdr, plain.hdr[:len(plain.hdr)/2], plain.body, m1, m2)
	f.Add(schemaHdr, corrupt, plain.body, m1, m2)
	f.Add(schemaHdr, bomb.hdr, bomb.body, m1, m2)
	f.Add(schemaHdr, negative.hdr, negative.body, m1, m2)
	f.Add(other, plain.hdr, plain.body, m1, m2)
	f.Add(plain.hdr, schemaHdr, []byte{}, m1, m2)
	f.Add([]byte{}, plain.hdr, plain.body, m1, m2)
	f.Add(schemaHdr, plain.hdr, plain.body, []byte(`{"offset_id":2,"part":0,"parts":2147483647}`), m2)
	// Bombs: buffers each at the decode limit, over it together; a Null
	// column declaring 300 M rows; negative string offsets.
	total := hostileclient.ZstdBomb(2, fuzzDecodeLimit)
	f.Add(hostileclient.Schema(hostileclient.Int64Schema(2)), total.Header, total.Body, m1, m2)
	nulls := hostileclient.NullRows(300_000_000)
	f.Add(hostileclient.Schema(hostileclient.NullSchema), nulls.Header, nulls.Body, m1, m2)
	neg := hostileclient.Strings([]int32{0, -5, 3}, []byte("abc"))
	f.Add(hostileclient.Schema(hostileclient.StringSchema), neg.Header, neg.Body, m1, m2)

	f.Fuzz(func(t *testing.T, schema, hdr, body, meta1, meta2 []byte) {
		checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
		capped := &capAllocator{Allocator: checked, limit: fuzzDecodeLimit}
		srv, err := receiver.New(receiver.Options{
			Dir: "/r", FS: vfs.NewMem(), Allocator: capped,
			MaxDecodedBufferSize: fuzzDecodeLimit, MaxDecodedMessageBytes: fuzzDecodeLimit,
		})
		if err != nil {
			t.Fatal(err)
		}
		stream := &fakePut{ctx: context.Background(), msgs: []*flight.FlightData{
			{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"fuzz"}}, DataHeader: schema},
			{DataHeader: hdr, DataBody: body, AppMetadata: meta1},
			{DataHeader: hdr, DataBody: body, AppMetadata: meta2},
		}}
		derr := srv.DoPut(stream)
		if err := srv.Stop(); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		if capped.worst > fuzzDecodeLimit {
			t.Fatalf("an allocation of %d bytes reached the allocator (limit %d)", capped.worst, fuzzDecodeLimit)
		}
		// arrow-go leaks the buffers it already loaded when constructing an
		// array from them panics (its reader recovers the panic but never
		// releases the ArrayData): an upstream bug on malformed input only.
		// With the default Go allocator the garbage collector reclaims them;
		// a checked allocator sees them. Every other path must be exact.
		if !(derr != nil && strings.Contains(derr.Error(), "unknown error while reading")) {
			checked.AssertSize(t, 0)
		}
		if derr == nil {
			return
		}
		st, ok := status.FromError(derr)
		if !ok || (st.Code() != codes.InvalidArgument && st.Code() != codes.ResourceExhausted) || st.Message() == "" {
			t.Fatalf("DoPut error %v: want InvalidArgument or ResourceExhausted with a message", derr)
		}
		if strings.Contains(st.Message(), "unchecked allocation") {
			t.Fatalf("decoder reached the test allocator's cap: %v", derr)
		}
	})
}

// TestDecompressionBombRejected: the input FuzzDoPutMessages is seeded
// with, a compressed buffer that declares 1 TiB ends the stream with a
// precise InvalidArgument naming the limit, and nothing is allocated.
func TestDecompressionBombRejected(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := flighttest.MakeBatch(mem, 0, 0, 4, 8)
	defer b.Release()
	lz4 := encodeCompressed(t, b.Rec, ipc.WithLZ4())
	binary.LittleEndian.PutUint64(lz4.body, 1<<40)
	capped := &capAllocator{Allocator: mem, limit: 64 << 20}
	srv, err := receiver.New(receiver.Options{Dir: "/r", FS: vfs.NewMem(), Allocator: capped})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	err = srv.DoPut(&fakePut{ctx: context.Background(), msgs: []*flight.FlightData{
		{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"bomb"}}, DataHeader: encodeSchema(flighttest.Schema)},
		{DataHeader: lz4.hdr, DataBody: lz4.body, AppMetadata: meta(1)},
	}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "MaxDecodedMessageBytes") {
		t.Fatalf("DoPut: %v; want InvalidArgument naming the limit", err)
	}
	if capped.worst > 64<<20 {
		t.Fatalf("largest allocation %d", capped.worst)
	}
}
