package pipeline

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/offsetstore"
)

// The unordered model drives the pure coverage rules of a non-monotone
// source (newUnorderedRules: hold, confirm, anchorDurable) through random
// interleavings of one Shared-subscription worker's life: it emits batches
// of its records — a partition's seqs with holes where other consumers
// took records, and late records below seqs already emitted (takeovers) —
// the raw anchor confirms them in order and their delivered commits become
// durable in the offset store's FIFO with the coverage writes (raises and
// lowerings) at random sync points, the secondary confirms in order, some
// live batches are dropped and read back from the anchor once it made them
// durable (then a marker), and the worker crashes at random: everything
// not synced is lost, unacknowledged records are redelivered, and the next
// start reads (coverage, anchor] back. At every crash it checks
//
//	every record whose delivered commit is durable is confirmed at the
//	secondary or inside (coverage, anchor]
//
// (what the next start rebuilds), and coverage ≤ anchor. At the end, with
// everything confirmed, the coverage must equal the anchor's watermark.
func TestUnorderedCoverageModel(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	var lowered, crashes int
	for seed := range seeds {
		m := newUModel(t, uint64(seed))
		m.run()
		lowered += m.lowered
		crashes += m.crashes
	}
	if lowered < seeds/4 || crashes < seeds/2 {
		t.Fatalf("the model exercised %d lowerings and %d crashes over %d seeds: too few", lowered, crashes, seeds)
	}
	t.Logf("%d seeds, %d coverage lowerings, %d crashes", seeds, lowered, crashes)
}

type urec struct {
	p   string
	seq uint64
}

type ubatch struct {
	id    int
	spans []batch.OffsetSpan
	recs  []urec
}

// uop is one write in the offset store's FIFO.
type uop struct {
	kind  int // uRaise, uLower, uDelivered
	spans []batch.OffsetSpan
	b     *ubatch // uDelivered
}

const (
	uRaise = iota
	uLower
	uDelivered
)

// uitem is one submission to the secondary lane.
type uitem struct {
	spans []batch.OffsetSpan
	recs  []urec
}

type umodel struct {
	t   *testing.T
	rng *rand.Rand

	toEmit []urec
	nextID int
	rules  coverageRules

	log     []uop
	durable int // log[:durable] is synced

	anchorQ  []*ubatch // submitted to the anchor lane, not confirmed
	stored   []*ubatch // held by the raw anchor
	notified int       // delivered ops of log[:notified] were reported durable
	secQ     []uitem   // submitted to the secondary lane, not confirmed
	secHas   map[urec]bool
	owed     []*ubatch
	inFlight map[int]*ubatch // emitted, delivered commit not durable

	lowered, crashes int
}

var uParts = []string{"persistent://public/default/u-partition-0", "persistent://public/default/u-partition-1"}

func newUModel(t *testing.T, seed uint64) *umodel {
	m := &umodel{t: t, rng: rand.New(rand.NewPCG(seed, 17)), secHas: map[urec]bool{}, inFlight: map[int]*ubatch{}}
	m.rules = newUnorderedRules(nil, nil)
	// This worker's records: about half of each partition's seqs, in
	// order, interleaved across partitions; a third of the others' come
	// late, after a higher seq of their partition (a takeover).
	var late []urec
	next := map[string]uint64{}
	for len(m.toEmit) < 80 {
		p := uParts[m.rng.IntN(len(uParts))]
		next[p]++
		r := urec{p, next[p]}
		switch x := m.rng.Float64(); {
		case x < 0.5:
			m.toEmit = append(m.toEmit, r)
		case x < 0.7:
			late = append(late, r)
		}
	}
	for _, r := range late {
		i := slices.IndexFunc(m.toEmit, func(e urec) bool { return e.p == r.p && e.seq > r.seq })
		if i < 0 {
			continue
		}
		at := i + 1 + m.rng.IntN(len(m.toEmit)-i)
		m.toEmit = slices.Insert(m.toEmit, at, r)
	}
	return m
}

// spansOf builds a batch's spans as the unordered assembler does: per
// partition, a new span whenever a seq is not above the previous one.
func spansOf(recs []urec) []batch.OffsetSpan {
	var out []batch.OffsetSpan
	for _, p := range uParts {
		var cur *batch.OffsetSpan
		for _, r := range recs {
			if r.p != p {
				continue
			}
			if cur != nil && r.seq > cur.Last {
				cur.Last = r.seq
				continue
			}
			out = append(out, batch.OffsetSpan{Partition: p, First: r.seq, Last: r.seq})
			cur = &out[len(out)-1]
		}
	}
	return out
}

