package offsetstore

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

type opKind uint8

const (
	opWatermark opKind = iota // CommitDelivered / CommitCoverage
	opSet                     // SetPosition
	opLower                   // LowerCoverage
	opReset                   // Reset / ResetDestination
	opBarrier                 // Flush / Close: forces a group, writes nothing
)

// mark is the highest position one request carries for one partition.
type mark struct {
	partition string
	pos       Position
}

// request is one call waiting for durability. Its ticket fixes its place in
// the callback order; err is its outcome, written under Store.mu before it
// moves to the ready list and read by the notifier after.
type request struct {
	ticket uint64
	op     opKind
	cb     func(error)
	err    error

	kind  kind // opWatermark
	dest  string
	marks []mark // opWatermark; opSet: the one position, set on both kinds

	partition     string // opReset
	allPartitions bool
}

// group is one Pebble batch: the requests with tickets in (previous
// group's last, last]. writes are what becomes durable with it.
type group struct {
	id            uint64
	epoch         uint64 // Store.mu.epoch when taken; a recovery makes older groups moot
	last          uint64
	confirmations int
	writes        []write
	reported      bool // guarded by Store.mu: this group's own completion was seen
}

type write struct {
	key wmKey
	pos Position
	del bool
}

// barrierRecord is the WAL payload of a group that changes no key: it gives
// the group a WAL position, so its sync is ordered after every earlier group.
var barrierRecord = []byte("thalweg.offsetstore.barrier")

// commitLoop is the committer goroutine: it turns the queue into group
// commits, at most MaxInFlight awaiting their sync at once.
func (s *Store) commitLoop() {
	defer close(s.committerDone)
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
		}
		for {
			// Take the slot before the requests: while every slot is busy,
			// arrivals keep accumulating into the next, larger group.
			select {
			case s.slots <- struct{}{}:
			case <-s.stop:
				return
			}
			g, reqs, nothingInFlight, stalled := s.takeGroup()
			if stalled {
				<-s.slots
				if !s.recover() {
					return
				}
				continue
			}
			if g == nil {
				<-s.slots
				break
			}
			s.commitGroup(g, reqs, nothingInFlight)
		}
	}
}

// takeGroup removes up to MaxBatch requests from the queue. While the store
// is stalled it takes nothing and reports stalled: the committer recovers.
func (s *Store) takeGroup() (g *group, reqs []*request, nothingInFlight, stalled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.stalled != nil && s.mu.failed == nil && !s.mu.closed {
		return nil, nil, false, true
	}
	if s.mu.failed != nil || s.mu.closed || len(s.mu.queue) == 0 {
		s.mu.queue = nil
		return nil, nil, false, false
	}
	n := min(len(s.mu.queue), s.opts.MaxBatch)
	reqs = make([]*request, n)
	copy(reqs, s.mu.queue)
	clear(s.mu.queue[:n])
	s.mu.queue = s.mu.queue[n:]
	g = &group{id: s.mu.nextGroup, epoch: s.mu.epoch, last: reqs[n-1].ticket}
	s.mu.nextGroup++
	return g, reqs, len(s.mu.inflight) == 0, false
}

