package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/instruments"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
)

// Backoff of a failing Rebuild call.
const (
	rebuildRetryInitial = 100 * time.Millisecond
	rebuildRetryMax     = 5 * time.Second
)

// errDetached ends a catch-up of a secondary that gave up for this run.
var errDetached = errors.New("pipeline: secondary detached")

// secondary feeds one coverage lane from its own forwarder goroutine. The
// dispatcher hands it live batches through a bounded queue without ever
// blocking (offer), so a slow or stalled secondary never holds up the
// anchor lane or the source. When the queue is full the batch is dropped
// and its spans are remembered; the forwarder later reads those records
// back from the raw anchor (catch-up), as it does at startup for whatever
// the secondary's coverage is behind the anchor's delivered watermark. See
// the package documentation for the seam rule.
//
// Goroutines: offer runs on the dispatcher, run is the forwarder, close is
// called by the shutdown once the dispatcher has exited; stats accessors
// from anywhere.
type secondary struct {
	name    string
	lane    coverageLane
	gate    *coverageGate
	rebuild RebuildFunc // nil: holes cannot be filled; the secondary detaches
	chunk   uint64
	metrics *instruments.CoverageMetrics
	log     *slog.Logger

	queue chan queuedBatch // owned references; closed by close
	// queued is the memory of the batches in queue (AllocatedBytes),
	// bounded by maxQueued when it is > 0: a live batch that does not fit
	// is dropped like one offered to a full queue. offer adds, the
	// forwarder subtracts (dequeued).
	queued    atomic.Int64
	maxQueued int64

	// drops collects the highest seq per partition of the batches offer
	// dropped, for the forwarder to fill from the raw anchor.
	drops struct {
		sync.Mutex
		high  map[string]uint64
		spans [][]batch.OffsetSpan // unordered: every dropped batch's spans
	}
	dropGen  atomic.Uint64 // bumped after every drop
	dropped  atomic.Uint64 // live batches dropped
	rebuilt  atomic.Uint64 // records fed from the raw anchor
	skipped  atomic.Uint64 // seqs caught up over that the anchor holds no record for
	detached atomic.Bool
	why      atomic.Pointer[string] // set before detached
	catching atomic.Bool
	// failed is closed when the lane fails for good (nil for lanes that
	// cannot, the model test's fake): the secondary then detaches.
	failed <-chan struct{}

	// Forwarder goroutine only.
	fed     frontier          // gap-free prefix submitted to the lane
	want    map[string]uint64 // known holes: fill fed up to here from raw
	seenGen uint64
	// held is the anchor's delivered watermark at start: a seq of each
	// partition the anchor must hold a record for (an earlier run's last
	// delivered span ended there), which a gap may therefore never cover.
	held map[string]uint64

	// A non-monotone source (see unordered.go): set by New before start.
	unordered bool
	schema    *arrow.Schema               // of the zero-row markers
	starts    map[string]batch.OffsetSpan // forwarder: startup range (coverage, anchor] per partition
	owed      [][]batch.OffsetSpan        // forwarder: dropped or refused batches to read back from raw

	done   chan struct{} // closed when the forwarder returns
	cancel context.CancelFunc
}

// queuedBatch is a live batch in a secondary's queue, with the bytes it
// counts in the queue's byte bound.
type queuedBatch struct {
	b    *batch.Batch
	size int64
}

// coverageLane is what a secondary needs of its lane; *lanes.Lane[lanes.Coverage]
// in production, a fake in the model test.
type coverageLane interface {
	statLane
	Submit(ctx context.Context, b *batch.Batch, tok lanes.Coverage) error
	Close(ctx context.Context) error
}

func newSecondary(name string, l coverageLane, g *coverageGate, m *instruments.CoverageMetrics,
	rebuild RebuildFunc, chunk uint64, queue int, log *slog.Logger) *secondary {
	s := &secondary{name: name, lane: l, gate: g, metrics: m, rebuild: rebuild, chunk: chunk,
		log: log.With("destination", name), queue: make(chan queuedBatch, queue), done: make(chan struct{})}
	s.drops.high = map[string]uint64{}
	if fl, ok := l.(failingLane); ok {
		s.failed = fl.Failed()
	}
	return s
}

