package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	flightpb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/thalweg/thalweg/internal/testkit/hostileclient"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

// startLoopback runs a server on a loopback TCP port and returns a client
// connection to it and its address.
func startLoopback(t *testing.T, opts Options) (*Server, *grpc.ClientConn, string) {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	srv, err := New(opts)
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	require.NoError(t, err)
	t.Cleanup(func() {
		cc.Close()
		require.NoError(t, srv.Stop())
		require.NoError(t, <-done)
	})
	return srv, cc, lis.Addr().String()
}

// goodJSONClient streams small JSON batches on table over cc, one short
// stream after another, until stop is closed; it returns how many streams
// were fully acknowledged and the first failure.
func goodJSONClient(t *testing.T, cc *grpc.ClientConn, table string, stop <-chan struct{}) func() (int, error) {
	var (
		wg   sync.WaitGroup
		ok   int
		ferr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			err := func() error {
				ctx, cancel := context.WithTimeout(headers("", table), 10*time.Second)
				defer cancel()
				st, err := zerobuspb.NewZerobusClient(cc).EphemeralStream(ctx)
				if err != nil {
					return err
				}
				if err := st.Send(createReq(table, zerobuspb.RecordType_JSON.Enum())); err != nil {
					return err
				}
				for i := range 5 {
					if err := st.Send(jsonBatch(int64(i), `{"good":1}`, `{"good":2}`)); err != nil {
						return err
					}
				}
				if err := st.CloseSend(); err != nil {
					return err
				}
				last := int64(-1)
				for {
					r, err := st.Recv()
					if err != nil {
						if err.Error() == "EOF" {
							break
						}
						return err
					}
					if a := r.GetIngestRecordResponse(); a != nil {
						last = a.GetDurabilityAckUpToOffset()
					}
				}
				if last != 4 {
					return fmt.Errorf("stream ended with offsets acknowledged up to %d, want 4", last)
				}
				return nil
			}()
			if err != nil {
				ferr = err
				return
			}
			ok++
		}
	}()
	return func() (int, error) { wg.Wait(); return ok, ferr }
}

// allocated runs f and returns how many bytes the process allocated
// meanwhile (runtime.MemStats.TotalAlloc counts every allocation).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// putRaw sends a schema and one raw record batch message over the Flight
// variant and returns the stream's final status.
func putRaw(t *testing.T, cc *grpc.ClientConn, table string, sc *arrow.Schema, msg hostileclient.Message) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(headers("", table), 30*time.Second)
	defer cancel()
	st, err := flightpb.NewFlightServiceClient(cc).DoPut(ctx)
	require.NoError(t, err)
	_ = st.Send(&flight.FlightData{DataHeader: hostileclient.Schema(sc)})
	_ = st.Send(&flight.FlightData{DataHeader: msg.Header, DataBody: msg.Body, AppMetadata: []byte(`{"offset_id":0}`)})
	_ = st.CloseSend()
	for {
		if _, err := st.Recv(); err != nil {
			if err.Error() == "EOF" {
				return nil
			}
			return err
		}
	}
}

func tableSize(t *testing.T, srv *Server, table string) int64 {
	fi, err := os.Stat(TablePath(srv.Dir(), table))
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return fi.Size()
}

// TestFlightDecodedSizeBounded: 24 int64 columns, each a zstd buffer that
// declares (and really decompresses to) 256 MiB of zeros, are refused with
// InvalidArgument naming MaxDecodedMessageBytes before anything is
// decompressed; nothing is written; a JSON client is served meanwhile.
func TestFlightDecodedSizeBounded(t *testing.T) {
	srv, cc, _ := startLoopback(t, Options{})
	bomb := hostileclient.ZstdBomb(24, 256<<20)
	stop := make(chan struct{})
	good := goodJSONClient(t, cc, "main.default.good", stop)
	var err error
	alloc := allocated(func() {
		for range 4 {
			if err = putRaw(t, cc, testTable, hostileclient.Int64Schema(24), bomb); err == nil {
				break
			}
		}
	})
	close(stop)
	n, gerr := good()
	t.Logf("bombs (%d-byte bodies): process allocated %d MiB meanwhile; bomb stream: %v", len(bomb.Body), alloc>>20, err)
	require.NoError(t, gerr)
	require.Positive(t, n)
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	require.Contains(t, err.Error(), "MaxDecodedMessageBytes")
	require.Less(t, alloc, uint64(256<<20))
	require.Zero(t, tableSize(t, srv, testTable))
	testenv.WaitFor(t, 5*time.Second, "the pending bytes to be given back", func() bool { return srv.pending.Pending() == 0 })
}

