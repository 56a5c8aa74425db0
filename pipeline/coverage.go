package pipeline

import (
	"errors"
	"fmt"
	"sync"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
)

// frontier is a gap-free watermark per partition: every seq in [1, Seq] of
// the partition is covered (Seq 0: nothing is). Sources number every
// partition from 1 (source/gen, source/pulsar), so seq 1 is where an empty
// frontier continues.
type frontier map[string]offsetstore.Position

// extend applies the contiguity rule to one span: the partition advances to
// sp.Last only if sp starts at or below the seq after the watermark (it
// touches or overlaps the covered prefix) and ends above it. It returns how
// many seqs became covered, and hole = true when sp starts past the seq
// after the watermark, which leaves the partition where it was.
func (f frontier) extend(sp batch.OffsetSpan) (added uint64, hole bool) {
	cur := f[sp.Partition]
	switch {
	case sp.First > cur.Seq+1:
		return 0, true
	case sp.Last <= cur.Seq:
		return 0, false
	}
	f[sp.Partition] = offsetstore.Position{Seq: sp.Last, ID: sp.LastID}
	return sp.Last - cur.Seq, false
}

// seq returns the watermark of partition p (0 when nothing is covered).
func (f frontier) seq(p string) uint64 { return f[p].Seq }

func frontierOf(m map[string]offsetstore.Position) frontier {
	f := make(frontier, len(m))
	for p, pos := range m {
		f[p] = pos
	}
	return f
}

// coverageRules is the pure decision logic of a secondary's coverage
// (docs/design.md#coverage-lag-never-lead). It sees two streams of events — the
// destination's durable confirmations (confirm) and the raw anchor's durable
// delivered spans (anchorDurable) — and says which coverage commits to issue:
//
//   - confirmed is the gap-free prefix the destination durably confirmed; a
//     confirmed span only extends it when it touches the prefix (extend),
//     so a span after a hole never counts;
//   - anchor is the raw anchor's durable delivered watermark;
//   - the coverage committed for a partition is min(confirmed, anchor), and
//     it only moves up.
//
// So coverage never passes what the destination acknowledged, never passes
// what the raw anchor made durable, and never skips a seq. Not safe for
// concurrent use; coverageGate guards it.
//
// A source that is not monotone (unordered: several consumers of a Shared
// or KeyShared subscription) breaks the contiguity rule twice over: this
// worker's spans have holes at every other consumer's seq, and a late
// record (a takeover of what another consumer dropped) arrives below seqs
// already covered. Unordered rules therefore replace confirmed by held:
// every batch this worker emits is held (hold) before it is offered to the
// secondary or submitted to the anchor, and released when the secondary
// confirms a batch with the same spans (the live batch, or the zero-row
// marker the forwarder submits after reading a dropped batch's range back
// from the raw anchor); the startup range (coverage, anchor] is held the
// same way until its catch-up is confirmed. The coverage committed for a
// partition is then
//
//	min(anchor, lowest First of the partition's holds − 1)
//
// and a hold below what was already committed lowers it first
// (LowerCoverage, in the store's FIFO before the batch's delivered commit
// can be issued). So every record this worker emitted and the anchor made
// durable is either confirmed at the secondary or inside (coverage,
// anchor], which the next start rebuilds from the raw anchor.
type coverageRules struct {
	anchor    frontier
	confirmed frontier
	committed map[string]uint64
	holes     uint64 // confirmed spans that did not touch the prefix

	unordered bool
	held      map[string]*hold // by spansKey
	// frozen: the secondary detached, nothing more is fed or confirmed, so
	// holds are not kept (they would pile up for the rest of the run) and
	// coverage never rises again; a late record still lowers it.
	frozen bool
}

// hold is a batch's spans emitted (or owed from the raw anchor) and not yet
// confirmed by the secondary; n counts batches with identical spans.
type hold struct {
	spans    []batch.OffsetSpan
	n        int
	anchored int // how many of the n the raw anchor made durable
}

