package zerobus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/zerobus"
	"github.com/thalweg/thalweg/zerobus/server"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	table = "main.thalweg.events"
	token = "t0ken"
)

var schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
}, nil)

// makeBatch builds rows with ids [from, from+n); the caller must Release.
func makeBatch(mem memory.Allocator, from, n int, payloadBytes int) *batch.Batch {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	pad := strings.Repeat("x", payloadBytes)
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%7 == 0 {
			b.Field(1).AppendNull()
			b.Field(3).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("p%d %s", i, pad))
			b.Field(3).(*array.Float64Builder).Append(float64(i) / 4)
		}
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000 + int64(i)))
		lb := b.Field(4).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprintf("t%d", i%3))
	}
	rec := b.NewRecordBatch()
	return &batch.Batch{Rec: rec, Spans: []batch.OffsetSpan{{Partition: "persistent://public/default/zb-partition-0", First: uint64(from), Last: uint64(from + n - 1)}}}
}

type harness struct {
	srv  *server.Server
	addr string
}

// startServer runs a real server on loopback TCP.
func startServer(t *testing.T, opts server.Options) *harness {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	srv, err := server.New(opts)
	require.NoError(t, err)
	return serve(t, srv)
}

func serve(t testing.TB, srv *server.Server) *harness {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		require.NoError(t, srv.Stop())
		require.NoError(t, <-done)
	})
	return &harness{srv: srv, addr: lis.Addr().String()}
}

func (h *harness) options(mode zerobus.Mode, mem memory.Allocator) zerobus.Options {
	return zerobus.Options{
		Endpoint:  "http://" + h.addr,
		Table:     table,
		Token:     token,
		TLS:       zerobus.TLSOptions{Insecure: true},
		Mode:      mode,
		Schema:    schema,
		Allocator: mem,
	}
}

// storedIDs reads the table back and returns how often each id is stored.
func storedIDs(t *testing.T, dir string) map[int64]int {
	t.Helper()
	lines, err := server.ReadTable(dir, table)
	require.NoError(t, err)
	ids := make(map[int64]int, len(lines))
	for _, l := range lines {
		var row struct{ ID *int64 }
		require.NoError(t, json.Unmarshal(l, &row), "%s", l)
		require.NotNil(t, row.ID, "%s", l)
		ids[*row.ID]++
	}
	return ids
}

func requireAll(t *testing.T, ids map[int64]int, n int) {
	t.Helper()
	var missing []int64
	for i := 0; i < n; i++ {
		if ids[int64(i)] == 0 {
			missing = append(missing, int64(i))
		}
	}
	require.Empty(t, missing, "ids never stored")
}

func TestSinkEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode zerobus.Mode
		enc  zerobus.Encoding
	}{
		{"ephemeral-json", zerobus.ModeEphemeral, zerobus.EncodingJSON},
		{"ephemeral-proto", zerobus.ModeEphemeral, zerobus.EncodingProto},
		{"flight", zerobus.ModeFlight, zerobus.EncodingJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			h := startServer(t, server.Options{Token: token, Allocator: mem})
			opts := h.options(tc.mode, mem)
			opts.Encoding = tc.enc
			opts.MaxPayload = 8 << 10 // forces splitting into several messages per batch
			ctx := context.Background()
			s, err := zerobus.Dial(ctx, opts)
			require.NoError(t, err)
			defer s.Close()
			const batches, rows = 20, 50
			for i := 0; i < batches; i++ {
				b := makeBatch(mem, i*rows, rows, 40)
				require.NoError(t, s.Send(ctx, uint64(100+i*2), b)) // logical offsets need not be contiguous
				b.Release()                                         // the sink keeps what it needs
			}
			// A batch without rows (rejected records only) becomes durable too.
			empty := makeBatch(mem, 0, 0, 0)
			require.NoError(t, s.Send(ctx, 200, empty))
			empty.Release()
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			require.NoError(t, s.WaitDurable(wctx, 200))
			require.NoError(t, s.Close())

			lines, err := server.ReadTable(h.srv.Dir(), table)
			require.NoError(t, err)
			require.Len(t, lines, batches*rows)
			ids := storedIDs(t, h.srv.Dir())
			requireAll(t, ids, batches*rows)
			// The row rendering is the same in every mode.
			require.Equal(t, `{"id":1,"payload":"p1 `+strings.Repeat("x", 40)+`","ts":1700000000001000,"score":0.25,"tags":["t1"]}`, string(lines[1]))
			require.Equal(t, `{"id":0,"payload":null,"ts":1700000000000000,"score":null,"tags":["t0"]}`, normalizeNulls(string(lines[0]), tc.enc))
		})
	}
}