// TestFlightRowsBounded: one Null column declaring 300 M rows (a ~200-byte
// message) is refused before the row slice is allocated.
func TestFlightRowsBounded(t *testing.T) {
	srv, cc, _ := startLoopback(t, Options{})
	msg := hostileclient.NullRows(300_000_000)
	var err error
	alloc := allocated(func() { err = putRaw(t, cc, testTable, hostileclient.NullSchema, msg) })
	t.Logf("%d-byte row bomb: process allocated %d KiB; stream: %v", len(msg.Header)+len(msg.Body), alloc>>10, err)
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	require.Contains(t, err.Error(), "300000000 rows")
	require.Less(t, alloc, uint64(64<<20))
	require.Zero(t, tableSize(t, srv, testTable))
}

// TestFlightInvalidArrowDataRefused: negative or decreasing string offsets
// and invalid UTF-8 end the stream with InvalidArgument; nothing is stored.
func TestFlightInvalidArrowDataRefused(t *testing.T) {
	srv, cc, _ := startLoopback(t, Options{})
	for _, tc := range []struct {
		name, data, want string
		offsets          []int32
	}{
		{"negative offset", "abc", "offset", []int32{0, -5, 3}},
		{"decreasing offsets", "abc", "offset", []int32{0, 3, 1}},
		{"invalid utf8", "\xff\xfeA", "utf8", []int32{0, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := putRaw(t, cc, testTable, hostileclient.StringSchema, hostileclient.Strings(tc.offsets, []byte(tc.data)))
			require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
			require.Contains(t, err.Error(), tc.want)
			require.Zero(t, tableSize(t, srv, testTable))
		})
	}
	require.NoError(t, putRaw(t, cc, testTable, hostileclient.StringSchema, hostileclient.Strings([]int32{0, 1, 3}, []byte("abc"))))
	got, err := ReadTable(srv.Dir(), testTable)
	require.NoError(t, err)
	require.Equal(t, []string{`{"s":"a"}`, `{"s":"bc"}`}, strs(got))
}

// packedInt32Record is a PROTO record whose field 1 (repeated int32) is
// packed with n one-byte elements.
func packedInt32Record(n int) []byte {
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	for range n {
		b = append(b, 1)
	}
	return b
}

var packedDescriptor = &descriptorpb.DescriptorProto{
	Name: proto.String("P"),
	Field: []*descriptorpb.FieldDescriptorProto{
		{Name: proto.String("v"), Number: proto.Int32(1), Type: descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum(),
			Label: descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum(), Options: &descriptorpb.FieldOptions{Packed: proto.Bool(true)}},
		{Name: proto.String("s"), Number: proto.Int32(2), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()},
	},
}

func protoStream(t *testing.T, cc *grpc.ClientConn, table string, recs ...[]byte) error {
	ctx, cancel := context.WithTimeout(headers("", table), 60*time.Second)
	defer cancel()
	st, err := zerobuspb.NewZerobusClient(cc).EphemeralStream(ctx)
	require.NoError(t, err)
	create := &zerobuspb.EphemeralStreamRequest{Payload: &zerobuspb.EphemeralStreamRequest_CreateStream{
		CreateStream: &zerobuspb.CreateIngestStreamRequest{TableName: proto.String(table),
			RecordType: zerobuspb.RecordType_PROTO.Enum(), DescriptorProto: marshal(t, packedDescriptor)}}}
	if err := st.Send(create); err != nil {
		return err
	}
	for i, r := range recs {
		_ = st.Send(&zerobuspb.EphemeralStreamRequest{Payload: &zerobuspb.EphemeralStreamRequest_IngestRecord{
			IngestRecord: &zerobuspb.IngestRecordRequest{OffsetId: proto.Int64(int64(i)),
				Record: &zerobuspb.IngestRecordRequest_ProtoEncodedRecord{ProtoEncodedRecord: r}}}})
	}
	_ = st.CloseSend()
	for {
		if _, err := st.Recv(); err != nil {
			if err.Error() == "EOF" {
				return nil
			}
			return err
		}
	}
}

