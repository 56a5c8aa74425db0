package testenv

import (
	"testing"
	"time"
)

// WaitFor returns as soon as cond holds and fails the test, naming what it
// waited for, when cond has not held within timeout. It is the one way tests
// wait for something that offers no channel to wait on (a counter, a file, a
// process's output); a test that waits on a timer of its own uses
// testing/synctest instead.
//
// cond is called from the calling goroutine only. Inside a synctest bubble
// the polling advances the bubble's fake clock.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for poll := time.Millisecond; !cond(); poll = min(2*poll, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", timeout, what)
		}
		time.Sleep(poll) // the only sleep behind every condition wait: cond has no channel
	}
}