// normalizeNulls: protobuf has no nulls, an absent field is one.
func normalizeNulls(line string, enc zerobus.Encoding) string {
	if enc != zerobus.EncodingProto {
		return line
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(line), &m)
	for _, k := range []string{"payload", "score"} {
		if _, ok := m[k]; !ok {
			m[k] = nil
		}
	}
	b, _ := json.Marshal(map[string]any{"id": m["id"], "payload": m["payload"], "ts": m["ts"], "score": m["score"], "tags": m["tags"]})
	// encoding/json sorts keys; restore the column order for the comparison.
	var order = []string{"id", "payload", "ts", "score", "tags"}
	parts := make([]string, len(order))
	for i, k := range order {
		v, _ := json.Marshal(m[k])
		parts[i] = fmt.Sprintf("%q:%s", k, v)
	}
	_ = b
	return "{" + strings.Join(parts, ",") + "}"
}

// miniLane drives a Sink the way a lane does: fire-and-forget sends, a
// durable wait per burst, and on a permanent error a new Dial that replays
// everything not yet durable. It returns how many times it redialed.
func miniLane(t *testing.T, ctx context.Context, opts zerobus.Options, mem memory.Allocator, batches, rows int) int {
	redials, _ := laneUntil(t, ctx, opts, mem, batches, rows, func() bool { return true })
	return redials
}

// laneUntil is miniLane that goes on past its batches until done reports
// true, so that a condition of the server (a rotation) is reached however
// fast the machine is. It returns the redials and the batches made durable.
func laneUntil(t *testing.T, ctx context.Context, opts zerobus.Options, mem memory.Allocator, batches, rows int, done func() bool) (int, int) {
	t.Helper()
	dial := func() *zerobus.Sink {
		for {
			s, err := zerobus.Dial(ctx, opts)
			if err == nil {
				return s
			}
			var ze *zerobus.Error
			require.ErrorAs(t, err, &ze)
			require.False(t, ze.Permanent() && !ze.StreamDead, "unexpected permanent dial error: %v", err)
			select {
			case <-ctx.Done():
				t.Fatalf("dial: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	s := dial()
	defer func() { s.Close() }()
	durable := -1 // highest batch index durable
	next := 0
	redials := 0
	const window = 8
	more := func() bool { return next < batches || !done() }
	for durable < batches-1 || !done() {
		var sendErr error
		for more() && next-durable <= window {
			b := makeBatch(mem, next*rows, rows, 16)
			sendErr = s.Send(ctx, uint64(next), b)
			b.Release()
			if sendErr != nil {
				break
			}
			next++
		}
		err := s.WaitDurable(ctx, uint64(next-1))
		if err == nil {
			durable = next - 1
			if sendErr == nil {
				continue
			}
			// Everything sent is durable but the sink refused the next
			// batch (its stream died meanwhile): redial, do not spin.
			err = sendErr
		}
		require.NoError(t, ctx.Err())
		var p interface{ Permanent() bool }
		require.True(t, errors.As(err, &p) && p.Permanent(), "stream errors are permanent: %v", err)
		// What is durable stays durable: find it, then replay the rest.
		for o := durable + 1; o < next; o++ {
			c, cancel := context.WithTimeout(ctx, time.Millisecond)
			werr := s.WaitDurable(c, uint64(o))
			cancel()
			if werr != nil {
				break
			}
			durable = o
		}
		s.Close()
		redials++
		s = dial()
		next = durable + 1
	}
	return redials, durable + 1
}

func TestRotationAndRecoveryLoseNothing(t *testing.T) {
	for _, mode := range []zerobus.Mode{zerobus.ModeEphemeral, zerobus.ModeFlight} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			h := startServer(t, server.Options{
				Token:       token,
				Allocator:   mem,
				RotateEvery: 120 * time.Millisecond,
				RotateGrace: 80 * time.Millisecond,
				// Within one send window (8 batches of 20 rows), so that a
				// stream reaches it before its rotation however slow the
				// machine is: the drops must happen, not just may.
				DropStreamAfter: 100,
				DropStreams:     2,
				SyncInterval:    2 * time.Millisecond,
				AckDelay:        3 * time.Millisecond,
			})
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			opts := h.options(mode, mem)
			const batches, rows = 150, 20
			redials, durable := laneUntil(t, ctx, opts, mem, batches, rows, func() bool {
				st := h.srv.Stats()
				return st.Rotations >= 3 && st.Dropped >= 2
			})
			st := h.srv.Stats()
			t.Logf("stats %+v, redials %d", st, redials)
			require.GreaterOrEqual(t, st.Rotations, int64(3))
			require.EqualValues(t, 2, st.Dropped)
			// A drop, in a rotation's grace or not, with batches
			// unacknowledged makes the lane redial and replay
			// (TestDroppedStreamsMakeTheLaneRedial pins that path).
			requireAll(t, storedIDs(t, h.srv.Dir()), durable*rows)
		})
	}
}

func TestDroppedStreamsMakeTheLaneRedial(t *testing.T) {
	for _, mode := range []zerobus.Mode{zerobus.ModeEphemeral, zerobus.ModeFlight} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			h := startServer(t, server.Options{Token: token, Allocator: mem, DropStreamAfter: 700, DropStreams: 2, SyncInterval: 2 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			const batches, rows = 100, 20
			redials := miniLane(t, ctx, h.options(mode, mem), mem, batches, rows)
			require.Equal(t, 2, redials, "one new Dial per dropped stream")
			require.EqualValues(t, 2, h.srv.Stats().Dropped)
			ids := storedIDs(t, h.srv.Dir())
			requireAll(t, ids, batches*rows)
			dups := 0
			for _, n := range ids {
				dups += n - 1
			}
			t.Logf("%d duplicates from replays", dups)
		})
	}
}

