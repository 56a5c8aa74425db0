package flight_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/lanes"
)

// rawCodec keeps every received message's bytes as they came off the wire
// (a FlightData is decoded from them by the test).
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return encoding.GetCodecV2("proto").Marshal(v)
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*[]byte); ok {
		*r = data.Materialize()
		return nil
	}
	return encoding.GetCodecV2("proto").Unmarshal(data, v)
}

func (rawCodec) Name() string { return "proto" }

// wireServer records the raw bytes of every DoPut message and acknowledges
// each batch as durable.
type wireServer struct {
	mu  sync.Mutex
	raw [][]byte
}

func (w *wireServer) handle(_ any, ss grpc.ServerStream) error {
	for {
		var b []byte
		if err := ss.RecvMsg(&b); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		w.mu.Lock()
		w.raw = append(w.raw, b)
		n := len(w.raw)
		w.mu.Unlock()
		if n > 1 {
			var fd arrowflight.FlightData
			if err := proto.Unmarshal(b, &fd); err != nil {
				return err
			}
			m, err := flightwire.ParseBatchMeta(fd.AppMetadata)
			if err != nil {
				return err
			}
			if err := ss.SendMsg(&arrowflight.PutResult{AppMetadata: flightwire.AppendAck(nil, m.OffsetID, 1)}); err != nil {
				return err
			}
		}
	}
}

// TestSinkWireBytesAreFlightWriterBytes: what the sink puts on the wire is,
// message for message and byte for byte, what arrow-go's own Flight writer
// and the standard proto codec produce for the same batches (plain, sliced,
// compressed), and arrow-go's Flight reader decodes it to the same rows.
// The batches' memory comes back to zero once the sink is closed.
func TestSinkWireBytesAreFlightWriterBytes(t *testing.T) {
	for _, comp := range []flight.Compression{flight.CompressionNone, flight.CompressionZstd} {
		t.Run(string(comp), func(t *testing.T) {
			alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer alloc.AssertSize(t, 0)
			ws := &wireServer{}
			addr := serveGRPC(t, nil, grpc.UnknownServiceHandler(ws.handle), grpc.ForceServerCodecV2(rawCodec{}))
			ctx := flighttest.Ctx(t, 20*time.Second)
			s, err := flight.Dial(ctx, flight.Options{Endpoint: addr, Path: []string{"wire"}, Allocator: alloc, Compression: comp})
			require.NoError(t, err)

			big := flighttest.MakeBatch(alloc, 1, 100, 2000, 300) // ~600 KB: many HTTP/2 frames
			small := flighttest.MakeBatch(alloc, 2, 0, 3, 10)
			defer big.Release()
			defer small.Release()
			sliced := &batch.Batch{Rec: big.Rec.NewSlice(501, 1700)} // non-zero offsets
			defer sliced.Release()
			recs := []arrow.RecordBatch{big.Rec, small.Rec, sliced.Rec}
			metas := [][]byte{}
			for i, b := range []*batch.Batch{big, small, sliced} {
				require.NoError(t, s.Send(ctx, uint64(i+1), b))
			}
			require.NoError(t, s.WaitDurable(ctx, 3))
			require.NoError(t, s.Close())

			// The reference: arrow-go's writer over the same batches.
			var want [][]byte
			w := arrowflight.NewRecordWriter(captureSend(func(fd *arrowflight.FlightData) {
				b, err := proto.Marshal(fd)
				require.NoError(t, err)
				want = append(want, b)
			}), append([]ipc.Option{ipc.WithSchema(flighttest.Schema), ipc.WithAllocator(alloc)}, compressionOpts(comp)...)...)
			w.SetFlightDescriptor(&arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"wire"}})
			ws.mu.Lock()
			got := ws.raw
			ws.mu.Unlock()
			require.Len(t, got, 4, "schema and three batches")
			for i, r := range recs {
				var fd arrowflight.FlightData
				require.NoError(t, proto.Unmarshal(got[i+1], &fd))
				metas = append(metas, fd.AppMetadata)
				require.NoError(t, w.WriteWithAppMetadata(r, fd.AppMetadata))
			}
			require.NoError(t, w.Close())
			// arrow-go puts the first batch's app_metadata on its schema
			// message; the wire encoding does not (the sink strips it).
			var schema arrowflight.FlightData
			require.NoError(t, proto.Unmarshal(want[0], &schema))
			schema.AppMetadata = nil
			want0, err := proto.Marshal(&schema)
			require.NoError(t, err)
			require.True(t, bytes.Equal(want0, got[0]), "schema message differs")
			for i := 1; i < 4; i++ {
				require.True(t, bytes.Equal(want[i], got[i]), "batch message %d differs from arrow-go's Flight writer (%d vs %d bytes)", i, len(got[i]), len(want[i]))
			}

			// And arrow-go's Flight reader reads them.
			rd, err := arrowflight.NewRecordReader(&replay{msgs: got}, ipc.WithAllocator(alloc))
			require.NoError(t, err)
			defer rd.Release()
			for i := 0; rd.Next(); i++ {
				require.Equal(t, flighttest.Rows(recs[i]), flighttest.Rows(rd.RecordBatch()))
				require.Equal(t, metas[i], rd.LatestAppMetadata())
			}
			require.NoError(t, rd.Err())
		})
	}
}

