package flight_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/lanes"
)

// receiptServer is a generic arrow-go Flight server: it answers every
// FlightData it receives with a PutResult of its own making (empty by
// default), the way a server that acknowledges receipt, not durability,
// does.
type receiptServer struct {
	arrowflight.BaseFlightServer
	meta    []byte
	streams atomic.Int64
}

func (r *receiptServer) DoPut(stream arrowflight.FlightService_DoPutServer) error {
	r.streams.Add(1)
	for {
		fd, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(fd.DataBody) == 0 {
			continue // the schema message
		}
		if err := stream.Send(&arrowflight.PutResult{AppMetadata: r.meta}); err != nil {
			return err
		}
	}
}

func startReceiptServer(t *testing.T, meta []byte) (*receiptServer, string) {
	t.Helper()
	rs := &receiptServer{meta: meta}
	g := grpc.NewServer()
	arrowflight.RegisterFlightServiceServer(g, rs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return rs, lis.Addr().String()
}

// TestForeignAckIsOneClearPermanentError: a Flight server that answers
// without the ack encoding (empty app_metadata, or JSON of its own) ends the
// stream with one permanent ErrBadAck that names what the server must send
// and where it is documented, logged once; it is not reported as the
// server ending the stream, and WaitDurable returns it instead of waiting.
func TestForeignAckIsOneClearPermanentError(t *testing.T) {
	for _, tc := range []struct{ name, meta string }{
		{"empty", ""},
		{"foreign JSON", `{"status":"ok"}`},
		{"not JSON", "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rs, addr := startReceiptServer(t, []byte(tc.meta))
			var logs bytes.Buffer
			ctx := flighttest.Ctx(t, 10*time.Second)
			s := dial(t, flight.Options{Endpoint: addr, Path: []string{"x"}, Allocator: mem,
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			b := flighttest.MakeBatch(mem, 0, 0, 5, 5)
			defer b.Release()
			require.NoError(t, s.Send(ctx, 1, b))
			err := s.WaitDurable(ctx, 1)
			require.ErrorIs(t, err, flight.ErrBadAck)
			require.True(t, lanes.IsPermanent(err))
			require.NotErrorIs(t, err, flight.ErrStreamEnded)
			for _, want := range []string{`{"ack_up_to_offset":N,"ack_up_to_records":R}`, "flight/doc.go", "does not speak the thalweg ack encoding"} {
				require.ErrorContains(t, err, want)
			}
			if tc.meta == "" {
				require.ErrorContains(t, err, "app_metadata is empty")
			}
			require.ErrorIs(t, s.Send(ctx, 2, b), flight.ErrBadAck, "later Sends return the same error")
			require.NoError(t, s.Close())
			// At most once, at whatever level (the lane reports it too).
			require.LessOrEqual(t, strings.Count(logs.String(), "does not speak the thalweg ack encoding"), 1, "logged more than once:\n%s", logs.String())
			require.EqualValues(t, 1, rs.streams.Load())
		})
	}
}
