package lanes

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/observability"
)

const waitBound = 10 * time.Second

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	t.Cleanup(cancel)
	return ctx
}

// eventually waits until cond holds, failing the test after waitBound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.WaitFor(t, waitBound, what, cond)
}

// confirmLog records OnConfirm calls and checks they ascend by one.
type confirmLog struct {
	t  *testing.T
	mu sync.Mutex
	of []uint64
}

func (c *confirmLog) hook(off uint64, _ []batch.OffsetSpan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.of); (n == 0 && off != 1) || (n > 0 && off != c.of[n-1]+1) {
		c.t.Errorf("confirmation %d after %v", off, c.of[max(0, n-3):])
	}
	c.of = append(c.of, off)
}

func (c *confirmLog) get() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.of)
}

// tokens records RawAnchor callbacks by submission index.
type tokens struct {
	mu    sync.Mutex
	calls map[int][]error
	order []int
}

func newTokens() *tokens { return &tokens{calls: map[int][]error{}} }

func (k *tokens) tok(i int) RawAnchor {
	return RawAnchor{OnDurable: func(err error) {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.calls[i] = append(k.calls[i], err)
		k.order = append(k.order, i)
	}}
}

func (k *tokens) snapshot() (map[int][]error, []int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	m := map[int][]error{}
	for i, e := range k.calls {
		m[i] = slices.Clone(e)
	}
	return m, slices.Clone(k.order)
}

func fastBackoff(o *Options) {
	o.Backoff = Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond}
}

