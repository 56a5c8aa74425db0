package lanes

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/thalweg/thalweg/observability"
)

// Steps of a lane that can fail: they are the first half of the
// thalweg.lane.poisoned cause label, the class is the second.
const (
	stepDial = "dial"
	stepSend = "send" // a Send, or the replay of retained batches on a new stream
	stepAck  = "ack"
)

// failure is one failed step, classified once.
type failure struct {
	step  string
	class Class
	code  string // gRPC status code name, "" when none
	err   error
}

func newFailure(step string, err error) failure {
	class, code := Classify(err)
	return failure{step: step, class: class, code: code, err: err}
}

// cause is the thalweg.lane.poisoned cause label of f.
func (f failure) cause() string {
	perm := f.class == ClassPermanent
	switch f.step {
	case stepDial:
		if perm {
			return observability.CauseDialPermanent
		}
		return observability.CauseDialRetryable
	case stepSend:
		if perm {
			return observability.CauseSendPermanent
		}
		return observability.CauseSendRetryable
	default:
		if perm {
			return observability.CauseAckPermanent
		}
		return observability.CauseAckRetryable
	}
}

// streak is a lane's run of consecutive failures since its last progress
// (a durable confirmation). It is what the backoff grows with and what the
// permanent budget is measured on. Guarded by Lane.failing.
type streak struct {
	n         int       // failures in the streak; 0: healthy
	since     time.Time // first failure of the streak
	permSince time.Time // first of the uninterrupted permanent failures that end it; zero if the last was retryable
	last      failure
	lastLog   time.Time // last Warn line about the streak
}

// maxErrText bounds the error text a lane logs or returns for one failure:
// servers put whole schemas into their messages.
const maxErrText = 300

// brief returns err's text, truncated to maxErrText bytes (on a rune
// boundary) with the number of bytes left out.
func brief(err error) string {
	if err == nil {
		return ""
	}
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) <= maxErrText {
		return s
	}
	cut := maxErrText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}

// failedError is the error of a lane that failed for good. Its text is
// bounded (brief); errors.Is and errors.As reach ErrFailed and the last
// transport error.
type failedError struct {
	msg   string
	cause error
}

func (e *failedError) Error() string   { return e.msg }
func (e *failedError) Unwrap() []error { return []error{ErrFailed, e.cause} }

