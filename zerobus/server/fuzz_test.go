package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/thalweg/thalweg/internal/testkit/hostileclient"
	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

// fakeEphemeral is an in-memory EphemeralStream server stream: Recv replays
// reqs then io.EOF; Send collects responses. Recv runs on the server's
// receive goroutine, Send on the handler goroutine.
type fakeEphemeral struct {
	grpc.ServerStream
	ctx  context.Context
	mu   sync.Mutex
	reqs []*zerobuspb.EphemeralStreamRequest
	resp []*zerobuspb.EphemeralStreamResponse
}

func (f *fakeEphemeral) Context() context.Context     { return f.ctx }
func (f *fakeEphemeral) SendHeader(metadata.MD) error { return nil }
func (f *fakeEphemeral) Recv() (*zerobuspb.EphemeralStreamRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		return nil, io.EOF
	}
	r := f.reqs[0]
	f.reqs = f.reqs[1:]
	return r, nil
}
func (f *fakeEphemeral) Send(r *zerobuspb.EphemeralStreamResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resp = append(f.resp, r)
	return nil
}

func incoming(token, table string) context.Context {
	return metadata.NewIncomingContext(context.Background(),
		metadata.Pairs(HeaderAuthorization, "Bearer "+token, HeaderTableName, table))
}

func marshal(t testing.TB, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// validStatus reports whether err is one of the statuses bad client input
// may produce, with a message.
func validStatus(err error) bool {
	st, ok := status.FromError(err)
	if !ok || st.Message() == "" {
		return false
	}
	switch st.Code() {
	case codes.InvalidArgument, codes.Unimplemented, codes.NotFound, codes.ResourceExhausted:
		return true
	}
	return false
}

// FuzzEphemeralRequests feeds three arbitrary EphemeralStreamRequest
// encodings (create_stream, then two ingest messages; whatever
// proto.Unmarshal makes of the bytes) through the server's EphemeralStream
// handler. Seeds cover JSON and PROTO streams, records and batches, the
// rejections of TestEphemeralRejectsBadInput and a recursive
// DescriptorProto. It asserts: no panic; the stream ends cleanly or with
// InvalidArgument/Unimplemented/NotFound/ResourceExhausted and a message;
// every record stored was acknowledged only if the stream succeeded; the
// pending budget returns to zero.
func FuzzEphemeralRequests(f *testing.F) {
	jsonCreate := marshal(f, createReq(testTable, zerobuspb.RecordType_JSON.Enum()))
	rec := &descriptorpb.DescriptorProto{
		Name: proto.String("R"),
		Field: []*descriptorpb.FieldDescriptorProto{
			{Name: proto.String("a"), Number: proto.Int32(1), Type: descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()},
			{Name: proto.String("self"), Number: proto.Int32(2), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(".R"), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()},
		},
	}
	protoCreate := marshal(f, &zerobuspb.EphemeralStreamRequest{Payload: &zerobuspb.EphemeralStreamRequest_CreateStream{
		CreateStream: &zerobuspb.CreateIngestStreamRequest{TableName: proto.String(testTable),
			RecordType: zerobuspb.RecordType_PROTO.Enum(), DescriptorProto: marshal(f, rec)}}})
	protoRec := func(off int64, b []byte) []byte {
		return marshal(f, &zerobuspb.EphemeralStreamRequest{Payload: &zerobuspb.EphemeralStreamRequest_IngestRecord{
			IngestRecord: &zerobuspb.IngestRecordRequest{OffsetId: proto.Int64(off),
				Record: &zerobuspb.IngestRecordRequest_ProtoEncodedRecord{ProtoEncodedRecord: b}}}})
	}
	f.Add(jsonCreate, marshal(f, jsonBatch(0, `{"a":1}`, `{"b":"x"}`)), marshal(f, jsonRecord(1, `{"c":[1,2]}`)))
	f.Add(jsonCreate, marshal(f, jsonBatch(0, `[1]`)), marshal(f, jsonRecord(1, `{`)))
	f.Add(jsonCreate, marshal(f, jsonRecord(1, `{}`)), []byte{})
	f.Add(jsonCreate, marshal(f, jsonBatch(0)), []byte{0xff})
	f.Add(jsonCreate, jsonCreate, jsonCreate)
	f.Add(marshal(f, createReq("other.table.name", zerobuspb.RecordType_JSON.Enum())), []byte{}, []byte{})
	f.Add(marshal(f, createReq(testTable, zerobuspb.RecordType_AVRO.Enum())), []byte{}, []byte{})
	f.Add(marshal(f, createReq(testTable, zerobuspb.RecordType(99).Enum())), []byte{}, []byte{})
	f.Add(protoCreate, protoRec(0, []byte{0x08, 0x2a, 0x12, 0x02, 0x08, 0x01}), protoRec(1, []byte{0x12, 0x80}))
	f.Add(protoCreate, protoRec(0, bytes.Repeat([]byte{0x12, 0x7f}, 50)), protoRec(1, nil))
	// Bombs: a packed repeated int32 that decodes to ~140× its size; invalid
	// UTF-8 in a JSON record and in a proto string field.
	packedCreate := marshal(f, &zerobuspb.EphemeralStreamRequest{Payload: &zerobuspb.EphemeralStreamRequest_CreateStream{
		CreateStream: &zerobuspb.CreateIngestStreamRequest{TableName: proto.String(testTable),
			RecordType: zerobuspb.RecordType_PROTO.Enum(), DescriptorProto: marshal(f, packedDescriptor)}}})
	f.Add(packedCreate, protoRec(0, packedInt32Record(900<<10)), protoRec(1, []byte{0x12, 0x02, 0xff, 0xfe}))
	f.Add(jsonCreate, marshal(f, jsonRecord(0, "{\"a\":\"\xff\"}")), marshal(f, jsonBatch(1, `{"ok":1}`, "{\"b\":\"\xc3\"}")))

	srv, err := New(Options{Dir: f.TempDir(), Token: testToken, MaxPendingBytes: 16 << 20, MaxMessageBytes: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Stop() })

	f.Fuzz(func(t *testing.T, create, m1, m2 []byte) {
		var reqs []*zerobuspb.EphemeralStreamRequest
		for _, b := range [][]byte{create, m1, m2} {
			r := new(zerobuspb.EphemeralStreamRequest)
			if proto.Unmarshal(b, r) != nil {
				continue // not a request: the gRPC codec would have rejected it
			}
			reqs = append(reqs, r)
		}
		fs := &fakeEphemeral{ctx: incoming(testToken, testTable), reqs: reqs}
		before := srv.Stats().Records
		err := srv.EphemeralStream(fs)
		if err != nil && !validStatus(err) {
			t.Fatalf("EphemeralStream: %v; want a client-error status with a message", err)
		}
		if err == nil && srv.Stats().Records > before {
			acked := false
			for _, r := range fs.resp {
				if r.GetIngestRecordResponse() != nil {
					acked = true
				}
			}
			if !acked {
				t.Fatal("stream succeeded with stored records but no ack")
			}
		}
		if n := srv.pending.Pending(); n != 0 {
			t.Fatalf("pending budget %d after the stream ended", n)
		}
	})
}

// fakePut is an in-memory Flight DoPut server stream.
type fakePut struct {
	grpc.ServerStream
	ctx  context.Context
	mu   sync.Mutex
	msgs []*flight.FlightData
	acks [][]byte
}

func (f *fakePut) Context() context.Context { return f.ctx }
func (f *fakePut) Recv() (*flight.FlightData, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.msgs) == 0 {
		return nil, io.EOF
	}
	m := f.msgs[0]
	f.msgs = f.msgs[1:]
	return m, nil
}
func (f *fakePut) Send(r *flight.PutResult) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acks = append(f.acks, bytes.Clone(r.AppMetadata))
	return nil
}

