package flight_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/lanes"
)

// The sink satisfies the lane's transport contract without importing lanes.
var _ lanes.Transport = (*flight.Sink)(nil)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func dial(t *testing.T, opts flight.Options) *flight.Sink {
	t.Helper()
	s, err := flight.Dial(flighttest.Ctx(t, 10*time.Second), opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSinkDeliversEverything(t *testing.T) {
	for _, comp := range []flight.Compression{flight.CompressionNone, flight.CompressionLZ4, flight.CompressionZstd} {
		t.Run(string(comp), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem})
			path := []string{"lane", string(comp)}
			s := dial(t, flight.Options{Endpoint: addr, Path: path, Compression: comp, Allocator: mem})
			ctx := flighttest.Ctx(t, 20*time.Second)

			var want []string
			for i := range 40 {
				b := flighttest.MakeBatch(mem, int32(i%2), uint64(i*100), 30, 100)
				want = append(want, flighttest.Rows(b.Rec)...)
				require.NoError(t, s.Send(ctx, uint64(1000+3*i), b))
				b.Release() // Send does not keep the batch
			}
			require.NoError(t, s.WaitDurable(ctx, 1000+3*39))
			off, recs, ok := s.Acked()
			require.True(t, ok)
			require.Equal(t, uint64(1000+3*39), off)
			require.Equal(t, uint64(40*30), recs)
			require.NoError(t, s.Close())
			require.ErrorIs(t, s.WaitDurable(ctx, 5000), flight.ErrClosed)
			require.NoError(t, s.WaitDurable(ctx, 1000), "acknowledged offsets stay durable after Close")

			got, err := flight.ReadAll(ctx, flighttest.Client(t, addr), path, mem)
			require.NoError(t, err)
			defer flight.ReleaseAll(got)
			var recs2 []arrow.RecordBatch
			for i, g := range got {
				require.Equal(t, uint64(1000+3*i), g.OffsetID)
				require.Equal(t, []batch.OffsetSpan{{Partition: flighttest.Partition(int32(i % 2)), First: uint64(i * 100), Last: uint64(i*100 + 29)}}, g.Spans)
				recs2 = append(recs2, g.Rec)
			}
			require.Equal(t, want, flighttest.Rows(recs2...))
		})
	}
}

// TestSinkSplitsOversizedBatches: a batch far larger than the message limit
// on both sides is split by rows, stored as parts, acknowledged once.
func TestSinkSplitsOversizedBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const limit = 64 << 10
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem, MaxMessageSize: limit})
	s := dial(t, flight.Options{Endpoint: addr, Path: []string{"big"}, MaxMessageSize: limit, Allocator: mem})
	ctx := flighttest.Ctx(t, 20*time.Second)

	small := flighttest.MakeBatch(mem, 0, 0, 10, 10)
	big := flighttest.MakeBatch(mem, 0, 10, 1000, 1000) // ~1 MB
	// A slice of a larger batch: its buffers are bigger than its rows.
	sliced := &batch.Batch{Rec: big.Rec.NewSlice(100, 140), Spans: []batch.OffsetSpan{{First: 110, Last: 149}}}
	defer func() { small.Release(); big.Release(); sliced.Release() }()
	require.NoError(t, s.Send(ctx, 1, small))
	require.NoError(t, s.Send(ctx, 2, big))
	require.NoError(t, s.Send(ctx, 3, sliced))
	require.NoError(t, s.WaitDurable(ctx, 3))
	_, recs, _ := s.Acked()
	require.Equal(t, uint64(10+1000+40), recs)

	got, err := flight.ReadAll(ctx, flighttest.Client(t, addr, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(limit))), []string{"big"}, mem)
	require.NoError(t, err)
	defer flight.ReleaseAll(got)
	var parts []arrow.RecordBatch
	for _, g := range got {
		if g.OffsetID == 2 {
			require.Greater(t, g.Parts, 1)
			parts = append(parts, g.Rec)
		}
	}
	require.GreaterOrEqual(t, len(parts), 16, "1 MB in 64 KiB messages")
	require.Equal(t, flighttest.Rows(big.Rec), flighttest.Rows(parts...))
	require.Equal(t, uint64(3), got[len(got)-1].OffsetID)
	require.Equal(t, flighttest.Rows(sliced.Rec), flighttest.Rows(got[len(got)-1].Rec))

	// A single row above the limit cannot be split.
	huge := flighttest.MakeBatch(mem, 0, 5000, 1, 100<<10)
	defer huge.Release()
	err = s.Send(ctx, 4, huge)
	require.ErrorIs(t, err, flight.ErrRowTooLarge)
	require.True(t, lanes.IsPermanent(err))
}

