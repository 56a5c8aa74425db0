package server

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/diskstatus"
	"github.com/thalweg/thalweg/internal/limits"
)

// acker writes the server's side of one stream: cumulative durability acks
// and the close-stream signal. Only the session's ack loop calls it.
type acker interface {
	ack(offset int64, records uint64) error
	closeSignal(grace time.Duration, offset int64, records uint64) error
}

// pendingAck is one received message waiting for its table sync.
type pendingAck struct {
	seq     uint64 // table seq that must be synced
	offset  int64  // the message's offset_id
	records uint64 // records received on this stream up to and including it
	bytes   int64  // pending-budget bytes held until acknowledged
}

// session is the state one stream shares between its receive goroutine
// (which stores records and enqueues pendingAcks) and its ack loop (which
// runs on the handler goroutine and is the only sender after setup).
type session struct {
	srv    *Server
	id     string
	table  *table
	budget *limits.StreamBudget // the stream's share of srv.pending
	work   chan struct{}        // cap 1: a pendingAck was enqueued
	mu     struct {
		sync.Mutex
		pending []pendingAck
		held    int64 // budget bytes of pending
		ended   bool  // end ran: nothing more is reserved
	}
}

func (s *Server) newSession(t *table) *session {
	s.stats.streams.Add(1)
	return &session{srv: s, id: s.newStreamID(), table: t, work: make(chan struct{}, 1),
		budget: limits.NewStreamBudget(&s.pending, s.opts.MaxStreamPendingBytes)}
}

// openTable opens the table a new stream writes to; a table whose
// storage failed refuses new streams with that failure's status.
func (s *Server) openTable(name string) (*table, error) {
	t, err := s.store.table(name)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "opening table: %v", err)
	}
	if err := t.failed(); err != nil {
		return nil, err
	}
	return t, nil
}

// serve runs an opened stream to its end: it sends the stream's first
// message (hello) within Options.AckSendTimeout, then runs receive (which
// stores what the client sends until it half-closes or fails) on its own
// goroutine and the ack loop (run) on the caller's, the handler goroutine,
// and returns the stream's end status.
func (ss *session) serve(ctx context.Context, hello func() error, a acker, receive func() error) error {
	if err := ss.send(hello); err != nil {
		ss.logStall(err)
		return err
	}
	recvDone := make(chan error, 1)
	ss.srv.wg.Add(1)
	go func() {
		defer ss.srv.wg.Done()
		recvDone <- receive()
	}()
	return ss.run(ctx, a, recvDone)
}

// send performs one Send of the stream within Options.AckSendTimeout; see
// limits.SendWithin.
func (ss *session) send(f func() error) error {
	return limits.SendWithin(&ss.srv.wg, ss.srv.opts.AckSendTimeout, f)
}

// decoding reserves what decoding a message is estimated to take from the
// stream's budget, before it is decoded; the caller calls release once the
// decoded records are stored (they then hold their own reservation).
func (ss *session) decoding(cost int64) (release func(), err error) {
	if cost > ss.srv.opts.MaxDecodedMessageBytes {
		return nil, status.Errorf(codes.InvalidArgument,
			"message would take about %d bytes to decode, above the per-message limit MaxDecodedMessageBytes %d",
			cost, ss.srv.opts.MaxDecodedMessageBytes)
	}
	if err := ss.budget.Reserve(cost); err != nil {
		return nil, err
	}
	return func() { ss.budget.Release(cost) }, nil
}

// store appends the records of one message and queues its ack.
// Its bytes count against the server's MaxPendingBytes until acknowledged.
func (ss *session) store(lines [][]byte, offset int64, cumRecords uint64) error {
	var size int64
	for _, l := range lines {
		size += int64(len(l)) + 1
	}
	ss.mu.Lock()
	if ss.mu.ended {
		ss.mu.Unlock()
		return status.Error(codes.Canceled, "stream ended")
	}
	if err := ss.budget.Reserve(size); err != nil {
		ss.mu.Unlock()
		return err
	}
	ss.mu.held += size
	ss.mu.Unlock()
	seq, err := ss.table.append(lines)
	if err != nil {
		return diskstatus.Error("storing records", err)
	}
	ss.srv.stats.records.Add(int64(len(lines)))
	ss.mu.Lock()
	ss.mu.pending = append(ss.mu.pending, pendingAck{seq: seq, offset: offset, records: cumRecords, bytes: size})
	ss.mu.Unlock()
	select {
	case ss.work <- struct{}{}:
	default:
	}
	return nil
}

// ackable pops every pendingAck whose records are synced and returns the
// last one, and whether anything is still pending.
func (ss *session) ackable(synced uint64) (last pendingAck, ok, more bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	n := 0
	var freed int64
	for n < len(ss.mu.pending) && ss.mu.pending[n].seq <= synced {
		freed += ss.mu.pending[n].bytes
		n++
	}
	ss.mu.held -= freed
	ss.budget.Release(freed)
	if n > 0 {
		last, ok = ss.mu.pending[n-1], true
		ss.mu.pending = ss.mu.pending[n:]
	}
	return last, ok, len(ss.mu.pending) > 0
}

// run is the ack loop. It returns when the stream must end: the receive
// side failed (its status is returned), the client half-closed and every
// record was acknowledged (nil), the rotation grace ran out (nil), or the
// stream's context ended.
func (ss *session) run(ctx context.Context, a acker, recvDone <-chan error) error {
	defer ss.end()
	o := &ss.srv.opts
	var rotate, grace <-chan time.Time
	if o.RotateEvery > 0 {
		t := time.NewTimer(o.RotateEvery)
		defer t.Stop()
		rotate = t.C
	}
	lastOff, lastRecords := int64(-1), uint64(0)
	halfClosed := false
	for {
		synced, syncCh, err := ss.table.state()
		if err != nil {
			return diskstatus.Error("table storage", err)
		}
		last, ok, more := ss.ackable(synced)
		if ok {
			if o.AckDelay > 0 && !sleep(ctx, o.AckDelay) {
				return status.FromContextError(ctx.Err()).Err()
			}
			lastOff, lastRecords = last.offset, last.records
			if err := ss.send(func() error { return a.ack(last.offset, last.records) }); err != nil {
				ss.logStall(err)
				return err
			}
		}
		if halfClosed && !more {
			return nil
		}
		if !more {
			syncCh = nil
		}
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-ss.srv.stop:
			return status.Error(codes.Unavailable, "server stopping")
		case err := <-recvDone:
			recvDone = nil
			if !errors.Is(err, io.EOF) {
				return err
			}
			halfClosed = true
		case <-ss.work:
		case <-syncCh:
		case <-rotate:
			rotate = nil
			ss.srv.stats.rotations.Add(1)
			ss.srv.opts.Logger.Info("zerobus server: rotating stream", "stream", ss.id, "grace", o.RotateGrace)
			off, recs := lastOff, lastRecords
			if err := ss.send(func() error { return a.closeSignal(o.RotateGrace, off, recs) }); err != nil {
				ss.logStall(err)
				return err
			}
			t := time.NewTimer(o.RotateGrace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			return nil
		}
	}
}

func (ss *session) logStall(err error) {
	if limits.IsStalled(err) {
		ss.srv.opts.Logger.Warn("zerobus server: stream ended: the client does not read its acknowledgements",
			"stream", ss.id, "timeout", ss.srv.opts.AckSendTimeout)
	}
}

// end gives back every budget byte the session still holds (records stored
// but never acknowledged on this stream) and stops further reservations.
func (ss *session) end() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.mu.ended = true
	ss.budget.Release(ss.mu.held)
	ss.mu.held = 0
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
