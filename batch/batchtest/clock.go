// Package batchtest holds test helpers for code built on package batch.
package batchtest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/thalweg/thalweg/batch"
)

// FakeClock is a manually advanced batch.Clock. Timers fire only from
// Advance, synchronously on the goroutine that calls it, in deadline order,
// with the clock's own lock released (so callbacks may use the clock).
// It is safe for concurrent use.
type FakeClock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	changed chan struct{} // closed and replaced whenever a timer is (re)scheduled
}

var _ batch.Clock = (*FakeClock)(nil)

// NewFakeClock returns a clock that reads start until advanced.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run when Advance reaches now+d.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) batch.Timer {
	t := &fakeTimer{c: c, f: f}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.scheduleLocked(d)
	return t
}

// Advance moves the clock forward by d, running every timer that falls due
// on the way at its own deadline.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	for {
		var due *fakeTimer
		for _, t := range c.timers {
			if t.active && !t.when.After(target) && (due == nil || t.when.Before(due.when)) {
				due = t
			}
		}
		if due == nil {
			c.now = target
			// Forget timers that are no longer scheduled; Reset lists them again.
			c.timers = slices.DeleteFunc(c.timers, func(t *fakeTimer) bool {
				t.listed = t.active
				return !t.active
			})
			c.mu.Unlock()
			return
		}
		if due.when.After(c.now) {
			c.now = due.when
		}
		due.active = false
		c.mu.Unlock()
		due.f()
		c.mu.Lock()
	}
}

// Pending returns the number of scheduled timers.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pendingLocked()
}

func (c *FakeClock) pendingLocked() int {
	n := 0
	for _, t := range c.timers {
		if t.active {
			n++
		}
	}
	return n
}

// WaitPending blocks until at least n timers are scheduled or ctx ends.
// Tests use it to know that a goroutine is waiting on the clock before they
// advance it.
func (c *FakeClock) WaitPending(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if c.pendingLocked() >= n {
			c.mu.Unlock()
			return nil
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

type fakeTimer struct {
	c      *FakeClock
	f      func()
	when   time.Time
	active bool
	listed bool // in c.timers
}

func (t *fakeTimer) scheduleLocked(d time.Duration) {
	t.when, t.active = t.c.now.Add(d), true
	if !t.listed {
		t.listed = true
		t.c.timers = append(t.c.timers, t)
	}
	close(t.c.changed)
	t.c.changed = make(chan struct{})
}

// Stop unschedules the timer; it reports whether it was scheduled.
func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

// Reset reschedules the timer to fire d after the current fake time; it
// reports whether it was scheduled.
func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.scheduleLocked(d)
	return was
}