// spansKey identifies a batch by its spans: a confirmation carries the
// batch's spans, nothing else.
func spansKey(spans []batch.OffsetSpan) string {
	var b []byte
	for _, sp := range spans {
		b = fmt.Appendf(b, "%s\x00%d\x00%d\x00", sp.Partition, sp.First, sp.Last)
	}
	return string(b)
}

func newCoverageRules(anchor, coverage map[string]offsetstore.Position) coverageRules {
	r := coverageRules{anchor: frontierOf(anchor), confirmed: frontierOf(coverage), committed: map[string]uint64{}}
	for p, pos := range coverage {
		r.committed[p] = pos.Seq
	}
	return r
}

// newUnorderedRules are the rules of a non-monotone source, starting with
// the startup range (coverage, anchor] of every partition held: the
// forwarder releases it with a marker whose span is startSpans' once its
// catch-up is submitted.
func newUnorderedRules(anchor, coverage map[string]offsetstore.Position) coverageRules {
	r := newCoverageRules(anchor, coverage)
	r.unordered, r.held = true, map[string]*hold{}
	for _, sp := range startSpans(anchor, coverage) {
		r.hold([]batch.OffsetSpan{sp}, nil)
	}
	return r
}

// startSpans is, per partition where the anchor is above the coverage, the
// span (coverage, anchor], sorted by partition.
func startSpans(anchor, coverage map[string]offsetstore.Position) []batch.OffsetSpan {
	var out []batch.OffsetSpan
	for p, a := range anchor {
		if c := coverage[p].Seq; a.Seq > c {
			out = append(out, batch.OffsetSpan{Partition: p, First: c + 1, Last: a.Seq})
		}
	}
	batch.SortSpans(out)
	return out
}

// hold records spans emitted by this worker (unordered rules) and appends
// to lower the lowering each partition needs so that its committed coverage
// is below the lowest First of spans.
func (r *coverageRules) hold(spans []batch.OffsetSpan, lower []batch.OffsetSpan) []batch.OffsetSpan {
	if !r.frozen {
		k := spansKey(spans)
		h := r.held[k]
		if h == nil {
			h = &hold{spans: spans}
			r.held[k] = h
		}
		h.n++
	}
	for _, sp := range spans {
		if c := r.committed[sp.Partition]; sp.First <= c {
			r.committed[sp.Partition] = sp.First - 1
			lower = append(lower, batch.OffsetSpan{Partition: sp.Partition, First: sp.First - 1, Last: sp.First - 1})
		}
	}
	return lower
}

// release drops one hold of spans' batch, if there is one.
func (r *coverageRules) release(spans []batch.OffsetSpan) {
	k := spansKey(spans)
	h := r.held[k]
	if h == nil {
		return
	}
	h.n--
	h.anchored = min(h.anchored, h.n)
	if h.n == 0 {
		delete(r.held, k)
	}
}

// isAnchored reports whether a held batch with these spans was made
// durable by the raw anchor (so a Rebuild of its range can find it).
func (r *coverageRules) isAnchored(spans []batch.OffsetSpan) bool {
	h := r.held[spansKey(spans)]
	return h != nil && h.anchored > 0
}

// lowHold is the lowest First of partition p's holds.
func (r *coverageRules) lowHold(p string) (uint64, bool) {
	low, ok := uint64(0), false
	for _, h := range r.held {
		for _, sp := range h.spans {
			if sp.Partition == p && (!ok || sp.First < low) {
				low, ok = sp.First, true
			}
		}
	}
	return low, ok
}

// confirm records spans the destination durably confirmed, in confirmation
// order, and appends to out the coverage commits that became allowed.
func (r *coverageRules) confirm(spans []batch.OffsetSpan, out []batch.OffsetSpan) []batch.OffsetSpan {
	if r.unordered {
		r.release(spans)
		for _, sp := range spans {
			out = r.clamp(sp.Partition, out)
		}
		return out
	}
	for _, sp := range spans {
		if _, hole := r.confirmed.extend(sp); hole {
			r.holes++
			continue
		}
		out = r.clamp(sp.Partition, out)
	}
	return out
}