// supervise owns the lane's transports for its whole life: it dials the
// first one, waits for the current incarnation to be poisoned, tears it down
// and builds the next (docs/design.md#poisoning), until Close cancels the lane
// context or the lane fails for good. It closes the last transport itself on
// the way out.
func (l *Lane[T]) supervise() {
	defer l.wg.Done()
	var wait time.Duration // before the next dial: 0 the first time
	for {
		inc := l.connect(wait)
		if inc == nil {
			return // lane stopped, or failed for good
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
			var end bool
			if wait, end = l.failedStep(inc.cause, false); end {
				return
			}
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

// connect waits wait, then dials a transport, replays every retained batch
// in offset order under its original offset, publishes the new incarnation
// and starts its ack task. A failed dial or replay is recorded (growing the
// backoff) and retried until it succeeds; connect returns nil when the lane
// context is cancelled or the lane failed for good.
func (l *Lane[T]) connect(wait time.Duration) *incarnation[T] {
	for {
		if wait > 0 {
			l.retry()
			if !l.sleep(wait) {
				return nil
			}
		}
		tr, err := l.opts.Dial(l.ctx)
		if err != nil {
			if l.ctx.Err() != nil {
				return nil
			}
			var end bool
			if wait, end = l.failedStep(newFailure(stepDial, err), true); end {
				return nil
			}
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
			var end bool
			if wait, end = l.failedStep(newFailure(stepSend, sendErr), true); end {
				return nil
			}
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
			// Once per rebuild, not per attempt of a broken lane: those are
			// summarised by the failure streak's lines.
			level := slog.LevelInfo
			if l.failingNow.Load() {
				level = slog.LevelDebug
			}
			l.log.Log(l.ctx, level, "replayed unconfirmed batches", "batches", len(replay),
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
		l.wg.Add(1)
		go l.ackLoop(inc)
		close(rebuilt)
		<-l.sendSem
		return inc
	}
}

// sleep waits d. It returns false when the lane
// context ended, or when Drain or Close was called while the streak is
// permanent (the lane then fails for good: a drain cannot wait for a fix).
func (l *Lane[T]) sleep(d time.Duration) bool {
	timer := time.After(d)
	closing := l.draining
	for {
		select {
		case <-timer:
			return true
		case <-l.ctx.Done():
			return false
		case <-closing:
			l.failing.Lock()
			s := l.failing.streak
			l.failing.Unlock()
			if s.n > 0 && s.last.class == ClassPermanent {
				l.failForGood(s, time.Now(), "the lane is draining")
				return false
			}
			closing = nil // retryable: the drain may still succeed
		}
	}
}

// failedStep records one failure of the lane — a failed dial or replay
// (attempt: reported to OnStateChange as an attempt) or a poisoned stream —
// in the failure streak: it counts the metric, logs what is worth a line,
// and returns the backoff before the next dial. When permanent failures
// have persisted past Options.PermanentBudget, or Close has started, it
// fails the lane for good instead and reports end.
func (l *Lane[T]) failedStep(f failure, attempt bool) (wait time.Duration, end bool) {
	now := time.Now()
	l.metrics.Poisoned(l.ctx, f.cause())

	l.failing.Lock()
	s := &l.failing.streak
	s.n++
	first := s.n == 1
	classChanged := !first && s.last.class != f.class
	if first {
		s.since = now
	}
	if f.class != ClassPermanent {
		s.permSince = time.Time{}
	} else if s.permSince.IsZero() {
		s.permSince = now
	}
	s.last = f
	summary := !first && !classChanged && now.Sub(s.lastLog) >= l.opts.FailureLogInterval
	if first || classChanged || summary {
		s.lastLog = now
	}
	snap := *s
	l.failing.Unlock()
	l.failingNow.Store(true)

	if attempt {
		l.stateMu.Lock()
		if l.opts.OnStateChange != nil {
			st := State(l.state.Load())
			l.opts.OnStateChange(StateChange{From: st, To: st, Err: f.err, Class: f.class, Attempt: snap.n})
		}
		l.stateMu.Unlock()
	}

	if f.class == ClassPermanent {
		closing := false
		select {
		case <-l.draining:
			closing = true
		default:
		}
		switch {
		case closing:
			l.failForGood(snap, now, "the lane is draining")
			return 0, true
		case l.opts.PermanentBudget >= 0 && now.Sub(snap.permSince) >= l.opts.PermanentBudget:
			l.failForGood(snap, now, "permanent budget "+l.opts.PermanentBudget.String()+" spent")
			return 0, true
		}
	}

	wait = l.opts.Backoff.delay(snap.n)
	args := []any{"step", f.step, "class", f.class, "code", f.code, "err", brief(f.err), "retry_in", wait.Round(time.Millisecond)}
	switch {
	case first || classChanged:
		if f.class == ClassPermanent && l.opts.PermanentBudget >= 0 {
			args = append(args, "gives_up_in", (l.opts.PermanentBudget - now.Sub(snap.permSince)).Round(time.Millisecond))
		}
		if classChanged {
			args = append(args, "attempts", snap.n)
		}
		l.log.Warn("lane failing", args...)
	case summary:
		l.log.Warn("lane still failing", append(args, "attempts", snap.n, "failing_for", now.Sub(snap.since).Round(time.Millisecond))...)
	default:
		l.log.Debug("lane attempt failed", append(args, "attempts", snap.n)...)
	}
	return wait, false
}

// progressed ends the failure streak: the lane confirmed a batch durable.
// Called by the ack task.
func (l *Lane[T]) progressed() {
	l.failing.Lock()
	s := l.failing.streak
	l.failing.streak = streak{}
	l.failingNow.Store(false)
	l.failing.Unlock()
	if s.n > 0 {
		l.log.Info("lane recovered", "attempts", s.n, "failing_for", time.Since(s.since).Round(time.Millisecond),
			"last_step", s.last.step, "last_class", s.last.class, "last_code", s.last.code)
	}
}

// failForGood ends the lane: Failure returns the error, Submit and Flush
// return it, the state becomes StateFailed, and the supervisor stops
// dialling (its caller returns). Called by the supervisor only.
func (l *Lane[T]) failForGood(s streak, now time.Time, why string) {
	l.failOnce.Do(func() {
		f := s.last
		code := f.code
		if code == "" {
			code = "no status"
		}
		e := &failedError{
			msg: fmt.Sprintf("lanes: %s: failed for good (%s): %s failure %s for %v over %d attempts: %s",
				l.opts.Destination, why, f.step, code, now.Sub(s.permSince).Round(time.Millisecond), s.n, brief(f.err)),
			cause: f.err,
		}
		l.failure.Store(e)
		l.log.Error("lane failed for good", "step", f.step, "class", f.class, "code", f.code, "err", brief(f.err),
			"attempts", s.n, "failing_for", now.Sub(s.since).Round(time.Millisecond), "why", why)
		// State first: whoever wakes on failed sees StateFailed.
		l.transition(StateFailed, e, StateConnecting, StateRebuilding, StatePoisoned, StateOpen, StateClosing)
		close(l.failed)
	})
}
