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
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/bearer"
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
		cur *putStream
		// schema is the current stream's schema, nil until its first
		// batch; schemaSent says its schema message went out.
		schema     *arrow.Schema
		schemaSent bool
		last       uint64
		any        bool
		meta       []byte // reused app_metadata buffer (EncodeBatch copies it)
		closed     bool
		streams    int // DoPut streams opened, for the log
		// watch is the context of the last Send, whose end tears the
		// Sink down if it comes during a write under it (writing; see
		// watchLocked).
		watch   *ctxWatch
		writing atomic.Pointer[ctxWatch]
	}

	// inflight tracks the encoded messages gRPC still holds (their Arrow
	// buffers are retained until then); Close releases what gRPC never
	// gave back.
	inflight flightwire.Tracker

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
	// closeAsked: the server sent a close-stream signal (Zerobus variant);
	// the next batch goes on a new stream.
	closeAsked atomic.Bool

	// phys maps the Zerobus variant's per-message offset_ids back to the
	// lane's offsets; Send appends (before writing), the reader pops.
	phys struct {
		sync.Mutex
		next    uint64     // the next message's offset_id
		pending []physMark // batches not yet acknowledged, in order
	}
}

// physMark is one batch of the Zerobus variant: the offset_id of its last
// message and the lane's offset.
type physMark struct{ last, offset uint64 }

// reserve numbers the n messages of the batch at offset and returns the
// first offset_id.
func (ps *putStream) reserve(n int, offset uint64) uint64 {
	ps.phys.Lock()
	defer ps.phys.Unlock()
	first := ps.phys.next
	ps.phys.next += uint64(n)
	ps.phys.pending = append(ps.phys.pending, physMark{last: ps.phys.next - 1, offset: offset})
	return first
}

// empty records a batch without messages (no rows): it is durable with
// the batches before it, at once if none is pending.
func (ps *putStream) empty(offset uint64) (durableNow bool) {
	ps.phys.Lock()
	defer ps.phys.Unlock()
	if len(ps.phys.pending) == 0 {
		return true
	}
	ps.phys.pending = append(ps.phys.pending, physMark{last: ps.phys.next - 1, offset: offset})
	return false
}

// acked retires every batch whose last message is <= upTo and returns the
// highest lane offset retired (ok false: none).
func (ps *putStream) acked(upTo uint64) (offset uint64, ok bool, err error) {
	ps.phys.Lock()
	defer ps.phys.Unlock()
	if upTo >= ps.phys.next {
		return 0, false, fmt.Errorf("ack up to offset_id %d, but only offset_ids below %d were sent", upTo, ps.phys.next)
	}
	n := 0
	for n < len(ps.phys.pending) && ps.phys.pending[n].last <= upTo {
		offset, ok = ps.phys.pending[n].offset, true
		n++
	}
	ps.phys.pending = ps.phys.pending[:copy(ps.phys.pending, ps.phys.pending[n:])]
	return offset, ok, nil
}

