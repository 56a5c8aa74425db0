package receiver_test

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/hostileclient"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// goodClient streams well-formed batches to path on c, one short stream
// after another, until stop is closed. wait returns, once it stopped, how
// many streams were fully acknowledged and the first failure; completed
// counts them meanwhile.
func goodClient(t *testing.T, c flight.Client, path []string, stop <-chan struct{}) (wait func() (int, error), completed func() int64) {
	t.Helper()
	mem := memory.NewGoAllocator()
	b := flighttest.MakeBatch(mem, 0, 0, 20, 32)
	good := encodeBatch(t, b.Rec)
	b.Release()
	var (
		wg   sync.WaitGroup
		ok   atomic.Int64
		ferr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		off := uint64(0)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			s, err := c.DoPut(ctx)
			if err == nil {
				_ = s.Send(&flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: path},
					DataHeader: encodeSchema(flighttest.Schema)})
				for range 5 {
					off++
					_ = s.Send(&flight.FlightData{DataHeader: good.hdr, DataBody: good.body, AppMetadata: meta(off)})
				}
				p := &putStream{t: t, stream: s}
				var acks []flightwire.Ack
				acks, err = p.finish()
				if err == nil && (len(acks) == 0 || acks[len(acks)-1].Offset != off) {
					err = fmt.Errorf("stream ended without acknowledging offset %d: %v", off, acks)
				}
			}
			cancel()
			if err != nil {
				ferr = err
				return
			}
			ok.Add(1)
		}
	}()
	return func() (int, error) { wg.Wait(); return int(ok.Load()), ferr }, ok.Load
}

// heapDelta runs f and returns how many bytes the process allocated
// meanwhile (runtime.MemStats.TotalAlloc: every allocation, freed or not).
func heapDelta(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// sendRaw opens a DoPut on path with schema sc and sends msg; it returns
// the stream's final status.
func sendRaw(t *testing.T, ctx context.Context, c flight.Client, path []string, sc *arrow.Schema, msg hostileclient.Message) error {
	t.Helper()
	p := openPut(t, ctx, c, "").schema(path, sc)
	p.batch(encoded{msg.Header, msg.Body}, meta(1))
	_, err := p.finish()
	return err
}

// TestMessageDecodedSizeBounded: 24 int64 columns, each a zstd buffer
// declaring (and really decompressing to) 256 MiB of zeros — under the
// per-buffer limit, 6 GiB in total, ~100 KB on the wire — is refused with
// InvalidArgument naming MaxDecodedMessageBytes before anything is
// decompressed, while a well-behaved client keeps streaming.
func TestMessageDecodedSizeBounded(t *testing.T) {
	srv, c := newServer(t, receiver.Options{})
	ctx := flighttest.Ctx(t, 60*time.Second)
	bomb := hostileclient.ZstdBomb(24, 256<<20)
	t.Logf("bomb message: %d header + %d body bytes, declares 24 × 256 MiB", len(bomb.Header), len(bomb.Body))

	stop := make(chan struct{})
	good, completed := goodClient(t, c, []string{"good"}, stop)
	var err error
	alloc := heapDelta(func() {
		for range 4 {
			if err = sendRaw(t, ctx, c, []string{"bomb"}, hostileclient.Int64Schema(24), bomb); err == nil {
				break
			}
		}
	})
	after := completed()
	testenv.WaitFor(t, 10*time.Second, "the good client to complete 3 streams after the bombs", func() bool { return completed() >= after+3 })
	close(stop)
	n, gerr := good()
	t.Logf("bombs: process allocated %d MiB meanwhile; the good client completed %d streams; bomb stream: %v", alloc>>20, n, err)
	require.NoError(t, gerr, "the well-behaved client failed")
	require.Positive(t, n)
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	require.Contains(t, err.Error(), "MaxDecodedMessageBytes")
	require.Less(t, alloc, uint64(256<<20), "decoding the bomb allocated")
	testenv.WaitFor(t, 5*time.Second, "the pending bytes to be given back", func() bool { return srv.PendingBytes() == 0 })
}

// TestMessageRowsBounded: one Null-typed column declaring 300 M rows in a
// ~200-byte message is refused with InvalidArgument (rows are charged
// against MaxDecodedMessageBytes), not stored and acknowledged.
func TestMessageRowsBounded(t *testing.T) {
	srv, c := newServer(t, receiver.Options{})
	ctx := flighttest.Ctx(t, 30*time.Second)
	msg := hostileclient.NullRows(300_000_000)
	t.Logf("row bomb: %d header + %d body bytes", len(msg.Header), len(msg.Body))
	err := sendRaw(t, ctx, c, []string{"rows"}, hostileclient.NullSchema, msg)
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	require.Contains(t, err.Error(), "300000000 rows")
	info, ierr := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"rows"}})
	require.NoError(t, ierr)
	require.Zero(t, info.TotalRecords, "nothing may be stored")
	require.Zero(t, srv.PendingBytes())
}

