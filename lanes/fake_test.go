package lanes

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
)

// permErr is a transport error that declares itself permanent.
type permErr struct{ msg string }

func (e permErr) Error() string   { return e.msg }
func (e permErr) Permanent() bool { return true }

var errTransient = errors.New("fake: transient")

var testSchema = arrow.NewSchema([]arrow.Field{{Name: "seq", Type: arrow.PrimitiveTypes.Int64}}, nil)

// pname names test partition p as Pulsar names a topic-partition; pindex
// is its inverse.
func pname(p int32) string { return batch.JoinPartition("persistent://public/default/lanes", p) }

func pindex(name string) int32 {
	_, p := batch.SplitPartition(name)
	return p
}

// newBatch builds a batch of partition pname(p) covering seqs [first,
// last], one row per seq, on mem. The caller owns the returned reference.
func newBatch(mem memory.Allocator, p int32, first, last uint64) *batch.Batch {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for s := first; s <= last; s++ {
		b.Append(int64(s))
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(testSchema, []arrow.Array{col}, int64(last-first+1))
	return &batch.Batch{Rec: rec, Spans: []batch.OffsetSpan{{Partition: pname(p), First: first, Last: last}}, Reason: batch.FlushRows}
}

// fakeServer is the sink behind every transport of one lane: what it stored
// durably survives the transports (but is keyed by the lane's offsets, so
// one server per lane).
type fakeServer struct {
	mu     sync.Mutex
	stored map[uint64][]batch.OffsetSpan // offset -> spans, once durably acked
}

func newFakeServer() *fakeServer { return &fakeServer{stored: map[uint64][]batch.OffsetSpan{}} }

func (s *fakeServer) isStored(off uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.stored[off]
	return ok
}

func (s *fakeServer) allSpans() []batch.OffsetSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []batch.OffsetSpan
	for _, sp := range s.stored {
		out = append(out, sp...)
	}
	return out
}

type ackItem struct {
	due time.Time
	off uint64
}

type ackHeap []ackItem

func (h ackHeap) Len() int           { return len(h) }
func (h ackHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h ackHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ackHeap) Push(x any)        { *h = append(*h, x.(ackItem)) }
func (h *ackHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// fakeTransport is a loopback Transport. With a delay function, each sent
// offset becomes durable after its delay and the durable high-water moves
// cumulatively (a later offset acked first acks everything below it, as a
// server that persists in order would). Without one, the test acks by hand.
type fakeTransport struct {
	srv   *fakeServer
	delay func() time.Duration // nil: manual acks

	kick chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup

	mu struct {
		sync.Mutex
		sent          map[uint64][]batch.OffsetSpan // sent, not yet durable
		sentOrder     []uint64
		durable       uint64
		changed       chan struct{} // closed and replaced on every change
		pending       ackHeap
		closed        bool
		dead          error
		transientWait int
		transientSend int
		stall         bool
		sendGate      chan struct{} // non-nil: Send waits until it is closed
		waitCalls     []uint64
		maxUnacked    int
	}
}

func newFakeTransport(srv *fakeServer, delay func() time.Duration) *fakeTransport {
	t := &fakeTransport{srv: srv, delay: delay, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	t.mu.sent = map[uint64][]batch.OffsetSpan{}
	t.mu.changed = make(chan struct{})
	if delay != nil {
		t.wg.Add(1)
		go t.acker()
	}
	return t
}

func (t *fakeTransport) changedLocked() {
	close(t.mu.changed)
	t.mu.changed = make(chan struct{})
}

func (t *fakeTransport) Send(ctx context.Context, off uint64, b *batch.Batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.mu.Lock()
	gate := t.mu.sendGate
	t.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.mu.closed:
		return permErr{"fake: send on closed transport"}
	case t.mu.dead != nil:
		return t.mu.dead
	case t.mu.transientSend > 0:
		t.mu.transientSend--
		return errTransient
	}
	if n := len(t.mu.sentOrder); n > 0 && off <= t.mu.sentOrder[n-1] {
		panic(fmt.Sprintf("fake: offset %d sent after %d", off, t.mu.sentOrder[n-1]))
	}
	t.mu.sent[off] = b.Spans
	t.mu.sentOrder = append(t.mu.sentOrder, off)
	t.mu.maxUnacked = max(t.mu.maxUnacked, len(t.mu.sent))
	if t.delay != nil {
		first := len(t.mu.pending) == 0
		heap.Push(&t.mu.pending, ackItem{time.Now().Add(t.delay()), off})
		if first || t.mu.pending[0].off == off {
			select {
			case t.kick <- struct{}{}:
			default:
			}
		}
	}
	return nil
}

// ackUpToLocked makes every sent offset <= off durable.
func (t *fakeTransport) ackUpToLocked(off uint64) {
	if t.mu.closed || t.mu.dead != nil || off <= t.mu.durable {
		return
	}
	t.srv.mu.Lock()
	for o, sp := range t.mu.sent {
		if o <= off {
			t.srv.stored[o] = sp
			delete(t.mu.sent, o)
		}
	}
	t.srv.mu.Unlock()
	t.mu.durable = off
	t.changedLocked()
}

// ackAll acks everything sent so far.
func (t *fakeTransport) ackAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.mu.sentOrder); n > 0 {
		t.ackUpToLocked(t.mu.sentOrder[n-1])
	}
}