func (m *umodel) emit() {
	n := min(1+m.rng.IntN(4), len(m.toEmit))
	recs := slices.Clone(m.toEmit[:n])
	m.toEmit = m.toEmit[n:]
	m.nextID++
	b := &ubatch{id: m.nextID, spans: spansOf(recs), recs: recs}
	// The dispatcher: hold (lowering first), offer, submit to the anchor.
	if lower := m.rules.hold(b.spans, nil); len(lower) > 0 {
		m.lowered++
		m.log = append(m.log, uop{kind: uLower, spans: lower})
	}
	if m.rng.IntN(4) == 0 {
		m.owed = append(m.owed, b) // dropped from the full queue
	} else {
		m.secQ = append(m.secQ, uitem{spans: b.spans, recs: recs})
	}
	m.anchorQ = append(m.anchorQ, b)
	m.inFlight[b.id] = b
}

func (m *umodel) commit(kind int, spans []batch.OffsetSpan) {
	if len(spans) > 0 {
		m.log = append(m.log, uop{kind: kind, spans: spans})
	}
}

func (m *umodel) anchorConfirm() {
	b := m.anchorQ[0]
	m.anchorQ = m.anchorQ[1:]
	m.stored = append(m.stored, b)
	m.log = append(m.log, uop{kind: uDelivered, spans: b.spans, b: b})
}

// sync makes a longer prefix of the FIFO durable and reports the delivered
// commits in it to the rules, in order (the anchor's OnDurable).
func (m *umodel) sync() {
	m.durable += m.rng.IntN(len(m.log)-m.durable) + 1
	for ; m.notified < m.durable; m.notified++ {
		if op := m.log[m.notified]; op.kind == uDelivered {
			delete(m.inFlight, op.b.id)
			m.commit(uRaise, m.rules.anchorDurable(op.spans, nil))
		}
	}
}

func (m *umodel) secConfirm() {
	it := m.secQ[0]
	m.secQ = m.secQ[1:]
	for _, r := range it.recs {
		m.secHas[r] = true
	}
	m.commit(uRaise, m.rules.confirm(it.spans, nil))
}

// readBack submits what the raw anchor serves for p's seqs lo..hi: every
// stored batch with a span of p overlapping them, whole.
func (m *umodel) readBack(p string, lo, hi uint64) {
	for _, b := range m.stored {
		for _, sp := range b.spans {
			if sp.Partition == p && sp.First <= hi && sp.Last >= lo {
				m.secQ = append(m.secQ, uitem{spans: b.spans, recs: b.recs})
				break
			}
		}
	}
}

// rebuildOwed reads back an owed batch the anchor made durable, then its
// marker (the forwarder's fillUnordered).
func (m *umodel) rebuildOwed() {
	for i, b := range m.owed {
		if !m.rules.isAnchored(b.spans) {
			if m.rules.held[spansKey(b.spans)] == nil {
				m.owed = slices.Delete(m.owed, i, i+1)
				return
			}
			continue
		}
		for _, r := range partitionRanges(b.spans) {
			m.readBack(r.Partition, r.First, r.Last)
		}
		m.secQ = append(m.secQ, uitem{spans: b.spans})
		m.owed = slices.Delete(m.owed, i, i+1)
		return
	}
}

// durableState is the offset store after a crash: log[:durable] applied.
func (m *umodel) durableState() (cov, del map[string]uint64, durableRecs []urec) {
	cov, del = map[string]uint64{}, map[string]uint64{}
	for _, op := range m.log[:m.durable] {
		for _, sp := range op.spans {
			switch op.kind {
			case uRaise:
				cov[sp.Partition] = max(cov[sp.Partition], sp.Last)
			case uLower:
				if c, ok := cov[sp.Partition]; ok && c > sp.Last {
					cov[sp.Partition] = sp.Last
				}
			case uDelivered:
				del[sp.Partition] = max(del[sp.Partition], sp.Last)
			}
		}
		if op.kind == uDelivered {
			durableRecs = append(durableRecs, op.b.recs...)
		}
	}
	return cov, del, durableRecs
}

func (m *umodel) check(what string) {
	cov, del, recs := m.durableState()
	for p, c := range cov {
		if c > del[p] {
			m.t.Fatalf("%s: %s coverage %d above the anchor's delivered %d", what, p, c, del[p])
		}
	}
	for _, r := range recs {
		if !m.secHas[r] && (r.seq <= cov[r.p] || r.seq > del[r.p]) {
			m.t.Fatalf("%s: %s seq %d is durable at the anchor, not at the secondary, and outside (coverage %d, anchor %d]: lost for the secondary",
				what, r.p, r.seq, cov[r.p], del[r.p])
		}
	}
}

