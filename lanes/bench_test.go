package lanes

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// loopback is the benchmark transport: every sent offset becomes durable a
// fixed latency after its Send, and the server acks cumulatively (one timer
// wake-up acks everything that came due).
type loopback struct {
	latency time.Duration
	durable atomic.Uint64

	kick chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup

	mu struct {
		sync.Mutex
		queue   fifo[ackItem]
		changed chan struct{}
		closed  bool
	}
}

func newLoopback(latency time.Duration) *loopback {
	t := &loopback{latency: latency, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	t.mu.changed = make(chan struct{})
	t.wg.Add(1)
	go t.acker()
	return t
}

func (t *loopback) Send(_ context.Context, off uint64, _ *batch.Batch) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return permErr{"loopback closed"}
	}
	if t.latency == 0 {
		t.durable.Store(off)
		close(t.mu.changed)
		t.mu.changed = make(chan struct{})
		return nil
	}
	t.mu.queue.push(ackItem{time.Now().Add(t.latency), off})
	if t.mu.queue.len() == 1 {
		select {
		case t.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

func (t *loopback) acker() {
	defer t.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		t.mu.Lock()
		now := time.Now()
		var hw uint64
		for t.mu.queue.len() > 0 && !t.mu.queue.at(0).due.After(now) {
			hw = t.mu.queue.pop().off
		}
		if hw > 0 {
			t.durable.Store(hw)
			close(t.mu.changed)
			t.mu.changed = make(chan struct{})
		}
		wait := time.Hour
		if t.mu.queue.len() > 0 {
			wait = t.mu.queue.at(0).due.Sub(now)
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

func (t *loopback) WaitDurable(ctx context.Context, off uint64) error {
	for {
		if t.durable.Load() >= off {
			return nil
		}
		t.mu.Lock()
		if t.durable.Load() >= off {
			t.mu.Unlock()
			return nil
		}
		if t.mu.closed {
			t.mu.Unlock()
			return permErr{"loopback closed"}
		}
		ch := t.mu.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (t *loopback) Close() error {
	t.mu.Lock()
	t.mu.closed = true
	close(t.mu.changed)
	t.mu.changed = make(chan struct{})
	t.mu.Unlock()
	close(t.stop)
	t.wg.Wait()
	return nil
}

// syncCommitter makes every commit durable at once, on the caller's goroutine.
type syncCommitter struct{}

func (syncCommitter) CommitDelivered(_ string, _ []batch.OffsetSpan, cb func(error)) { cb(nil) }
func (syncCommitter) CommitCoverage(_ string, _ []batch.OffsetSpan, cb func(error))  { cb(nil) }

// serialRate holds the serial baseline of the current run, per latency, for
// the pipelined sub-benchmark's ratio.
var serialRate sync.Map // time.Duration -> float64

// BenchmarkLane compares the pipelined lane with the serial "await every ack
// inline" baseline over a loopback transport whose durable ack arrives a
// fixed latency after the send. Both run in the same invocation; pipelined
// reports its speed-up over serial (x_serial) and the median burst size.
//
//	go test -run '^$' -bench BenchmarkLane -count 5 ./lanes/
func BenchmarkLane(b *testing.B) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	bt := newBatch(mem, 0, 1, 64)
	defer bt.Release()

	for _, lat := range []time.Duration{0, time.Millisecond, 10 * time.Millisecond} {
		b.Run(fmt.Sprintf("latency=%v/serial", lat), func(b *testing.B) {
			tr := newLoopback(lat)
			defer tr.Close()
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				off := uint64(i + 1)
				if err := tr.Send(ctx, off, bt); err != nil {
					b.Fatal(err)
				}
				if err := tr.WaitDurable(ctx, off); err != nil {
					b.Fatal(err)
				}
			}
			rate := float64(b.N) / time.Since(start).Seconds()
			b.ReportMetric(rate, "batches/s")
			serialRate.Store(lat, rate)
		})
		b.Run(fmt.Sprintf("latency=%v/pipelined", lat), func(b *testing.B) {
			var mu sync.Mutex
			bursts := make([]int, 0, 1024)
			done := make(chan struct{})
			target := uint64(b.N)
			l, err := New[RawAnchor](Options{
				Destination: "bench",
				Capacity:    4096,
				Dial:        func(context.Context) (Transport, error) { return newLoopback(lat), nil },
				Committer:   syncCommitter{},
				OnConfirm: func(off uint64, _ []batch.OffsetSpan) {
					if off == target {
						close(done)
					}
				},
			})
			if err != nil {
				b.Fatal(err)
			}
			l.burstHook = func(n int) { mu.Lock(); bursts = append(bursts, n); mu.Unlock() }
			ctx := context.Background()
			tok := RawAnchor{OnDurable: func(error) {}}
			// Wait for the first dial so it is not timed.
			testenv.WaitFor(b, waitBound, "the first dial", func() bool { return l.State() == StateOpen })
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				if err := l.Submit(ctx, bt, tok); err != nil {
					b.Fatal(err)
				}
			}
			<-done
			el := time.Since(start)
			b.StopTimer()
			if err := l.Close(ctx); err != nil {
				b.Fatal(err)
			}
			rate := float64(b.N) / el.Seconds()
			b.ReportMetric(rate, "batches/s")
			if s, ok := serialRate.Load(lat); ok {
				b.ReportMetric(rate/s.(float64), "x_serial")
			}
			mu.Lock()
			slices.Sort(bursts)
			if len(bursts) > 0 {
				b.ReportMetric(float64(bursts[len(bursts)/2]), "coalesce_p50")
			}
			mu.Unlock()
		})
	}
}

// BenchmarkLaneNoCommitCPU is the lane's own CPU per batch, without a
// real transport: a NoCommit lane of capacity 512 over the loopback
// transport, whose acks come in groups (everything due at one timer
// wake-up), as a group-committing sink's do. cpu-ns/batch is the process's
// CPU (getrusage) per submitted batch, the lane's ack task and the
// loopback's acker included.
//
//	go test -run '^$' -bench BenchmarkLaneNoCommitCPU -benchtime 200000x -count 5 ./lanes/
func BenchmarkLaneNoCommitCPU(b *testing.B) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	bt := newBatch(mem, 0, 1, 10)
	defer bt.Release()
	for _, lat := range []time.Duration{0, time.Millisecond} {
		b.Run(fmt.Sprintf("latency=%v", lat), func(b *testing.B) {
			l, err := New[NoCommit](Options{
				Destination: "bench",
				Capacity:    512,
				Dial:        func(context.Context) (Transport, error) { return newLoopback(lat), nil },
			})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			testenv.WaitFor(b, waitBound, "the first dial", func() bool { return l.State() == StateOpen })
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := testenv.ProcessCPU().Seconds()
			for range b.N {
				if err := l.Submit(ctx, bt, NoCommit{}); err != nil {
					b.Fatal(err)
				}
			}
			if err := l.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			cpu := testenv.ProcessCPU().Seconds() - cpu0
			b.StopTimer()
			b.ReportMetric(cpu*1e9/float64(b.N), "cpu-ns/batch")
			b.ReportMetric(float64(l.Confirmed())/float64(max(l.Bursts(), 1)), "batches/burst")
			if err := l.Close(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}