// TestInvalidArrowDataRefused: batches with negative, decreasing or
// out-of-range string offsets, or invalid UTF-8 in a utf8 column, end the
// stream with InvalidArgument and are neither stored nor acknowledged.
func TestInvalidArrowDataRefused(t *testing.T) {
	_, c := newServer(t, receiver.Options{})
	ctx := flighttest.Ctx(t, 30*time.Second)
	for i, tc := range []struct {
		name    string
		offsets []int32
		data    string
		want    string
	}{
		{"negative offset", []int32{0, -5, 3}, "abc", "offset"},
		{"decreasing offsets", []int32{0, 3, 1}, "abc", "offset"},
		{"offset past the data", []int32{0, 2, 300}, "abc", "offset"},
		{"invalid utf8", []int32{0, 2, 3}, "\xff\xfeA", "not valid utf8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := []string{"invalid", fmt.Sprint(i)}
			err := sendRaw(t, ctx, c, path, hostileclient.StringSchema, hostileclient.Strings(tc.offsets, []byte(tc.data)))
			require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
			require.Contains(t, err.Error(), tc.want)
			info, ierr := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: path})
			require.NoError(t, ierr)
			require.Zero(t, info.TotalRecords, "nothing may be stored")
		})
	}
	// The same path accepts valid strings.
	err := sendRaw(t, ctx, c, []string{"invalid", "0"}, hostileclient.StringSchema, hostileclient.Strings([]int32{0, 1, 3}, []byte("abc")))
	require.NoError(t, err)
}

// TestStalledAckReaderEnded: a client that keeps sending but never opens
// its HTTP/2 receive window fills the server's per-stream write buffer
// with acks (64 KiB, ~1300 acks), after which an ack's Send blocks; after
// AckSendTimeout the stream ends, its pending bytes are given back and
// another client is served meanwhile. When the client finally reads, it
// finds DeadlineExceeded naming the limit.
func TestStalledAckReaderEnded(t *testing.T) {
	// An in-memory FS syncs at once: one ack per batch.
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: "/r", FS: vfs.NewMem(), AckSendTimeout: 300 * time.Millisecond})
	c := flighttest.Client(t, addr)
	mem := memory.NewGoAllocator()
	b := flighttest.MakeBatch(mem, 0, 0, 1, 1)
	enc := encodeBatch(t, b.Rec)
	b.Release()

	st, err := hostileclient.DialStalled(addr, "/arrow.flight.protocol.FlightService/DoPut", nil)
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.Send(&flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"stalled"}},
		DataHeader: encodeSchema(flighttest.Schema)}))
	stop := make(chan struct{})
	good, _ := goodClient(t, c, []string{"good"}, stop)
	// Send until the server ends the stream (its receive side stops
	// granting window, or the connection's reads fail).
	var sent atomic.Int64
	senderDone := make(chan struct{})
	go func() {
		defer close(senderDone)
		for i := 1; ; i++ {
			if st.Send(&flight.FlightData{DataHeader: enc.hdr, DataBody: enc.body, AppMetadata: meta(uint64(i))}) != nil {
				return
			}
			sent.Store(int64(i))
			time.Sleep(500 * time.Microsecond) // the stalled client's send rate: about one sync, so one ack, per batch
		}
	}()
	// The handler returns and the stream's budget is released although its
	// client has read nothing; the server stops reading the stream, so the
	// client's sends stop too.
	last, since := int64(-1), time.Now()
	testenv.WaitFor(t, 30*time.Second, "the stalled stream to end and its sends to stop for a second", func() bool {
		if n := sent.Load(); n != last {
			last, since = n, time.Now()
		}
		return last > 0 && srv.PendingBytes() == 0 && time.Since(since) > time.Second
	})
	require.Zero(t, st.Received(), "the window is closed: nothing can have been delivered")
	close(stop)
	n, gerr := good()
	require.NoError(t, gerr)
	require.Positive(t, n)

	require.NoError(t, st.OpenWindow())
	code, msg, err := st.Status(5 * time.Second)
	require.NoError(t, err)
	st.Close()
	<-senderDone
	t.Logf("stalled client sent %d batches before the server ended its stream", sent.Load())
	require.Equal(t, codes.DeadlineExceeded, code, msg)
	require.Contains(t, msg, "AckSendTimeout")
}