// failingLane is what a *lanes.Lane adds to coverageLane: it can fail for
// good.
type failingLane interface {
	Failed() <-chan struct{}
	Failure() error
}

// laneFailed detaches the secondary when its lane failed for good and
// reports whether it did.
func (s *secondary) laneFailed() bool {
	select {
	case <-s.failed:
	default:
		return false
	}
	s.detach("lane failed for good: " + s.lane.(failingLane).Failure().Error())
	return true
}

// detachedWhy is why the secondary detached, or "" while it is attached.
func (s *secondary) detachedWhy() string {
	if !s.detached.Load() {
		return ""
	}
	if w := s.why.Load(); w != nil {
		return *w
	}
	return "detached"
}

// detach stops feeding the secondary for the rest of this run: its coverage
// stays where its last durable confirmation left it, and the next start
// catches it up from the raw anchor.
func (s *secondary) detach(why string) {
	s.why.CompareAndSwap(nil, &why)
	if s.detached.CompareAndSwap(false, true) {
		s.gate.freeze()
		s.metrics.Detached(context.Background())
		s.log.Warn("secondary detached for this run: its coverage lags the raw anchor until a restart catches it up", "why", why)
	}
}

// offer queues b for the secondary without ever blocking. It is called by
// the dispatcher only, before the batch is submitted to the anchor lane —
// so every batch the anchor makes durable was offered (queued or dropped)
// before.
func (s *secondary) offer(b *batch.Batch) {
	if s.detached.Load() {
		return
	}
	if q, ok := s.reserve(b); ok {
		b.Retain()
		select {
		case s.queue <- q:
			return
		default:
		}
		b.Release()
		s.dequeued(q)
	}
	s.drops.Lock()
	if s.unordered {
		s.drops.spans = append(s.drops.spans, b.Spans)
	}
	for _, sp := range b.Spans {
		if sp.Last > s.drops.high[sp.Partition] {
			s.drops.high[sp.Partition] = sp.Last
		}
	}
	s.drops.Unlock()
	s.dropGen.Add(1)
	s.dropped.Add(1)
	s.metrics.LiveDropped(context.Background(), 1)
	if s.rebuild == nil {
		s.detach("queue full and no Options.Rebuild to catch up from the raw anchor")
	}
}

// reserve counts b's bytes in the queue's byte bound and reports whether
// b fits beside what is queued; an empty queue takes any batch. Only offer
// calls it (the dispatcher), so the check and the add need no CAS.
func (s *secondary) reserve(b *batch.Batch) (queuedBatch, bool) {
	q := queuedBatch{b: b, size: b.AllocatedBytes()}
	if held := s.queued.Load(); s.maxQueued > 0 && held > 0 && held+q.size > s.maxQueued {
		return q, false
	}
	s.queued.Add(q.size)
	return q, true
}

// dequeued gives back the bytes of q, taken out of the queue (or refused
// by it after reserve), and returns its batch.
func (s *secondary) dequeued(q queuedBatch) *batch.Batch {
	s.queued.Add(-q.size)
	return q.b
}

// start runs the forwarder from the durable starting point: the anchor's
// delivered watermark and this destination's coverage.
func (s *secondary) start(ctx context.Context, anchor, coverage map[string]offsetstore.Position) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.gate.reset(anchor, coverage)
	s.fed = frontierOf(coverage)
	s.want = map[string]uint64{}
	s.held = map[string]uint64{}
	for p, a := range anchor {
		s.held[p] = a.Seq
	}
	for p, a := range anchor {
		if a.Seq > s.fed.seq(p) {
			s.want[p] = a.Seq
		}
	}
	if s.unordered {
		s.starts = map[string]batch.OffsetSpan{}
		for _, sp := range startSpans(anchor, coverage) {
			s.starts[sp.Partition] = sp
		}
	}
	go func() {
		defer close(s.done)
		s.run(ctx)
	}()
}

