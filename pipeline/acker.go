package pipeline

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/instruments"
)

// acker acknowledges durable spans upstream from one goroutine, in the order
// the anchor lane released them. The lane's OnDurable callbacks must not
// block, and Source.Ack may do network I/O, hence the queue between them.
type acker struct {
	src     Source
	metrics *instruments.PipelineMetrics
	log     *slog.Logger

	mu struct {
		sync.Mutex
		queue  []ackItem
		closed bool
	}
	wake   chan struct{} // capacity 1: "the queue changed"
	done   chan struct{} // closed when run returns
	acked  atomic.Uint64 // records acknowledged upstream
	failed atomic.Uint64 // Ack calls that returned an error
	// enqueued counts the records queued for an upstream ack.
	enqueued atomic.Uint64
	// abandoned is set by close when its deadline passed first: run then
	// acknowledges nothing more, and the Ack in progress, if any, is ended
	// by Source.Close. abandonedRecs is the records queued and not yet
	// released then: left durable at the anchor, unacknowledged upstream.
	abandoned     atomic.Bool
	abandonedRecs atomic.Uint64
	// released counts records whose upstream ack was attempted (acked or
	// failed): the pipeline's MaxUnacked bound counts against it. A failed
	// Ack releases too — the records come back from the source, and
	// holding them would stop the pipeline for good.
	released atomic.Uint64
	relMu    sync.Mutex
	relCh    chan struct{} // closed and replaced after each release
}

// ackItem is one durable batch's spans and the number of records it covers
// (batch.Batch.NumRecords). The records, not the spans' widths, are what
// MaxUnacked counts: seqs are global positions, so a span also covers
// positions this worker never took (records another consumer of a shared
// subscription received, seqs the broker skipped).
type ackItem struct {
	spans   []batch.OffsetSpan
	records uint64
}

func newAcker(src Source, m *instruments.PipelineMetrics, log *slog.Logger) *acker {
	return &acker{src: src, metrics: m, log: log, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// tokenFor returns the OnDurable callback of a RawAnchor token: on a nil
// error (the spans are durably delivered) it queues them for the upstream
// ack; on an error it does nothing — those records are not known durable and
// must come back after a restart.
// records is the number of records the spans cover.
func (a *acker) tokenFor(spans []batch.OffsetSpan, records uint64) func(error) {
	return func(err error) {
		if err == nil {
			a.enqueue(spans, records)
		}
	}
}

func (a *acker) enqueue(spans []batch.OffsetSpan, records uint64) {
	a.enqueued.Add(records)
	a.mu.Lock()
	a.mu.queue = append(a.mu.queue, ackItem{spans, records})
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// run acknowledges queued spans until close is called and the queue is empty.
func (a *acker) run() {
	defer close(a.done)
	var work []ackItem
	for {
		<-a.wake
		a.mu.Lock()
		work, a.mu.queue = a.mu.queue, work[:0]
		closed := a.mu.closed
		a.mu.Unlock()
		a.ackAll(work)
		clear(work)
		if closed {
			a.mu.Lock()
			empty := len(a.mu.queue) == 0
			a.mu.Unlock()
			if empty {
				return
			}
		}
	}
}

// releasedCh returns a channel closed at the next release.
func (a *acker) releasedCh() <-chan struct{} {
	a.relMu.Lock()
	defer a.relMu.Unlock()
	if a.relCh == nil {
		a.relCh = make(chan struct{})
	}
	return a.relCh
}

func (a *acker) release(n uint64) {
	a.released.Add(n)
	a.relMu.Lock()
	if a.relCh != nil {
		close(a.relCh)
		a.relCh = nil
	}
	a.relMu.Unlock()
}

// ackAll acknowledges the batches that queued up while the previous Ack
// ran, in one Ack of their spans in release order: a cumulative source then
// acknowledges each partition once for all of them. Upstream acks thus cost
// at most one round per partition for each Ack's duration, however many
// batches it covers, instead of one per batch: what lets their cost grow
// less than the partitions (an ack per partition per batch at 256
// partitions is a broker round trip every few dozen records).
func (a *acker) ackAll(work []ackItem) {
	if len(work) == 0 {
		return
	}
	var n uint64
	for _, it := range work {
		n += it.records
	}
	if a.abandoned.Load() {
		a.release(n)
		return
	}
	spans := work[0].spans
	if len(work) > 1 {
		spans = make([]batch.OffsetSpan, 0, len(work)*len(work[0].spans))
		for _, it := range work {
			spans = append(spans, it.spans...)
		}
	}
	a.ack(spans, n)
}

func (a *acker) ack(spans []batch.OffsetSpan, n uint64) {
	defer a.release(n)
	if err := a.src.Ack(spans); err != nil {
		if a.abandoned.Load() {
			// The call close gave up on, ended by Source.Close: these
			// records are among those close counted as abandoned.
			return
		}
		// Not a loss, and not the run's failure: the records stay
		// unacknowledged upstream, come back (after a reconnect or a
		// restart) and are recognised as delivered from the durable
		// positions. A run that ends cleanly reports no error for it.
		a.log.Warn("upstream ack failed", "spans", spans, "err", err)
		a.failed.Add(1)
		a.metrics.SourceAckFailed(context.Background())
		return
	}
	a.acked.Add(n)
	a.metrics.SourceAcked(context.Background(), int64(n))
}

// close makes run return once everything queued so far is acknowledged,
// and waits for that until ctx ends. It reports whether run returned. If
// ctx ended first (an Ack that cannot complete: the client waits for the
// broker's answer without a deadline, for as long as the broker is away),
// the acks are abandoned: run acknowledges nothing more, and the caller
// must close the source, which ends the Ack in progress (Source.Close's
// contract) and with it run. Nothing is lost: the records are durable at
// the anchor, and the broker redelivers them. Callers must have stopped
// every producer of tokens (the anchor lane is closed) first.
func (a *acker) close(ctx context.Context) bool {
	a.mu.Lock()
	a.mu.closed = true
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
	select {
	case <-a.done:
		return true
	case <-ctx.Done():
		a.abandoned.Store(true)
		// The in-flight Ack's records are not released yet: they count.
		a.abandonedRecs.Store(a.enqueued.Load() - a.released.Load())
		return false
	}
}