// commitGroup builds the group's batch from the committer-owned applied
// state and hands it to Pebble without waiting for the sync.
func (s *Store) commitGroup(g *group, reqs []*request, nothingInFlight bool) {
	idx := make(map[wmKey]int)
	put := func(w write) {
		if i, ok := idx[w.key]; ok {
			g.writes[i] = w
			return
		}
		idx[w.key] = len(g.writes)
		g.writes = append(g.writes, w)
	}
	for _, r := range reqs {
		switch r.op {
		case opWatermark:
			g.confirmations++
			for _, m := range r.marks {
				k := wmKey{kind: r.kind, dest: r.dest, partition: m.partition}
				if cur, ok := s.applied[k]; ok && m.pos.Seq <= cur.Seq {
					continue // monotone: a lower or equal Last changes nothing
				}
				s.applied[k] = m.pos
				put(write{key: k, pos: m.pos})
			}
		case opSet:
			// Up or down: SetPosition is the one write that is not monotone.
			for _, kd := range []kind{kindDelivered, kindCoverage} {
				for _, m := range r.marks {
					k := wmKey{kind: kd, dest: r.dest, partition: m.partition}
					s.applied[k] = m.pos
					put(write{key: k, pos: m.pos})
				}
			}
		case opLower:
			// Down only: a coverage at or below the mark stays.
			for _, m := range r.marks {
				k := wmKey{kind: kindCoverage, dest: r.dest, partition: m.partition}
				cur, ok := s.applied[k]
				switch {
				case !ok || cur.Seq <= m.pos.Seq:
				case m.pos.Seq == 0:
					delete(s.applied, k)
					put(write{key: k, del: true})
				default:
					s.applied[k] = m.pos
					put(write{key: k, pos: m.pos})
				}
			}
		case opReset:
			for k := range s.applied {
				if k.dest == r.dest && (r.allPartitions || k.partition == r.partition) {
					delete(s.applied, k)
					put(write{key: k, del: true})
				}
			}
		case opBarrier:
		}
	}

	if len(g.writes) == 0 && nothingInFlight {
		// Every request is a no-op against a state that is entirely durable
		// (nothing in flight, and a failure would have emptied the queue):
		// there is nothing to sync.
		<-s.slots
		s.complete(g, nil)
		return
	}

	b := s.db.NewBatch()
	for _, w := range g.writes {
		var err error
		if w.del {
			err = b.Delete(watermarkKey(w.key), nil)
		} else {
			err = b.Set(watermarkKey(w.key), encodePosition(w.pos), nil)
		}
		if err != nil {
			s.abortGroup(g, b, fmt.Errorf("build batch: %w", err))
			return
		}
	}
	if b.Empty() {
		if err := b.LogData(barrierRecord, nil); err != nil {
			s.abortGroup(g, b, fmt.Errorf("build batch: %w", err))
			return
		}
	}

	start := time.Now()
	err := s.db.ApplyNoSyncWait(b, pebble.Sync)
	if err == nil {
		err = s.fatalErr()
	}
	s.mu.Lock()
	s.mu.inflight = append(s.mu.inflight, g)
	s.mu.Unlock()
	if err != nil {
		s.inst.recordSync(time.Since(start), g.confirmations, err)
		s.abortGroup(g, b, err)
		return
	}
	s.waiters.Add(1)
	go s.awaitSync(g, b, start)
}

func (s *Store) abortGroup(g *group, b *pebble.Batch, err error) {
	_ = b.Close()
	<-s.slots
	s.complete(g, err)
}

// awaitSync runs on its own goroutine per group in flight.
func (s *Store) awaitSync(g *group, b *pebble.Batch, start time.Time) {
	defer s.waiters.Done()
	err := b.SyncWait()
	if err == nil {
		// A fatal error anywhere in Pebble means we no longer trust it.
		err = s.fatalErr()
	}
	latency := time.Since(start)
	_ = b.Close()
	if err == nil {
		s.pebLog.Clear() // Pebble writes again: its next error is logged at once
	}
	// Recorded before the slot is freed: the next group's completion
	// releases g's waiters too (complete), and a caller that saw its
	// confirmation must find it counted.
	s.inst.recordSync(latency, g.confirmations, err)
	<-s.slots
	if hook := s.opts.testing.syncDone; hook != nil {
		hook(g.id, err, func(err error) { s.complete(g, err) })
		return
	}
	s.complete(g, err)
}