// Dial validates opts, connects to opts.Endpoint and opens the DoPut stream.
// ctx bounds connecting and opening the stream only; the stream itself lives
// until Close or failure.
//
// Dial errors are *Error with Op "dial": connection failures are transient
// (Permanent() false) and a later Dial may succeed; options it refuses
// (ErrInvalidOptions, e.g. a TLS file that is missing or does not parse)
// are permanent and not Retryable.
func Dial(ctx context.Context, opts Options) (*Sink, error) {
	if err := opts.validate(); err != nil {
		// Permanent, not retryable: a TLS file that vanished or does not
		// parse does not heal by dialling again.
		return nil, &Error{Op: "dial", Err: err, permanent: true}
	}
	opts.withDefaults()
	dopts, err := opts.dialOptions()
	if err != nil {
		return nil, &Error{Op: "dial", Err: err, permanent: true}
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
	// A negative AckTimeout disables the deadline (Options.AckTimeout); the
	// watermark's word for that is 0.
	s.mark = flightwire.NewWatermark(max(opts.AckTimeout, 0), s.ackSilence)
	s.ipcOpts = flightwire.IPCOptions(opts.Allocator, string(opts.Compression))

	// The streams outlive ctx, so they get their own cancellation; ctx only
	// bounds opening the first.
	s.sctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if opts.Token != "" {
		s.sctx = metadata.AppendToOutgoingContext(s.sctx, bearer.Header, bearer.Value(opts.Token))
	}
	if opts.variant != nil {
		for k, v := range opts.variant.Headers {
			s.sctx = metadata.AppendToOutgoingContext(s.sctx, k, v)
		}
	}
	ps, err := s.openStream(ctx)
	if err != nil {
		s.cancel()
		_ = client.Close()
		var fe *Error
		if errors.As(err, &fe) {
			return nil, fe
		}
		return nil, dialError(err)
	}
	s.send.cur = ps
	opts.Logger.Debug("flight: DoPut stream open", "endpoint", opts.Endpoint, "path", opts.Path)
	return s, nil
}

// openStream opens a DoPut stream, bounded by ctx, and starts its reader.
func (s *Sink) openStream(ctx context.Context) (*putStream, error) {
	if v := s.opts.variant; v != nil && v.OpenTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, v.OpenTimeout)
		defer cancel()
	}
	sctx, cancel := context.WithCancel(s.sctx)
	stopDial := context.AfterFunc(ctx, cancel)
	// The codec passes a batch's Arrow buffers to gRPC without copying
	// them (flightwire.Message); the write path's ownership rule is Send's.
	// A retry buffer of 0 commits the stream with its first message, so
	// that gRPC keeps no batch for a transparent retry (a stream is
	// re-opened by the lane, not replayed by gRPC). It also closes a race
	// in grpc-go v1.85: a SendMsg whose stream is committed by a concurrent
	// RecvMsg while it writes takes a reference for the retry buffer that
	// nobody frees (clientStream.bufferForRetryLocked returns early), which
	// left an acknowledged batch's Arrow buffers allocated for good.
	stream, err := s.client.DoPut(sctx, grpc.ForceCodecV2(flightwire.Codec{}), grpc.MaxRetryRPCBufferSize(0))
	if err == nil && s.opts.variant != nil {
		err = awaitReady(stream)
	}
	if !stopDial() || err != nil {
		cancel()
		if err == nil || ctx.Err() != nil {
			err = fmt.Errorf("opening the DoPut stream: %w", context.Cause(ctx))
		}
		return nil, err
	}
	ps := &putStream{stream: stream, cancel: cancel, readerDone: make(chan struct{})}
	s.send.streams++
	go s.readAcks(ps)
	return ps, nil
}

// awaitReady reads the Zerobus variant's ready signal, the first PutResult
// of a stream.
func awaitReady(stream flight.FlightService_DoPutClient) error {
	pr, err := stream.Recv()
	if err != nil {
		return err
	}
	a, err := flightwire.ParseAck(pr.GetAppMetadata())
	if err == nil && (!a.Ready || a.Records != 0 || a.Close) {
		err = fmt.Errorf("first PutResult %q is not the ready signal", pr.GetAppMetadata())
	}
	if err != nil {
		return permanentf("dial", ErrBadAck, "%v", err)
	}
	return nil
}

// writeLocked writes one record batch message (rec with app_metadata
// meta) on the current stream, preceded by the stream's schema message if
// it has not gone out yet. The schema message carries the descriptor and
// no app_metadata (the wire encoding puts offset ids on record batch
// messages only).
func (s *Sink) writeLocked(rec arrow.RecordBatch, meta []byte) error {
	st := s.send.cur.stream
	if !s.send.schemaSent {
		sp := ipc.GetSchemaPayload(s.send.schema, s.opts.Allocator)
		hdr := sp.Meta()
		err := st.Send(&flight.FlightData{FlightDescriptor: s.desc, DataHeader: hdr.Bytes()})
		hdr.Release()
		sp.Release()
		if err != nil {
			return err
		}
		s.send.schemaSent = true
	}
	m, err := flightwire.EncodeBatch(rec, meta, s.ipcOpts, &s.inflight)
	if err != nil {
		return err
	}
	err = st.SendMsg(m)
	m.Free() // a no-op unless gRPC failed before taking the message
	return err
}