func compressionOpts(c flight.Compression) []ipc.Option {
	switch c {
	case flight.CompressionZstd:
		return []ipc.Option{ipc.WithZstd()}
	case flight.CompressionLZ4:
		return []ipc.Option{ipc.WithLZ4()}
	}
	return nil
}

type captureSend func(*arrowflight.FlightData)

func (c captureSend) Send(fd *arrowflight.FlightData) error { c(fd); return nil }

// replay feeds recorded FlightData bytes to arrow-go's Flight reader.
type replay struct{ msgs [][]byte }

func (r *replay) Recv() (*arrowflight.FlightData, error) {
	if len(r.msgs) == 0 {
		return nil, io.EOF
	}
	var fd arrowflight.FlightData
	err := proto.Unmarshal(r.msgs[0], &fd)
	r.msgs = r.msgs[1:]
	return &fd, err
}

// stuckServer accepts DoPut and never reads: the client's writes block on
// HTTP/2 flow control once the windows are full.
type stuckServer struct {
	arrowflight.BaseFlightServer
}

func (*stuckServer) DoPut(s arrowflight.FlightService_DoPutServer) error {
	<-s.Context().Done()
	return nil
}

// TestSendContextEndsBlockedWrite: a Send blocked on flow control returns
// a permanent error soon after its context ends, and the Sink is dead; a
// context that ended before Send leaves the Sink intact. The context's
// watch is registered once per context, not per Send, so this is what holds
// it.
func TestSendContextEndsBlockedWrite(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	addr := serveGRPC(t, &stuckServer{})
	s, err := flight.Dial(flighttest.Ctx(t, 10*time.Second), flight.Options{Endpoint: addr, Path: []string{"x"}, Allocator: alloc, AckTimeout: flight.NoAckTimeout})
	require.NoError(t, err)
	defer s.Close()
	b := flighttest.MakeBatch(alloc, 0, 0, 2000, 1000) // 2 MB: beyond every window
	defer b.Release()

	done, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Send(done, 1, b), context.Canceled)
	require.NoError(t, s.Err(), "nothing was written: the sink is intact")

	ctx := flighttest.Ctx(t, 10*time.Second)
	require.NoError(t, s.Send(ctx, 1, b), "the first 2 MB fit gRPC's buffers")
	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelShort()
	start := time.Now()
	var sendErr error
	for i := uint64(2); i < 100 && sendErr == nil; i++ {
		sendErr = s.Send(short, i, b)
	}
	require.Error(t, sendErr)
	require.True(t, lanes.IsPermanent(sendErr), "%v", sendErr)
	require.ErrorIs(t, sendErr, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 5*time.Second)
	require.Error(t, s.Err(), "the sink is dead")
}