// coverageMode is how a secondary keeps its coverage: the steps its one
// forwarder loop (run) takes. ordered keeps a fed prefix per partition;
// unorderedMode (unordered.go) is for a source that is not monotone.
type coverageMode struct {
	// feedLive submits a live batch (or remembers what it cannot) and
	// releases it.
	feedLive func(*secondary, context.Context, *batch.Batch)
	// collect takes in what offer dropped from the full queue.
	collect func(*secondary)
	// fill reads back from the raw anchor what it has made durable and is
	// owed, and reports whether it fed anything.
	fill func(*secondary, context.Context) bool
	// waiting reports whether something is owed that a move of the
	// anchor (the gate's wake) may make readable.
	waiting func(*secondary) bool
	// finish runs once the queue is closed and drained.
	finish func(*secondary, context.Context)
}

// ordered is the mode of a monotone source. Live batches go first while
// they continue the fed prefix; holes (startup lag, dropped batches, a
// live batch that does not touch the prefix) are filled from the raw
// anchor, but only up to what the anchor has made durable.
var ordered = coverageMode{
	feedLive: (*secondary).feedLive,
	collect:  (*secondary).collectDrops,
	fill:     (*secondary).fillHoles,
	waiting:  func(s *secondary) bool { return len(s.want) > 0 },
	finish:   (*secondary).finish,
}

// run is the forwarder: the loop of s's coverage mode.
func (s *secondary) run(ctx context.Context) {
	if len(s.want) > 0 && s.rebuild == nil {
		s.detach("coverage is behind the raw anchor and there is no Options.Rebuild to catch up from")
		return
	}
	m := ordered
	if s.unordered {
		m = unorderedMode
	}
	for !s.detached.Load() && ctx.Err() == nil && !s.laneFailed() {
		select {
		case q, ok := <-s.queue:
			if !ok {
				m.finish(s, ctx)
				return
			}
			m.feedLive(s, ctx, s.dequeued(q))
			continue
		default:
		}
		m.collect(s)
		if m.fill(s, ctx) {
			continue
		}
		// Nothing to do now. Wait for a live batch, or for the anchor to
		// make more of what is owed readable.
		var wake <-chan struct{}
		if m.waiting(s) {
			wake = s.gate.wake
		}
		select {
		case q, ok := <-s.queue:
			if !ok {
				m.finish(s, ctx)
				return
			}
			m.feedLive(s, ctx, s.dequeued(q))
		case <-wake:
		case <-s.failed:
		case <-ctx.Done():
		}
	}
}

// finish runs once the queue is closed and drained (shutdown, after the
// anchor lane closed): whatever the anchor delivered and the secondary was
// not fed — the tail of what overflowed — is caught up, bounded by ctx.
func (s *secondary) finish(ctx context.Context) {
	if s.laneFailed() {
		return
	}
	s.collectDrops()
	// The anchor's watermark is final: what it did not deliver (a drain
	// cut short) is redelivered by the source after a restart, so that is
	// as far as this run can catch up.
	anchor := s.gate.anchorSnapshot()
	for p, w := range s.want {
		if w > anchor[p] {
			s.want[p] = anchor[p]
		}
	}
	for p, a := range anchor {
		if a > s.want[p] {
			s.want[p] = a
		}
	}
	for p, w := range s.want {
		if w <= s.fed.seq(p) {
			delete(s.want, p)
		}
	}
	if len(s.want) > 0 && s.rebuild == nil {
		s.detach("coverage is behind the raw anchor and there is no Options.Rebuild to catch up from")
		return
	}
	for _, p := range sortedKeys(s.want) {
		if err := s.catchUp(ctx, p, s.want[p]); err != nil {
			return
		}
	}
	clear(s.want)
}

// collectDrops moves what offer dropped into the known holes.
func (s *secondary) collectDrops() {
	g := s.dropGen.Load()
	if g == s.seenGen {
		return
	}
	s.seenGen = g
	s.drops.Lock()
	for p, h := range s.drops.high {
		if h > s.fed.seq(p) && h > s.want[p] {
			s.want[p] = h
		}
	}
	clear(s.drops.high)
	s.drops.Unlock()
}

