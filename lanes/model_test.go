package lanes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
)

// The model-based randomized test of the ack lane (docs/design.md#ack-lanes)
// and of durable-before-upstream (docs/design.md#durable-before-upstream).
//
// A source produces single-partition batches over three partitions and
// submits them to a Lane[RawAnchor] whose transports ack after random delays
// (cumulatively, possibly out of order) and whose committer completes syncs
// after random delays, out of order, and calls back in commit order as the
// Committer contract requires (the lane checks that order). Random steps inject transient
// Send and WaitDurable errors, stream deaths, refused dials, commit failures
// and crashes (the committer stops without a final sync and the lane is
// stopped without draining; a fresh lane starts on the reopened committer,
// and the source resumes from the durable watermark).
//
// Checked at every callback and after every step against a simple model:
//   - delivered <= submitted, delivered monotone;
//   - confirmations are 1, 2, 3, ... in order, exactly once per lane
//     incarnation, and only for offsets the sink durably stored;
//   - token callbacks fire exactly once each, in submission order;
//   - an upstream ack (OnDurable(nil)) never covers a record above the
//     committer's durable delivered watermark, which never decreases;
//   - at the end every produced record is in the sink (at-least-once) and the
//     durable watermark reached what was produced.
func TestModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 7, 42, 1234, 99991, 0xdeadbeef} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { synctest.Test(t, func(t *testing.T) { runModel(t, seed, 600) }) })
	}
	t.Run("random", func(t *testing.T) {
		deadline := time.Now().Add(3 * time.Second)
		for n := 0; time.Now().Before(deadline) && !t.Failed(); n++ {
			seed := rand.Uint64()
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Logf("seed %d (rerun: runModel(t, %d, 250))", seed, seed)
				synctest.Test(t, func(t *testing.T) { runModel(t, seed, 250) })
			})
		}
	})
}

const (
	modelParts = 3
	modelDest  = "model"
	modelKey   = "delivered/" + modelDest
)

type model struct {
	t   *testing.T
	mem *memory.CheckedAllocator

	rmu sync.Mutex // guards rng: delay functions run on timer goroutines
	rng *rand.Rand

	com     *fakeCommitter
	servers []*fakeServer

	produced    [modelParts]uint64 // highest seq produced by the current source run
	producedMax [modelParts]uint64 // highest seq ever produced
	storeFailed bool
	stats       struct{ submits, crashes, kills, rebuilds, storeFails int }

	mu       sync.Mutex // guards upstream, written from token callbacks
	upstream [modelParts]uint64

	g *modelGen
}

// modelGen is one lane incarnation.
type modelGen struct {
	m       *model
	lane    *Lane[RawAnchor]
	srv     *fakeServer
	d       *dialer
	pending *batch.Batch // produced, not yet accepted
	next    int          // index of the next successful submit

	mu        sync.Mutex
	confirmed uint64
	fired     int
	prevDeliv uint64
}

func (m *model) intn(n int) int {
	m.rmu.Lock()
	defer m.rmu.Unlock()
	return m.rng.IntN(n)
}

func runModel(t *testing.T, seed uint64, steps int) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	m := &model{t: t, mem: mem, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	m.com = newFakeCommitter(randDelay(m.rng, &m.rmu, time.Millisecond))
	m.startGen()
	for range steps {
		if t.Failed() {
			break
		}
		m.step()
		m.check()
	}
	m.finish()
	t.Logf("seed %d: %d batches submitted, %d crashes, %d stream kills, %d rebuilds, %d store failures, produced %v",
		seed, m.stats.submits, m.stats.crashes, m.stats.kills, m.stats.rebuilds, m.stats.storeFails, m.producedMax)
}

