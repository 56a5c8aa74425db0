package server

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	flightpb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

func TestMain(m *testing.M) {
	if os.Getenv(zbChildEnv) != "" {
		runZerobusChild() // never returns
	}
	goleak.VerifyTestMain(m)
}

const (
	testToken = "s3cret"
	testTable = "main.default.events"
)

// startBufconn runs a server on an in-memory listener and returns a client
// connection to it.
func startBufconn(t *testing.T, opts Options) (*Server, *grpc.ClientConn) {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	srv, err := New(opts)
	require.NoError(t, err)
	lis := bufconn.Listen(1 << 20)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	cc, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() {
		cc.Close()
		require.NoError(t, srv.Stop())
		require.NoError(t, <-done)
	})
	return srv, cc
}

func headers(token, table string) context.Context {
	md := metadata.MD{}
	if token != "" {
		md.Set(HeaderAuthorization, "Bearer "+token)
	}
	if table != "" {
		md.Set(HeaderTableName, table)
	}
	return metadata.NewOutgoingContext(context.Background(), md)
}

func createReq(table string, rt *zerobuspb.RecordType) *zerobuspb.EphemeralStreamRequest {
	return &zerobuspb.EphemeralStreamRequest{Payload: &zerobuspb.EphemeralStreamRequest_CreateStream{
		CreateStream: &zerobuspb.CreateIngestStreamRequest{TableName: proto.String(table), RecordType: rt},
	}}
}

func jsonBatch(off int64, recs ...string) *zerobuspb.EphemeralStreamRequest {
	return &zerobuspb.EphemeralStreamRequest{Payload: &zerobuspb.EphemeralStreamRequest_IngestRecordBatch{
		IngestRecordBatch: &zerobuspb.IngestRecordBatchRequest{OffsetId: proto.Int64(off),
			Batch: &zerobuspb.IngestRecordBatchRequest_JsonBatch{JsonBatch: &zerobuspb.JsonRecordBatch{Records: recs}}},
	}}
}

func jsonRecord(off int64, rec string) *zerobuspb.EphemeralStreamRequest {
	return &zerobuspb.EphemeralStreamRequest{Payload: &zerobuspb.EphemeralStreamRequest_IngestRecord{
		IngestRecord: &zerobuspb.IngestRecordRequest{OffsetId: proto.Int64(off),
			Record: &zerobuspb.IngestRecordRequest_JsonRecord{JsonRecord: rec}},
	}}
}

// finish half-closes and collects every response until the stream ends.
func finish(t *testing.T, st zerobuspb.Zerobus_EphemeralStreamClient) ([]*zerobuspb.EphemeralStreamResponse, error) {
	t.Helper()
	require.NoError(t, st.CloseSend())
	var out []*zerobuspb.EphemeralStreamResponse
	for {
		r, err := st.Recv()
		if err != nil {
			if err.Error() == "EOF" {
				return out, nil
			}
			return out, err
		}
		out = append(out, r)
	}
}

func TestEphemeralStoresAndAcks(t *testing.T) {
	srv, cc := startBufconn(t, Options{Token: testToken})
	st, err := zerobuspb.NewZerobusClient(cc).EphemeralStream(headers(testToken, testTable))
	require.NoError(t, err)
	require.NoError(t, st.Send(createReq(testTable, zerobuspb.RecordType_JSON.Enum())))
	r, err := st.Recv()
	require.NoError(t, err)
	require.NotEmpty(t, r.GetCreateStreamResponse().GetStreamId())
	require.NoError(t, st.Send(jsonBatch(0, `{"a":1}`, "{\n \"a\": 2}")))
	require.NoError(t, st.Send(jsonRecord(1, `{"a":3}`)))
	resps, err := finish(t, st)
	require.NoError(t, err)
	require.NotEmpty(t, resps)
	last := resps[len(resps)-1].GetIngestRecordResponse()
	require.NotNil(t, last)
	require.EqualValues(t, 1, last.GetDurabilityAckUpToOffset(), "the final ack covers every offset")

	got, err := ReadTable(srv.Dir(), testTable)
	require.NoError(t, err)
	require.Equal(t, []string{`{"a":1}`, `{"a":2}`, `{"a":3}`}, strs(got))
	require.EqualValues(t, 3, srv.Stats().Records)
}

