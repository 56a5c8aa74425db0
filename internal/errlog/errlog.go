// Package errlog logs a condition that repeats — a disk that stays full, a
// peer that stays down — once when it starts, then as a periodic summary
// (attempts and the last error), and once when it clears, never once per
// attempt. A retry loop calls Fail for every failed attempt and Clear after
// a success.
//
// A Throttle is safe for concurrent use.
//
// It stays thalweg's own: log/slog and rate limiters (x/time/rate) drop
// or pass single lines; none logs a condition's start, periodic summary and
// end.
package errlog

import (
	"log/slog"
	"sync"
	"time"
)

// DefaultInterval is the summary period of a Throttle whose Interval is 0.
const DefaultInterval = 30 * time.Second

// Throttle is one repeating condition. The zero value is not usable; fill
// in Log and What.
type Throttle struct {
	// Log receives the lines. Required.
	Log *slog.Logger
	// What names the condition in every line, e.g. "offset store cannot commit".
	What string
	// Interval between summaries while the condition lasts. Default DefaultInterval.
	Interval time.Duration

	mu struct {
		sync.Mutex
		active    bool
		since     time.Time // first failure of the current episode
		lastLine  time.Time // last line written
		attempts  int       // failures in the episode
		sinceLine int       // failures since the last line
		last      error
	}
}

func (t *Throttle) interval() time.Duration {
	if t.Interval > 0 {
		return t.Interval
	}
	return DefaultInterval
}

// Fail records one failed attempt. The first of an episode is logged at
// Error with attrs; later ones only feed the next summary (Warn, at most
// one per Interval). It reports whether it wrote a line.
func (t *Throttle) Fail(err error, attrs ...any) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	t.mu.attempts++
	t.mu.sinceLine++
	t.mu.last = err
	if !t.mu.active {
		t.mu.active, t.mu.since, t.mu.lastLine, t.mu.sinceLine = true, now, now, 0
		t.Log.Error(t.What, append([]any{"err", errString(err)}, attrs...)...)
		return true
	}
	if now.Sub(t.mu.lastLine) < t.interval() {
		return false
	}
	t.Log.Warn(t.What+" (still)", append([]any{"since", t.mu.since.Format(time.RFC3339),
		"for", now.Sub(t.mu.since).Round(time.Millisecond), "attempts", t.mu.attempts,
		"attempts_since_last_line", t.mu.sinceLine, "last_err", errString(err)}, attrs...)...)
	t.mu.lastLine, t.mu.sinceLine = now, 0
	return true
}

// Clear ends the episode: if one was active it logs, once, that the
// condition cleared, after how long and how many attempts.
func (t *Throttle) Clear(attrs ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.mu.active {
		return
	}
	t.Log.Info(t.What+": recovered", append([]any{"after", time.Since(t.mu.since).Round(time.Millisecond),
		"attempts", t.mu.attempts, "last_err", errString(t.mu.last)}, attrs...)...)
	t.mu.active, t.mu.attempts, t.mu.sinceLine, t.mu.last = false, 0, 0, nil
}

// Active reports whether an episode is running, with its first failure
// time, its attempts and its last error.
func (t *Throttle) Active() (active bool, since time.Time, attempts int, last error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.active, t.mu.since, t.mu.attempts, t.mu.last
}

// errString is err's message only: some errors (Pebble's) print a stack
// trace under %+v, which is what slog uses for an error value.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