// anchorDurable records spans the raw anchor made durable and appends to
// out the coverage commits that became allowed. The anchor lane delivers
// every batch in order, so its watermark is a plain maximum.
func (r *coverageRules) anchorDurable(spans []batch.OffsetSpan, out []batch.OffsetSpan) []batch.OffsetSpan {
	if r.unordered {
		if h := r.held[spansKey(spans)]; h != nil && h.anchored < h.n {
			h.anchored++
		}
	}
	for _, sp := range spans {
		if sp.Last > r.anchor.seq(sp.Partition) {
			r.anchor[sp.Partition] = offsetstore.Position{Seq: sp.Last, ID: sp.LastID}
		}
		out = r.clamp(sp.Partition, out)
	}
	return out
}

// clamp appends the commit that moves partition p's coverage to
// min(confirmed, anchor), if that is above what was committed. The upstream
// id comes from whichever side bounds it; the anchor's is preferred on a
// tie because batches read back from the raw anchor carry no ids.
func (r *coverageRules) clamp(p string, out []batch.OffsetSpan) []batch.OffsetSpan {
	c, a := r.confirmed[p], r.anchor[p]
	t := c
	if r.unordered {
		if r.frozen {
			return out
		}
		t = a
		if low, ok := r.lowHold(p); ok && low-1 < t.Seq {
			t = offsetstore.Position{Seq: low - 1}
		}
	} else if a.Seq <= c.Seq {
		t = a
	}
	prev := r.committed[p]
	if t.Seq <= prev {
		return out
	}
	r.committed[p] = t.Seq
	return append(out, batch.OffsetSpan{Partition: p, First: prev + 1, Last: t.Seq, LastID: t.ID})
}

// lag is the number of seqs the committed coverage is behind the anchor,
// summed over partitions.
func (r *coverageRules) lag() uint64 {
	var n uint64
	for p, a := range r.anchor {
		if c := r.committed[p]; a.Seq > c {
			n += a.Seq - c
		}
	}
	return n
}

// errNotCoverage is what a coverage gate answers a delivered commit with: a
// coverage lane never commits delivered offsets.
var errNotCoverage = errors.New("pipeline: a secondary lane cannot commit delivered offsets")

// coverageGate is the lanes.Committer of a secondary lane. It stands
// between the lane and the offset store and enforces coverageRules: the
// lane's coverage commits are clamped to the raw anchor's durable delivered
// watermark, and the part held back is committed when the anchor catches up
// (anchorDurable).
//
// Goroutines: CommitCoverage is called by the secondary lane's ack task,
// anchorDurable by the raw anchor's release path (the offset store's
// callback goroutine), lag by the metrics collector, anchorSeq by the
// secondary's forwarder. None of them blocks on another lane: the lock only
// guards in-memory maps, and the store calls only enqueue.
type coverageGate struct {
	dest  string
	store lanes.Committer
	// wake (capacity 1) tells the forwarder the anchor advanced.
	wake      chan struct{}
	unordered bool // newUnorderedGate

	mu struct {
		sync.Mutex
		rules coverageRules
	}
}

func newCoverageGate(dest string, store lanes.Committer) *coverageGate {
	g := &coverageGate{dest: dest, store: store, wake: make(chan struct{}, 1)}
	g.mu.rules = newCoverageRules(nil, nil)
	return g
}

// coverageLowerer is the store's LowerCoverage (offsetstore.Store), which
// the unordered rules need.
type coverageLowerer interface {
	LowerCoverage(dest string, spans []batch.OffsetSpan, onDurable func(error))
}

// unorderedStore is what an unordered gate needs of the offset store.
type unorderedStore interface {
	lanes.Committer
	coverageLowerer
}

// newUnorderedGate is the gate of a secondary of a non-monotone source: it
// applies the unordered rules (see coverageRules) and issues its store
// calls under its lock, so that they reach the store's FIFO in the order
// the rules decided them — a lowering must not be overtaken by a raise
// decided before it.
func newUnorderedGate(dest string, store unorderedStore) *coverageGate {
	g := newCoverageGate(dest, store)
	g.unordered = true
	g.mu.rules = newUnorderedRules(nil, nil)
	return g
}

