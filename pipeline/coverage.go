package pipeline

import (
	"errors"
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
type coverageRules struct {
	anchor    frontier
	confirmed frontier
	committed map[string]uint64
	holes     uint64 // confirmed spans that did not touch the prefix
}

func newCoverageRules(anchor, coverage map[string]offsetstore.Position) coverageRules {
	r := coverageRules{anchor: frontierOf(anchor), confirmed: frontierOf(coverage), committed: map[string]uint64{}}
	for p, pos := range coverage {
		r.committed[p] = pos.Seq
	}
	return r
}

// confirm records spans the destination durably confirmed, in confirmation
// order, and appends to out the coverage commits that became allowed.
func (r *coverageRules) confirm(spans []batch.OffsetSpan, out []batch.OffsetSpan) []batch.OffsetSpan {
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
	if a.Seq <= c.Seq {
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
	wake chan struct{}

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

// reset sets the durable starting point: the anchor's delivered and the
// destination's coverage as the offset store holds them. Called before the
// lane can confirm anything.
func (g *coverageGate) reset(anchor, coverage map[string]offsetstore.Position) {
	g.mu.Lock()
	g.mu.rules = newCoverageRules(anchor, coverage)
	g.mu.Unlock()
}

// CommitCoverage implements lanes.Committer. onDurable fires once the
// clamped commit (possibly empty: nothing may advance yet) is durable, which
// frees the lane's slot. Each call is forwarded to the store at once, in
// call order, so the store's FIFO callbacks keep the Committer order.
func (g *coverageGate) CommitCoverage(_ string, spans []batch.OffsetSpan, onDurable func(error)) {
	g.mu.Lock()
	out := g.mu.rules.confirm(spans, nil)
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
	g.mu.Unlock()
	if len(out) > 0 {
		g.store.CommitCoverage(g.dest, out, nil)
	}
	select {
	case g.wake <- struct{}{}:
	default:
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
