package flightwire

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWatermarkWaitAndFail: Wait returns once the watermark covers the
// offset, the terminal error otherwise (first failure wins), and an offset
// already durable stays durable after a failure.
func TestWatermarkWaitAndFail(t *testing.T) {
	w := NewWatermark(0, nil)
	ctx := context.Background()
	w.Sent(3)
	done := make(chan error, 1)
	go func() { done <- w.Wait(ctx, 3) }()
	w.Advance(2, 10)
	select {
	case err := <-done:
		t.Fatalf("Wait(3) returned %v at watermark 2", err)
	case <-time.After(20 * time.Millisecond):
	}
	w.Advance(3, 15)
	require.NoError(t, <-done)
	w.Advance(1, 1) // cumulative: an older ack does not move it back
	off, recs, ok := w.Acked()
	require.True(t, ok)
	require.EqualValues(t, 3, off)
	require.EqualValues(t, 15, recs)

	first, second := errors.New("first"), errors.New("second")
	term, isFirst := w.Fail(first)
	require.True(t, isFirst)
	require.Equal(t, first, term)
	term, isFirst = w.Fail(second)
	require.False(t, isFirst)
	require.Equal(t, first, term)
	require.NoError(t, w.Wait(ctx, 3), "durable stays durable")
	require.Equal(t, first, w.Wait(ctx, 4))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.NoError(t, w.Wait(cctx, 2))
}

// TestWatermarkWatchdogMeasuresSilence: the watchdog fires after timeout
// of silence with offsets outstanding, not while the watermark keeps
// moving, and never when nothing is outstanding.
func TestWatermarkWatchdogMeasuresSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fired := make(chan Silence, 1)
		w := NewWatermark(150*time.Millisecond, func(s Silence) { fired <- s })
		// Nothing outstanding: no expiry.
		w.Sent(1)
		w.Advance(1, 1)
		select {
		case s := <-fired:
			t.Fatalf("fired with nothing outstanding: %+v", s)
		case <-time.After(300 * time.Millisecond):
		}
		// Progress every 20 ms for 200 ms keeps it quiet.
		for i := uint64(2); i < 12; i++ {
			w.Sent(i)
			time.Sleep(20 * time.Millisecond) // fake clock
			w.Advance(i-1, i)
			synctest.Wait() // a watchdog firing due by now has reported
			select {
			case s := <-fired:
				t.Fatalf("fired while progressing: %+v", s)
			default:
			}
		}
		// Silence with 11 outstanding fires once.
		select {
		case s := <-fired:
			require.EqualValues(t, 11, s.Sent)
			require.EqualValues(t, 10, s.Upto)
			require.True(t, s.AnyAcked)
			require.Equal(t, 150*time.Millisecond, s.For, "the bubble's clock stands at the deadline")
		case <-time.After(2 * time.Second):
			t.Fatal("the watchdog never fired")
		}
	})
}