// sendOneAndWait dials an ephemeral-mode Sink (closed with the test) with
// the ack timeout given, sends one batch of 10 rows at offset 1 and returns
// the Sink and what WaitDurable(1) returned within 10 s.
func sendOneAndWait(t *testing.T, h *harness, mem memory.Allocator, ackTimeout time.Duration) (*zerobus.Sink, error) {
	t.Helper()
	opts := h.options(zerobus.ModeEphemeral, mem)
	opts.AckTimeout = ackTimeout
	ctx := context.Background()
	s, err := zerobus.Dial(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	b := makeBatch(mem, 0, 10, 0)
	require.NoError(t, s.Send(ctx, 1, b))
	b.Release()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return s, s.WaitDurable(wctx, 1)
}

func TestAckTimeoutIsPermanent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := startServer(t, server.Options{Token: token, AckDelay: time.Hour})
	s, err := sendOneAndWait(t, h, mem, 150*time.Millisecond)
	require.ErrorIs(t, err, zerobus.ErrAckTimeout)
	var ze *zerobus.Error
	require.ErrorAs(t, err, &ze)
	require.True(t, ze.Permanent())
	// The sink is dead: Send reports the same error.
	b := makeBatch(mem, 10, 1, 0)
	require.ErrorIs(t, s.Send(context.Background(), 2, b), zerobus.ErrAckTimeout)
	b.Release()
}

// fakeClock only moves when told to.
type fakeClock struct{ now chan time.Time }

func newFakeClock() *fakeClock {
	c := &fakeClock{now: make(chan time.Time, 1)}
	c.now <- time.Unix(1_000_000, 0)
	return c
}
func (c *fakeClock) Now() time.Time { t := <-c.now; c.now <- t; return t }
func (c *fakeClock) Advance(d time.Duration) {
	t := <-c.now
	c.now <- t.Add(d)
}

func TestAckTimeoutMovesOnlyWithTheWatermark(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := startServer(t, server.Options{AckDelay: time.Hour})
	clock := newFakeClock()
	opts := h.options(zerobus.ModeEphemeral, mem)
	opts.AckTimeout = time.Minute
	opts.Clock = clock
	ctx := context.Background()
	s, err := zerobus.Dial(ctx, opts)
	require.NoError(t, err)
	defer s.Close()
	for i := 0; i < 5; i++ {
		// Sending more while nothing is acknowledged does not reset the clock.
		b := makeBatch(mem, i, 1, 0)
		require.NoError(t, s.Send(ctx, uint64(i), b))
		b.Release()
		// Written, the batch is on the ack clock before the clock moves.
		testenv.WaitFor(t, 10*time.Second, "the batch written", func() bool { return s.Written() == i+1 })
		clock.Advance(20 * time.Second)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.ErrorIs(t, s.WaitDurable(wctx, 4), zerobus.ErrAckTimeout)
}

func TestDialErrorsClassified(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := startServer(t, server.Options{Token: token, Tables: []string{table}})
	ctx := context.Background()
	cases := []struct {
		name      string
		mut       func(*zerobus.Options)
		code      codes.Code
		permanent bool
	}{
		{"bad token", func(o *zerobus.Options) { o.Token = "nope" }, codes.Unauthenticated, true},
		{"unknown table", func(o *zerobus.Options) { o.Table = "main.thalweg.other" }, codes.NotFound, true},
		{"bad token flight", func(o *zerobus.Options) { o.Token = "nope"; o.Mode = zerobus.ModeFlight }, codes.Unauthenticated, true},
		{"nobody listening", func(o *zerobus.Options) { o.Endpoint = "127.0.0.1:1"; o.OpenTimeout = 2 * time.Second }, codes.Unavailable, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := h.options(zerobus.ModeEphemeral, mem)
			tc.mut(&opts)
			_, err := zerobus.Dial(ctx, opts)
			var ze *zerobus.Error
			require.ErrorAs(t, err, &ze)
			require.Equal(t, tc.code, ze.Code, "%v", err)
			require.Equal(t, tc.permanent, ze.Permanent())
		})
	}
}