// reset sets the durable starting point: the anchor's delivered and the
// destination's coverage as the offset store holds them. Called before the
// lane can confirm anything.
func (g *coverageGate) reset(anchor, coverage map[string]offsetstore.Position) {
	g.mu.Lock()
	if g.unordered {
		g.mu.rules = newUnorderedRules(anchor, coverage)
	} else {
		g.mu.rules = newCoverageRules(anchor, coverage)
	}
	g.mu.Unlock()
}

// hold records a batch this worker emitted (unordered gates only; a no-op
// otherwise). The dispatcher calls it before it offers the batch to the
// secondary or submits it to the anchor lane, so a lowering it issues is
// in the store's FIFO before the batch's delivered commit.
func (g *coverageGate) hold(spans []batch.OffsetSpan) {
	if !g.unordered {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if lower := g.mu.rules.hold(spans, nil); len(lower) > 0 {
		g.store.(coverageLowerer).LowerCoverage(g.dest, lower, nil)
	}
}

// CommitCoverage implements lanes.Committer. onDurable fires once the
// clamped commit (possibly empty: nothing may advance yet) is durable, which
// frees the lane's slot. Each call is forwarded to the store at once, in
// call order, so the store's FIFO callbacks keep the Committer order.
func (g *coverageGate) CommitCoverage(_ string, spans []batch.OffsetSpan, onDurable func(error)) {
	g.mu.Lock()
	out := g.mu.rules.confirm(spans, nil)
	if g.unordered {
		g.store.CommitCoverage(g.dest, out, onDurable)
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	// Commits from this path and from anchorDurable may reach the store in
	// either order; the store keeps the maximum, so that is harmless.
	g.store.CommitCoverage(g.dest, out, onDurable)
}

// CommitDelivered implements lanes.Committer; a Lane[Coverage] never calls it.
func (g *coverageGate) CommitDelivered(_ string, _ []batch.OffsetSpan, onDurable func(error)) {
	if onDurable != nil {
		onDurable(errNotCoverage)
	}
}

// anchorDurable is called with the spans of every raw-anchor batch whose
// delivered commit is durable, in the anchor's release order. It must not
// block.
func (g *coverageGate) anchorDurable(spans []batch.OffsetSpan) {
	g.mu.Lock()
	out := g.mu.rules.anchorDurable(spans, nil)
	if g.unordered && len(out) > 0 {
		g.store.CommitCoverage(g.dest, out, nil)
	}
	g.mu.Unlock()
	if !g.unordered && len(out) > 0 {
		g.store.CommitCoverage(g.dest, out, nil)
	}
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// freeze stops an unordered gate's coverage for the rest of the run: its
// secondary detached (see coverageRules.frozen). A no-op for an ordered
// gate, whose coverage simply stops where the confirmations stop.
func (g *coverageGate) freeze() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.unordered {
		g.mu.rules.frozen = true
		clear(g.mu.rules.held)
	}
}

// anchorSeq is the raw anchor's durable delivered seq of partition p.
func (g *coverageGate) anchorSeq(p string) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.rules.anchor.seq(p)
}

// anchorSnapshot copies the anchor's delivered seqs.
func (g *coverageGate) anchorSnapshot() map[string]uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]uint64, len(g.mu.rules.anchor))
	for p, pos := range g.mu.rules.anchor {
		out[p] = pos.Seq
	}
	return out
}

// lag is the coverage lag in records (the thalweg.lane.coverage_lag gauge).
func (g *coverageGate) lag() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.rules.lag()
}

// holdState reports whether a batch with these spans is held, and whether
// the raw anchor made one of them durable.
func (g *coverageGate) holdState(spans []batch.OffsetSpan) (held, anchored bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.rules.held[spansKey(spans)] != nil, g.mu.rules.isAnchored(spans)
}
