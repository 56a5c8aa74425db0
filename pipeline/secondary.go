package pipeline

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/lanes"
)

// secondary feeds one coverage lane from its own goroutine through a
// bounded queue, so that a slow or stalled secondary never blocks the
// dispatcher (and so never the anchor lane or the source).
//
// Coverage may lag, never lead: a secondary's coverage watermark is the max
// Last it durably confirmed, so it may only ever be fed a gap-free prefix of
// the batches. When the queue overflows, the secondary is detached: the
// batches already queued still go out, nothing after them does, and its
// coverage stops where the contiguous prefix ends.
type secondary struct {
	name     string
	lane     *lanes.Lane[lanes.Coverage]
	log      *slog.Logger
	queue    chan *batch.Batch // owned references; closed by close
	detached atomic.Bool
	done     chan struct{} // closed when the forwarder returns
	cancel   context.CancelFunc
}

func newSecondary(name string, l *lanes.Lane[lanes.Coverage], queue int, log *slog.Logger) *secondary {
	return &secondary{name: name, lane: l, log: log.With("destination", name),
		queue: make(chan *batch.Batch, queue), done: make(chan struct{})}
}

// detach stops feeding the secondary for the rest of this run.
func (s *secondary) detach(why string) {
	if s.detached.CompareAndSwap(false, true) {
		s.log.Warn("secondary detached: its coverage lags the raw anchor from here on", "why", why)
	}
}

// offer queues b for the secondary without ever blocking. It is called by
// the dispatcher only.
func (s *secondary) offer(b *batch.Batch) {
	if s.detached.Load() {
		return
	}
	b.Retain()
	select {
	case s.queue <- b:
	default:
		b.Release()
		s.detach("queue full")
	}
}

func (s *secondary) start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	go func() {
		defer close(s.done)
		for b := range s.queue {
			if ctx.Err() == nil {
				if err := s.lane.Submit(ctx, b, lanes.Coverage{}); err != nil {
					s.detach(err.Error())
				}
			}
			b.Release()
		}
	}()
}

// close stops the forwarder (after it has offered what is queued, bounded
// by ctx) and closes the lane. The dispatcher must have exited.
func (s *secondary) close(ctx context.Context) error {
	if s.cancel != nil {
		close(s.queue)
		select {
		case <-s.done:
		case <-ctx.Done():
			s.cancel()
			<-s.done
		}
		s.cancel()
	}
	return s.lane.Close(ctx)
}
