package pulsar

import (
	"context"
	"errors"
	"time"
)

// Backoff of Options.Reconcile after a failure: it is not called again,
// however many partitions are assigned meanwhile, before the backoff
// passed; the backoff doubles per consecutive failure up to the maximum.
// A failure is logged as a warning at most once per reconcileWarnEvery
// (the first of a run of failures always).
const (
	reconcileBackoffMin = time.Second
	reconcileBackoffMax = time.Minute
	reconcileWarnEvery  = 5 * time.Minute
)

// reconciler keeps Options.Reconcile's last answer and the backoff after a
// failure. Next's goroutine only.
type reconciler struct {
	anchor    map[string]uint64 // the last answer
	fetchedAt time.Time         // when the call that gave it started; zero: none yet

	failures int // consecutive failed calls
	backoff  time.Duration
	retryAt  time.Time // no call before
	warnedAt time.Time // the last warning of the current run of failures
}

// reconciling reports whether the Source asks Options.Reconcile. Only a
// monotone Source does: its durable position covers every record below it,
// and so does the anchor's for an ordered subscription. For a Source that
// is not monotone a position says nothing about the records below it.
func (s *Source) reconciling() bool { return s.opts.Reconcile != nil && s.monotone }

// markActivated is the activation tracker's onActive: the broker made this
// consumer active on topic (or, after a dropped notification, its messages
// turned out to be this consumer's). Called on the client's goroutine, so it
// only notes the time; Next reconciles before judging the partition's next
// message.
func (s *Source) markActivated(topic string) {
	s.activated.Lock()
	defer s.activated.Unlock()
	s.activated.at[topic] = time.Now()
	s.activatedN.Store(int32(len(s.activated.at)))
}

// reconcileIfDue raises p's durable position to the anchor's when p asks
// for it (see partition.reconcileFrom), calling Options.Reconcile unless an
// answer from after the request is at hand or a failure's backoff has not
// passed. A failed call is logged and counted, and p goes on with its own
// position: the anchor's idempotent append still keeps the anchor free of
// duplicates of an ordered subscription. It returns only ctx.Err() or ErrClosed, when those end the
// call first; p then still asks. Next's goroutine only.
func (s *Source) reconcileIfDue(ctx context.Context, p *partition) error {
	if s.activatedN.Load() > 0 {
		s.activated.Lock()
		if at, ok := s.activated.at[p.name]; ok {
			delete(s.activated.at, p.name)
			s.activatedN.Store(int32(len(s.activated.at)))
			if at.After(p.reconcileFrom) {
				p.reconcileFrom = at
			}
		}
		s.activated.Unlock()
	}
	if p.reconcileFrom.IsZero() {
		return nil
	}
	r := &s.recon
	if r.fetchedAt.IsZero() || r.fetchedAt.Before(p.reconcileFrom) {
		if time.Now().Before(r.retryAt) {
			p.reconcileFrom = time.Time{} // backing off: the own position
			return nil
		}
		if err := s.fetchAnchor(ctx); err != nil {
			if errors.Is(err, errReconcileFailed) {
				p.reconcileFrom = time.Time{}
				return nil
			}
			return err
		}
	}
	p.reconcileFrom = time.Time{}
	anchor := r.anchor[p.name]
	s.mu.Lock()
	own := p.durable
	if anchor > own {
		p.durable = anchor
	}
	s.mu.Unlock()
	if anchor > own {
		s.log.Info("took the anchor's position as delivered", "topic", p.name, "own", own, "anchor", anchor)
	}
	return nil
}

// errReconcileFailed reports, inside the package, a failed Reconcile call
// that fetchAnchor has logged and counted.
var errReconcileFailed = errors.New("source/pulsar: reconcile failed")

// fetchAnchor calls Options.Reconcile, bounded by Options.OperationTimeout
// and ended early by Close. Next's goroutine only.
func (s *Source) fetchAnchor(ctx context.Context) error {
	r := &s.recon
	cctx, cancel := context.WithTimeout(ctx, s.opts.OperationTimeout)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-done:
		}
	}()
	start := time.Now()
	m, err := s.opts.Reconcile(cctx)
	if err == nil {
		s.reconciled.Add(1)
		if r.failures > 0 {
			s.log.Info("the anchor's positions are available again", "after_failures", r.failures)
		}
		r.anchor, r.fetchedAt = m, start
		r.failures, r.backoff, r.retryAt, r.warnedAt = 0, 0, time.Time{}, time.Time{}
		return nil
	}
	select {
	case <-s.closing:
		return ErrClosed
	default:
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	s.reconcileErrors.Add(1)
	r.failures++
	r.backoff = min(max(2*r.backoff, reconcileBackoffMin), reconcileBackoffMax)
	now := time.Now()
	r.retryAt = now.Add(r.backoff)
	if r.warnedAt.IsZero() || now.Sub(r.warnedAt) >= reconcileWarnEvery {
		r.warnedAt = now
		s.log.Warn("asking the anchor for its positions failed; going on with this worker's own positions "+
			"(records the anchor has already may be sent to it again)",
			"err", err, "failures", r.failures, "next_try_after", r.backoff)
	} else {
		s.log.Debug("asking the anchor for its positions failed", "err", err, "failures", r.failures,
			"next_try_after", r.backoff)
	}
	return errReconcileFailed
}