func strs(b [][]byte) []string {
	out := make([]string, len(b))
	for i := range b {
		out[i] = string(b[i])
	}
	return out
}

func TestEphemeralRejectsBadInput(t *testing.T) {
	descriptor, err := proto.Marshal(&descriptorpb.DescriptorProto{
		Name: proto.String("Row"),
		Field: []*descriptorpb.FieldDescriptorProto{{
			Name: proto.String("id"), Number: proto.Int32(1),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Type:  descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum(),
		}},
	})
	require.NoError(t, err)
	create := func(mut func(*zerobuspb.CreateIngestStreamRequest)) *zerobuspb.EphemeralStreamRequest {
		r := createReq(testTable, zerobuspb.RecordType_JSON.Enum())
		mut(r.GetCreateStream())
		return r
	}
	okCreate := createReq(testTable, zerobuspb.RecordType_JSON.Enum())
	cases := []struct {
		name        string
		token       string
		table       string
		msgs        []*zerobuspb.EphemeralStreamRequest
		code        codes.Code
		msgContains string
	}{
		{"no token", "", testTable, nil, codes.Unauthenticated, "missing authorization"},
		{"wrong token", "nope", testTable, nil, codes.Unauthenticated, "invalid bearer token"},
		{"no table header", testToken, "", nil, codes.InvalidArgument, HeaderTableName},
		{"bad table name", testToken, "events", nil, codes.InvalidArgument, "catalog.schema.table"},
		{"unknown table", testToken, "main.default.other", nil, codes.NotFound, "main.default.other"},
		{"ingest before create", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{jsonBatch(0, `{}`)}, codes.InvalidArgument, "first message must be create_stream"},
		{"table mismatch", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{createReq("main.default.x", zerobuspb.RecordType_JSON.Enum())}, codes.InvalidArgument, "does not match"},
		{"no table_name", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{create(func(c *zerobuspb.CreateIngestStreamRequest) { c.TableName = nil })}, codes.InvalidArgument, "table_name is required"},
		{"unspecified record type", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{createReq(testTable, zerobuspb.RecordType_RECORD_TYPE_UNSPECIFIED.Enum())}, codes.InvalidArgument, "RECORD_TYPE_UNSPECIFIED"},
		{"proto without descriptor", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{createReq(testTable, nil)}, codes.InvalidArgument, "descriptor_proto is required"},
		{"garbage descriptor", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{create(func(c *zerobuspb.CreateIngestStreamRequest) {
			c.RecordType = zerobuspb.RecordType_PROTO.Enum()
			c.DescriptorProto = []byte{0xff, 0xff}
		})}, codes.InvalidArgument, "descriptor_proto"},
		{"avro", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{createReq(testTable, zerobuspb.RecordType_AVRO.Enum())}, codes.Unimplemented, "AVRO"},
		{"create twice", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{okCreate, okCreate}, codes.InvalidArgument, "create_stream sent twice"},
		{"offset gap", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{okCreate, jsonBatch(1, `{}`)}, codes.InvalidArgument, "offset_id 1 out of sequence: want 0"},
		{"missing offset", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{okCreate, {Payload: &zerobuspb.EphemeralStreamRequest_IngestRecord{IngestRecord: &zerobuspb.IngestRecordRequest{Record: &zerobuspb.IngestRecordRequest_JsonRecord{JsonRecord: "{}"}}}}}, codes.InvalidArgument, "offset_id is required"},
		{"invalid json", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{okCreate, jsonBatch(0, `{}`, `{"a":`)}, codes.InvalidArgument, "json_batch.records[1]: invalid JSON"},
		{"json not an object", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{okCreate, jsonRecord(0, `[1]`)}, codes.InvalidArgument, "must be a JSON object"},
		{"empty batch", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{okCreate, jsonBatch(0)}, codes.InvalidArgument, "records is empty"},
		{"proto record on json stream", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{okCreate, {Payload: &zerobuspb.EphemeralStreamRequest_IngestRecord{IngestRecord: &zerobuspb.IngestRecordRequest{OffsetId: proto.Int64(0), Record: &zerobuspb.IngestRecordRequest_ProtoEncodedRecord{ProtoEncodedRecord: []byte{8, 1}}}}}}, codes.InvalidArgument, "proto_encoded_record on a JSON stream"},
		{"undecodable proto record", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{
			create(func(c *zerobuspb.CreateIngestStreamRequest) {
				c.RecordType = zerobuspb.RecordType_PROTO.Enum()
				c.DescriptorProto = descriptor
			}),
			{Payload: &zerobuspb.EphemeralStreamRequest_IngestRecord{IngestRecord: &zerobuspb.IngestRecordRequest{OffsetId: proto.Int64(0), Record: &zerobuspb.IngestRecordRequest_ProtoEncodedRecord{ProtoEncodedRecord: []byte{8}}}}},
		}, codes.InvalidArgument, "does not decode as Row"},
		{"empty payload", testToken, testTable, []*zerobuspb.EphemeralStreamRequest{okCreate, {}}, codes.InvalidArgument, "payload is not set"},
	}
	_, cc := startBufconn(t, Options{Token: testToken, Tables: []string{testTable}})
	client := zerobuspb.NewZerobusClient(cc)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(headers(tc.token, tc.table), 5*time.Second)
			defer cancel()
			st, err := client.EphemeralStream(ctx)
			require.NoError(t, err)
			for _, m := range tc.msgs {
				if st.Send(m) != nil {
					break // the server already ended the stream; Recv reports why
				}
			}
			_, err = finish(t, st)
			require.Error(t, err)
			s := status.Convert(err)
			require.Equal(t, tc.code, s.Code(), s.Message())
			require.Contains(t, s.Message(), tc.msgContains)
		})
	}
}