func TestOptionsValidation(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		opts zerobus.Options
		want string
	}{
		{zerobus.Options{Table: table}, "Endpoint is required"},
		{zerobus.Options{Endpoint: "127.0.0.1:1"}, "Table is required"},
		{zerobus.Options{Endpoint: "127.0.0.1:1", Table: "events"}, "catalog.schema.table"},
		{zerobus.Options{Endpoint: "example.com:443", Table: table, TLS: zerobus.TLSOptions{Insecure: true}}, "only allowed for loopback"},
		{zerobus.Options{Endpoint: "127.0.0.1", Table: table}, "missing port"},
		{zerobus.Options{Endpoint: "127.0.0.1:1", Table: table, Encoding: zerobus.EncodingProto}, "Schema is required"},
		{zerobus.Options{Endpoint: "127.0.0.1:1", Table: table, MaxPayload: 10}, "MaxPayload"},
		{zerobus.Options{Endpoint: "127.0.0.1:1", Table: table, TLS: zerobus.TLSOptions{CAFile: "/nonexistent"}}, "CAFile"},
	} {
		_, err := zerobus.Dial(ctx, tc.opts)
		require.ErrorIs(t, err, zerobus.ErrInvalidOptions)
		require.ErrorContains(t, err, tc.want)
	}
	// Every problem at once, each with its field.
	_, err := zerobus.Dial(ctx, zerobus.Options{MaxPayload: 10, AckTimeout: -1})
	require.ErrorIs(t, err, zerobus.ErrInvalidOptions)
	for _, f := range []string{"Options.Endpoint", "Options.Table", "Options.AckTimeout", "Options.MaxPayload"} {
		require.ErrorContains(t, err, f)
	}
}

func TestSendRejectsBadInput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := startServer(t, server.Options{})
	ctx := context.Background()
	opts := h.options(zerobus.ModeEphemeral, mem)
	opts.MaxPayload = 1024
	s, err := zerobus.Dial(ctx, opts)
	require.NoError(t, err)
	defer s.Close()

	big := makeBatch(mem, 1, 1, 4096)
	err = s.Send(ctx, 1, big)
	big.Release()
	require.ErrorIs(t, err, zerobus.ErrRecordTooLarge)

	b := makeBatch(mem, 0, 1, 0)
	require.NoError(t, s.Send(ctx, 5, b))
	require.ErrorIs(t, s.Send(ctx, 5, b), zerobus.ErrOffsetOrder)
	b.Release()

	require.NoError(t, s.Close())
	b = makeBatch(mem, 0, 1, 0)
	require.ErrorIs(t, s.Send(ctx, 7, b), zerobus.ErrClosed)
	b.Release()
	require.ErrorIs(t, s.WaitDurable(ctx, 7), zerobus.ErrClosed)
}

// TestFlightRotationNeedsNoRedial: in Flight mode a close-stream signal
// moves the flight sink to a new DoPut stream of the same Sink once the old
// one acknowledged everything: rotations cost no new Dial and no replay
// (the sink keeps no copy of a batch; the lane's replay is only for a
// stream that ends with batches unacknowledged).
func TestFlightRotationNeedsNoRedial(t *testing.T) { rotationNeedsNoRedial(t, zerobus.ModeFlight) }

// TestEphemeralRotationNeedsNoRedial: the same for ephemeral mode, which
// keeps no copy of what it wrote either: it waits for the old stream's
// acks, then writes the batches still queued on the new stream.
func TestEphemeralRotationNeedsNoRedial(t *testing.T) {
	rotationNeedsNoRedial(t, zerobus.ModeEphemeral)
}