func (t *fakeTransport) acker() {
	defer t.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		t.mu.Lock()
		now := time.Now()
		var hw uint64
		for len(t.mu.pending) > 0 && !t.mu.pending[0].due.After(now) {
			it := heap.Pop(&t.mu.pending).(ackItem)
			hw = max(hw, it.off)
		}
		if hw > 0 {
			t.ackUpToLocked(hw)
		}
		wait := time.Hour
		if len(t.mu.pending) > 0 {
			wait = t.mu.pending[0].due.Sub(now)
		}
		t.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-t.kick:
		case <-t.stop:
			return
		}
	}
}

func (t *fakeTransport) WaitDurable(ctx context.Context, off uint64) error {
	t.mu.Lock()
	t.mu.waitCalls = append(t.mu.waitCalls, off)
	if t.mu.transientWait > 0 {
		t.mu.transientWait--
		t.mu.Unlock()
		return errTransient
	}
	for {
		switch {
		case t.mu.closed:
			t.mu.Unlock()
			return permErr{"fake: transport closed"}
		case t.mu.dead != nil:
			err := t.mu.dead
			t.mu.Unlock()
			return err
		case !t.mu.stall && t.mu.durable >= off:
			t.mu.Unlock()
			return nil
		}
		ch := t.mu.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		t.mu.Lock()
	}
}

func (t *fakeTransport) Close() error {
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		return errors.New("fake: closed twice")
	}
	t.mu.closed = true
	t.changedLocked()
	t.mu.Unlock()
	close(t.stop)
	t.wg.Wait()
	return nil
}

// kill makes the stream die: every call fails permanently from now on.
func (t *fakeTransport) kill() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.dead == nil {
		t.mu.dead = permErr{"fake: stream died"}
		t.changedLocked()
	}
}

func (t *fakeTransport) with(f func(t *fakeTransport)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(t)
	t.changedLocked()
}

// peakUnacked is the most batches the transport held sent and un-acked.
func (t *fakeTransport) peakUnacked() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.maxUnacked
}

func (t *fakeTransport) waitCalls() []uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]uint64(nil), t.mu.waitCalls...)
}

func (t *fakeTransport) sentOffsets() []uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]uint64(nil), t.mu.sentOrder...)
}

// dialer hands out fake transports on one server and remembers them.
type dialer struct {
	srv   *fakeServer
	delay func() time.Duration

	mu struct {
		sync.Mutex
		all   []*fakeTransport
		fails int // fail this many dials
		ready chan struct{}
	}
}

func newDialer(srv *fakeServer, delay func() time.Duration) *dialer {
	d := &dialer{srv: srv, delay: delay}
	d.mu.ready = make(chan struct{})
	return d
}

func (d *dialer) dial(ctx context.Context) (Transport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.fails > 0 {
		d.mu.fails--
		return nil, errors.New("fake: dial refused")
	}
	t := newFakeTransport(d.srv, d.delay)
	d.mu.all = append(d.mu.all, t)
	close(d.mu.ready)
	d.mu.ready = make(chan struct{})
	return t, nil
}

func (d *dialer) failNext(n int) {
	d.mu.Lock()
	d.mu.fails = n
	d.mu.Unlock()
}

// current returns the latest transport, waiting for the n-th dial.
func (d *dialer) nth(t testing.TB, n int) *fakeTransport {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		d.mu.Lock()
		if len(d.mu.all) >= n {
			tr := d.mu.all[n-1]
			d.mu.Unlock()
			return tr
		}
		ready := d.mu.ready
		d.mu.Unlock()
		select {
		case <-ready:
		case <-deadline:
			t.Fatalf("transport %d was never dialled", n)
		}
	}
}

func (d *dialer) latest() *fakeTransport {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.mu.all) == 0 {
		return nil
	}
	return d.mu.all[len(d.mu.all)-1]
}

func (d *dialer) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.mu.all)
}