func TestEphemeralTooLargeMessage(t *testing.T) {
	_, cc := startBufconn(t, Options{MaxMessageBytes: 4096})
	st, err := zerobuspb.NewZerobusClient(cc).EphemeralStream(headers("", testTable))
	require.NoError(t, err)
	require.NoError(t, st.Send(createReq(testTable, zerobuspb.RecordType_JSON.Enum())))
	_, err = st.Recv()
	require.NoError(t, err)
	_ = st.Send(jsonRecord(0, `{"x":"`+strings.Repeat("y", 8192)+`"}`))
	_, err = finish(t, st)
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
}

func TestEphemeralRotationSignal(t *testing.T) {
	srv, cc := startBufconn(t, Options{RotateEvery: 50 * time.Millisecond, RotateGrace: 100 * time.Millisecond})
	st, err := zerobuspb.NewZerobusClient(cc).EphemeralStream(headers("", testTable))
	require.NoError(t, err)
	require.NoError(t, st.Send(createReq(testTable, zerobuspb.RecordType_JSON.Enum())))
	var sawClose bool
	var ends error
	for {
		r, err := st.Recv()
		if err != nil {
			ends = err
			break
		}
		if c := r.GetCloseStreamSignal(); c != nil {
			sawClose = true
			require.Equal(t, 100*time.Millisecond, c.GetDuration().AsDuration())
		}
	}
	require.True(t, sawClose)
	require.Equal(t, "EOF", ends.Error(), "the server ends a rotated stream cleanly after the grace")
	require.EqualValues(t, 1, srv.Stats().Rotations)
}

func testRecord(t *testing.T, mem memory.Allocator, from, n int) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%3 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append("n\"" + string(rune('a'+i%26)))
		}
	}
	return b.NewRecordBatch()
}