type captureWriter struct{ fds []*flight.FlightData }

func (c *captureWriter) Send(fd *flight.FlightData) error { c.fds = append(c.fds, fd); return nil }

// FuzzFlightMessages drives the Flight variant's DoPut with a fuzzed schema
// message and one fuzzed record batch message (sent twice with offsets 0
// and 1). It asserts: no panic (malformed Arrow data is contained to its
// stream), a client-error status with a message on failure, no leak of
// Arrow memory on success, and the pending budget back at zero.
func FuzzFlightMessages(f *testing.F) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String)},
	}, nil)
	rec, _, err := array.RecordFromJSON(memory.NewGoAllocator(), sc,
		strings.NewReader(`[{"id":1,"name":"a","tags":["x"]},{"id":2,"name":null,"tags":[]},{"id":3,"name":"c\"","tags":null}]`))
	if err != nil {
		f.Fatal(err)
	}
	defer rec.Release()
	for _, opts := range [][]ipc.Option{nil, {ipc.WithLZ4()}, {ipc.WithZstd()}} {
		var c captureWriter
		w := flight.NewRecordWriter(&c, append([]ipc.Option{ipc.WithSchema(rec.Schema())}, opts...)...)
		if err := w.Write(rec); err != nil {
			f.Fatal(err)
		}
		w.Close()
		f.Add(c.fds[0].DataHeader, c.fds[1].DataHeader, c.fds[1].DataBody)
		f.Add(c.fds[0].DataHeader, c.fds[1].DataHeader, c.fds[1].DataBody[:len(c.fds[1].DataBody)/2])
		if len(opts) > 0 {
			bomb := bytes.Clone(c.fds[1].DataBody)
			binary.LittleEndian.PutUint64(bomb, 1<<40)
			f.Add(c.fds[0].DataHeader, c.fds[1].DataHeader, bomb)
		}
	}
	// Bombs: buffers each at the decode limit, over it together; a Null
	// column declaring 300 M rows; negative string offsets.
	total := hostileclient.ZstdBomb(2, 1<<20)
	f.Add(hostileclient.Schema(hostileclient.Int64Schema(2)), total.Header, total.Body)
	nulls := hostileclient.NullRows(300_000_000)
	f.Add(hostileclient.Schema(hostileclient.NullSchema), nulls.Header, nulls.Body)
	neg := hostileclient.Strings([]int32{0, -5, 3}, []byte("abc"))
	f.Add(hostileclient.Schema(hostileclient.StringSchema), neg.Header, neg.Body)

	srv, err := New(Options{Dir: f.TempDir(), MaxDecodedBufferSize: 1 << 20, MaxDecodedMessageBytes: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Stop() })
	fs := &flightService{srv: srv}

	f.Fuzz(func(t *testing.T, schema, hdr, body []byte) {
		ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(HeaderTableName, testTable))
		put := &fakePut{ctx: ctx, msgs: []*flight.FlightData{
			{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"main", "default", "events"}}, DataHeader: schema},
			{DataHeader: hdr, DataBody: body, AppMetadata: []byte(`{"offset_id":0}`)},
			{DataHeader: hdr, DataBody: body, AppMetadata: []byte(`{"offset_id":1}`)},
		}}
		err := fs.DoPut(put)
		if err != nil && !validStatus(err) {
			t.Fatalf("DoPut: %v; want a client-error status with a message", err)
		}
		if n := srv.pending.Pending(); n != 0 {
			t.Fatalf("pending budget %d after the stream ended", n)
		}
	})
}