// crash loses everything not synced and restarts from the durable state:
// unacknowledged records come again, and (coverage, anchor] is read back.
func (m *umodel) crash() {
	m.crashes++
	m.check(fmt.Sprintf("crash %d", m.crashes))
	cov, del, _ := m.durableState()
	m.log = m.log[:m.durable]
	m.notified = m.durable
	var again []urec
	ids := make([]int, 0, len(m.inFlight))
	for id := range m.inFlight {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		again = append(again, m.inFlight[id].recs...)
	}
	m.toEmit = append(again, m.toEmit...)
	clear(m.inFlight)
	m.anchorQ, m.secQ, m.owed = nil, nil, nil
	pos := func(x map[string]uint64) map[string]offsetstore.Position {
		out := map[string]offsetstore.Position{}
		for p, s := range x {
			out[p] = offsetstore.Position{Seq: s}
		}
		return out
	}
	m.rules = newUnorderedRules(pos(del), pos(cov))
	for _, sp := range startSpans(pos(del), pos(cov)) {
		m.readBack(sp.Partition, sp.First, sp.Last)
		m.secQ = append(m.secQ, uitem{spans: []batch.OffsetSpan{sp}})
	}
}

func (m *umodel) run() {
	for step := 0; step < 2000; step++ {
		var acts []func()
		if len(m.toEmit) > 0 {
			acts = append(acts, m.emit, m.emit)
		}
		if len(m.anchorQ) > 0 {
			acts = append(acts, m.anchorConfirm)
		}
		if m.durable < len(m.log) {
			acts = append(acts, m.sync)
		}
		if len(m.secQ) > 0 {
			acts = append(acts, m.secConfirm)
		}
		if len(m.owed) > 0 {
			acts = append(acts, m.rebuildOwed)
		}
		if len(acts) == 0 {
			break
		}
		if m.rng.IntN(40) == 0 {
			m.crash()
			continue
		}
		acts[m.rng.IntN(len(acts))]()
	}
	// Quiesce: everything confirmed, synced, read back.
	for len(m.toEmit)+len(m.anchorQ)+len(m.secQ)+len(m.owed) > 0 || m.durable < len(m.log) {
		switch {
		case len(m.toEmit) > 0:
			m.emit()
		case len(m.anchorQ) > 0:
			m.anchorConfirm()
		case m.durable < len(m.log):
			m.durable = len(m.log) - 1
			m.sync()
		case len(m.secQ) > 0:
			m.secConfirm()
		default:
			m.rebuildOwed()
		}
	}
	m.check("end")
	for p, a := range m.rules.anchor {
		if c := m.rules.committed[p]; c != a.Seq {
			m.t.Fatalf("end: %s coverage %d, anchor %d: a hold was never released (%d held)", p, c, a.Seq, len(m.rules.held))
		}
	}
}

// TestUnorderedRulesLateRecord walks the takeover of the package
// documentation by hand: a worker's batches 1..49 and 61..100 are
// confirmed and durable, coverage 100; then it takes over 50..60. The hold
// lowers coverage to 49 at once, the anchor's durable commit of the late
// batch cannot raise it, its confirmation does. A frozen (detached) gate
// never raises again but still lowers.
func TestUnorderedRulesLateRecord(t *testing.T) {
	const p = "persistent://public/default/u-partition-0"
	sp := func(first, last uint64) []batch.OffsetSpan {
		return []batch.OffsetSpan{{Partition: p, First: first, Last: last}}
	}
	r := newUnorderedRules(nil, nil)
	var out []batch.OffsetSpan
	for _, b := range [][]batch.OffsetSpan{sp(1, 49), sp(61, 100)} {
		if low := r.hold(b, nil); len(low) != 0 {
			t.Fatalf("hold lowered %v above the coverage", low)
		}
		out = r.anchorDurable(b, out)
		out = r.confirm(b, out)
	}
	if r.committed[p] != 100 {
		t.Fatalf("coverage %d, want 100 (commits %v)", r.committed[p], out)
	}
	late := sp(50, 60)
	low := r.hold(late, nil)
	if len(low) != 1 || low[0].Last != 49 || r.committed[p] != 49 {
		t.Fatalf("late hold: lowering %v, coverage %d; want a lowering to 49", low, r.committed[p])
	}
	if c := r.anchorDurable(late, nil); len(c) != 0 {
		t.Fatalf("the anchor's commit of the late batch raised coverage %v before the secondary confirmed it", c)
	}
	if c := r.confirm(late, nil); len(c) != 1 || c[0].Last != 100 || r.committed[p] != 100 {
		t.Fatalf("confirming the late batch: commits %v, coverage %d; want 100", c, r.committed[p])
	}

	r.frozen = true
	clear(r.held)
	if low := r.hold(sp(10, 12), nil); len(low) != 1 || low[0].Last != 9 {
		t.Fatalf("frozen: a late record must still lower coverage, got %v", low)
	}
	if c := r.confirm(sp(10, 12), nil); len(c) != 0 || len(r.held) != 0 {
		t.Fatalf("frozen: coverage raised %v / holds kept %d", c, len(r.held))
	}
}
