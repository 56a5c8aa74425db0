package flight

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc/metadata"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/flightwire"
)

// Sink is a lane's Flight transport: a long-lived DoPut stream to a Flight
// receiver, and a new one, on the same connection, whenever a batch's schema
// differs from the current stream's. It satisfies the lanes.Transport
// contract structurally: Send writes a batch and returns without waiting for
// an acknowledgement, a reader goroutine per stream turns the server's
// cumulative PutResults into one acknowledged watermark over all the
// Sink's streams (offsets are the lane's), and WaitDurable blocks on that
// watermark.
//
// Goroutine safety: Send must be called from one goroutine at a time (a
// lane's submitter); WaitDurable may be called from any number of goroutines
// concurrently with Send; Close may be called from any goroutine, more than
// once, and unblocks both.
//
// A Sink is not restartable: once any method returns a permanent error the
// Sink is dead and every later Send or WaitDurable returns that error
// (unless the offset waited for was already acknowledged). Close it and Dial
// a new one.
type Sink struct {
	opts    Options
	desc    *flight.FlightDescriptor
	client  flight.Client
	sctx    context.Context    // every stream's context (token metadata); outlives Dial's ctx
	cancel  context.CancelFunc // cancels every stream; idempotent
	ipcOpts []ipc.Option
	descLen int
	mark    *flightwire.Watermark // the durable watermark, the terminal error and the ack watchdog

	// send is the writer side. Send holds it for the duration of a write;
	// Close takes it to half-close the stream.
	send struct {
		sync.Mutex
		cur     *putStream
		w       *flight.Writer // nil until the current stream's first batch
		schema  *arrow.Schema
		last    uint64
		any     bool
		meta    []byte // reused app_metadata buffer (gRPC marshals before Send returns)
		closed  bool
		streams int // DoPut streams opened, for the log
	}

	closeOnce sync.Once
}

// putStream is one DoPut call and its reader goroutine.
type putStream struct {
	stream     flight.FlightService_DoPutClient
	cancel     context.CancelFunc // this stream only; s.cancel ends them all
	readerDone chan struct{}
	// retired is set before the sink half-closes the stream to move to a
	// new one: its end is then expected, not a failure, once everything
	// sent on it is acknowledged (the sink checks that).
	retired atomic.Bool
}

// Dial validates opts, connects to opts.Endpoint and opens the DoPut stream.
// ctx bounds connecting and opening the stream only; the stream itself lives
// until Close or failure.
//
// Dial errors are *Error with Op "dial": connection failures are transient
// (Permanent() false) and a later Dial may succeed.
func Dial(ctx context.Context, opts Options) (*Sink, error) {
	opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	dopts, err := opts.dialOptions()
	if err != nil {
		return nil, err
	}
	client, err := flight.NewClientWithMiddlewareCtx(ctx, opts.Endpoint, nil, nil, dopts...)
	if err != nil {
		return nil, dialError(err)
	}
	s := &Sink{
		opts:   opts,
		desc:   &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: append([]string(nil), opts.Path...)},
		client: client,
	}
	for _, p := range opts.Path {
		s.descLen += len(p) + 4
	}
	s.mark = flightwire.NewWatermark(opts.AckTimeout, nil, s.ackSilence)
	s.ipcOpts = flightwire.IPCOptions(opts.Allocator, string(opts.Compression))

	// The streams outlive ctx, so they get their own cancellation; ctx only
	// bounds opening the first.
	s.sctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if opts.Token != "" {
		s.sctx = metadata.AppendToOutgoingContext(s.sctx, "authorization", "Bearer "+opts.Token)
	}
	ps, err := s.openStream(ctx)
	if err != nil {
		s.cancel()
		_ = client.Close()
		return nil, dialError(err)
	}
	s.send.cur = ps
	opts.Logger.Debug("flight: DoPut stream open", "endpoint", opts.Endpoint, "path", opts.Path)
	return s, nil
}