func (m *model) startGen() {
	srv := newFakeServer()
	m.servers = append(m.servers, srv)
	g := &modelGen{m: m, srv: srv, d: newDialer(srv, randDelay(m.rng, &m.rmu, time.Millisecond)), next: 1}
	m.mu.Lock()
	for p := range int32(modelParts) {
		// The restarted source resumes after the durable position; records
		// at or below it that were durable but never acked (the process died
		// between sync and ack) are redelivered by the broker, recognised
		// and acked at once.
		d := m.com.durable(modelKey, p)
		m.produced[p] = d
		m.upstream[p] = max(m.upstream[p], d)
	}
	m.mu.Unlock()
	opts := Options{
		Destination: modelDest,
		Capacity:    4 + m.intn(29),
		Dial:        g.d.dial,
		Committer:   m.com,
		MaxRetries:  2,
		Backoff:     Backoff{Initial: 200 * time.Microsecond, Max: 2 * time.Millisecond},
		OnConfirm:   g.onConfirm,
	}
	l, err := New[RawAnchor](opts)
	if err != nil {
		m.t.Fatal(err)
	}
	g.lane = l
	m.g = g
}

func (g *modelGen) onConfirm(off uint64, _ []batch.OffsetSpan) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if off != g.confirmed+1 {
		g.m.t.Errorf("confirmation %d after %d: not ascending / exactly once", off, g.confirmed)
	}
	g.confirmed = off
	if !g.srv.isStored(off) {
		g.m.t.Errorf("offset %d confirmed but the sink never durably acked it", off)
	}
	if d := g.lane.Delivered(); d < off {
		g.m.t.Errorf("confirmation %d above delivered %d", off, d)
	}
}

func (g *modelGen) token(idx int, span batch.OffsetSpan) RawAnchor {
	m := g.m
	return RawAnchor{OnDurable: func(err error) {
		g.mu.Lock()
		if idx != g.fired+1 {
			m.t.Errorf("token %d fired after token %d: not in order / exactly once", idx, g.fired)
		}
		g.fired = idx
		g.mu.Unlock()
		if err != nil {
			return
		}
		if d := m.com.durable(modelKey, pindex(span.Partition)); d < span.Last {
			m.t.Errorf("upstream ack of %v released while the durable watermark is %d", span, d)
		}
		m.mu.Lock()
		m.upstream[pindex(span.Partition)] = max(m.upstream[pindex(span.Partition)], span.Last)
		m.mu.Unlock()
	}}
}

func (m *model) produce() *batch.Batch {
	p := int32(m.intn(modelParts))
	k := uint64(1 + m.intn(5))
	first := m.produced[p] + 1
	m.produced[p] += k
	m.producedMax[p] = max(m.producedMax[p], m.produced[p])
	return newBatch(m.mem, p, first, first+k-1)
}

// submit tries to hand the pending batch to the lane within a short bound.
func (m *model) submit(bound time.Duration) bool {
	g := m.g
	if g.pending == nil {
		g.pending = m.produce()
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	err := g.lane.Submit(ctx, g.pending, g.token(g.next, g.pending.Spans[0]))
	if err != nil {
		return false // lane full or rebuilding: the source keeps the batch
	}
	g.next++
	m.stats.submits++
	g.pending.Release()
	g.pending = nil
	return true
}

func (m *model) step() {
	g := m.g
	tr := g.d.latest()
	switch r := m.intn(100); {
	case m.storeFailed && r < 30:
		m.crash() // the pipeline restarts after a store failure
	case r < 60:
		m.submit(time.Duration(1+m.intn(20)) * time.Millisecond)
	case r < 67 && tr != nil:
		n := 1 + m.intn(3)
		tr.with(func(t *fakeTransport) { t.mu.transientWait += n })
	case r < 71 && tr != nil:
		n := 1 + m.intn(2)
		tr.with(func(t *fakeTransport) { t.mu.transientSend += n })
	case r < 74 && tr != nil:
		m.stats.kills++
		tr.kill()
	case r < 76:
		g.d.failNext(1 + m.intn(3))
	case r < 77 && !m.storeFailed:
		m.storeFailed = true
		m.stats.storeFails++
		m.com.failFrom(1 + m.intn(3))
	case r < 79:
		m.crash()
	default:
		time.Sleep(time.Duration(m.intn(500)) * time.Microsecond) // a random pause on the fake clock: the transports' and committer's delays fall between actions
	}
}

// crash: the store dies without a final sync, the lane stops without
// draining, a new process reopens the store and resumes.
func (m *model) crash() {
	g := m.g
	m.com.crash()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = g.lane.Close(ctx)
	m.stats.crashes++
	m.stats.rebuilds += int(g.lane.Rebuilds())
	m.checkGenDone(g)
	if g.pending != nil {
		g.pending.Release()
	}
	m.com = m.com.reopen()
	m.storeFailed = false
	m.startGen()
}

func (m *model) checkGenDone(g *modelGen) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fired != g.next-1 {
		m.t.Errorf("lane closed with %d of %d tokens fired", g.fired, g.next-1)
	}
}

