package harness

import (
	"errors"
	"testing"
	"time"
)

// A stall is the time between two observed rises of a partition's
// position; a failed poll changes nothing; the interval still open at Stop
// counts up to the last poll.
func TestStallWatch_Intervals(t *testing.T) {
	w := &StallWatch{stop: make(chan struct{}), done: make(chan struct{})}
	close(w.done)
	w.mu.current = make([]Stall, 2)
	w.mu.pos = make([]string, 2)
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	w.observe(0, "1:1", nil, at(0), 10*time.Millisecond)
	w.observe(1, "1:1", nil, at(0), 10*time.Millisecond)
	w.observe(0, "1:2", nil, at(0.2), 10*time.Millisecond)
	w.observe(0, "1:2", nil, at(3), 10*time.Millisecond)
	w.observe(0, "1:2", errors.New("refused"), at(3.5), 10*time.Millisecond)
	w.observe(0, "1:3", nil, at(4), 300*time.Millisecond)
	w.observe(1, "1:1", nil, at(5), 10*time.Millisecond)
	stalls, failed, slowest := w.Stop()
	if failed != 1 {
		t.Errorf("failed polls %d, want 1", failed)
	}
	if slowest != 300*time.Millisecond {
		t.Errorf("slowest poll %v, want 300ms", slowest)
	}
	longest := Longest(stalls, 2)
	if longest[0] != 3800*time.Millisecond || longest[1] != 5*time.Second {
		t.Errorf("longest %v, want [3.8s 5s]", longest)
	}
	var all []time.Duration
	for _, s := range stalls {
		all = append(all, s.For)
	}
	if q := Quantile(all, 0.5); q != 1*time.Second {
		t.Errorf("p50 of %v = %v, want 1s", all, q)
	}
	if q := Quantile(all, 1); q != 5*time.Second {
		t.Errorf("max of %v = %v, want 5s", all, q)
	}
}
