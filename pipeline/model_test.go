package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/instruments"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
)

// The model test drives the real coverage gate and the real forwarder logic
// (offer, feedLive, fillHoles, finish, catchUp, feedRebuilt) of one
// secondary, single-threaded, against fake transports: a raw anchor that
// makes batches durable in order and stores them (with replays: duplicates,
// slightly out of order), a secondary lane that confirms a random prefix of
// what it was fed, an offset store that keeps the maximum, and pipeline
// restarts that lose everything not durable. After every step it checks the
// coverage rules:
//
//   - coverage never decreases;
//   - coverage ≤ the anchor's durable delivered watermark;
//   - every seq ≤ coverage was durably acknowledged by the secondary
//     (coverage ≤ acked-by-destination, and no gap below it);
//   - the secondary never detaches (every hole is fillable from raw);
//   - with skips (seqs are global positions, and the source skips some
//     between batches, as a broker does on a TTL expiry or a reset
//     forward), a gap is covered by a zero-row batch only where the anchor
//     stores no span: never over a record it holds.
//
// At the end, with the source stopped and everything confirmed, coverage
// must equal the anchor's watermark and the secondary must hold every seq.
func TestCoverageModel(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 50
	}
	var fillers atomic.Int64
	t.Run("seeds", func(t *testing.T) {
		for _, skips := range []bool{false, true} {
			for seed := range seeds {
				t.Run(fmt.Sprintf("skips=%v/%d", skips, seed), func(t *testing.T) {
					t.Parallel()
					m := newModel(t, uint64(seed))
					m.skips = skips
					m.run(400)
					if !skips && m.lane.fillers > 0 {
						t.Fatalf("%d gap batches without skips", m.lane.fillers)
					}
					fillers.Add(int64(m.lane.fillers))
				})
			}
		}
	})
	if fillers.Load() < int64(seeds) {
		t.Fatalf("only %d gaps filled over %d seeds with skips: the model does not exercise them", fillers.Load(), seeds)
	}
	t.Logf("%d gaps filled", fillers.Load())
}

// modelParts are the model's partitions, named as Pulsar names them.
var modelParts = []string{
	"persistent://public/default/m-partition-0",
	"persistent://public/default/m-partition-1",
	"persistent://public/default/m-partition-2",
}

var emptySchema = arrow.NewSchema(nil, nil)

// modelBatch builds a batch with no rows (the model tracks seqs, not rows)
// and the given spans; it allocates nothing, so Retain/Release are free.
func modelBatch(spans []batch.OffsetSpan) *batch.Batch {
	return &batch.Batch{Rec: array.NewRecordBatch(emptySchema, nil, 0), Spans: spans}
}

// fakeStore is the offset store: coverage is the maximum committed, durable at once.
type fakeStore struct{ cov map[string]uint64 }

func (f *fakeStore) CommitCoverage(_ string, spans []batch.OffsetSpan, cb func(error)) {
	for _, sp := range spans {
		f.cov[sp.Partition] = max(f.cov[sp.Partition], sp.Last)
	}
	if cb != nil {
		cb(nil)
	}
}

func (f *fakeStore) CommitDelivered(string, []batch.OffsetSpan, func(error)) {
	panic("model: a coverage gate committed delivered offsets")
}

// fakeLane is the secondary lane and sink: Submit keeps the batch; confirm
// hands a prefix to the gate in submission order, as lanes.Lane does.
type fakeLane struct {
	gate    *coverageGate
	pending []*batch.Batch
	acked   map[string]map[uint64]bool // seqs the sink durably acknowledged

	// The seam rule, checked on every Submit: a live batch is submitted
	// only when each of its spans touches the prefix submitted so far. (A
	// batch read back from raw may carry spans of other partitions that
	// do not.)
	prefix  frontier
	rebuilt map[*batch.Batch]bool
	live    map[*batch.Batch]bool
	seamErr string

	// stored returns the spans the raw anchor holds (for the filler check);
	// fillers counts the zero-row batches the forwarder made for gaps.
	stored  func() [][]batch.OffsetSpan
	fillers int
}

func (l *fakeLane) Submit(_ context.Context, b *batch.Batch, _ lanes.Coverage) error {
	if !l.rebuilt[b] && !l.live[b] {
		// Made by the forwarder: a gap the anchor holds no record for.
		l.fillers++
		if b.NumRows() != 0 || len(b.Spans) != 1 {
			l.seamErr = fmt.Sprintf("gap batch with %d rows and spans %v", b.NumRows(), b.Spans)
		}
		for _, spans := range l.stored() {
			for _, sp := range spans {
				g := b.Spans[0]
				if sp.Partition == g.Partition && sp.First <= g.Last && sp.Last >= g.First && l.seamErr == "" {
					l.seamErr = fmt.Sprintf("gap batch %v covers records the anchor stores (%v)", g, sp)
				}
			}
		}
	}
	for _, sp := range b.Spans {
		if _, hole := l.prefix.extend(sp); hole && !l.rebuilt[b] && l.seamErr == "" {
			l.seamErr = fmt.Sprintf("live batch %v submitted with a hole before it (prefix %s=%d)", b.Spans, sp.Partition, l.prefix.seq(sp.Partition))
		}
	}
	b.Retain()
	l.pending = append(l.pending, b)
	return nil
}