// silentServer accepts DoPut and reads everything but never acknowledges.
type silentServer struct {
	arrowflight.BaseFlightServer
}

func (*silentServer) DoPut(s arrowflight.FlightService_DoPutServer) error {
	for {
		if _, err := s.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func serveGRPC(t *testing.T, svc arrowflight.FlightServer, opts ...grpc.ServerOption) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	g := grpc.NewServer(opts...)
	if svc != nil {
		arrowflight.RegisterFlightServiceServer(g, svc)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = g.Serve(lis) }()
	t.Cleanup(func() { g.Stop(); <-done })
	return lis.Addr().String()
}

func TestAckTimeoutDetectsSilentServer(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	addr := serveGRPC(t, &silentServer{})
	// idle is open, with nothing outstanding, from before s sends until
	// after s's watchdog fired: longer than its AckTimeout, yet it must
	// not time out.
	idle := dial(t, flight.Options{Endpoint: addr, Path: []string{"idle"}, AckTimeout: 200 * time.Millisecond, Allocator: mem})
	s := dial(t, flight.Options{Endpoint: addr, Path: []string{"x"}, AckTimeout: 200 * time.Millisecond, Allocator: mem})
	ctx := flighttest.Ctx(t, 10*time.Second)
	b := flighttest.MakeBatch(mem, 0, 0, 5, 5)
	defer b.Release()

	start := time.Now()
	require.NoError(t, s.Send(ctx, 1, b))
	err := s.WaitDurable(ctx, 1)
	require.ErrorIs(t, err, flight.ErrAckTimeout)
	require.True(t, lanes.IsPermanent(err))
	// Not before the timeout, and in bounded time after it (a loaded
	// machine may schedule the watchdog late; a window of ±150 ms was
	// more than it promised).
	elapsed := time.Since(start)
	require.GreaterOrEqual(t, elapsed, 190*time.Millisecond)
	require.Less(t, elapsed, 2*time.Second)
	require.ErrorIs(t, s.Send(ctx, 2, b), flight.ErrAckTimeout, "the stream is dead for Send too")
	require.NoError(t, idle.Err(), "nothing outstanding: no timeout however long the sink is idle")
}

// TestAckTimeoutToleratesSlowProgress: a server whose every sync takes 100 ms
// never leaves the watermark still for the 500 ms timeout, so a long run of
// batches completes although it takes more than two timeouts' worth of time.
func TestAckTimeoutToleratesSlowProgress(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// In memory: the acks' pace is AckDelay's, not the shared disk's,
	// whose syncs can take longer than the margin between the two
	// (CI failed on a 250 ms timeout with an 80 ms delay). The margin
	// (timeout - delay) is 400 ms; the whole run lasts more than twice
	// the timeout, so a timeout counted from the first unacknowledged
	// send rather than from the last acknowledgement would fire.
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: "/r", FS: vfs.NewMem(), Allocator: mem, AckDelay: 100 * time.Millisecond})
	const timeout = 500 * time.Millisecond
	s := dial(t, flight.Options{Endpoint: addr, Path: []string{"slow"}, AckTimeout: timeout, Allocator: mem})
	ctx := flighttest.Ctx(t, 20*time.Second)
	// The sender keeps pace with the acks, one batch ahead of the last
	// acknowledged one, so offsets stay outstanding for the whole run.
	start := time.Now()
	var i uint64
	for ; i < 12 || time.Since(start) <= 2*timeout; i++ {
		b := flighttest.MakeBatch(mem, 0, i, 1, 5)
		require.NoError(t, s.Send(ctx, i, b))
		b.Release()
		if i > 0 {
			require.NoError(t, s.WaitDurable(ctx, i-1))
		}
	}
	require.NoError(t, s.WaitDurable(ctx, i-1))
	require.Greater(t, time.Since(start), 2*timeout)
}