// complete applies the outcome of group g — the FIFO high-water
// mechanism. On success the durable ticket advances to max(durable, g.last)
// and every request up to it is released in ticket order. That is sound for
// groups still in flight before g because Pebble's WAL is a single ordered
// log: a synced record implies every earlier record is synced. A report for
// a group already covered, or arriving after Close, changes nothing.
//
// A failure for lack of space stalls the store instead of failing it (see
// doc.go, "Full disk"); while stalled, and for groups taken before the last
// recovery, reports change nothing either: recover commits those requests
// again.
func (s *Store) complete(g *group, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.reported || s.mu.closed {
		return
	}
	g.reported = true
	if g.epoch != s.mu.epoch || s.mu.stalled != nil {
		return
	}
	if err != nil {
		if isNoSpace(err) && s.mu.failed == nil {
			s.stallLocked(fmt.Errorf("group commit %d: %w", g.id, err))
			return
		}
		s.failLocked(fmt.Errorf("%w: group commit %d: %w", ErrFailed, g.id, err))
		return
	}
	if s.mu.failed != nil || g.last <= s.mu.durableTicket {
		return
	}
	s.mu.durableTicket = g.last
	for len(s.mu.inflight) > 0 && s.mu.inflight[0].last <= g.last {
		f := s.mu.inflight[0]
		s.mu.inflight[0] = nil
		s.mu.inflight = s.mu.inflight[1:]
		s.foldLocked(f)
	}
	s.releaseLocked()
}

// foldLocked applies a durable group's writes to the durable view.
func (s *Store) foldLocked(g *group) {
	for _, w := range g.writes {
		if w.del {
			if byPart := s.mu.durable[w.key.kind][w.key.dest]; byPart != nil {
				delete(byPart, w.key.partition)
				if len(byPart) == 0 {
					delete(s.mu.durable[w.key.kind], w.key.dest)
				}
			}
			continue
		}
		s.putDurableLocked(w.key, w.pos)
	}
}

func (s *Store) putDurableLocked(k wmKey, pos Position) {
	byDest := s.mu.durable[k.kind]
	byPart := byDest[k.dest]
	if byPart == nil {
		byPart = make(map[string]Position)
		byDest[k.dest] = byPart
	}
	byPart[k.partition] = pos
}

// failLocked makes the store failed (sticky) and releases every unreleased
// request with err: none of them may report success any more, even if a
// sync still in flight later succeeds.
func (s *Store) failLocked(err error) {
	if s.mu.failed != nil {
		return
	}
	s.mu.failed = err
	close(s.failedCh)
	s.endStallLocked()
	s.log.Error("offsetstore failed; callbacks not yet released get the error, reopen the store to recover",
		slog.Any("error", err))
	for _, r := range s.mu.pending {
		if r.err == nil {
			r.err = err
		}
	}
	s.mu.queue = nil
	s.mu.inflight = nil
	s.releaseLocked()
}

// releaseLocked moves requests from the head of the FIFO to the notifier
// while they are either durable or already decided (carry an error).
func (s *Store) releaseLocked() {
	n := 0
	for _, r := range s.mu.pending {
		if r.err == nil && r.ticket > s.mu.durableTicket {
			break
		}
		n++
	}
	if n == 0 {
		return
	}
	s.mu.ready = append(s.mu.ready, s.mu.pending[:n]...)
	clear(s.mu.pending[:n])
	s.mu.pending = s.mu.pending[n:]
	s.signalNotifier()
}

func (s *Store) signalNotifier() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// notifyLoop is the notifier goroutine: the only caller of onDurable
// callbacks, one at a time, in ticket order, never holding Store.mu (so
// callbacks may call Commit*, the readers and Err).
func (s *Store) notifyLoop() {
	defer close(s.notifierDone)
	var todo []*request // swapped with s.mu.ready, so both buffers are reused
	for {
		s.mu.Lock()
		todo, s.mu.ready = s.mu.ready, todo[:0]
		stop := s.mu.notifierStop && len(todo) == 0
		s.mu.Unlock()
		if stop {
			return
		}
		if len(todo) == 0 {
			<-s.notify
			continue
		}
		for i, r := range todo {
			if r.cb != nil {
				r.cb(r.err)
			}
			todo[i] = nil
		}
	}
}