func (l *fakeLane) confirm(n int) {
	for _, b := range l.pending[:n] {
		for _, sp := range b.Spans {
			for s := sp.First; s <= sp.Last; s++ {
				l.acked[sp.Partition][s] = true
			}
		}
		l.gate.CommitCoverage("s", b.Spans, func(err error) {
			if err != nil {
				panic(err)
			}
		})
		b.Release()
	}
	l.pending = l.pending[n:]
}

// lose drops what was never confirmed (the pipeline restarted).
func (l *fakeLane) lose() {
	for _, b := range l.pending {
		b.Release()
	}
	l.pending = nil
}

func (l *fakeLane) Close(context.Context) error { l.lose(); return nil }
func (l *fakeLane) Destination() string         { return "s" }
func (l *fakeLane) State() lanes.State          { return lanes.StateOpen }
func (l *fakeLane) Submitted() uint64           { return 0 }
func (l *fakeLane) Delivered() uint64           { return 0 }
func (l *fakeLane) Pending() uint64             { return uint64(len(l.pending)) }
func (l *fakeLane) Capacity() int               { return 1 << 30 }
func (l *fakeLane) Confirmed() uint64           { return 0 }
func (l *fakeLane) Bursts() uint64              { return 0 }

type model struct {
	t   *testing.T
	rng *rand.Rand
	ctx context.Context

	next    map[string]uint64    // next seq the source assigns
	inAnch  [][]batch.OffsetSpan // submitted to the anchor, not yet durable
	raw     [][]batch.OffsetSpan // stored at the raw anchor (durable)
	anchor  map[string]uint64    // anchor's durable delivered
	store   *fakeStore           //
	lane    *fakeLane            //
	s       *secondary           //
	head    *batch.Batch         // live batch the forwarder holds
	prevCov map[string]uint64    //
	metrics *instruments.CoverageMetrics
	skips   bool // the source skips seqs between batches
}

