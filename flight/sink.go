package flight

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc/metadata"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight/internal/wire"
)

// Sink is one long-lived DoPut stream to a Flight receiver. It satisfies the
// lanes.Transport contract structurally: Send writes a batch and returns
// without waiting for an acknowledgement, a reader goroutine turns the
// server's cumulative PutResults into an acknowledged watermark, and
// WaitDurable blocks on that watermark.
//
// Goroutine safety: Send must be called from one goroutine at a time (a
// lane's submitter); WaitDurable may be called from any number of goroutines
// concurrently with Send; Close may be called from any goroutine, more than
// once, and unblocks both.
//
// A Sink is not restartable: once any method returns a permanent error the
// stream is dead and every later Send or WaitDurable returns that error
// (unless the offset waited for was already acknowledged). Close it and Dial
// a new one.
type Sink struct {
	opts    Options
	desc    *flight.FlightDescriptor
	client  flight.Client
	stream  flight.FlightService_DoPutClient
	cancel  context.CancelFunc // cancels the stream; idempotent
	ipcOpts []ipc.Option
	descLen int
	now     func() time.Time

	// send is the writer side. Send holds it for the duration of a write;
	// Close takes it to half-close the stream.
	send struct {
		sync.Mutex
		w      *flight.Writer
		pw     *putWriter
		schema *arrow.Schema
		last   uint64
		any    bool
		meta   []byte // reused app_metadata buffer (gRPC marshals before Send returns)
		closed bool
	}

	// mu guards the acknowledgement state, shared by the reader goroutine,
	// WaitDurable callers, the ack-timeout timer and Send.
	mu struct {
		sync.Mutex
		sent, acked       uint64
		anySent, anyAcked bool
		records           uint64        // ack_up_to_records of the latest ack
		err               *Error        // terminal; first failure wins
		changed           chan struct{} // closed and replaced on every change
		progress          time.Time     // last watermark move or start of the outstanding period
		timer             *time.Timer   // ack-timeout watchdog; nil when disarmed
	}

	readerDone chan struct{}
	closeOnce  sync.Once
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
		opts:       opts,
		desc:       &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: append([]string(nil), opts.Path...)},
		client:     client,
		now:        time.Now,
		readerDone: make(chan struct{}),
	}
	for _, p := range opts.Path {
		s.descLen += len(p) + 4
	}
	s.mu.changed = make(chan struct{})
	s.ipcOpts = []ipc.Option{ipc.WithAllocator(opts.Allocator)}
	switch opts.Compression {
	case CompressionLZ4:
		s.ipcOpts = append(s.ipcOpts, ipc.WithLZ4())
	case CompressionZstd:
		s.ipcOpts = append(s.ipcOpts, ipc.WithZstd())
	}

	// The stream outlives ctx, so it gets its own cancellation; ctx only
	// bounds opening it.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if opts.Token != "" {
		sctx = metadata.AppendToOutgoingContext(sctx, "authorization", "Bearer "+opts.Token)
	}
	stopDial := context.AfterFunc(ctx, cancel)
	stream, err := client.DoPut(sctx)
	if !stopDial() || err != nil {
		cancel()
		_ = client.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, dialError(err)
	}
	s.stream, s.cancel = stream, cancel
	go s.readAcks()
	opts.Logger.Debug("flight: DoPut stream open", "endpoint", opts.Endpoint, "path", opts.Path)
	return s, nil
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
// for transmission; it never waits for an acknowledgement and does not keep
// b after returning.
//
// offset must be greater than the offset of the previous Send. The first
// batch fixes the stream's schema; a batch with another schema fails with
// ErrSchemaChanged (permanent: a new stream is needed). A batch larger than
// MaxMessageSize is split by rows into parts that share offset.
//
// If ctx ends before anything is written, Send returns ctx.Err() and the
// stream is intact. If ctx ends while a write is blocked on flow control, the
// stream is torn down (a half-sent message cannot be withdrawn) and Send
// returns a permanent error.
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
	if s.send.w == nil {
		if hasDictionary(rec.Schema()) {
			return s.fail(permanentf("send", ErrUnsupportedSchema, "schema %s", rec.Schema()))
		}
		s.send.schema = rec.Schema()
		s.send.pw = &putWriter{s: s.stream}
		s.send.w = flight.NewRecordWriter(s.send.pw, append([]ipc.Option{ipc.WithSchema(s.send.schema)}, s.ipcOpts...)...)
		s.send.w.SetFlightDescriptor(s.desc)
	} else if !rec.Schema().Equal(s.send.schema) {
		return s.fail(permanentf("send", ErrSchemaChanged, "offset %d", offset))
	}

	s.send.meta = wire.AppendBatchMeta(s.send.meta[:0], offset, b.Spans, 0, 0)
	parts, err := s.plan(rec, len(s.send.meta)+len(`,"part":0000,"parts":0000`))
	if err != nil {
		return s.fail(permanentf("send", err, "offset %d (%d rows)", offset, rec.NumRows()))
	}

	s.noteSent(offset)
	stop := context.AfterFunc(ctx, func() {
		s.fail(&Error{Op: "send", Err: fmt.Errorf("context ended during a blocked write: %w", context.Cause(ctx)), permanent: true})
	})
	defer stop()
	if len(parts) == 0 {
		err = s.send.w.WriteWithAppMetadata(rec, s.send.meta)
	} else {
		for i, p := range parts {
			s.send.meta = wire.AppendBatchMeta(s.send.meta[:0], offset, b.Spans, i, len(parts))
			part := rec.NewSlice(p.lo, p.hi)
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

// sendFailed turns a failed stream write into the stream's terminal error.
// gRPC reports a stream the server ended as io.EOF on the send side; the
// status is delivered to the receive side, so wait (bounded) for the reader
// to record it.
func (s *Sink) sendFailed(err error) error {
	if errors.Is(err, io.EOF) {
		t := time.NewTimer(s.opts.CloseTimeout)
		select {
		case <-s.readerDone:
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
// durably acknowledged, ctx ends (ctx.Err(), not permanent), or the stream
// fails (the permanent stream error). It never sends anything itself.
func (s *Sink) WaitDurable(ctx context.Context, offset uint64) error {
	for {
		s.mu.Lock()
		if s.mu.anyAcked && s.mu.acked >= offset {
			s.mu.Unlock()
			return nil
		}
		if s.mu.err != nil {
			err := s.mu.err
			s.mu.Unlock()
			return err
		}
		ch := s.mu.changed
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Acked returns the acknowledged watermark: the highest offset the server
// declared durable on this stream, and ack_up_to_records of that ack. ok is
// false before the first acknowledgement.
func (s *Sink) Acked() (offset, records uint64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.acked, s.mu.records, s.mu.anyAcked
}

// Err returns the stream's terminal error, or nil while it is healthy.
func (s *Sink) Err() error {
	if e := s.failure(); e != nil {
		return e
	}
	return nil
}

// Close half-closes the send side so the server can finish the stream
// cleanly, waits at most CloseTimeout for it to do so, then cancels the
// stream, stops the reader goroutine and closes the connection. Pending and
// later WaitDurable calls whose offset is not yet acknowledged, and later
// Send calls, return ErrClosed. Close always returns nil; a second call is a
// no-op.
func (s *Sink) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		if s.mu.err == nil {
			s.setErrLocked(&Error{Op: "close", Err: ErrClosed, permanent: true})
		}
		s.stopTimerLocked()
		s.mu.Unlock()

		// A Send blocked on flow control holds the send lock; the timer
		// cancels the stream so that it returns and the lock is free.
		t := time.AfterFunc(s.opts.CloseTimeout, s.cancel)
		s.send.Lock()
		s.send.closed = true
		if s.send.w != nil {
			_ = s.send.w.Close() // releases encoder state; writes nothing
		}
		_ = s.stream.CloseSend()
		s.send.Unlock()
		<-s.readerDone
		t.Stop()
		s.cancel()
		_ = s.client.Close()
		s.opts.Logger.Debug("flight: DoPut stream closed", "endpoint", s.opts.Endpoint, "path", s.opts.Path)
	})
	return nil
}

// readAcks is the reader goroutine: it owns stream.Recv and runs until the
// stream ends.
func (s *Sink) readAcks() {
	defer close(s.readerDone)
	for {
		pr, err := s.stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				s.fail(&Error{Op: "ack", Err: ErrStreamEnded, permanent: true})
			} else {
				s.fail(streamError("ack", err))
			}
			return
		}
		a, err := wire.ParseAck(pr.GetAppMetadata())
		if err != nil {
			s.fail(permanentf("ack", ErrBadAck, "%v", err))
			return
		}
		if a.Ready {
			continue
		}
		s.advance(a.Offset, a.Records)
	}
}

func (s *Sink) advance(offset, records uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.anyAcked && offset <= s.mu.acked {
		return
	}
	s.mu.acked, s.mu.anyAcked, s.mu.records = offset, true, records
	s.mu.progress = s.now()
	s.broadcastLocked()
}

// noteSent records offset as sent before it is written, so that the ack
// timeout covers it.
func (s *Sink) noteSent(offset uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.outstandingLocked() {
		// The silence clock starts when something becomes outstanding, not at
		// the last ack, which may be long ago on an idle stream.
		s.mu.progress = s.now()
	}
	s.mu.sent, s.mu.anySent = offset, true
	if s.opts.AckTimeout > 0 && s.mu.timer == nil && s.mu.err == nil {
		s.mu.timer = time.AfterFunc(s.opts.AckTimeout, s.checkAckTimeout)
	}
}

func (s *Sink) outstandingLocked() bool {
	return s.mu.anySent && (!s.mu.anyAcked || s.mu.acked < s.mu.sent)
}

// checkAckTimeout is the watchdog. It re-arms itself for the remaining
// silence budget while batches are outstanding and disarms when none are
// (noteSent re-arms it).
func (s *Sink) checkAckTimeout() {
	s.mu.Lock()
	s.mu.timer = nil
	if s.mu.err != nil || !s.outstandingLocked() {
		s.mu.Unlock()
		return
	}
	silent := s.now().Sub(s.mu.progress)
	if silent < s.opts.AckTimeout {
		s.mu.timer = time.AfterFunc(s.opts.AckTimeout-silent, s.checkAckTimeout)
		s.mu.Unlock()
		return
	}
	sent, acked, any := s.mu.sent, s.mu.acked, s.mu.anyAcked
	s.mu.Unlock()
	what := "nothing acknowledged yet"
	if any {
		what = fmt.Sprintf("acknowledged up to %d", acked)
	}
	s.fail(permanentf("ack", ErrAckTimeout, "%v of silence, sent up to %d, %s", silent.Round(time.Millisecond), sent, what))
}

func (s *Sink) stopTimerLocked() {
	if s.mu.timer != nil {
		s.mu.timer.Stop()
		s.mu.timer = nil
	}
}

func (s *Sink) broadcastLocked() {
	close(s.mu.changed)
	s.mu.changed = make(chan struct{})
}

func (s *Sink) setErrLocked(e *Error) {
	s.mu.err = e
	s.broadcastLocked()
}

// fail records e as the terminal error (the first failure wins), wakes every
// waiter and cancels the stream, which unblocks a blocked Send and the
// reader. It returns the terminal error.
func (s *Sink) fail(e *Error) *Error {
	s.mu.Lock()
	if s.mu.err == nil {
		s.setErrLocked(e)
		if !errors.Is(e, ErrClosed) {
			// Debug: the owner (a lane) reports failures once per state
			// change, classified and truncated; one Warn per stream would
			// repeat every attempt of a lane that is being refused.
			s.opts.Logger.Debug("flight: DoPut stream failed", "endpoint", s.opts.Endpoint, "path", s.opts.Path, "err", e)
		}
	}
	s.stopTimerLocked()
	e = s.mu.err
	s.mu.Unlock()
	if !errors.Is(e, ErrClosed) {
		s.cancel()
	}
	return e
}

// failure returns the terminal error or nil. It returns error rather than
// *Error so that a healthy stream yields a true nil interface.
func (s *Sink) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.err == nil {
		return nil
	}
	return s.mu.err
}

func hasDictionary(sc *arrow.Schema) bool {
	for _, f := range sc.Fields() {
		if typeHasDictionary(f.Type) {
			return true
		}
	}
	return false
}

func typeHasDictionary(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return true
	case arrow.NestedType:
		for _, f := range t.Fields() {
			if typeHasDictionary(f.Type) {
				return true
			}
		}
	}
	return false
}