// TestProtoExpansionBounded: 8 concurrent streams, each sending records of
// a 9 MiB packed repeated int32 (which decode to ~100× their size), are
// refused with InvalidArgument naming MaxDecodedRecordBytes before they are
// decoded; memory stays bounded; a JSON client and a small PROTO record
// are served meanwhile.
func TestProtoExpansionBounded(t *testing.T) {
	srv, cc, _ := startLoopback(t, Options{MaxMessageBytes: 16 << 20})
	rec := packedInt32Record(9 << 20)
	stop := make(chan struct{})
	good := goodJSONClient(t, cc, "main.default.good", stop)
	errs := make([]error, 8)
	alloc := allocated(func() {
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = protoStream(t, cc, testTable, rec, rec)
			}()
		}
		wg.Wait()
	})
	close(stop)
	n, gerr := good()
	t.Logf("%d streams of 2 × 9 MiB packed records: process allocated %d MiB; first stream: %v", len(errs), alloc>>20, errs[0])
	require.NoError(t, gerr)
	require.Positive(t, n)
	for _, err := range errs {
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
		require.Contains(t, err.Error(), "MaxDecodedRecordBytes")
	}
	// The records themselves cross the wire and gRPC's buffers: 8 streams
	// × 2 records × 9 MiB, on both the client and the server side.
	require.Less(t, alloc, uint64(1<<30))
	require.Zero(t, tableSize(t, srv, testTable))
	// A small record of the same shape is stored.
	require.NoError(t, protoStream(t, cc, testTable, packedInt32Record(1000)))
	got, err := ReadTable(srv.Dir(), testTable)
	require.NoError(t, err)
	require.Len(t, got, 1)
}

// TestInvalidUTF8Refused: a JSON record or a PROTO string field with
// invalid UTF-8 ends the stream with InvalidArgument and is not stored.
func TestInvalidUTF8Refused(t *testing.T) {
	srv, cc, _ := startLoopback(t, Options{})
	st, err := zerobuspb.NewZerobusClient(cc).EphemeralStream(headers("", testTable))
	require.NoError(t, err)
	require.NoError(t, st.Send(createReq(testTable, zerobuspb.RecordType_JSON.Enum())))
	require.NoError(t, st.Send(jsonRecord(0, "{\"a\":\"\xff\xfe\"}")))
	_, err = finish(t, st)
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	require.Contains(t, err.Error(), "invalid UTF-8")

	bad := protowire.AppendTag(nil, 2, protowire.BytesType)
	bad = protowire.AppendBytes(bad, []byte("ok\xffno"))
	err = protoStream(t, cc, testTable, bad)
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	require.Contains(t, err.Error(), "not valid UTF-8")
	require.Zero(t, tableSize(t, srv, testTable))
}

