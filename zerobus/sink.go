package zerobus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
)

// event is what a physical stream reports to the sink.
type event struct {
	ack        int64 // durable up to this physical offset; valid if hasAck
	hasAck     bool
	closeAfter time.Duration // the server closes the stream after this; valid if close
	close      bool
}

// physConn is one physical stream (an EphemeralStream call or a DoPut).
// send is called only by the sink's writer goroutine, recv only by the
// stream's reader goroutine; abort may be called from anywhere, any number
// of times, and unblocks both. finish is called once, after abort, when no
// send can be running.
type physConn interface {
	send(f *frame, phys int64) error
	recv() (event, error)
	abort()
	finish()
}

// entry is one batch the lane handed over and the server has not yet
// acknowledged durably. Its frames are kept only until the writer has
// written them: the lane retains every unconfirmed batch and replays it on
// a new Sink, so a second copy here would double the memory for nothing.
type entry struct {
	offset   uint64        // the lane's logical offset
	schema   *arrow.Schema // the batch's schema (PROTO only: the stream's descriptor must match)
	frames   []frame       // the encoded batch, until written (nil afterwards)
	lastPhys int64         // physical offset of the last frame on the stream; valid once written
}

func (e *entry) release() { e.frames = nil }

// Sink is a Zerobus transport: it satisfies lanes.Transport structurally.
// See the package documentation for its state machine.
type Sink struct {
	opts Options
	// fl is the Flight mode: the flight sink with the Zerobus variant. The
	// fields below it serve the ephemeral mode only.
	fl *flight.Sink

	cc     *grpc.ClientConn
	open   func(ctx context.Context, sc *arrow.Schema) (physConn, error) // sc: the schema of the stream's batches
	encode func(rec arrow.RecordBatch) ([]frame, error)
	// enc is the PROTO encoder of the last schema Send saw; used only by
	// the goroutine calling Send.
	enc struct {
		schema *arrow.Schema
		proto  *protoEncoder
	}

	ctx    context.Context // cancelled by Close: bounds every stream
	cancel context.CancelFunc
	wake   chan struct{} // cap 1: the writer has work
	kick   chan struct{} // cap 1: the supervisor should look at a rotation
	done   chan struct{} // closed by Close
	wg     sync.WaitGroup

	// writeMu is held by the writer while it writes one entry's frames; a
	// rotation takes it to know the old stream is no longer written.
	writeMu sync.Mutex

	closeOnce sync.Once

	mu struct {
		sync.Mutex
		connSchema *arrow.Schema // PROTO: the schema conn's descriptor was derived from
		entries    []*entry      // logical order; entries[:unsent] are on the wire
		unsent     int
		conn       physConn
		nextPhys   int64     // next physical offset on conn
		ackedPhys  int64     // highest physical offset conn acknowledged; -1 none
		paused     bool      // a close-stream signal or a schema change: write nothing
		rotateBy   time.Time // the close-stream grace; zero for a schema change (no deadline)
		connEnded  bool      // the paused stream already ended
		writing    bool      // the writer is writing entries[unsent] to conn
		sendBroken bool      // a write failed: wait for the reader to report why
		lastSent   uint64
		hasSent    bool
		durable    uint64
		hasDur     bool
		progress   time.Time // when the ack watermark last moved
		err        error     // terminal
		closed     bool
		changed    chan struct{} // closed and replaced when durable/err/closed change
	}
}

// Dial connects, opens the first stream and returns a Sink ready for Send.
// Errors are *Error; a transient one (e.g. Unavailable) means try again;
// options it refuses (ErrInvalidOptions, e.g. a TLS file that is missing or
// does not parse) are not Retryable.
// The caller must Close the Sink.
func Dial(ctx context.Context, opts Options) (*Sink, error) {
	if err := opts.validate(); err != nil {
		// Not retryable: a TLS file that vanished or does not parse does
		// not heal by dialling again.
		return nil, &Error{Op: "dial", StreamDead: true, Err: err}
	}
	o := opts
	o.withDefaults()
	o.Endpoint = dialTarget(o.Endpoint)
	if o.Mode == ModeFlight {
		return dialFlight(ctx, o)
	}
	creds, err := o.credentials()
	if err != nil {
		return nil, &Error{Op: "dial", StreamDead: true, Err: err}
	}
	dopts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallSendMsgSize(o.MaxMessageSize),
			grpc.MaxCallRecvMsgSize(o.MaxMessageSize),
		),
	}
	target := o.Endpoint
	if o.Dialer != nil {
		dopts = append(dopts, grpc.WithContextDialer(o.Dialer))
		target = "passthrough:///" + target
	}
	cc, err := grpc.NewClient(target, dopts...)
	if err != nil {
		return nil, &Error{Op: "dial", Err: err}
	}
	s := &Sink{
		opts: o,
		cc:   cc,
		wake: make(chan struct{}, 1),
		kick: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mu.connSchema = o.Schema
	s.mu.ackedPhys = -1
	s.mu.changed = make(chan struct{})
	if err := s.setupEphemeral(); err != nil {
		s.cancel()
		cc.Close()
		return nil, err
	}
	conn, err := s.openWithin(ctx, o.Schema)
	if err != nil {
		s.cancel()
		cc.Close()
		return nil, err
	}
	s.mu.conn = conn
	s.mu.progress = o.Clock.Now()
	s.wg.Add(3)
	go s.reader(conn)
	go s.writer()
	go s.supervisor()
	o.Logger.Info("zerobus: stream open", "endpoint", o.Endpoint, "table", o.Table, "mode", o.Mode.String())
	return s, nil
}

