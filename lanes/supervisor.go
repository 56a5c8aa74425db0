package lanes

import (
	"errors"
)

// supervise owns the lane's transports for its whole life: it dials the
// first one, waits for the current incarnation to be poisoned, tears it down
// and builds the next (docs/design.md#poisoning), until Close cancels the lane
// context. It closes the last transport itself on the way out.
func (l *Lane[T]) supervise() {
	defer l.wg.Done()
	for {
		inc := l.connect()
		if inc == nil {
			return // lane stopped while dialling
		}
		select {
		case <-inc.poisoned:
			l.transition(StateRebuilding, nil, StatePoisoned)
			l.rebuilds.Add(1)
			// Closing first unblocks a Send and the ack task's wait.
			if err := inc.closeTransport(); err != nil {
				l.log.Debug("closing poisoned transport", "err", err)
			}
			<-inc.ackDone
		case <-l.ctx.Done():
			err := inc.closeTransport()
			<-inc.ackDone
			if err != nil {
				l.trErr = errors.Join(l.trErr, err)
			}
			return
		}
	}
}

// connect dials a transport, replays every retained batch in offset order
// under its original offset, publishes the new incarnation and starts its
// ack task. It retries with backoff until it succeeds, or returns nil when
// the lane context is cancelled.
func (l *Lane[T]) connect() *incarnation[T] {
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			l.retry()
			select {
			case <-l.opts.Clock.After(l.opts.Backoff.delay(attempt)):
			case <-l.ctx.Done():
				return nil
			}
		}
		tr, err := l.opts.Dial(l.ctx)
		if err != nil {
			if l.ctx.Err() != nil {
				return nil
			}
			l.attemptFailed("dial failed", attempt+1, err)
			continue
		}
		inc := newIncarnation[T](tr, l.opts.Capacity)

		// Submit holds sendSem from offset assignment to hand-off, so the
		// snapshot below contains every batch with an assigned offset and
		// no Submit can slip a newer offset in before the replay.
		select {
		case l.sendSem <- struct{}{}:
		case <-l.ctx.Done():
			_ = tr.Close()
			return nil
		}
		l.mu.Lock()
		replay := l.mu.retained.appendTo(l.replayBuf[:0])
		l.mu.Unlock()
		// The previous ack task has exited and the next one is not started:
		// nobody pops retained while we replay.
		var sendErr error
		for _, pa := range replay {
			if sendErr = tr.Send(l.ctx, pa.offset, pa.b); sendErr != nil {
				break
			}
		}
		if sendErr != nil {
			<-l.sendSem
			clear(replay)
			l.replayBuf = replay[:0]
			_ = tr.Close()
			if l.ctx.Err() != nil {
				return nil
			}
			l.attemptFailed("replay failed", attempt+1, sendErr, "batches", len(replay))
			continue
		}
		for _, pa := range replay {
			l.replayed.Add(uint64(pa.b.NumRows()))
			inc.ch <- pa
		}
		if n := len(replay); n > 0 && replay[n-1].offset > l.submitted.Load() {
			l.submitted.Store(replay[n-1].offset)
		}
		if len(replay) > 0 {
			l.log.Info("replayed unconfirmed batches", "batches", len(replay),
				"first_offset", replay[0].offset, "last_offset", replay[len(replay)-1].offset)
		}
		clear(replay)
		l.replayBuf = replay[:0]

		l.mu.Lock()
		l.mu.inc = inc
		rebuilt := l.mu.rebuilt
		l.mu.rebuilt = make(chan struct{})
		l.mu.Unlock()
		// Only from these: once Close set StateClosing it must stick.
		l.transition(StateOpen, nil, StateConnecting, StateRebuilding, StatePoisoned)
		if attempt > 0 {
			l.log.Info("transport up again", "failed_attempts", attempt)
		}
		l.wg.Add(1)
		go l.ackLoop(inc)
		close(rebuilt)
		<-l.sendSem
		return inc
	}
}