// TestStalledAckReaderEnded: a client (Flight or EphemeralStream) that
// keeps sending but never opens its HTTP/2 receive window has its stream
// ended after AckSendTimeout, once the server's write buffer for the
// stream is full (64 KiB of acks); its budget is given back; another
// client is served meanwhile; when it finally reads it finds
// DeadlineExceeded naming the limit.
func TestStalledAckReaderEnded(t *testing.T) {
	batch := hostileclient.Strings([]int32{0, 1}, []byte("x"))
	for _, tc := range []struct {
		name, method string
		first        proto.Message
		next         func(i int) proto.Message
	}{
		{"flight", "/arrow.flight.protocol.FlightService/DoPut",
			&flight.FlightData{DataHeader: hostileclient.Schema(hostileclient.StringSchema)},
			func(i int) proto.Message {
				return &flight.FlightData{DataHeader: batch.Header, DataBody: batch.Body, AppMetadata: []byte(fmt.Sprintf(`{"offset_id":%d}`, i))}
			}},
		{"ephemeral", zerobuspb.Zerobus_EphemeralStream_FullMethodName,
			createReq(testTable, zerobuspb.RecordType_JSON.Enum()),
			func(i int) proto.Message { return jsonRecord(int64(i), `{"x":1}`) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, cc, addr := startLoopback(t, Options{AckSendTimeout: 300 * time.Millisecond, SyncInterval: time.Millisecond})
			st, err := hostileclient.DialStalled(addr, tc.method, map[string]string{HeaderTableName: testTable})
			require.NoError(t, err)
			defer st.Close()
			require.NoError(t, st.Send(tc.first))
			stop := make(chan struct{})
			good := goodJSONClient(t, cc, "main.default.good", stop)
			var sent atomic.Int64
			senderDone := make(chan struct{})
			go func() {
				defer close(senderDone)
				for i := 0; ; i++ {
					if st.Send(tc.next(i)) != nil {
						return
					}
					sent.Store(int64(i + 1))
					time.Sleep(time.Millisecond) // about one ack per message
				}
			}()
			last, since := int64(-1), time.Now()
			testenv.WaitFor(t, 60*time.Second, "the stalled stream to end and its sends to stop for a second", func() bool {
				if n := sent.Load(); n != last {
					last, since = n, time.Now()
				}
				return last > 0 && srv.pending.Pending() == 0 && time.Since(since) > time.Second
			})
			require.Zero(t, st.Received())
			close(stop)
			n, gerr := good()
			require.NoError(t, gerr)
			require.Positive(t, n)

			require.NoError(t, st.OpenWindow())
			code, m, err := st.Status(5 * time.Second)
			require.NoError(t, err)
			st.Close()
			<-senderDone
			t.Logf("stalled client sent %d messages before the server ended its stream", sent.Load())
			require.Equal(t, codes.DeadlineExceeded, code, m)
			require.Contains(t, m, "AckSendTimeout")
		})
	}
}

// TestConnectionsCapped: connections over MaxConnections are closed when
// accepted; silent and idle ones are closed after MaxConnectionIdle; a
// client then connects.
func TestConnectionsCapped(t *testing.T) {
	srv, cc, addr := startLoopback(t, Options{MaxConnections: 4, MaxConnectionIdle: 500 * time.Millisecond})
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 40 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	closed := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				closed++
			}
		}
	}
	require.GreaterOrEqual(t, closed, 36)
	require.LessOrEqual(t, srv.conns.Active(), int64(4))
	testenv.WaitFor(t, 5*time.Second, "every connection to close", func() bool { return srv.conns.Active() == 0 })
	st, err := zerobuspb.NewZerobusClient(cc).EphemeralStream(headers("", testTable))
	require.NoError(t, err)
	require.NoError(t, st.Send(createReq(testTable, zerobuspb.RecordType_JSON.Enum())))
	require.NoError(t, st.Send(jsonRecord(0, `{"a":1}`)))
	_, err = finish(t, st)
	require.NoError(t, err)
	testenv.WaitFor(t, 5*time.Second, "every connection to close", func() bool { return srv.conns.Active() == 0 })
}

// TestLimitOptionsValidated: the limits' defaults and their validation,
// every error wrapping ErrInvalidOptions.
func TestLimitOptionsValidated(t *testing.T) {
	o := Options{Dir: "d"}
	require.NoError(t, o.validate())
	o.withDefaults()
	require.EqualValues(t, 512<<20, o.MaxStreamPendingBytes)
	require.EqualValues(t, 256<<20, o.MaxDecodedMessageBytes)
	require.EqualValues(t, 40<<20, o.MaxDecodedRecordBytes)
	require.Equal(t, DefaultAckSendTimeout, o.AckSendTimeout)
	require.Equal(t, DefaultMaxConnections, o.MaxConnections)
	require.Equal(t, DefaultMaxConnectionIdle, o.MaxConnectionIdle)
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{}, "Options.Dir"},
		{Options{Dir: "d", MaxStreamPendingBytes: 2 << 30}, "MaxStreamPendingBytes"},
		{Options{Dir: "d", MaxStreamPendingBytes: 1 << 10}, "MaxStreamPendingBytes"},
		{Options{Dir: "d", MaxDecodedMessageBytes: 1 << 40}, "MaxDecodedMessageBytes"},
		{Options{Dir: "d", MaxDecodedRecordBytes: 1 << 40}, "MaxDecodedRecordBytes"},
		{Options{Dir: "d", AckSendTimeout: -1}, "negative"},
		{Options{Dir: "d", MaxConnections: -1}, "negative"},
		{Options{Dir: "d", MaxConnectionIdle: -1}, "negative"},
	} {
		_, err := New(tc.o)
		require.ErrorIs(t, err, ErrInvalidOptions, "%+v", tc.o)
		require.ErrorContains(t, err, tc.want)
	}
}