// openWithin opens one stream, bounded by ctx, OpenTimeout and Close.
func (s *Sink) openWithin(ctx context.Context, sc *arrow.Schema) (physConn, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.OpenTimeout)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	return s.open(ctx, sc)
}

// Send hands b to the sink under the lane's logical offset and returns once
// it is encoded and queued for the wire; it never waits for an ack. Send
// keeps its own references (Flight mode) or its encoding until it is
// written (ephemeral mode): the caller keeps ownership of b. Send is
// called from one goroutine.
func (s *Sink) Send(ctx context.Context, offset uint64, b *batch.Batch) error {
	if s.fl != nil {
		return s.sendFlight(ctx, offset, b)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	err := s.usableLocked()
	if err == nil && s.mu.hasSent && offset <= s.mu.lastSent {
		err = fmt.Errorf("%w: offset %d after %d", ErrOffsetOrder, offset, s.mu.lastSent)
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	frames, err := s.encode(b.Rec)
	if err != nil {
		return &Error{Op: "encode", Code: codes.InvalidArgument, Err: err}
	}
	e := &entry{offset: offset, frames: frames}
	if s.opts.Encoding == EncodingProto {
		e.schema = b.Rec.Schema()
	}
	s.mu.Lock()
	if err := s.usableLocked(); err != nil {
		s.mu.Unlock()
		e.release()
		return err
	}
	s.mu.entries = append(s.mu.entries, e)
	s.mu.lastSent, s.mu.hasSent = offset, true
	s.mu.Unlock()
	signal(s.wake)
	return nil
}

func (s *Sink) usableLocked() error {
	if s.mu.closed {
		return ErrClosed
	}
	return s.mu.err
}

// WaitDurable blocks until every batch sent with an offset <= offset is
// durably acknowledged (nil), the sink failed (its *Error), it was closed
// (ErrClosed) or ctx ended (ctx.Err()).
func (s *Sink) WaitDurable(ctx context.Context, offset uint64) error {
	if s.fl != nil {
		return s.waitFlight(ctx, offset)
	}
	for {
		s.mu.Lock()
		if s.mu.hasDur && s.mu.durable >= offset {
			s.mu.Unlock()
			return nil
		}
		if err := s.usableLocked(); err != nil {
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

// Close tears the stream down without waiting for acks, releases what the
// sink retained and waits for its goroutines. Pending Send and WaitDurable
// calls return ErrClosed. Close is idempotent; it returns nil.
//
// Its bound: Close never waits for the server. It cancels the stream, and
// its goroutines end with the cancellation whatever the server does (a
// handler that never reads or answers included); in ModeFlight it is the
// Flight sink's Close, bounded by flight.DefaultCloseTimeout.
func (s *Sink) Close() error {
	if s.fl != nil {
		return s.fl.Close()
	}
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.mu.closed = true
		s.broadcastLocked()
		conn := s.mu.conn
		s.mu.Unlock()
		close(s.done)
		s.cancel()
		conn.abort()
		s.wg.Wait()
		conn.finish()
		s.mu.Lock()
		for _, e := range s.mu.entries {
			e.release()
		}
		s.mu.entries = nil
		s.mu.Unlock()
		s.cc.Close()
	})
	return nil
}

func (s *Sink) broadcastLocked() {
	close(s.mu.changed)
	s.mu.changed = make(chan struct{})
}

// fail makes err terminal (the first one wins) and aborts the stream.
func (s *Sink) fail(err error) {
	s.mu.Lock()
	if s.mu.err != nil || s.mu.closed {
		s.mu.Unlock()
		return
	}
	s.mu.err = err
	s.broadcastLocked()
	conn := s.mu.conn
	s.mu.Unlock()
	// Debug: the owner (a lane) reports failures, classified and rate-limited.
	s.opts.Logger.Debug("zerobus: stream failed", "table", s.opts.Table, "err", err)
	conn.abort()
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// writer is the only goroutine that writes to a stream. It writes entries
// in order, each with consecutive physical offsets, while the sink is not
// paused, failed or closed.
func (s *Sink) writer() {
	defer s.wg.Done()
	for {
		select {
		case <-s.done:
			return
		case <-s.wake:
		}
		for s.writeOne() {
		}
	}
}

func (s *Sink) writeOne() bool {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	if s.mu.err != nil || s.mu.closed || s.mu.paused || s.mu.sendBroken || s.mu.unsent >= len(s.mu.entries) {
		s.mu.Unlock()
		return false
	}
	e := s.mu.entries[s.mu.unsent]
	if e.schema != nil && !e.schema.Equal(s.mu.connSchema) {
		// Another schema: e goes on a new stream with its own descriptor,
		// once everything written on this one is acknowledged (the
		// close-stream rotation's path, without its grace deadline).
		s.mu.paused, s.mu.rotateBy = true, time.Time{}
		s.mu.Unlock()
		s.opts.Logger.Info("zerobus: batch schema changed, moving to a new stream", "table", s.opts.Table, "offset", e.offset)
		signal(s.kick)
		return false
	}
	conn, first, n := s.mu.conn, s.mu.nextPhys, int64(len(e.frames))
	s.mu.nextPhys += n
	s.mu.writing = true
	s.mu.Unlock()

	var err error
	for i := range e.frames {
		if err = conn.send(&e.frames[i], first+int64(i)); err != nil {
			break
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.writing = false
	// Written (or partly written on a broken stream): the frames are not
	// needed again, whatever happens to the stream. A rotation waits for
	// their acks; a stream that ends without them fails the Sink and the
	// lane replays the batch.
	e.release()
	if s.mu.paused {
		signal(s.kick)
	}
	if err != nil {
		// gRPC reports a broken stream's status on the receive side; the
		// reader fails the sink (or the rotation replaces the stream).
		s.mu.sendBroken = true
		s.opts.Logger.Debug("zerobus: write failed", "err", err)
		return false
	}
	if s.mu.unsent == 0 {
		// Nothing was outstanding: the ack clock starts now.
		s.mu.progress = s.opts.Clock.Now()
	}
	e.lastPhys = first + n - 1
	s.mu.unsent++
	s.popLocked()
	return true
}

// popLocked retires every sent entry the ack watermark covers. An entry
// without frames (a batch of rejected records only) carries the physical
// offset written before it, so it becomes durable together with its
// predecessors.
func (s *Sink) popLocked() {
	n := 0
	for n < s.mu.unsent && s.mu.entries[n].lastPhys <= s.mu.ackedPhys {
		e := s.mu.entries[n]
		e.release()
		s.mu.durable, s.mu.hasDur = e.offset, true
		n++
	}
	if n == 0 {
		return
	}
	rest := copy(s.mu.entries, s.mu.entries[n:])
	clear(s.mu.entries[rest:])
	s.mu.entries = s.mu.entries[:rest]
	s.mu.unsent -= n
	s.mu.progress = s.opts.Clock.Now()
	s.broadcastLocked()
	if s.mu.paused && s.mu.unsent == 0 {
		signal(s.kick)
	}
}

// reader consumes one stream's events until it fails.
func (s *Sink) reader(conn physConn) {
	defer s.wg.Done()
	for {
		ev, err := conn.recv()
		if err != nil {
			s.connEnded(conn, err)
			return
		}
		if ev.hasAck {
			s.onAck(conn, ev.ack)
		}
		if ev.close {
			s.onCloseSignal(conn, ev.closeAfter)
		}
	}
}

func (s *Sink) onAck(conn physConn, phys int64) {
	s.mu.Lock()
	if conn != s.mu.conn || s.mu.err != nil {
		s.mu.Unlock()
		return
	}
	if phys >= s.mu.nextPhys {
		next := s.mu.nextPhys
		s.mu.Unlock()
		s.fail(protocolError("ack up to offset %d, but only offsets below %d were sent", phys, next))
		return
	}
	if phys > s.mu.ackedPhys {
		s.mu.ackedPhys = phys
		s.popLocked()
	}
	s.mu.Unlock()
}

func (s *Sink) onCloseSignal(conn physConn, after time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if conn != s.mu.conn || (s.mu.paused && !s.mu.rotateBy.IsZero()) {
		return
	}
	if s.opts.MaxRotationWait > 0 {
		after = min(after, s.opts.MaxRotationWait)
	}
	s.mu.paused = true
	s.mu.rotateBy = s.opts.Clock.Now().Add(after)
	s.opts.Logger.Info("zerobus: server asked to rotate the stream", "table", s.opts.Table, "grace", after)
	signal(s.kick)
}

func (s *Sink) connEnded(conn physConn, err error) {
	s.mu.Lock()
	if conn != s.mu.conn {
		s.mu.Unlock()
		return
	}
	if s.mu.paused {
		// The server closed the stream it asked us to leave: rotate now.
		s.mu.connEnded = true
		s.mu.Unlock()
		signal(s.kick)
		return
	}
	s.mu.Unlock()
	s.fail(wireError("recv", err, true))
}

// supervisor runs rotations and the lack-of-ack timeout.
func (s *Sink) supervisor() {
	defer s.wg.Done()
	poll := min(max(s.opts.AckTimeout/8, 10*time.Millisecond), 250*time.Millisecond)
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-s.kick:
		case <-t.C:
		}
		s.checkAckTimeout()
		s.maybeRotate()
	}
}

func (s *Sink) checkAckTimeout() {
	s.mu.Lock()
	// A close-stream grace bounds its own wait; a schema change's wait
	// for acks (rotateBy zero) is bounded by the ack timeout.
	stalled := s.mu.err == nil && (!s.mu.paused || s.mu.rotateBy.IsZero()) && s.mu.unsent > 0 &&
		s.opts.Clock.Now().Sub(s.mu.progress) > s.opts.AckTimeout
	s.mu.Unlock()
	if stalled {
		s.fail(&Error{Op: "ack", Code: codes.DeadlineExceeded, StreamDead: true,
			Err: fmt.Errorf("%w (%s)", ErrAckTimeout, s.opts.AckTimeout)})
	}
}

// maybeRotate acts on a close-stream signal. Once the paused stream has
// acknowledged everything written to it, it moves to a new stream, on
// which the writer goes on with the batches not yet written: nothing is
// lost and the lane sees no failure. When the stream ends, or the grace
// (the announced duration, capped by Options.MaxRotationWait) runs out,
// with written batches unacknowledged, it fails the Sink instead: their
// frames are gone, and the lane replays them on a new Sink.
func (s *Sink) maybeRotate() {
	s.mu.Lock()
	if s.mu.err != nil || s.mu.closed || !s.mu.paused {
		s.mu.Unlock()
		return
	}
	drained := s.mu.unsent == 0 && !s.mu.writing && !s.mu.sendBroken
	schemaChange := s.mu.rotateBy.IsZero()
	over := s.mu.connEnded || (!schemaChange && !s.opts.Clock.Now().Before(s.mu.rotateBy))
	outstanding, ended := s.mu.unsent, s.mu.connEnded
	if s.mu.writing || s.mu.sendBroken {
		outstanding++
	}
	old, sc := s.mu.conn, s.mu.connSchema
	if len(s.mu.entries) > 0 && s.mu.entries[0].schema != nil {
		// The next batch to write sets the new stream's schema: a
		// close-stream rotation and a schema change then cost one stream.
		sc = s.mu.entries[0].schema
	}
	s.mu.Unlock()
	if !drained {
		if over {
			why, reason := "the rotation grace ran out", "asked to rotate"
			if schemaChange {
				reason = "moving to a new stream for a schema change"
			}
			if ended {
				why = "the server ended the stream"
			}
			s.fail(&Error{Op: "ack", StreamDead: true, Err: fmt.Errorf(
				"%w: %s, %s with %d written batches unacknowledged; the lane replays them on a new Sink",
				ErrStreamEnded, reason, why, outstanding)})
		}
		return
	}
	old.abort()
	s.writeMu.Lock()
	old.finish() // no write can be running: the writer is paused and idle
	s.writeMu.Unlock()

	var (
		conn physConn
		err  error
	)
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			select {
			case <-s.done:
				return
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		if conn, err = s.openWithin(s.ctx, sc); err == nil || IsPermanentCode(err) {
			break
		}
	}
	if err != nil {
		s.fail(wireError("create_stream", err, true))
		return
	}
	s.mu.Lock()
	if s.mu.err != nil || s.mu.closed {
		s.mu.Unlock()
		conn.abort()
		conn.finish()
		return
	}
	queued := len(s.mu.entries) // none written: all still hold their frames
	s.mu.conn, s.mu.connSchema = conn, sc
	s.mu.unsent, s.mu.nextPhys, s.mu.ackedPhys = 0, 0, -1
	s.mu.paused, s.mu.connEnded, s.mu.sendBroken = false, false, false
	s.mu.progress = s.opts.Clock.Now()
	s.mu.Unlock()
	s.opts.Logger.Info("zerobus: rotated to a new stream", "table", s.opts.Table, "queued", queued)
	s.wg.Add(1)
	go s.reader(conn)
	signal(s.wake)
}

// IsPermanentCode reports whether err carries one of the gRPC codes the
// service uses for requests that retrying cannot fix.
func IsPermanentCode(err error) bool {
	var ze *Error
	if errors.As(err, &ze) {
		return permanentCodes[ze.Code]
	}
	return false
}