// openStream opens a DoPut stream, bounded by ctx, and starts its reader.
func (s *Sink) openStream(ctx context.Context) (*putStream, error) {
	sctx, cancel := context.WithCancel(s.sctx)
	stopDial := context.AfterFunc(ctx, cancel)
	stream, err := s.client.DoPut(sctx)
	if !stopDial() || err != nil {
		cancel()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	ps := &putStream{stream: stream, cancel: cancel, readerDone: make(chan struct{})}
	s.send.streams++
	go s.readAcks(ps)
	return ps, nil
}

// putWriter adapts the DoPut stream to flight.DataStreamWriter. It strips
// app_metadata from the schema message: flight.Writer attaches the metadata
// of the first batch to the schema message it emits first, and the wire
// encoding puts offset ids on record batch messages only.
type putWriter struct {
	s          flight.FlightService_DoPutClient
	schemaSent bool
}

func (p *putWriter) Send(fd *flight.FlightData) error {
	if !p.schemaSent {
		p.schemaSent = true
		return p.s.Send(&flight.FlightData{FlightDescriptor: fd.FlightDescriptor, DataHeader: fd.DataHeader, DataBody: fd.DataBody})
	}
	return p.s.Send(fd)
}

// Send writes b under offset and returns once gRPC accepted the message(s)
// for transmission; it does not wait for an acknowledgement and does not
// keep b after returning.
//
// offset must be greater than the offset of the previous Send. A DoPut
// stream carries one schema: a batch whose schema differs from the current
// stream's is sent on a new stream, opened once everything sent on the old
// one is acknowledged (so the server stores the old schema's batches
// before the new schema's; that wait, bounded by AckTimeout's silence
// rule, is the one time Send waits for acks). A batch larger than
// MaxMessageSize is split by rows into parts that share offset.
//
// If ctx ends before anything is written, Send returns ctx.Err() and the
// stream is intact. If ctx ends while a write is blocked on flow control (or
// during the wait of a schema change), the Sink is torn down (a half-sent
// message cannot be withdrawn) and Send returns a permanent error.
func (s *Sink) Send(ctx context.Context, offset uint64, b *batch.Batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.send.Lock()
	defer s.send.Unlock()
	if err := s.failure(); err != nil {
		return err
	}
	if s.send.closed {
		return &Error{Op: "send", Err: ErrClosed, permanent: true}
	}
	if s.send.any && offset <= s.send.last {
		return s.fail(permanentf("send", ErrOffsetOrder, "offset %d after %d", offset, s.send.last))
	}
	rec := b.Rec
	if rec == nil {
		return s.fail(permanentf("send", errors.New("batch has no record"), "offset %d", offset))
	}
	if s.send.w != nil && !rec.Schema().Equal(s.send.schema) {
		if err := s.nextStreamLocked(ctx, offset); err != nil {
			return err
		}
	}
	if s.send.w == nil {
		if flightwire.HasDictionary(rec.Schema()) {
			return s.fail(permanentf("send", ErrUnsupportedSchema, "schema %s", rec.Schema()))
		}
		s.send.schema = rec.Schema()
		s.send.w = flight.NewRecordWriter(&putWriter{s: s.send.cur.stream}, append([]ipc.Option{ipc.WithSchema(s.send.schema)}, s.ipcOpts...)...)
		s.send.w.SetFlightDescriptor(s.desc)
	}

	s.send.meta = flightwire.AppendBatchMeta(s.send.meta[:0], offset, b.Spans, 0, 0)
	parts, err := s.plan(rec, len(s.send.meta)+len(`,"part":0000,"parts":0000`))
	if err != nil {
		return s.fail(permanentf("send", err, "offset %d (%d rows)", offset, rec.NumRows()))
	}

	s.mark.Sent(offset)
	stop := context.AfterFunc(ctx, func() {
		s.fail(&Error{Op: "send", Err: fmt.Errorf("context ended during a blocked write: %w", context.Cause(ctx)), permanent: true})
	})
	defer stop()
	if len(parts) == 0 {
		err = s.send.w.WriteWithAppMetadata(rec, s.send.meta)
	} else {
		for i, p := range parts {
			s.send.meta = flightwire.AppendBatchMeta(s.send.meta[:0], offset, b.Spans, i, len(parts))
			part := rec.NewSlice(p.Lo, p.Hi)
			err = s.send.w.WriteWithAppMetadata(part, s.send.meta)
			part.Release()
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		return s.sendFailed(err)
	}
	s.send.last, s.send.any = offset, true
	return nil
}

// nextStreamLocked retires the current stream for a batch (offset) with
// another schema: it half-closes it, waits until its reader saw the server
// end it, checks that everything sent on it was acknowledged, and opens a
// new stream whose first batch will carry the new schema. On failure the
// Sink is dead and the permanent error is returned.
func (s *Sink) nextStreamLocked(ctx context.Context, offset uint64) error {
	old := s.send.cur
	old.retired.Store(true)
	_ = s.send.w.Close() // releases encoder state; writes nothing
	s.send.w = nil
	if err := old.stream.CloseSend(); err != nil {
		return s.sendFailed(err)
	}
	select {
	case <-old.readerDone:
		old.cancel()
	case <-ctx.Done():
		return s.fail(&Error{Op: "send", Err: fmt.Errorf("context ended while the old schema's stream drained: %w", context.Cause(ctx)), permanent: true})
	}
	if err := s.failure(); err != nil {
		return err
	}
	if out, sent := s.mark.Outstanding(); out {
		acked, _, _ := s.mark.Acked()
		return s.fail(permanentf("ack", ErrStreamEnded, "the server ended the stream of the previous schema with offsets up to %d sent and %d acknowledged", sent, acked))
	}
	ps, err := s.openStream(ctx)
	if err != nil {
		return s.fail(streamError("send", err))
	}
	s.send.cur = ps
	s.opts.Logger.Info("flight: batch schema changed; new DoPut stream", "endpoint", s.opts.Endpoint, "path", s.opts.Path,
		"offset", offset, "streams", s.send.streams)
	return nil
}

// sendFailed turns a failed stream write into the Sink's terminal error.
// gRPC reports a stream the server ended as io.EOF on the send side; the
// status is delivered to the receive side, so wait (bounded) for the reader
// to record it.
func (s *Sink) sendFailed(err error) error {
	if errors.Is(err, io.EOF) {
		t := time.NewTimer(s.opts.CloseTimeout)
		select {
		case <-s.send.cur.readerDone:
		case <-t.C:
		}
		t.Stop()
	}
	if f := s.failure(); f != nil {
		return f
	}
	return s.fail(streamError("send", err))
}

// WaitDurable blocks until every batch sent with an offset <= offset has been
// durably acknowledged, on whichever of the Sink's streams it was sent, ctx
// ends (ctx.Err(), not permanent), or the Sink fails (the permanent error).
// It never sends anything itself.
func (s *Sink) WaitDurable(ctx context.Context, offset uint64) error {
	return s.mark.Wait(ctx, offset)
}

// Acked returns the acknowledged watermark: the highest offset the server
// declared durable, and ack_up_to_records of that ack (which counts the
// rows of the stream that carried it: a schema change starts a new count).
// ok is false before the first acknowledgement.
func (s *Sink) Acked() (offset, records uint64, ok bool) {
	return s.mark.Acked()
}

// Err returns the Sink's terminal error, or nil while it is healthy.
func (s *Sink) Err() error {
	return s.failure()
}

// Close half-closes the send side so the server can finish the stream
// cleanly, waits at most CloseTimeout for it to do so, then cancels the
// stream, stops the reader goroutine and closes the connection. Pending and
// later WaitDurable calls whose offset is not yet acknowledged, and later
// Send calls, return ErrClosed. Close always returns nil; a second call is a
// no-op.
func (s *Sink) Close() error {
	s.closeOnce.Do(func() {
		s.mark.Fail(&Error{Op: "close", Err: ErrClosed, permanent: true})

		// A Send blocked on flow control holds the send lock; the timer
		// cancels the stream so that it returns and the lock is free.
		t := time.AfterFunc(s.opts.CloseTimeout, s.cancel)
		s.send.Lock()
		s.send.closed = true
		if s.send.w != nil {
			_ = s.send.w.Close() // releases encoder state; writes nothing
		}
		cur := s.send.cur
		_ = cur.stream.CloseSend()
		s.send.Unlock()
		<-cur.readerDone
		t.Stop()
		s.cancel()
		_ = s.client.Close()
		s.opts.Logger.Debug("flight: DoPut stream closed", "endpoint", s.opts.Endpoint, "path", s.opts.Path)
	})
	return nil
}

// readAcks is a stream's reader goroutine: it owns stream.Recv and runs
// until the stream ends.
func (s *Sink) readAcks(ps *putStream) {
	defer close(ps.readerDone)
	for {
		pr, err := ps.stream.Recv()
		if err != nil {
			switch {
			case errors.Is(err, io.EOF) && ps.retired.Load():
				// The server finished a stream the sink half-closed to
				// move to a new schema; the sink checks what it acked.
			case errors.Is(err, io.EOF):
				s.fail(&Error{Op: "ack", Err: ErrStreamEnded, permanent: true})
			default:
				s.fail(streamError("ack", err))
			}
			return
		}
		a, err := flightwire.ParseAck(pr.GetAppMetadata())
		if err != nil {
			// A generic Flight server acknowledges receipt with an empty
			// PutResult (or its own JSON): nothing here says what is
			// durable, so the stream can never make progress. Say what the
			// server must send, once, as the Sink's terminal error.
			s.fail(permanentf("ack", ErrBadAck, "%v; the server does not speak the thalweg ack encoding: %s", err, flightwire.AckEncoding))
			return
		}
		if a.Ready {
			continue // the Zerobus ready signal; a close-stream signal's ack is still an ack
		}
		s.mark.Advance(a.Offset, a.Records)
	}
}

// ackSilence is the watermark's watchdog callback.
func (s *Sink) ackSilence(q flightwire.Silence) {
	what := "nothing acknowledged yet"
	if q.AnyAcked {
		what = fmt.Sprintf("acknowledged up to %d", q.Upto)
	}
	s.fail(permanentf("ack", ErrAckTimeout, "%v of silence, sent up to %d, %s", q.For.Round(time.Millisecond), q.Sent, what))
}

// fail records e as the terminal error (the first failure wins), wakes every
// waiter and cancels the streams, which unblocks a blocked Send and the
// readers. It returns the terminal error.
func (s *Sink) fail(e *Error) *Error {
	term, first := s.mark.Fail(e)
	e = term.(*Error)
	if first && !errors.Is(e, ErrClosed) {
		s.opts.Logger.Warn("flight: DoPut stream failed", "endpoint", s.opts.Endpoint, "path", s.opts.Path, "err", e)
	}
	if !errors.Is(e, ErrClosed) {
		s.cancel()
	}
	return e
}

// failure returns the terminal error or nil. It returns error rather than
// *Error so that a healthy stream yields a true nil interface.
func (s *Sink) failure() error {
	if err := s.mark.Err(); err != nil {
		return err
	}
	return nil
}