func TestFlightStoresAndAcks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srv, cc := startBufconn(t, Options{Allocator: mem})
	st, err := flightpb.NewFlightServiceClient(cc).DoPut(headers("", testTable))
	require.NoError(t, err)
	ready, err := st.Recv()
	require.NoError(t, err)
	require.JSONEq(t, `{"ack_up_to_offset":-1,"ack_up_to_records":0}`, string(ready.AppMetadata))

	rec1, rec2 := testRecord(t, mem, 0, 3), testRecord(t, mem, 3, 2)
	defer rec1.Release()
	defer rec2.Release()
	w := flight.NewRecordWriter(st, ipc.WithSchema(rec1.Schema()), ipc.WithAllocator(mem))
	require.NoError(t, w.WriteWithAppMetadata(rec1, []byte(`{"offset_id":0}`)))
	require.NoError(t, w.WriteWithAppMetadata(rec2, []byte(`{"offset_id":1}`)))
	require.NoError(t, w.Close())
	require.NoError(t, st.CloseSend())
	var last []byte
	for {
		pr, err := st.Recv()
		if err != nil {
			require.Equal(t, "EOF", err.Error())
			break
		}
		last = pr.AppMetadata
	}
	var ack struct {
		Offset  int64  `json:"ack_up_to_offset"`
		Records uint64 `json:"ack_up_to_records"`
	}
	require.NoError(t, json.Unmarshal(last, &ack))
	require.EqualValues(t, 1, ack.Offset)
	require.EqualValues(t, 5, ack.Records)
	got, err := ReadTable(srv.Dir(), testTable)
	require.NoError(t, err)
	require.Equal(t, []string{`{"id":0,"name":null}`, `{"id":1,"name":"n\"b"}`, `{"id":2,"name":"n\"c"}`, `{"id":3,"name":null}`, `{"id":4,"name":"n\"e"}`}, strs(got))
}

func TestFlightRejectsBadMetadata(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cases := []struct{ name, meta, contains string }{
		{"empty", ``, "app_metadata is empty"},
		{"not json", `offset 0`, "app_metadata"},
		{"offset misnamed", `{"offset":0}`, `"offset_id" is missing`},
		{"missing offset", `{}`, `"offset_id" is missing`},
		{"split parts", `{"offset_id":0,"part":0,"parts":2}`, "own offset_id"},
		{"gap", `{"offset_id":2}`, "offset_id 2 out of sequence: want 0"},
	}
	_, cc := startBufconn(t, Options{Allocator: mem})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := flightpb.NewFlightServiceClient(cc).DoPut(headers("", testTable))
			require.NoError(t, err)
			_, err = st.Recv() // ready
			require.NoError(t, err)
			rec := testRecord(t, mem, 0, 2)
			defer rec.Release()
			w := flight.NewRecordWriter(st, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem))
			_ = w.WriteWithAppMetadata(rec, []byte(tc.meta))
			_ = w.Close()
			_ = st.CloseSend()
			for err == nil {
				_, err = st.Recv()
			}
			require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
			require.Contains(t, status.Convert(err).Message(), tc.contains)
		})
	}
}

func TestFlightRequiresToken(t *testing.T) {
	_, cc := startBufconn(t, Options{Token: testToken})
	st, err := flightpb.NewFlightServiceClient(cc).DoPut(headers("wrong", testTable))
	require.NoError(t, err)
	_, err = st.Recv()
	require.Equal(t, codes.Unauthenticated, status.Code(err))
}

func TestOptionsValidation(t *testing.T) {
	_, err := New(Options{})
	require.ErrorContains(t, err, "Options.Dir")
	_, err = New(Options{Dir: t.TempDir(), Tables: []string{"x"}})
	require.ErrorContains(t, err, `invalid table name "x"`)
	_, err = New(Options{Dir: t.TempDir(), SyncInterval: -1})
	require.ErrorContains(t, err, "negative")
}