// TestRenderedRowsBounded: a valid batch whose rows render to more JSON
// than MaxDecodedMessageBytes (control characters escape to 6 bytes) ends
// the stream with InvalidArgument; nothing is stored.
func TestRenderedRowsBounded(t *testing.T) {
	srv, cc, _ := startLoopback(t, Options{MaxDecodedMessageBytes: 1 << 20})
	data := make([]byte, 300<<10) // 300 KiB of \x01: ~1.8 MiB of JSON
	for i := range data {
		data[i] = 1
	}
	err := putRaw(t, cc, testTable, hostileclient.StringSchema, hostileclient.Strings([]int32{0, int32(len(data))}, data))
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	require.Contains(t, err.Error(), "render to more than MaxDecodedMessageBytes")
	require.Zero(t, tableSize(t, srv, testTable))
}

// TestOptionsEveryProblem: validate runs on the caller's values before any
// default and reports every problem at once, each naming its field and
// the value it got, all wrapped in ErrInvalidOptions.
func TestOptionsEveryProblem(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want []string
	}{
		{"every field", Options{
			Tables: []string{"ok.t", "bad name"}, SyncInterval: -1, RotateEvery: -2, RotateGrace: -3, AckDelay: -4,
			AckSendTimeout: -5, MaxConnectionIdle: -6, DropStreamAfter: -7, DropStreams: -8, MaxMessageBytes: -9,
			MaxStreamsPerPeer: -10, MaxPendingBytes: -11, MaxDecodedBufferSize: -12, MaxStreamPendingBytes: -13,
			MaxDecodedMessageBytes: -14, MaxDecodedRecordBytes: -15, MaxConnections: -16,
		}, []string{
			"Options.Dir is required", `Options.Tables[1]: invalid table name "bad name"`,
			"Options.SyncInterval -1ns", "Options.RotateEvery -2ns", "Options.RotateGrace -3ns", "Options.AckDelay -4ns",
			"Options.AckSendTimeout -5ns", "Options.MaxConnectionIdle -6ns", "Options.DropStreamAfter -7",
			"Options.DropStreams -8", "Options.MaxMessageBytes -9", "Options.MaxStreamsPerPeer -10",
			"Options.MaxPendingBytes -11", "Options.MaxDecodedBufferSize -12", "Options.MaxStreamPendingBytes -13",
			"Options.MaxDecodedMessageBytes -14", "Options.MaxDecodedRecordBytes -15", "Options.MaxConnections -16",
		}},
		{"relations", Options{
			MaxPendingBytes: 1 << 10, MaxStreamPendingBytes: 2 << 30, MaxDecodedMessageBytes: 4 << 30, MaxDecodedRecordBytes: 8 << 30,
		}, []string{
			"Options.Dir is required",
			"Options.MaxPendingBytes 1024 is below Options.MaxMessageBytes 0 (default 10485760)",
			"Options.MaxStreamPendingBytes 2147483648", "Options.MaxDecodedMessageBytes 4294967296",
			"Options.MaxDecodedRecordBytes 8589934592",
		}},
		{"a defaulted limit is named as such", Options{Dir: "d", MaxMessageBytes: 2 << 30}, []string{
			"Options.MaxPendingBytes 0 (default 1073741824) is below Options.MaxMessageBytes 2147483648",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.o)
			require.ErrorIs(t, err, ErrInvalidOptions)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}