func TestStreamDeathIsPermanent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem})
	s := dial(t, flight.Options{Endpoint: addr, Path: []string{"die"}, Allocator: mem})
	ctx := flighttest.Ctx(t, 10*time.Second)
	b := flighttest.MakeBatch(mem, 0, 0, 5, 5)
	defer b.Release()
	require.NoError(t, s.Send(ctx, 1, b))
	require.NoError(t, s.WaitDurable(ctx, 1))
	require.NoError(t, srv.Stop())

	err := s.WaitDurable(ctx, 2)
	require.True(t, lanes.IsPermanent(err), "%v", err)
	var fe *flight.Error
	require.ErrorAs(t, err, &fe)
	require.Contains(t, []codes.Code{codes.Unavailable, codes.Canceled, codes.OK}, fe.Code, "%v", err)
	require.True(t, lanes.IsPermanent(s.Send(ctx, 2, b)))

	// Dialing a dead endpoint is transient: nothing was created.
	_, err = flight.Dial(flighttest.Ctx(t, 5*time.Second), flight.Options{Endpoint: addr, Path: []string{"die"}})
	require.Error(t, err)
	require.False(t, lanes.IsPermanent(err), "%v", err)
}

func TestWrongTokenIsPermanent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem, Token: "right"})
	ctx := flighttest.Ctx(t, 10*time.Second)
	b := flighttest.MakeBatch(mem, 0, 0, 5, 5)
	defer b.Release()

	s := dial(t, flight.Options{Endpoint: addr, Path: []string{"t"}, Token: "wrong", Allocator: mem})
	_ = s.Send(ctx, 1, b) // may or may not see the rejection yet
	err := s.WaitDurable(ctx, 1)
	var fe *flight.Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, codes.Unauthenticated, fe.Code)
	require.True(t, fe.Permanent())

	ok := dial(t, flight.Options{Endpoint: addr, Path: []string{"t"}, Token: "right", Allocator: mem})
	require.NoError(t, ok.Send(ctx, 1, b))
	require.NoError(t, ok.WaitDurable(ctx, 1))
}

