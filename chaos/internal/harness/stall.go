package harness

import (
	"context"
	"slices"
	"sync"
	"time"
)

// StallWatch measures, per partition of a topic, how long the
// subscription's acknowledged position (its cursor's mark-delete position)
// stands still: while records keep arriving, a partition whose position
// does not rise is stalled — its owner died and the new one has not
// resumed, or its owner is frozen. Positions are polled every interval; a
// stall is the time between two observed rises (so it is measured to
// within one interval).
type StallWatch struct {
	stop chan struct{}
	done chan struct{}

	mu struct {
		sync.Mutex
		stalls  []Stall       // every interval between two rises
		current []Stall       // per partition: since its last rise
		pos     []string      // per partition: the last position seen
		errs    int           // polls that failed (counted, not fatal)
		lastRun time.Time     // the last poll
		slowest time.Duration // the slowest poll
	}
}

// Stall is one interval during which a partition's position did not rise.
type Stall struct {
	Partition int
	From      time.Time
	For       time.Duration
}

// WatchStalls starts polling tp's partitions for sub every interval until
// Stop, each partition on a goroutine of its own: a round over every
// partition in turn lasts as long as its slowest admin calls together,
// which on a loaded machine stretches every measured stall by up to a
// round.
func (a *Admin) WatchStalls(tp Topic, sub string, interval time.Duration) *StallWatch {
	w := &StallWatch{stop: make(chan struct{}), done: make(chan struct{})}
	w.mu.current = make([]Stall, tp.Partitions)
	w.mu.pos = make([]string, tp.Partitions)
	var wg sync.WaitGroup
	for i := range tp.Partitions {
		wg.Go(func() {
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				start := time.Now()
				md, err := a.markDelete(ctx, tp.partition(i), sub)
				cancel()
				w.observe(i, md, err, time.Now(), time.Since(start))
				select {
				case <-w.stop:
					return
				case <-tick.C:
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(w.done)
	}()
	return w
}

func (w *StallWatch) observe(i int, pos string, err error, now time.Time, took time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if now.After(w.mu.lastRun) {
		w.mu.lastRun = now
	}
	w.mu.slowest = max(w.mu.slowest, took)
	if err != nil {
		w.mu.errs++
		return
	}
	c := &w.mu.current[i]
	if c.From.IsZero() {
		*c = Stall{Partition: i, From: now}
		w.mu.pos[i] = pos
		return
	}
	if pos != w.mu.pos[i] {
		w.mu.stalls = append(w.mu.stalls, Stall{Partition: i, From: c.From, For: now.Sub(c.From)})
		*c = Stall{Partition: i, From: now}
		w.mu.pos[i] = pos
	}
}

// Stop ends the polling and returns every stall seen, the open ones (a
// partition that has not risen since) included, the number of polls that
// failed and the slowest poll (a stall is measured to within it plus the
// interval).
func (w *StallWatch) Stop() (stalls []Stall, failedPolls int, slowest time.Duration) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.mu.stalls)
	for _, c := range w.mu.current {
		if !c.From.IsZero() {
			out = append(out, Stall{Partition: c.Partition, From: c.From, For: w.mu.lastRun.Sub(c.From)})
		}
	}
	return out, w.mu.errs, w.mu.slowest
}

// Longest returns, per partition index, the longest of stalls.
func Longest(stalls []Stall, partitions int) []time.Duration {
	out := make([]time.Duration, partitions)
	for _, s := range stalls {
		out[s.Partition] = max(out[s.Partition], s.For)
	}
	return out
}

// Quantile returns the q-quantile (0..1, nearest rank) of ds.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}