// fakeCommitter is an in-memory offset store that keeps the Committer
// contract the way offsetstore does: commits are applied to the durable
// state in enqueue order (a synced commit makes everything before it
// durable, like a write-ahead log), each commit's "sync" completes after its
// own random delay, so completions arrive out of order — and a completion
// fires the callbacks of every commit up to it that has not fired yet, in
// enqueue order, one at a time (notifyMu). In manual mode nothing completes
// until the test calls completeCommit.
type fakeCommitter struct {
	rng    func() time.Duration // nil: manual
	wg     sync.WaitGroup
	timers []*time.Timer // guarded by mu

	// notifyMu serialises callback delivery and is taken before mu, so
	// that two completions cannot fire their callbacks interleaved.
	notifyMu sync.Mutex

	mu struct {
		sync.Mutex
		durable map[string]map[int32]uint64 // "kind/dest" -> partition -> last
		queue   []*commitEntry              // enqueued, in order
		applied int                         // queue[:applied] is durable
		fired   int                         // queue[:fired] has been called back
		failAt  int                         // 1-based commit number from which all fail; 0 = never
		n       int
		crashed bool
	}
}

type commitEntry struct {
	key   string
	spans []batch.OffsetSpan
	cb    func(error)
}

func newFakeCommitter(delay func() time.Duration) *fakeCommitter {
	c := &fakeCommitter{rng: delay}
	c.mu.durable = map[string]map[int32]uint64{}
	return c
}

// reopen returns a committer that holds only what c made durable: a store
// reopened after a crash.
func (c *fakeCommitter) reopen() *fakeCommitter {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := newFakeCommitter(c.rng)
	for k, m := range c.mu.durable {
		n.mu.durable[k] = map[int32]uint64{}
		for p, v := range m {
			n.mu.durable[k][p] = v
		}
	}
	return n
}

func (c *fakeCommitter) CommitDelivered(dest string, spans []batch.OffsetSpan, cb func(error)) {
	c.enqueue("delivered/"+dest, spans, cb)
}

func (c *fakeCommitter) CommitCoverage(dest string, spans []batch.OffsetSpan, cb func(error)) {
	c.enqueue("coverage/"+dest, spans, cb)
}

func (c *fakeCommitter) enqueue(key string, spans []batch.OffsetSpan, cb func(error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.crashed {
		return // a dead process calls nobody back
	}
	c.mu.n++
	e := &commitEntry{key: key, spans: spans, cb: cb}
	c.mu.queue = append(c.mu.queue, e)
	if c.rng == nil {
		return
	}
	idx := len(c.mu.queue) - 1
	c.wg.Add(1)
	c.timers = append(c.timers, time.AfterFunc(c.rng(), func() {
		defer c.wg.Done()
		c.complete(idx)
	}))
}

// complete syncs queue[:idx+1] (the entries from failAt on fail instead)
// and fires, in order, the callbacks of every entry up to idx that has not
// fired yet. A completion already covered by a later one is a no-op.
func (c *fakeCommitter) complete(idx int) {
	c.notifyMu.Lock()
	defer c.notifyMu.Unlock()
	c.mu.Lock()
	if c.mu.crashed || idx < c.mu.fired || idx >= len(c.mu.queue) {
		c.mu.Unlock()
		return
	}
	type call struct {
		cb  func(error)
		err error
	}
	var calls []call
	for ; c.mu.fired <= idx; c.mu.fired++ {
		var err error
		if c.mu.failAt > 0 && c.mu.failAt-1 <= c.mu.fired {
			err = errors.New("fake: commit failed")
		} else {
			for ; c.mu.applied <= c.mu.fired; c.mu.applied++ {
				a := c.mu.queue[c.mu.applied]
				m := c.mu.durable[a.key]
				if m == nil {
					m = map[int32]uint64{}
					c.mu.durable[a.key] = m
				}
				for _, sp := range a.spans {
					m[pindex(sp.Partition)] = max(m[pindex(sp.Partition)], sp.Last)
				}
			}
		}
		calls = append(calls, call{c.mu.queue[c.mu.fired].cb, err})
	}
	c.mu.Unlock()
	for _, k := range calls {
		k.cb(k.err)
	}
}

// completeCommit completes commit i (0-based, enqueue order) by hand: it
// fires every callback up to i that has not fired yet.
func (c *fakeCommitter) completeCommit(i int) { c.complete(i) }

func (c *fakeCommitter) failFrom(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.failAt = c.mu.n + n
}

func (c *fakeCommitter) commits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.queue)
}

// durable returns the durable watermark of key ("delivered/dest") for p.
func (c *fakeCommitter) durable(key string, p int32) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.durable[key][p]
}

// crash stops the committer: nothing more becomes durable, no callback fires.
func (c *fakeCommitter) crash() {
	c.mu.Lock()
	c.mu.crashed = true
	timers := c.timers
	c.timers = nil
	c.mu.Unlock()
	for _, t := range timers {
		if t.Stop() {
			c.wg.Done()
		}
	}
	c.wg.Wait()
}

// shutdown waits for every scheduled callback (a graceful stop).
func (c *fakeCommitter) shutdown() {
	c.wg.Wait()
}

func randDelay(r *rand.Rand, mu *sync.Mutex, maxd time.Duration) func() time.Duration {
	return func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return time.Duration(r.Int64N(int64(maxd) + 1))
	}
}