// Send writes b under offset and returns once gRPC accepted the message(s)
// for transmission; it does not wait for an acknowledgement. The caller may
// release b when Send returns: the messages do not copy the batch's body but
// hold their own references to its Arrow buffers, which gRPC gives back once
// its HTTP/2 writer has copied them to the connection's write buffer (or
// dropped them with the stream). The Arrow buffers therefore outlive Send,
// and an Allocator that tracks memory counts them until then; Close
// releases any gRPC kept.
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
	if s.send.cur.closeAsked.Load() || s.send.schema != nil && !rec.Schema().Equal(s.send.schema) {
		if err := s.nextStreamLocked(ctx, offset); err != nil {
			return err
		}
	}
	if s.send.schema == nil {
		if flightwire.HasDictionary(rec.Schema()) {
			return s.fail(permanentf("send", ErrUnsupportedSchema, "schema %s", rec.Schema()))
		}
		s.send.schema, s.send.schemaSent = rec.Schema(), false
	}

	v := s.opts.variant
	metaLen := len(`{"offset_id":18446744073709551615}`)
	if v == nil {
		s.send.meta = flightwire.AppendBatchMeta(s.send.meta[:0], offset, s.opts.Ordered, b.Spans, 0, 0)
		metaLen = len(s.send.meta) + len(`,"part":0000,"parts":0000`)
	}
	parts, err := s.plan(rec, metaLen)
	if err != nil {
		return s.fail(permanentf("send", err, "offset %d (%d rows)", offset, rec.NumRows()))
	}

	s.mark.Sent(offset)
	var first uint64 // the Zerobus variant's first offset_id of this batch
	if v != nil {
		if rec.NumRows() == 0 {
			// Nothing to write: durable with the batches before it.
			if s.send.cur.empty(offset) {
				s.mark.Advance(offset, 0)
			}
			s.send.last, s.send.any = offset, true
			return nil
		}
		first = s.send.cur.reserve(max(len(parts), 1), offset)
		s.send.meta = flightwire.AppendBatchMeta(s.send.meta[:0], first, false, nil, 0, 0)
	}
	if err := s.watchLocked(ctx); err != nil {
		return err
	}
	defer s.send.writing.Store(nil)
	if len(parts) == 0 {
		err = s.writeLocked(rec, s.send.meta)
	} else {
		for i, p := range parts {
			if v == nil {
				s.send.meta = flightwire.AppendBatchMeta(s.send.meta[:0], offset, s.opts.Ordered, b.Spans, i, len(parts))
			} else {
				s.send.meta = flightwire.AppendBatchMeta(s.send.meta[:0], first+uint64(i), false, nil, 0, 0)
			}
			part := rec.NewSlice(p.Lo, p.Hi)
			err = s.writeLocked(part, s.send.meta)
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

// watchLocked arranges for the Sink to be torn down if ctx ends while a
// write is in progress (a write blocked on flow control cannot be withdrawn,
// only cancelled with the stream), and marks the write in progress; the
// caller clears s.send.writing when the write is over. The watch is
// registered once per context, not once per Send (a lane sends every batch
// under the same context): its callback tears down only if a write under
// that context is in progress when it ends.
func (s *Sink) watchLocked(ctx context.Context) error {
	w := s.send.watch
	if w == nil || w.ctx != ctx {
		if w != nil {
			w.stop()
		}
		w = &ctxWatch{ctx: ctx}
		w.stop = context.AfterFunc(ctx, func() {
			if s.send.writing.Load() == w {
				s.fail(errBlockedWrite(ctx))
			}
		})
		s.send.watch = w
	}
	// Marked before ctx is checked: either this check sees ctx ended, or
	// the callback (which runs after ctx ended) sees the mark. The batch
	// is already counted as sent, so an ended ctx fails the Sink here as
	// the callback would.
	s.send.writing.Store(w)
	if ctx.Err() != nil {
		s.send.writing.Store(nil)
		return s.fail(errBlockedWrite(ctx))
	}
	return nil
}

// errBlockedWrite is the permanent error of a Send whose context ended
// during its write.
func errBlockedWrite(ctx context.Context) *Error {
	return &Error{Op: "send", Err: fmt.Errorf("context ended during a blocked write: %w", context.Cause(ctx)), permanent: true}
}

// ctxWatch is the registration of watchLocked for one context.
type ctxWatch struct {
	ctx  context.Context
	stop func() bool
}

// nextStreamLocked retires the current stream for a batch (offset) with
// another schema: it half-closes it, waits until its reader saw the server
// end it, checks that everything sent on it was acknowledged, and opens a
// new stream whose first batch will carry the new schema. On failure the
// Sink is dead and the permanent error is returned.
func (s *Sink) nextStreamLocked(ctx context.Context, offset uint64) error {
	old := s.send.cur
	old.retired.Store(true)
	s.send.schema = nil
	// A stream the server already ended refuses the half-close; its reader
	// has recorded how it ended.
	_ = old.stream.CloseSend()
	var wait <-chan time.Time
	if v := s.opts.variant; v != nil && v.MaxRotationWait > 0 {
		t := time.NewTimer(v.MaxRotationWait)
		defer t.Stop()
		wait = t.C
	}
	select {
	case <-old.readerDone:
		old.cancel()
	case <-wait:
		out, sent := s.mark.Outstanding()
		if out {
			return s.fail(permanentf("ack", ErrStreamEnded, "the old stream acknowledged nothing up to offset %d within MaxRotationWait", sent))
		}
		old.cancel()
		<-old.readerDone
	case <-ctx.Done():
		return s.fail(&Error{Op: "send", Err: fmt.Errorf("context ended while the old stream drained: %w", context.Cause(ctx)), permanent: true})
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
	why := "batch schema changed"
	if old.closeAsked.Load() {
		why = "server asked to rotate the stream"
	}
	s.opts.Logger.Info("flight: new DoPut stream", "reason", why, "endpoint", s.opts.Endpoint, "path", s.opts.Path,
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
// stream, stops the reader goroutine, closes the connection and releases
// every batch buffer a Send gave gRPC that gRPC has not given back, so that
// the caller's allocator is back where it was. Pending and
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
		if w := s.send.watch; w != nil {
			w.stop()
			s.send.watch = nil
		}
		cur := s.send.cur
		_ = cur.stream.CloseSend()
		s.send.Unlock()
		<-cur.readerDone
		t.Stop()
		s.cancel()
		_ = s.client.Close()
		s.releaseInflight()
		s.opts.Logger.Debug("flight: DoPut stream closed", "endpoint", s.opts.Endpoint, "path", s.opts.Path)
	})
	return nil
}

// releaseInflight releases the batch buffers gRPC still holds once the
// connection is closed: gRPC gives most back as it writes or drops them,
// shortly after their stream ended, but drops a message queued for a stream
// it had just cleaned up without giving it back (flightwire.Tracker).
// Waiting for those would never end; they are released here.
func (s *Sink) releaseInflight() {
	deadline := time.Now().Add(min(s.opts.CloseTimeout, 100*time.Millisecond))
	for s.inflight.Live() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // gRPC frees a cancelled stream's messages on its own goroutines
	}
	if n := s.inflight.ReleaseAll(); n > 0 {
		s.opts.Logger.Debug("flight: released batch buffers gRPC did not give back", "endpoint", s.opts.Endpoint, "path", s.opts.Path, "messages", n)
	}
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
			case errors.Is(err, io.EOF) && ps.closeAsked.Load():
				// The server closed a stream it asked to leave: expected
				// once it acknowledged everything sent on it.
				if out, sent := s.mark.Outstanding(); out {
					s.fail(permanentf("ack", ErrStreamEnded, "the server closed the stream it asked to rotate with offsets up to %d unacknowledged", sent))
				}
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
		if s.opts.variant == nil {
			if !a.Ready {
				s.mark.Advance(a.Offset, a.Records)
			}
			continue // a Zerobus ready or close-stream signal means nothing here
		}
		if !a.HasRecords {
			s.fail(permanentf("ack", ErrBadAck, "PutResult app_metadata %q lacks ack_up_to_records", pr.GetAppMetadata()))
			return
		}
		if a.Close && !ps.closeAsked.Swap(true) {
			s.opts.Logger.Info("flight: server asked to rotate the stream", "endpoint", s.opts.Endpoint, "path", s.opts.Path, "grace", a.CloseAfter)
		}
		if a.Ready {
			continue
		}
		offset, ok, err := ps.acked(a.Offset)
		if err != nil {
			s.fail(permanentf("ack", ErrBadAck, "%v", err))
			return
		}
		if ok {
			s.mark.Advance(offset, a.Records)
		}
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
		// Debug: the owner (a lane) reports failures once per state
		// change, classified and truncated; one Warn per stream would
		// repeat every attempt of a lane that is being refused.
		s.opts.Logger.Debug("flight: DoPut stream failed", "endpoint", s.opts.Endpoint, "path", s.opts.Path, "err", e)
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
