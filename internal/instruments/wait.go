package instruments

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/thalweg/thalweg/observability"
)

// waitClock adds up the time callers spend blocked, counting the waits that
// are still in progress, so that an exported total grows while a wait lasts
// instead of jumping when it ends: intake stuck for ten minutes behind a lane
// that cannot connect shows ten minutes of waiting while it happens. It is
// read by an observable counter's callback.
//
// Only blocked callers touch it (a Begin and an End per wait), never a
// caller that did not have to wait. Safe for concurrent use.
type waitClock struct {
	base time.Time // origin of the nanosecond stamps; carries the monotonic clock

	mu struct {
		sync.Mutex
		done    int64 // ns of the waits that ended
		waiting int64 // waits in progress
		starts  int64 // sum of their start stamps
	}
}

func newWaitClock() *waitClock { return &waitClock{base: time.Now()} }

// nowLocked is the monotonic stamp of now. It is read under mu so that every
// Begin, End and read is ordered with its stamp: the total can never go
// back, not even by the nanoseconds two racing reads would otherwise
// differ by (a decrease is a counter reset to Prometheus's rate).
func (c *waitClock) nowLocked() int64 { return int64(time.Since(c.base)) }

// Wait is one wait in progress; End ends it. The zero Wait's End does
// nothing.
type Wait struct {
	c     *waitClock
	start int64
}

func (c *waitClock) begin() Wait {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.nowLocked()
	c.mu.waiting++
	c.mu.starts += now
	return Wait{c: c, start: now}
}

// End ends the wait and adds its duration to the total. Call it once.
func (w Wait) End() {
	c := w.c
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.waiting--
	c.mu.starts -= w.start
	c.mu.done += c.nowLocked() - w.start
}

// seconds is the total: ended waits plus the elapsed part of those in
// progress.
func (c *waitClock) seconds() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Duration(c.mu.done + c.mu.waiting*c.nowLocked() - c.mu.starts).Seconds()
}

// BlockReason is why a lane's Submit is blocked: the reason attribute of
// thalweg.lane.intake_blocked.
type BlockReason uint8

const (
	// BlockLaneFull: the lane holds its capacity of unconfirmed batches and
	// its transport is open: the sink is slow to confirm.
	BlockLaneFull BlockReason = iota
	// BlockConnecting: the lane's first transport is not up yet.
	BlockConnecting
	// BlockRebuilding: the lane's stream was poisoned and the next one is
	// being dialled and replayed.
	BlockRebuilding
	numBlockReasons
)

var blockReasons = [numBlockReasons]string{"lane_full", "connecting", "rebuilding"}

// String returns the attribute value: lane_full, connecting or rebuilding.
func (r BlockReason) String() string {
	if r < numBlockReasons {
		return blockReasons[r]
	}
	return fmt.Sprintf("BlockReason(%d)", uint8(r))
}

// UnackedWait is the thalweg.source.unacked_wait instrument of one
// max_unacked bound: the time the source loop is held because that many
// records await their upstream ack. Safe for concurrent use.
type UnackedWait struct {
	clock     *waitClock
	reg       metric.Registration
	closeOnce sync.Once
}

// NewUnackedWait registers the wait counter of bound (observability.BoundPipeline,
// observability.BoundPulsar) on mp. Close unregisters it.
func NewUnackedWait(mp metric.MeterProvider, bound string) (*UnackedWait, error) {
	switch {
	case mp == nil:
		return nil, errors.New("instruments: NewUnackedWait: nil MeterProvider")
	case bound == "":
		return nil, errors.New("instruments: NewUnackedWait: empty bound")
	}
	m := meter(mp)
	c, err := m.Float64ObservableCounter(observability.SourceUnackedWait, describe(observability.SourceUnackedWait), unit(observability.SourceUnackedWait))
	if err != nil {
		return nil, fmt.Errorf("instruments: %s instrument: %w", observability.SourceUnackedWait, err)
	}
	w := &UnackedWait{clock: newWaitClock()}
	obs := []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(attribute.String(observability.AttrBound, bound)))}
	w.reg, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveFloat64(c, w.clock.seconds(), obs...)
		return nil
	}, c)
	if err != nil {
		return nil, fmt.Errorf("instruments: %s callback: %w", observability.SourceUnackedWait, err)
	}
	return w, nil
}

// Begin starts one wait at the bound; End the returned Wait when it is over.
// Call it only when the caller is about to block.
func (w *UnackedWait) Begin() Wait { return w.clock.begin() }

// Close unregisters the counter. It is safe to call more than once.
func (w *UnackedWait) Close() error {
	var err error
	w.closeOnce.Do(func() { err = w.reg.Unregister() })
	return err
}