func newModel(t *testing.T, seed uint64) *model {
	m := &model{
		t: t, rng: rand.New(rand.NewPCG(seed, 99)), ctx: context.Background(),
		next: map[string]uint64{}, anchor: map[string]uint64{}, prevCov: map[string]uint64{},
		store: &fakeStore{cov: map[string]uint64{}},
	}
	m.lane = &fakeLane{acked: map[string]map[uint64]bool{}, rebuilt: map[*batch.Batch]bool{}, live: map[*batch.Batch]bool{}}
	m.lane.stored = func() [][]batch.OffsetSpan { return m.raw }
	for _, p := range modelParts {
		m.next[p] = 1
		m.lane.acked[p] = map[uint64]bool{}
	}
	var err error
	m.metrics, err = instruments.NewCoverageMetrics(noop.NewMeterProvider(), "s", func() uint64 { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	m.restart()
	return m
}

// restart builds a fresh secondary from the durable state, as Run does.
func (m *model) restart() {
	if m.s != nil {
		m.drainQueue()
	}
	if m.head != nil {
		m.head.Release()
		m.head = nil
	}
	m.lane.lose()
	// Not durable at the anchor: the source redelivers it, renumbered from
	// the anchor's watermark (what source/pulsar does).
	m.inAnch = nil
	for p := range m.next {
		m.next[p] = m.anchor[p] + 1
	}
	gate := newCoverageGate("s", m.store)
	m.lane.gate = gate
	m.s = newSecondary("s", m.lane, gate, m.metrics, m.rebuild, uint64(1+m.rng.IntN(12)), 1+m.rng.IntN(4),
		slog.New(slog.DiscardHandler))
	anchor, cov := positions(m.anchor), positions(m.store.cov)
	gate.reset(anchor, cov)
	m.s.fed = frontierOf(cov)
	m.lane.prefix = frontierOf(cov)
	m.s.want = map[string]uint64{}
	m.s.held = map[string]uint64{}
	for p, a := range m.anchor {
		m.s.held[p] = a // as start does: a gap must never cover it
	}
	for p, a := range m.anchor {
		if a > m.s.fed.seq(p) {
			m.s.want[p] = a
		}
	}
}

func (m *model) drainQueue() {
	for {
		select {
		case q := <-m.s.queue:
			m.s.dequeued(q).Release()
		default:
			return
		}
	}
}

// rebuild serves raw batches whose span of p intersects [from, to], in
// stored order.
func (m *model) rebuild(_ context.Context, p string, from, to uint64) ([]*batch.Batch, error) {
	if to > m.anchor[p] {
		m.t.Fatalf("rebuild %s %d..%d beyond the anchor's watermark %d", p, from, to, m.anchor[p])
	}
	var out []*batch.Batch
	for _, spans := range m.raw {
		for _, sp := range spans {
			if sp.Partition == p && sp.First <= to && sp.Last >= from {
				b := modelBatch(spans)
				m.lane.rebuilt[b] = true
				out = append(out, b)
				break
			}
		}
	}
	return out, nil
}

func positions(m map[string]uint64) map[string]offsetstore.Position {
	out := map[string]offsetstore.Position{}
	for p, s := range m {
		if s > 0 {
			out[p] = offsetstore.Position{Seq: s}
		}
	}
	return out
}

// produce emits one batch: offered to the secondary, then submitted to the anchor.
func (m *model) produce() {
	var spans []batch.OffsetSpan
	for _, p := range modelParts {
		if m.rng.IntN(2) == 0 {
			continue
		}
		if m.skips && m.rng.IntN(4) == 0 {
			m.next[p] += uint64(1 + m.rng.IntN(6)) // seqs the broker skipped
		}
		n := uint64(1 + m.rng.IntN(5))
		spans = append(spans, batch.OffsetSpan{Partition: p, First: m.next[p], Last: m.next[p] + n - 1})
		m.next[p] += n
	}
	if len(spans) == 0 {
		return
	}
	b := modelBatch(spans)
	m.lane.live[b] = true
	m.s.offer(b)
	b.Release()
	m.inAnch = append(m.inAnch, spans)
}

// anchorDurable makes the oldest k anchor batches durable and stored.
func (m *model) anchorDurable(k int) {
	k = min(k, len(m.inAnch))
	for _, spans := range m.inAnch[:k] {
		// A replay after a poisoning stores a batch again, possibly after
		// its successor.
		switch r := m.rng.IntN(10); {
		case r == 0 && len(m.raw) > 0:
			last := m.raw[len(m.raw)-1]
			m.raw = append(m.raw[:len(m.raw)-1], spans, last)
		case r == 1 && len(m.raw) > 0:
			m.raw = append(m.raw, spans, m.raw[len(m.raw)-1])
		default:
			m.raw = append(m.raw, spans)
		}
		for _, sp := range spans {
			m.anchor[sp.Partition] = max(m.anchor[sp.Partition], sp.Last)
		}
		m.s.gate.anchorDurable(spans)
	}
	m.inAnch = m.inAnch[k:]
}

// forward is one forwarder step: take a live batch, feed the held one once
// the anchor covers the hole before it (the real forwarder waits for that),
// or fill known holes.
func (m *model) forward() {
	if m.head == nil {
		select {
		case q := <-m.s.queue:
			m.head = m.s.dequeued(q)
		default:
			m.s.collectDrops()
			m.s.fillHoles(m.ctx)
			return
		}
	}
	for _, sp := range m.head.Spans {
		if sp.First > m.s.fed.seq(sp.Partition)+1 && m.anchor[sp.Partition] < sp.First-1 {
			return // blocked: the anchor has not made the hole durable yet
		}
	}
	b := m.head
	m.head = nil
	m.s.feedLive(m.ctx, b)
}

func (m *model) check(step int, what string) {
	t := m.t
	t.Helper()
	if m.lane.seamErr != "" {
		t.Fatalf("step %d (%s): %s", step, what, m.lane.seamErr)
	}
	if m.s.detached.Load() {
		t.Fatalf("step %d (%s): the secondary detached", step, what)
	}
	for _, p := range modelParts {
		c := m.store.cov[p]
		if c < m.prevCov[p] {
			t.Fatalf("step %d (%s): %s coverage went down %d -> %d", step, what, p, m.prevCov[p], c)
		}
		m.prevCov[p] = c
		if c > m.anchor[p] {
			t.Fatalf("step %d (%s): %s coverage %d leads the anchor's delivered %d", step, what, p, c, m.anchor[p])
		}
		for s := uint64(1); s <= c; s++ {
			if !m.lane.acked[p][s] {
				t.Fatalf("step %d (%s): %s coverage %d but the secondary never acknowledged seq %d", step, what, p, c, s)
			}
		}
	}
}

func (m *model) run(steps int) {
	for i := range steps {
		var what string
		switch r := m.rng.IntN(100); {
		case r < 30:
			what = "produce"
			m.produce()
		case r < 45:
			what = "anchor durable"
			m.anchorDurable(1 + m.rng.IntN(4))
		case r < 75:
			what = "forward"
			m.forward()
		case r < 97:
			what = "secondary confirms"
			m.lane.confirm(m.rng.IntN(len(m.lane.pending) + 1))
		default:
			what = "restart"
			m.restart()
		}
		m.check(i, what)
	}
	// Quiesce: the source stops, the anchor delivers everything, the
	// forwarder drains (including the shutdown catch-up) and the
	// secondary confirms everything.
	m.anchorDurable(len(m.inAnch))
	for m.head != nil || len(m.s.queue) > 0 {
		m.forward()
	}
	close(m.s.queue)
	m.s.finish(m.ctx)
	m.lane.confirm(len(m.lane.pending))
	m.check(steps, "quiesced")
	for _, p := range modelParts {
		if m.store.cov[p] != m.anchor[p] {
			m.t.Fatalf("quiesced: %s coverage %d, anchor %d (lag %d)", p, m.store.cov[p], m.anchor[p], m.s.gate.lag())
		}
	}
	if lag := m.s.gate.lag(); lag != 0 {
		m.t.Fatalf("quiesced: coverage lag %d", lag)
	}
}
