package lanes

import (
	"context"
	"time"
)

// ackLoop is the ack task of one incarnation (docs/design.md#ack-lanes). It owns the
// receiving end of inc.ch and is the only goroutine that confirms batches
// while inc is current. It returns when inc is poisoned or the lane stops.
func (l *Lane[T]) ackLoop(inc *incarnation[T]) {
	defer l.wg.Done()
	defer close(inc.ackDone)
	burst := make([]pendingAck[T], 0, l.opts.Capacity)
	for {
		clear(burst)
		burst = burst[:0]
		// Blocking receive for the first item of a burst...
		select {
		case pa := <-inc.ch:
			burst = append(burst, pa)
		case <-inc.poisoned:
			return
		case <-l.ctx.Done():
			return
		}
		// ...then everything already queued behind it.
	drain:
		for {
			select {
			case pa := <-inc.ch:
				burst = append(burst, pa)
			default:
				break drain
			}
		}
		// Offsets are monotone, so one wait on the largest confirms them all.
		if !l.awaitDurable(inc, burst[len(burst)-1].offset) {
			return
		}
		l.confirm(burst)
	}
}

// awaitDurable waits until the transport confirmed everything up to offset,
// retrying transient errors with backoff. It reports false when inc was
// poisoned (here or elsewhere) or the lane is stopping.
func (l *Lane[T]) awaitDurable(inc *incarnation[T], offset uint64) bool {
	for attempt := 1; ; attempt++ {
		ctx, cancel := l.ctx, context.CancelFunc(nil)
		if l.opts.AckTimeout > 0 {
			ctx, cancel = context.WithTimeout(l.ctx, l.opts.AckTimeout)
		}
		err := inc.tr.WaitDurable(ctx, offset)
		if cancel != nil {
			cancel()
		}
		if err == nil {
			return true
		}
		if l.ctx.Err() != nil || inc.isPoisoned() {
			return false
		}
		if IsPermanent(err) || attempt > l.opts.MaxRetries {
			l.poison(inc, stepAck, err)
			return false
		}
		l.retry()
		l.log.Debug("transient ack error, retrying", "offset", offset, "attempt", attempt, "err", err)
		select {
		case <-time.After(l.opts.Backoff.delay(attempt)):
		case <-inc.poisoned:
			return false
		case <-l.ctx.Done():
			return false
		}
	}
}

// confirm fires the confirmations of a durable burst in ascending offset
// order: advance delivered, record latency, release the lane's batch
// reference, and enqueue the destination's commit.
func (l *Lane[T]) confirm(burst []pendingAck[T]) {
	l.mu.Lock()
	for i := range burst {
		front := l.mu.retained.pop()
		if front.offset != burst[i].offset {
			// The retained queue and the channel are filled in the same
			// order under sendSem; a mismatch is a bug in this package.
			l.mu.Unlock()
			panic("lanes: ack task out of step with the retained queue")
		}
	}
	l.mu.Unlock()

	now := time.Now()
	for _, pa := range burst {
		l.delivered.Store(pa.offset)
		l.metrics.DeliveryLatency(l.ctx, now.Sub(pa.submittedAt))
		spans := pa.b.Spans
		l.rows.Add(uint64(pa.b.NumRows()))
		if l.opts.OnConfirm != nil {
			l.opts.OnConfirm(pa.offset, spans)
		}
		pa.b.Release()
		switch l.kind {
		case kindRawAnchor:
			seq := l.releases.add(onDurable(pa.tok))
			l.opts.Committer.CommitDelivered(l.opts.Destination, spans, func(err error) { l.releases.complete(seq, err) })
		case kindCoverage:
			seq := l.releases.add(nil)
			l.opts.Committer.CommitCoverage(l.opts.Destination, spans, func(err error) { l.releases.complete(seq, err) })
		case kindNoCommit:
			// Finished with the whole burst, below.
		}
	}
	if l.kind == kindNoCommit {
		// Nothing to commit: the burst is done once it is confirmed. One
		// finish for the whole burst frees its slots and wakes Flush with
		// one lock of mu, not one a batch (that lock is Submit's too).
		l.finish(len(burst), len(burst))
	}
	if l.failingNow.Load() {
		l.progressed() // a durable confirmation ends a failure streak
	}
	l.confirmed.Add(uint64(len(burst)))
	l.bursts.Add(1)
	l.metrics.Burst(l.ctx, len(burst))
	if l.burstHook != nil {
		l.burstHook(len(burst))
	}
}