func TestOptionsValidation(t *testing.T) {
	dial := func(context.Context) (Transport, error) { return nil, errors.New("x") }
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"destination", Options{Dial: dial, Committer: newFakeCommitter(nil)}, "Options.Destination"},
		{"dial", Options{Destination: "d", Committer: newFakeCommitter(nil)}, "Options.Dial"},
		{"committer", Options{Destination: "d", Dial: dial}, "Options.Committer"},
		{"capacity", Options{Destination: "d", Dial: dial, Committer: newFakeCommitter(nil), Capacity: -1}, "Options.Capacity"},
		{"backoff", Options{Destination: "d", Dial: dial, Committer: newFakeCommitter(nil), Backoff: Backoff{Initial: -1}}, "Options.Backoff"},
		{"max bytes", Options{Destination: "d", Dial: dial, Committer: newFakeCommitter(nil), MaxBytes: -1}, "Options.MaxBytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New[RawAnchor](tc.o)
			if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrInvalidOptions naming %s", err, tc.want)
			}
		})
	}
	// A NoCommit lane needs no committer; defaults are applied.
	l, err := New[NoCommit](Options{Destination: "d", Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	if l.Capacity() != DefaultCapacity {
		t.Errorf("capacity %d, want default %d", l.Capacity(), DefaultCapacity)
	}
	if l.MaxBytes() != DefaultMaxBytes {
		t.Errorf("max bytes %d, want default %d", l.MaxBytes(), DefaultMaxBytes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// Submit returns while nothing is acknowledged (fire-and-forget); the ack
// task waits once per burst on the largest offset and confirms in order.
func TestFireAndForgetAndOneWaitPerBurst(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srv := newFakeServer()
	d := newDialer(srv, nil) // manual acks
	com := newFakeCommitter(nil)
	var log confirmLog
	log.t = t
	var bursts []int
	var bmu sync.Mutex
	l, err := New[RawAnchor](Options{Destination: "raw", Capacity: 16, Dial: d.dial, Committer: com, OnConfirm: log.hook})
	if err != nil {
		t.Fatal(err)
	}
	l.burstHook = func(n int) { bmu.Lock(); bursts = append(bursts, n); bmu.Unlock() }
	ctx := ctxT(t)
	tk := newTokens()
	submit := func(i int) {
		b := newBatch(mem, 0, uint64(i*10), uint64(i*10+9))
		if err := l.Submit(ctx, b, tk.tok(i)); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	submit(1)
	tr := d.nth(t, 1)
	eventually(t, "first wait", func() bool { return len(tr.waitCalls()) == 1 })
	for i := 2; i <= 10; i++ {
		submit(i)
	}
	if l.Submitted() != 10 || l.Delivered() != 0 || l.Pending() != 10 {
		t.Fatalf("submitted/delivered/pending = %d/%d/%d, want 10/0/10", l.Submitted(), l.Delivered(), l.Pending())
	}
	if got := tr.sentOffsets(); !slices.Equal(got, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Fatalf("sent offsets %v", got)
	}
	tr.ackAll()
	eventually(t, "delivered 10", func() bool { return l.Delivered() == 10 })
	if calls := tr.waitCalls(); !slices.Equal(calls, []uint64{1, 10}) {
		t.Fatalf("WaitDurable calls %v, want [1 10]: one wait per burst on the largest offset", calls)
	}
	bmu.Lock()
	if !slices.Equal(bursts, []int{1, 9}) {
		t.Errorf("bursts %v, want [1 9]", bursts)
	}
	bmu.Unlock()
	if got := log.get(); len(got) != 10 {
		t.Fatalf("confirmations %v", got)
	}
	// Nothing upstream before the store says durable.
	if m, _ := tk.snapshot(); len(m) != 0 {
		t.Fatalf("upstream released before any commit was durable: %v", m)
	}
	if com.commits() != 10 {
		t.Fatalf("commits %d, want 10", com.commits())
	}
	for i := range 10 {
		com.completeCommit(i)
	}
	calls, order := tk.snapshot()
	if !slices.Equal(order, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Fatalf("upstream order %v", order)
	}
	for i, errs := range calls {
		if len(errs) != 1 || errs[0] != nil {
			t.Errorf("token %d: %v", i, errs)
		}
	}
	if got := com.durable("delivered/raw", 0); got != 109 {
		t.Errorf("durable watermark %d, want 109", got)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if l.State() != StateClosed {
		t.Errorf("state %v", l.State())
	}
	if err := l.Submit(ctx, newBatchReleased(mem), tk.tok(99)); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Close: %v", err)
	}
}

// newBatchReleased returns a batch whose caller reference is already
// dropped, for calls that must not take custody.
func newBatchReleased(mem memory.Allocator) *batch.Batch {
	b := newBatch(mem, 0, 1, 1)
	b.Release()
	return b
}

// A full lane blocks Submit (ctx-aware); the transport never holds more than
// the capacity un-acked.
func TestBackpressure(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDialer(newFakeServer(), nil)
	l, err := New[NoCommit](Options{Destination: "cov", Capacity: 4, Dial: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	for i := range 4 {
		b := newBatch(mem, 0, uint64(i), uint64(i))
		if err := l.Submit(ctx, b, NoCommit{}); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	b := newBatch(mem, 0, 4, 4)
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	err = l.Submit(short, b, NoCommit{})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Submit on a full lane: %v, want DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Submit(ctx, b, NoCommit{}) }()
	select {
	case err := <-done:
		t.Fatalf("Submit returned %v on a full lane", err)
	case <-time.After(20 * time.Millisecond):
	}
	d.nth(t, 1).ackAll()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b.Release()
	d.nth(t, 1).ackAll()
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if maxU := d.nth(t, 1).peakUnacked(); maxU > 4 {
		t.Fatalf("transport held %d un-acked, capacity 4", maxU)
	}
}

// Commit callbacks release upstream acks in order, only once each commit is
// durable; a failed commit latches and nothing after it is released with nil.
func TestUpstreamFIFOAndCommitFailure(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDialer(newFakeServer(), func() time.Duration { return 0 })
	com := newFakeCommitter(nil)
	l, err := New[RawAnchor](Options{Destination: "raw", Dial: d.dial, Committer: com})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	tk := newTokens()
	for i := 1; i <= 5; i++ {
		b := newBatch(mem, 1, uint64(i*10), uint64(i*10+9))
		if err := l.Submit(ctx, b, tk.tok(i)); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	eventually(t, "5 commits", func() bool { return com.commits() == 5 })
	if _, order := tk.snapshot(); len(order) != 0 {
		t.Fatalf("released %v before any commit was durable", order)
	}
	com.failFrom(-1) // commit #4 (1-based) and later fail: failAt = 5 + -1
	com.completeCommit(0)
	if _, order := tk.snapshot(); !slices.Equal(order, []int{1}) {
		t.Fatalf("after commit 1: released %v, want [1]", order)
	}
	com.completeCommit(2) // syncs 2 and 3: their callbacks fire in order
	com.completeCommit(1) // covered by 3: no-op
	if _, order := tk.snapshot(); !slices.Equal(order, []int{1, 2, 3}) {
		t.Fatalf("released %v, want [1 2 3]", order)
	}
	com.completeCommit(3) // #4 fails
	if _, order := tk.snapshot(); !slices.Equal(order, []int{1, 2, 3, 4}) {
		t.Fatalf("released %v, want [1 2 3 4]", order)
	}
	com.completeCommit(4) // #5 fails too
	calls, order := tk.snapshot()
	if !slices.Equal(order, []int{1, 2, 3, 4, 5}) {
		t.Fatalf("order %v", order)
	}
	for i := 1; i <= 5; i++ {
		if len(calls[i]) != 1 {
			t.Fatalf("token %d called %d times", i, len(calls[i]))
		}
		if (i <= 3) != (calls[i][0] == nil) {
			t.Errorf("token %d: %v", i, calls[i][0])
		}
	}
	if !errors.Is(calls[5][0], ErrCommitFailed) || !errors.Is(l.Err(), ErrCommitFailed) {
		t.Errorf("token 5 %v, Err %v: want ErrCommitFailed", calls[5][0], l.Err())
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// Transient ack errors are retried and counted; a permanent one poisons the
// lane, the supervisor rebuilds and replays the unconfirmed batches under
// their original offsets, and every offset is confirmed exactly once.
func TestPoisonRebuildReplay(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	srv := newFakeServer()
	d := newDialer(srv, nil)
	var log confirmLog
	log.t = t
	opts := Options{Destination: "raw", Capacity: 32, Dial: d.dial, Committer: newFakeCommitter(func() time.Duration { return 0 }),
		MeterProvider: mp, OnConfirm: log.hook, MaxRetries: 3}
	fastBackoff(&opts)
	l, err := New[RawAnchor](opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	tk := newTokens()
	submit := func(from, to int) {
		for i := from; i <= to; i++ {
			b := newBatch(mem, 0, uint64(i), uint64(i))
			if err := l.Submit(ctx, b, tk.tok(i)); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
	}
	submit(1, 5)
	tr1 := d.nth(t, 1)
	tr1.with(func(t *fakeTransport) { t.mu.transientWait = 2 })
	tr1.ackAll()
	eventually(t, "delivered 5", func() bool { return l.Delivered() == 5 })
	submit(6, 8)
	// Offsets 6..8 are unconfirmed; kill the stream.
	tr1.kill()
	tr2 := d.nth(t, 2)
	eventually(t, "replay", func() bool { return len(tr2.sentOffsets()) >= 3 })
	if got := tr2.sentOffsets()[:3]; !slices.Equal(got, []uint64{6, 7, 8}) {
		t.Fatalf("replayed %v, want [6 7 8]", got)
	}
	if l.Rebuilds() != 1 {
		t.Errorf("rebuilds %d", l.Rebuilds())
	}
	submit(9, 10)
	tr2.ackAll()
	eventually(t, "delivered 10", func() bool { return l.Delivered() == 10 })
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := log.get(); !slices.Equal(got, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Fatalf("confirmations %v", got)
	}
	calls, order := tk.snapshot()
	if !slices.IsSorted(order) || len(order) != 10 {
		t.Fatalf("upstream order %v", order)
	}
	for i, e := range calls {
		if len(e) != 1 || e[0] != nil {
			t.Errorf("token %d: %v", i, e)
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, p := range s.DataPoints {
					c, _ := p.Attributes.Value(observability.AttrCause)
					sums[m.Name+"/"+c.AsString()] += p.Value
				}
			}
			if h, ok := m.Data.(metricdata.Histogram[int64]); ok && m.Name == observability.LaneCoalesceRatio {
				sums[m.Name] = int64(h.DataPoints[0].Sum)
			}
		}
	}
	// Two transient ack errors on the stream, one backoff before the redial.
	if sums[observability.LaneRetries+"/"] != 3 {
		t.Errorf("retries %d, want 3", sums[observability.LaneRetries+"/"])
	}
	// permErr ends the stream but does not say it will not heal: retryable.
	if sums[observability.LanePoisoned+"/"+observability.CauseAckRetryable] != 1 {
		t.Errorf("poisoned counters %v", sums)
	}
	if sums[observability.LaneCoalesceRatio] != 10 {
		t.Errorf("coalesce sum %d, want 10 (every batch confirmed once)", sums[observability.LaneCoalesceRatio])
	}
}

// Too many transient errors poison too; a Send that fails permanently keeps
// the batch in the lane's custody and it is delivered on the rebuilt stream.
func TestRetriesExhaustedAndSendFailure(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDialer(newFakeServer(), func() time.Duration { return 0 })
	opts := Options{Destination: "raw", Dial: d.dial, Committer: newFakeCommitter(func() time.Duration { return 0 }), MaxRetries: 2}
	fastBackoff(&opts)
	l, err := New[RawAnchor](opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	tk := newTokens()
	b := newBatch(mem, 0, 1, 1)
	if err := l.Submit(ctx, b, tk.tok(1)); err != nil {
		t.Fatal(err)
	}
	b.Release()
	eventually(t, "delivered 1", func() bool { return l.Delivered() == 1 })
	d.nth(t, 1).with(func(t *fakeTransport) { t.mu.transientWait = 3 })
	b = newBatch(mem, 0, 2, 2)
	if err := l.Submit(ctx, b, tk.tok(2)); err != nil {
		t.Fatal(err)
	}
	b.Release()
	eventually(t, "delivered 2", func() bool { return l.Delivered() == 2 })
	d.nth(t, 2).with(func(t *fakeTransport) { t.mu.dead = permErr{"rejected"} })
	b = newBatch(mem, 0, 3, 3)
	d.failNext(2)
	if err := l.Submit(ctx, b, tk.tok(3)); err != nil {
		t.Fatalf("Submit whose Send failed permanently: %v, want nil (custody kept)", err)
	}
	b.Release()
	eventually(t, "delivered 3", func() bool { return l.Delivered() == 3 })
	if d.count() != 3 || l.Rebuilds() != 2 {
		t.Errorf("dials %d rebuilds %d, want 3/2", d.count(), l.Rebuilds())
	}
	if got := d.nth(t, 3).sentOffsets(); !slices.Equal(got, []uint64{3}) {
		t.Errorf("third transport got %v, want [3]", got)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if calls, _ := tk.snapshot(); len(calls) != 3 || calls[3][0] != nil {
		t.Errorf("tokens %v", calls)
	}
}

// While the lane cannot dial, Submit blocks (ctx-aware) and State reports it;
// Close still returns, bounded by its context, and hands every token
// ErrClosed.
func TestSubmitBlocksWhileRebuildingAndForcedClose(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDialer(newFakeServer(), nil)
	opts := Options{Destination: "raw", Dial: d.dial, Committer: newFakeCommitter(nil)}
	fastBackoff(&opts)
	l, err := New[RawAnchor](opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	tk := newTokens()
	b := newBatch(mem, 0, 1, 1)
	if err := l.Submit(ctx, b, tk.tok(1)); err != nil {
		t.Fatal(err)
	}
	b.Release()
	d.failNext(1 << 30)
	d.nth(t, 1).kill()
	eventually(t, "rebuilding", func() bool { return l.State() == StateRebuilding })
	b = newBatch(mem, 0, 2, 2)
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	err = l.Submit(short, b, tk.tok(2))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Submit while rebuilding: %v", err)
	}
	b.Release()
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = l.Close(cctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v, want DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("Close took %v", el)
	}
	calls, _ := tk.snapshot()
	if len(calls) != 1 || !errors.Is(calls[1][0], ErrClosed) {
		t.Fatalf("tokens %v: want token 1 ErrClosed, token 2 never called", calls)
	}
	if l.State() != StateClosed {
		t.Errorf("state %v", l.State())
	}
	select {
	case <-l.Done():
	default:
		t.Error("Done not closed")
	}
}

// Coverage lanes commit coverage, never delivered; NoCommit lanes commit nothing.
func TestCoverageAndNoCommitLanes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	com := newFakeCommitter(func() time.Duration { return 0 })
	ctx := ctxT(t)
	cov, err := New[Coverage](Options{Destination: "zb", Dial: newDialer(newFakeServer(), func() time.Duration { return 0 }).dial, Committer: com})
	if err != nil {
		t.Fatal(err)
	}
	none, err := New[NoCommit](Options{Destination: "x", Dial: newDialer(newFakeServer(), func() time.Duration { return 0 }).dial, Committer: com})
	if err != nil {
		t.Fatal(err)
	}
	b := newBatch(mem, 2, 5, 9)
	if err := cov.Submit(ctx, b, Coverage{}); err != nil {
		t.Fatal(err)
	}
	if err := none.Submit(ctx, b, NoCommit{}); err != nil {
		t.Fatal(err)
	}
	b.Release()
	if err := errors.Join(cov.Close(ctx), none.Close(ctx)); err != nil {
		t.Fatal(err)
	}
	com.shutdown()
	if got := com.durable("coverage/zb", 2); got != 9 {
		t.Errorf("coverage %d, want 9", got)
	}
	if com.durable("delivered/zb", 2) != 0 || com.commits() != 1 {
		t.Errorf("coverage lane wrote a delivered watermark, or the NoCommit lane committed (commits %d)", com.commits())
	}
}

// The pending, saturation and offset gauges read the lane.
func TestLaneGauges(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	d := newDialer(newFakeServer(), nil)
	l, err := New[NoCommit](Options{Destination: "g", Capacity: 8, Dial: d.dial, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	submit := func(n int) {
		for range n {
			b := newBatch(mem, 0, 1, 1)
			if err := l.Submit(ctx, b, NoCommit{}); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
	}
	submit(2)
	d.nth(t, 1).ackAll()
	eventually(t, "delivered 2", func() bool { return l.Delivered() == 2 })
	submit(4)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch g := m.Data.(type) {
			case metricdata.Gauge[int64]:
				got[m.Name] = float64(g.DataPoints[0].Value)
			case metricdata.Gauge[float64]:
				got[m.Name] = g.DataPoints[0].Value
			}
		}
	}
	want := map[string]float64{observability.LanePending: 4, observability.LaneSaturation: 0.5,
		observability.LaneSubmittedOffset: 6, observability.LaneDeliveredOffset: 2}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	d.nth(t, 1).ackAll()
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

var _ = rand.N[int]