func rotationNeedsNoRedial(t *testing.T, mode zerobus.Mode) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := startServer(t, server.Options{
		Token: token, Allocator: mem,
		RotateEvery: 60 * time.Millisecond, RotateGrace: 2 * time.Second,
		SyncInterval: 2 * time.Millisecond,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const batches, rows = 60, 20
	// One lane goes on until the server rotated its stream three times,
	// however fast the machine is (a lane of fixed length can end before
	// the first rotation is due).
	redials, durable := laneUntil(t, ctx, h.options(mode, mem), mem, batches, rows,
		func() bool { return h.srv.Stats().Rotations >= 3 })
	require.Zero(t, redials, "a rotation made the lane redial")
	requireAll(t, storedIDs(t, h.srv.Dir()), durable*rows)
}

// TestEphemeralKeepsNoCopyOfWrittenBatches: once the writer has written a
// batch, the ephemeral-mode Sink keeps only its offsets until the ack (the
// lane keeps the batch for a replay), so unacknowledged batches cost the
// sink no encoded bytes.
func TestEphemeralKeepsNoCopyOfWrittenBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := startServer(t, server.Options{Token: token, AckDelay: time.Hour})
	opts := h.options(zerobus.ModeEphemeral, mem)
	opts.AckTimeout = time.Minute
	ctx := context.Background()
	s, err := zerobus.Dial(ctx, opts)
	require.NoError(t, err)
	defer s.Close()
	const batches, rows, payload = 20, 50, 200
	for i := range batches {
		b := makeBatch(mem, i*rows, rows, payload)
		require.NoError(t, s.Send(ctx, uint64(i), b))
		b.Release()
	}
	testenv.WaitFor(t, 10*time.Second, "the sink to drop the encoded bytes of its unacknowledged batches", func() bool {
		n, bytes := s.Retained()
		require.Equal(t, batches, n, "no batch is acknowledged (AckDelay), so every one is tracked")
		return bytes == 0
	})
}

// TestEphemeralRotationWithUnackedBatchesFailsTheSink: a close-stream
// signal whose grace ends with written batches unacknowledged fails the
// Sink with a stream-dead, retryable error (the lane replays them on a new
// Sink) instead of resending them from a private copy.
func TestEphemeralRotationWithUnackedBatchesFailsTheSink(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// Records are acknowledged only once synced: no sync, no ack.
	h := startServer(t, server.Options{Token: token, SyncInterval: time.Hour,
		RotateEvery: 100 * time.Millisecond, RotateGrace: 100 * time.Millisecond})
	_, err := sendOneAndWait(t, h, mem, time.Minute)
	require.ErrorIs(t, err, zerobus.ErrStreamEnded)
	var ze *zerobus.Error
	require.ErrorAs(t, err, &ze)
	require.True(t, ze.StreamDead && ze.Permanent() && ze.Retryable(), "%v", err)
	require.Contains(t, err.Error(), "1 written batches unacknowledged")
}

// TestFlightSchemaChangeNewStream: in Flight mode a batch with another
// schema (a new nullable field) goes on a new DoPut stream of the same Sink
// instead of failing it; both batches' rows are stored.
func TestFlightSchemaChangeNewStream(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := startServer(t, server.Options{Token: token, Allocator: mem, SyncInterval: 2 * time.Millisecond})
	ctx := ctxT(t, 10*time.Second)
	s, err := zerobus.Dial(ctx, h.options(zerobus.ModeFlight, mem))
	require.NoError(t, err)
	defer s.Close()

	a := makeBatch(mem, 0, 10, 4)
	require.NoError(t, s.Send(ctx, 1, a))
	a.Release()
	b := makeBatch(mem, 10, 10, 4)
	nb := array.NewStringBuilder(mem)
	for i := 0; i < 10; i++ {
		nb.Append(fmt.Sprintf("n%d", i))
	}
	note := nb.NewArray()
	nb.Release()
	wider := arrow.NewSchema(append(b.Rec.Schema().Fields(), arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
	rec := array.NewRecordBatch(wider, append(b.Rec.Columns(), note), 10)
	note.Release()
	b.Release()
	err = s.Send(ctx, 2, &batch.Batch{Rec: rec})
	rec.Release()
	require.NoError(t, err)
	require.NoError(t, s.WaitDurable(ctx, 2))
	requireAll(t, storedIDs(t, h.srv.Dir()), 20)
	require.EqualValues(t, 2, h.srv.Stats().Streams, "one stream per schema")
}