// TestConnectionsCapped: connections over MaxConnections are closed when
// accepted, connections that never complete the handshake or stay idle
// are closed after MaxConnectionIdle, and a client can then connect.
func TestConnectionsCapped(t *testing.T) {
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), MaxConnections: 4, MaxConnectionIdle: 500 * time.Millisecond})
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
	// Over-limit connections are closed by the server at once: a read ends.
	closed := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
			closed++
		}
	}
	require.GreaterOrEqual(t, closed, 36, "connections over the cap must be closed")
	require.LessOrEqual(t, srv.Connections(), int64(4))
	// The silent ones are closed after the handshake timeout, so a real
	// client gets in.
	testenv.WaitFor(t, 5*time.Second, "every connection to close", func() bool { return srv.Connections() == 0 })
	c := flighttest.Client(t, addr)
	ctx := flighttest.Ctx(t, 10*time.Second)
	mem := memory.NewGoAllocator()
	b := flighttest.MakeBatch(mem, 0, 0, 3, 8)
	defer b.Release()
	_, err := openPut(t, ctx, c, "").schema([]string{"after"}, flighttest.Schema).batch(encodeBatch(t, b.Rec), meta(1)).finish()
	require.NoError(t, err)
	// An idle gRPC connection is closed after MaxConnectionIdle.
	testenv.WaitFor(t, 5*time.Second, "every connection to close", func() bool { return srv.Connections() == 0 })
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout() || strings.Contains(err.Error(), "timeout")
}

// TestLimitOptionsValidated: invalid limits are refused with
// ErrInvalidOptions naming the field.
func TestLimitOptionsValidated(t *testing.T) {
	for _, tc := range []struct {
		o    receiver.Options
		want string
	}{
		{receiver.Options{}, "Options.Dir"},
		{receiver.Options{MaxStreamPendingBytes: 2 << 30}, "MaxStreamPendingBytes"},
		{receiver.Options{MaxStreamPendingBytes: 1 << 10}, "MaxStreamPendingBytes"},
		{receiver.Options{MaxDecodedMessageBytes: 1 << 40}, "MaxDecodedMessageBytes"},
		{receiver.Options{AckSendTimeout: -1}, "AckSendTimeout"},
		{receiver.Options{MaxConnections: -1}, "MaxConnections"},
		{receiver.Options{MaxConnectionIdle: -1}, "MaxConnectionIdle"},
	} {
		if tc.want != "Options.Dir" {
			tc.o.Dir, tc.o.FS = "/r", vfs.NewMem()
		}
		_, err := receiver.New(tc.o)
		require.ErrorIs(t, err, receiver.ErrInvalidOptions, "%+v", tc.o)
		require.ErrorContains(t, err, tc.want)
	}
}

// TestOptionsValidation: validate runs on the caller's values before any
// default and reports every problem at once, each naming its field and
// the value it got, all wrapped in ErrInvalidOptions.
func TestOptionsValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    receiver.Options
		want []string
	}{
		{"every field", receiver.Options{
			MaxMessageSize: 1000, SyncInterval: -time.Second, MaxSyncBatch: -2, SegmentSize: 10,
			AckDelay: -time.Millisecond, MaxStreamsPerPeer: -3, MaxDecodedBufferSize: -4,
			AckSendTimeout: -time.Minute, MaxConnections: -5, MaxConnectionIdle: -time.Hour,
		}, []string{
			"Options.Dir is required", "Options.MaxMessageSize 1000", "Options.SyncInterval -1s",
			"Options.MaxSyncBatch -2", "Options.SegmentSize 10", "Options.AckDelay -1ms",
			"Options.MaxStreamsPerPeer -3", "Options.MaxDecodedBufferSize -4",
			"Options.AckSendTimeout -1m0s", "Options.MaxConnections -5", "Options.MaxConnectionIdle -1h0m0s",
		}},
		{"relations", receiver.Options{
			Dir: "/r", MaxPendingBytes: 1 << 10, MaxStreamPendingBytes: 2 << 30, MaxDecodedMessageBytes: 1 << 40,
		}, []string{
			"Options.MaxPendingBytes 1024 is below Options.MaxMessageSize 0 (default 67108864)",
			"Options.MaxStreamPendingBytes 2147483648", "Options.MaxDecodedMessageBytes 1099511627776",
		}},
		{"a defaulted limit is named as such", receiver.Options{Dir: "/r", MaxMessageSize: 2 << 30}, []string{
			"Options.MaxPendingBytes 0 (default 1073741824) is below Options.MaxMessageSize 2147483648",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.FS = vfs.NewMem()
			_, err := receiver.New(tc.o)
			require.ErrorIs(t, err, receiver.ErrInvalidOptions)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}