// fillHoles catches up every known hole as far as the anchor has made it
// durable. It reports whether it fed anything.
func (s *secondary) fillHoles(ctx context.Context) bool {
	progressed := false
	for _, p := range sortedKeys(s.want) {
		w := s.want[p]
		if s.fed.seq(p) >= w {
			delete(s.want, p)
			continue
		}
		hi := min(w, s.gate.anchorSeq(p))
		if hi <= s.fed.seq(p) {
			continue
		}
		before := s.fed.seq(p)
		if err := s.catchUp(ctx, p, hi); err != nil {
			return false
		}
		progressed = progressed || s.fed.seq(p) > before
		if s.fed.seq(p) >= w {
			delete(s.want, p)
		}
	}
	return progressed
}

// feedLive submits a live batch if it continues the fed prefix of every
// partition it covers, first filling any hole before it from the raw anchor.
// A batch the prefix already includes is skipped. It releases b.
func (s *secondary) feedLive(ctx context.Context, b *batch.Batch) {
	defer b.Release()
	if s.detached.Load() {
		return
	}
	behind := len(b.Spans) > 0
	for _, sp := range b.Spans {
		if sp.First > s.fed.seq(sp.Partition)+1 {
			if s.rebuild == nil {
				s.detach(fmt.Sprintf("partition %s: seq %d..%d is missing and there is no Options.Rebuild",
					sp.Partition, s.fed.seq(sp.Partition)+1, sp.First-1))
				return
			}
			if err := s.catchUp(ctx, sp.Partition, sp.First-1); err != nil {
				s.remember(b.Spans)
				return
			}
		}
		if sp.Last > s.fed.seq(sp.Partition) {
			behind = false
		}
	}
	if behind {
		return // the raw anchor already gave us all of it
	}
	if err := s.lane.Submit(ctx, b, lanes.Coverage{}); err != nil {
		s.remember(b.Spans)
		s.laneFailed()
		return
	}
	for _, sp := range b.Spans {
		s.fed.extend(sp)
	}
}

// remember records spans that were not fed as a hole to fill later.
func (s *secondary) remember(spans []batch.OffsetSpan) {
	for _, sp := range spans {
		if sp.Last > s.fed.seq(sp.Partition) && sp.Last > s.want[sp.Partition] {
			s.want[sp.Partition] = sp.Last
		}
	}
}