func (m *model) check() {
	g := m.g
	d := g.lane.Delivered()
	s := g.lane.Submitted()
	if d > s {
		m.t.Errorf("delivered %d > submitted %d", d, s)
	}
	g.mu.Lock()
	if d < g.prevDeliv {
		m.t.Errorf("delivered went back from %d to %d", g.prevDeliv, d)
	}
	g.prevDeliv = d
	g.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := range int32(modelParts) {
		if up, dur := m.upstream[p], m.com.durable(modelKey, p); up > dur {
			m.t.Errorf("partition %d acked upstream to %d, durable only %d", p, up, dur)
		}
	}
}

// finish runs a last, fault-free incarnation that produces up to everything
// ever produced, closes gracefully and checks at-least-once.
func (m *model) finish() {
	if m.storeFailed {
		m.crash()
	}
	g := m.g
	if tr := g.d.latest(); tr != nil {
		tr.with(func(t *fakeTransport) { t.mu.transientWait, t.mu.transientSend = 0, 0 })
	}
	g.d.failNext(0)
	deadline := time.Now().Add(waitBound)
	for {
		if g.pending == nil && slices.Equal(m.produced[:], m.producedMax[:]) {
			break
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("final incarnation cannot submit: state %v", g.lane.State())
		}
		if g.pending == nil {
			p := int32(-1)
			for i := range int32(modelParts) {
				if m.produced[i] < m.producedMax[i] {
					p = i
				}
			}
			first := m.produced[p] + 1
			last := min(first+4, m.producedMax[p])
			m.produced[p] = last
			g.pending = newBatch(m.mem, p, first, last)
		}
		m.submit(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if err := g.lane.Close(ctx); err != nil {
		m.t.Fatalf("graceful close: %v", err)
	}
	m.com.shutdown()
	m.stats.rebuilds += int(g.lane.Rebuilds())
	m.checkGenDone(g)
	m.check()

	var stored [modelParts][]batch.OffsetSpan
	for _, srv := range m.servers {
		for _, sp := range srv.allSpans() {
			stored[pindex(sp.Partition)] = append(stored[pindex(sp.Partition)], sp)
		}
	}
	for p := range int32(modelParts) {
		if d := m.com.durable(modelKey, p); d != m.producedMax[p] {
			m.t.Errorf("partition %d: durable %d after graceful close, produced %d", p, d, m.producedMax[p])
		}
		if up := m.upstream[p]; up != m.producedMax[p] {
			m.t.Errorf("partition %d: acked upstream to %d, produced %d", p, up, m.producedMax[p])
		}
		spans := stored[p]
		slices.SortFunc(spans, func(a, b batch.OffsetSpan) int { return int(a.First) - int(b.First) })
		covered := uint64(0)
		for _, sp := range spans {
			if sp.First > covered+1 {
				m.t.Errorf("partition %d: records %d..%d never reached the sink", p, covered+1, sp.First-1)
			}
			covered = max(covered, sp.Last)
		}
		if covered < m.producedMax[p] {
			m.t.Errorf("partition %d: sink holds up to %d, produced %d", p, covered, m.producedMax[p])
		}
	}
}