func TestSendContract(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem})
	ctx := flighttest.Ctx(t, 10*time.Second)
	b := flighttest.MakeBatch(mem, 0, 0, 5, 5)
	defer b.Release()

	t.Run("canceled wait is not permanent", func(t *testing.T) {
		s := dial(t, flight.Options{Endpoint: addr, Path: []string{"c1"}, Allocator: mem})
		require.NoError(t, s.Send(ctx, 1, b))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := s.WaitDurable(cctx, 99)
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, lanes.IsPermanent(err))
		require.NoError(t, s.WaitDurable(ctx, 1), "the stream is intact")
		require.ErrorIs(t, s.Send(cctx, 2, b), context.Canceled)
		require.NoError(t, s.Send(ctx, 2, b))
	})
	t.Run("offsets must increase", func(t *testing.T) {
		s := dial(t, flight.Options{Endpoint: addr, Path: []string{"c2"}, Allocator: mem})
		require.NoError(t, s.Send(ctx, 5, b))
		err := s.Send(ctx, 5, b)
		require.ErrorIs(t, err, flight.ErrOffsetOrder)
		require.True(t, lanes.IsPermanent(err))
	})
	t.Run("close unblocks waiters", func(t *testing.T) {
		s := dial(t, flight.Options{Endpoint: addr, Path: []string{"c4"}, Allocator: mem})
		errc := make(chan error, 1)
		wctx := &doneCalled{Context: ctx, called: make(chan struct{})}
		go func() { errc <- s.WaitDurable(wctx, 1) }()
		<-wctx.called // the waiter is in its wait
		require.NoError(t, s.Close())
		require.ErrorIs(t, <-errc, flight.ErrClosed)
		require.NoError(t, s.Close(), "Close is idempotent")
		err := s.Send(ctx, 1, b)
		require.ErrorIs(t, err, flight.ErrClosed)
		require.True(t, lanes.IsPermanent(err))
	})
	t.Run("bad options", func(t *testing.T) {
		for _, tc := range []struct {
			o     flight.Options
			field string
		}{
			{flight.Options{Path: []string{"x"}}, "Options.Endpoint"},
			{flight.Options{Endpoint: addr}, "Options.Path"},
			{flight.Options{Endpoint: addr, Path: []string{""}}, "Options.Path[0]"},
			{flight.Options{Endpoint: addr, Path: []string{"x"}, Compression: "snappy"}, "Options.Compression"},
			{flight.Options{Endpoint: addr, Path: []string{"x"}, MaxMessageSize: 10}, "Options.MaxMessageSize"},
			{flight.Options{Endpoint: addr, Path: []string{"x"}, CloseTimeout: -1}, "Options.CloseTimeout"},
			{flight.Options{Endpoint: addr, Path: []string{"x"}, TLS: &flight.TLSOptions{CertFile: "a"}}, "Options.TLS.CertFile"},
			{flight.Options{Endpoint: addr, Path: []string{"x"}, TLS: &flight.TLSOptions{CAFile: "/nonexistent"}}, "Options.TLS.CAFile"},
		} {
			_, err := flight.Dial(ctx, tc.o)
			require.ErrorIs(t, err, flight.ErrInvalidOptions, "%+v", tc.o)
			require.ErrorContains(t, err, tc.field)
		}
		// Every problem at once, each with its field.
		_, err := flight.Dial(ctx, flight.Options{MaxMessageSize: 10})
		require.ErrorIs(t, err, flight.ErrInvalidOptions)
		for _, f := range []string{"Options.Endpoint", "Options.Path", "Options.MaxMessageSize"} {
			require.ErrorContains(t, err, f)
		}
	})
}

// TestOptionsEveryProblem: Dial validates the caller's Options before any
// default and reports every problem at once, each naming its field and the
// value it got (TLS files included), all wrapped in ErrInvalidOptions.
func TestOptionsEveryProblem(t *testing.T) {
	ctx := flighttest.Ctx(t, 10*time.Second)
	_, err := flight.Dial(ctx, flight.Options{
		Path: []string{"a", ""}, Compression: "snappy", MaxMessageSize: 10, CloseTimeout: -time.Second,
		TLS: &flight.TLSOptions{CertFile: "a.pem"},
	})
	require.ErrorIs(t, err, flight.ErrInvalidOptions)
	for _, w := range []string{
		"Options.Endpoint is required", "Options.Path[1] is empty", `Options.Compression: flight: compression "snappy"`,
		"Options.MaxMessageSize 10", "Options.CloseTimeout -1s", "Options.TLS.CertFile",
	} {
		require.ErrorContains(t, err, w)
	}
}

// TestNegativeAckTimeoutDisables: a negative AckTimeout is accepted and
// means no lack-of-ack deadline: a silent server never fails the stream.
func TestNegativeAckTimeoutDisables(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	addr := serveGRPC(t, &silentServer{})
	s := dial(t, flight.Options{Endpoint: addr, Path: []string{"x"}, AckTimeout: flight.NoAckTimeout, Allocator: mem})
	b := flighttest.MakeBatch(mem, 0, 0, 5, 5)
	defer b.Release()
	require.NoError(t, s.Send(flighttest.Ctx(t, 10*time.Second), 1, b))
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	err := s.WaitDurable(ctx, 1)
	require.ErrorIs(t, err, context.DeadlineExceeded, "only the caller's context ends the wait")
	require.NoError(t, s.Err())
}

// doneCalled is a context that closes called on the first call of Done:
// a waiter asks for Done once it has nothing left to do but block.
type doneCalled struct {
	context.Context
	once   sync.Once
	called chan struct{}
}

func (c *doneCalled) Done() <-chan struct{} {
	c.once.Do(func() { close(c.called) })
	return c.Context.Done()
}