// catchUp feeds partition p from the raw anchor until the fed prefix reaches
// hi, in chunks of at most s.chunk seqs, each read only once the anchor's
// durable delivered watermark covers it. It returns nil once fed reaches hi,
// ctx's error, or errDetached when the raw anchor does not have what its
// watermark says (the secondary then detaches: it cannot be repaired).
//
// Seqs are global positions (batch.Record.Seq), so a partition's seqs at
// the anchor may have interior gaps the source skipped (a broker's TTL
// expiry, a cursor reset forward): a range the anchor serves only in part
// is complete when the anchor holds a span of p beyond it. feedRebuilt covers such gaps with
// zero-row batches; a chunk served short is therefore followed by the next
// chunk (probe) until a span is found, up to the anchor's watermark. The
// anchor holds a span reaching every seq of its own watermark (the anchor
// lane delivered it; under an ordered subscription records of a partition
// are stored in seq order, so nothing lands below a stored span later): a
// range served short up to the watermark itself is a real loss, and so is
// a gap over held[p] (see detachLost).
func (s *secondary) catchUp(ctx context.Context, p string, hi uint64) error {
	s.catching.Store(true)
	defer s.catching.Store(false)
	probe := uint64(0) // where the next request starts while fed waits for proof of a gap
	for attempt := 0; s.fed.seq(p) < hi; {
		from := max(s.fed.seq(p)+1, probe)
		to := hi
		if from > hi {
			// Probing past hi for the span that ends the gap, as far as the
			// anchor has made durable (probe is set only below it).
			to = max(s.gate.anchorSeq(p), from)
		}
		if s.chunk > 0 && to-from >= s.chunk {
			to = from + s.chunk - 1
		}
		for {
			a := s.gate.anchorSeq(p)
			if a >= to {
				break
			}
			if a >= from {
				to = a
				break
			}
			select {
			case <-s.gate.wake:
			case <-s.failed:
				s.laneFailed()
				return errDetached
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		bs, ok, err := s.readBack(ctx, p, from, to, &attempt)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		s.feedRebuilt(ctx, p, bs)
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.detached.Load() {
			return errDetached
		}
		if got := s.fed.seq(p); got < to {
			if h := s.held[p]; h > got && h <= to {
				s.detachLost(p, h)
				return errDetached
			}
			if to >= s.gate.anchorSeq(p) {
				s.detach(fmt.Sprintf("the raw anchor's watermark covers partition %s up to seq %d but it holds nothing of seqs %d..%d",
					p, to, got+1, to))
				return errDetached
			}
			probe = to + 1
		}
	}
	return nil
}

// readBack asks the raw anchor for seqs from..to of partition p: ok with
// the batches it served. A failure is logged and waited out with growing
// backoff (attempt counts the failures in a row, and a success resets it);
// ok is false then, for the caller to try again. err is ctx's error once
// ctx ends.
func (s *secondary) readBack(ctx context.Context, p string, from, to uint64, attempt *int) (bs []*batch.Batch, ok bool, err error) {
	bs, err = s.rebuild(ctx, p, from, to)
	if err == nil {
		*attempt = 0
		return bs, true, nil
	}
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	*attempt++
	d := backoff(*attempt)
	s.log.Warn("rebuild from the raw anchor failed; retrying", "partition", p, "from", from, "to", to, "retry_in", d, "err", err)
	select {
	case <-time.After(d):
		return nil, false, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// feedRebuilt submits batches read back from the raw anchor for partition
// p, in seq order of p, skipping those the prefix already includes. A gap
// before a served span of p (seqs the anchor holds no record for: the
// source skipped them, see catchUp) is covered first by a zero-row batch
// of that span's schema carrying the gap's span, so that fed, and with the
// lane's confirmation the coverage, advance over it. It stops at a batch
// the lane refuses. It releases every batch.
func (s *secondary) feedRebuilt(ctx context.Context, p string, bs []*batch.Batch) {
	spanOf := func(b *batch.Batch) (batch.OffsetSpan, bool) {
		for _, sp := range b.Spans {
			if sp.Partition == p {
				return sp, true
			}
		}
		return batch.OffsetSpan{}, false
	}
	// Replays after a poisoning can store a batch twice and out of order;
	// sorting by p's seqs makes the walk below see the prefix grow.
	sort.SliceStable(bs, func(i, j int) bool {
		a, _ := spanOf(bs[i])
		b, _ := spanOf(bs[j])
		return a.First < b.First
	})
	var added, skipped uint64
	stop := false
	submit := func(b *batch.Batch) bool {
		if err := s.lane.Submit(ctx, b, lanes.Coverage{}); err != nil {
			s.laneFailed()
			return false
		}
		for _, x := range b.Spans {
			s.fed.extend(x)
		}
		added += uint64(b.NumRows()) // records, not the positions the spans cover
		return true
	}
	for _, b := range bs {
		sp, ok := spanOf(b)
		if !stop && ok && sp.Last > s.fed.seq(p) {
			if h := s.held[p]; sp.First > s.fed.seq(p)+1 && h > s.fed.seq(p) && h < sp.First {
				s.detachLost(p, h)
				stop = true
			} else if sp.First > s.fed.seq(p)+1 {
				gap := batch.OffsetSpan{Partition: p, First: s.fed.seq(p) + 1, Last: sp.First - 1}
				z := emptyBatch(b.Rec.Schema(), gap)
				stop = !submit(z)
				z.Release()
				if !stop {
					skipped += gap.Len()
				}
			}
			if !stop {
				own := partitionRows(ctx, b, sp, s.fed.seq(p), memory.DefaultAllocator)
				stop = !submit(own)
				own.Release()
			}
		}
		b.Release()
	}
	if added > 0 {
		s.rebuilt.Add(added)
		s.metrics.Rebuilt(context.Background(), int64(added))
	}
	if skipped > 0 {
		s.skipped.Add(skipped)
		s.log.Info("caught up over seqs the raw anchor holds no record for (skipped upstream: expiry, a reset forward)",
			"partition", p, "seqs", skipped)
	}
}

// partitionRows is what a catch-up of sp's partition submits of b, a batch
// read back from the raw anchor: its rows of that partition above seq
// after, with the one span they cover. b may also hold rows of other
// partitions (their own catch-up reads b again and takes those) and rows
// the secondary has already (below the seam), which would reach it once
// more per partition b holds. A schema without identity columns cannot be
// narrowed: b itself then, whole (duplicates at the seam). The caller
// releases the result; b keeps its own reference. A narrowed batch is
// allocated from mem.
func partitionRows(ctx context.Context, b *batch.Batch, sp batch.OffsetSpan, after uint64, mem memory.Allocator) *batch.Batch {
	if len(b.Spans) == 1 && sp.First > after {
		b.Retain()
		return b // all of it
	}
	id, ok := batch.IdentityOf(b.Rec.Schema())
	if !ok {
		b.Retain()
		return b
	}
	mask := array.NewBooleanBuilder(mem)
	defer mask.Release()
	mask.Reserve(int(b.Rec.NumRows()))
	id.Each(b.Rec, func(name string, seq uint64, _ int) {
		mask.UnsafeAppend(name == sp.Partition && seq > after)
	})
	m := mask.NewBooleanArray()
	defer m.Release()
	rec, err := compute.FilterRecordBatch(compute.WithAllocator(ctx, mem), b.Rec, m, compute.DefaultFilterOptions())
	if err != nil {
		b.Retain()
		return b // cannot happen for a mask of the record's length; whole is safe
	}
	return &batch.Batch{Rec: rec, Spans: []batch.OffsetSpan{{Partition: sp.Partition, First: max(sp.First, after+1), Last: sp.Last, LastID: sp.LastID}}}
}

// detachLost detaches the secondary because the raw anchor holds no record
// of seq h of partition p, which it acknowledged before this start.
func (s *secondary) detachLost(p string, h uint64) {
	s.detach(fmt.Sprintf("the raw anchor holds no record of seq %d of partition %s, which it acknowledged before this start: its data was lost", h, p))
}

// emptyBatch is a batch of schema with no rows that covers span: what
// feedRebuilt submits for a gap. The caller releases it.
func emptyBatch(schema *arrow.Schema, span batch.OffsetSpan) *batch.Batch {
	return emptyBatchOf(schema, []batch.OffsetSpan{span})
}

// emptyBatchOf is a batch of schema with no rows that covers spans.
func emptyBatchOf(schema *arrow.Schema, spans []batch.OffsetSpan) *batch.Batch {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
	}
	rec := array.NewRecordBatch(schema, cols, 0)
	for _, c := range cols {
		c.Release()
	}
	return &batch.Batch{Rec: rec, Spans: spans}
}

// close ends the secondary: the forwarder takes what is queued, catches up
// the tail from the raw anchor (finish), and the lane is closed — all
// bounded by ctx. The dispatcher must have exited and the anchor lane must be
// closed, so that the anchor's watermark is final.
func (s *secondary) close(ctx context.Context) error {
	close(s.queue)
	var cut error
	if s.cancel != nil {
		select {
		case <-s.done:
		case <-ctx.Done():
			s.cancel()
			<-s.done
			cut = fmt.Errorf("pipeline: secondary %q: drain cut short, its coverage lags until the next start catches it up: %w",
				s.name, ctx.Err())
		}
		s.cancel()
	}
	for q := range s.queue { // left behind by a forwarder that stopped early
		s.dequeued(q).Release()
	}
	err := s.lane.Close(ctx)
	if errors.Is(err, lanes.ErrFailed) {
		// Reported when it happened (the lane's "failed for good" line,
		// the detach, /readyz, thalweg_lane_detached): the secondary was
		// detached for this run, which does not make the stop unclean.
		err = nil
	}
	return errors.Join(cut, err, s.metrics.Close())
}

func backoff(attempt int) time.Duration {
	d := rebuildRetryInitial
	for i := 1; i < attempt && d < rebuildRetryMax; i++ {
		d *= 2
	}
	d = min(d, rebuildRetryMax)
	return d/2 + rand.N(d/2+1)
}

func sortedKeys(m map[string]uint64) []string {
	return slices.Sorted(maps.Keys(m))
}
