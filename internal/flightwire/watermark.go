package flightwire

import (
	"context"
	"sync"
	"time"
)

// Watermark is a transport's durable watermark: the highest offset a
// server declared durable, the terminal error, and the ack-silence
// watchdog. It knows nothing of streams, so one Watermark spans every
// stream a transport opens in turn (a new DoPut stream on a schema change
// keeps the lane's offsets, and acks of the new stream continue the
// watermark).
//
// The watchdog measures silence, not round trips: it fires when offsets
// are outstanding (sent above the watermark) and the watermark has not
// moved for the timeout, so a server that stays connected but stops
// acknowledging is detected however slowly it acknowledged before.
//
// Goroutine safety: every method may be called from any goroutine.
type Watermark struct {
	timeout  time.Duration
	onSilent func(Silence)

	mu struct {
		sync.Mutex
		sent, acked       uint64
		anySent, anyAcked bool
		records           uint64
		err               error         // terminal; first failure wins
		changed           chan struct{} // closed and replaced on every change
		progress          time.Time     // last move, or start of the outstanding period
		timer             *time.Timer   // the watchdog; nil when disarmed
	}
}

// Silence describes a watchdog expiry: how long nothing moved, the highest
// offset sent, and the watermark (Acked false: nothing acknowledged yet).
type Silence struct {
	For        time.Duration
	Sent, Upto uint64
	AnyAcked   bool
}

// NewWatermark returns an empty watermark. timeout <= 0 disables the
// watchdog; otherwise onSilent is called (once, without any lock held,
// on a timer goroutine) when offsets stay outstanding without progress for
// timeout. It typically fails the transport with its own error.
func NewWatermark(timeout time.Duration, onSilent func(Silence)) *Watermark {
	w := &Watermark{timeout: timeout, onSilent: onSilent}
	w.mu.changed = make(chan struct{})
	return w
}

// Sent records offset as sent, before it is written, so that the watchdog
// covers it. Offsets must increase.
func (w *Watermark) Sent(offset uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.outstandingLocked() {
		// The silence clock starts when something becomes outstanding, not
		// at the last ack, which may be long ago on an idle stream.
		w.mu.progress = time.Now()
	}
	w.mu.sent, w.mu.anySent = offset, true
	if w.timeout > 0 && w.mu.timer == nil && w.mu.err == nil {
		w.mu.timer = time.AfterFunc(w.timeout, w.check)
	}
}

// Advance moves the watermark to offset (records: the rows the server
// reports durable with it). An offset at or below the watermark is
// ignored: acks are cumulative.
func (w *Watermark) Advance(offset, records uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.anyAcked && offset <= w.mu.acked {
		return
	}
	w.mu.acked, w.mu.anyAcked, w.mu.records = offset, true, records
	w.mu.progress = time.Now()
	w.broadcastLocked()
}

// Outstanding reports whether offsets were sent above the watermark, and
// the highest one sent.
func (w *Watermark) Outstanding() (bool, uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.outstandingLocked(), w.mu.sent
}

// Wait blocks until the watermark is >= offset (nil), ctx ends
// (ctx.Err()) or the watermark failed (the terminal error). An offset
// already durable is reported as such even after a failure.
func (w *Watermark) Wait(ctx context.Context, offset uint64) error {
	for {
		w.mu.Lock()
		if w.mu.anyAcked && w.mu.acked >= offset {
			w.mu.Unlock()
			return nil
		}
		if err := w.mu.err; err != nil {
			w.mu.Unlock()
			return err
		}
		ch := w.mu.changed
		w.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Acked returns the watermark and the records of its ack; ok is false
// before the first ack.
func (w *Watermark) Acked() (offset, records uint64, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.acked, w.mu.records, w.mu.anyAcked
}

// Fail makes err terminal unless an error already is, disarms the
// watchdog and wakes every waiter. It returns the terminal error and
// whether err became it.
func (w *Watermark) Fail(err error) (terminal error, first bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.timer != nil {
		w.mu.timer.Stop()
		w.mu.timer = nil
	}
	if w.mu.err != nil {
		return w.mu.err, false
	}
	w.mu.err = err
	w.broadcastLocked()
	return err, true
}

// Err returns the terminal error, or nil.
func (w *Watermark) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.err
}

func (w *Watermark) outstandingLocked() bool {
	return w.mu.anySent && (!w.mu.anyAcked || w.mu.acked < w.mu.sent)
}

func (w *Watermark) broadcastLocked() {
	close(w.mu.changed)
	w.mu.changed = make(chan struct{})
}

// check is the watchdog. It re-arms itself for the remaining silence budget
// while offsets are outstanding and disarms when none are (Sent re-arms it).
func (w *Watermark) check() {
	w.mu.Lock()
	w.mu.timer = nil
	if w.mu.err != nil || !w.outstandingLocked() {
		w.mu.Unlock()
		return
	}
	silent := time.Since(w.mu.progress)
	if silent < w.timeout {
		w.mu.timer = time.AfterFunc(w.timeout-silent, w.check)
		w.mu.Unlock()
		return
	}
	s := Silence{For: silent, Sent: w.mu.sent, Upto: w.mu.acked, AnyAcked: w.mu.anyAcked}
	w.mu.Unlock()
	w.onSilent(s)
}
