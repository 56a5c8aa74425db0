package chaos_test

import (
	"testing"
	"time"

	"github.com/thalweg/thalweg/chaos/internal/harness"
)

// phases are the two moments the kills land in: while the worker catches up
// on a backlog (the topic is full, batches are full) and while it follows a
// steady stream (batches are cut by the linger timer).
func phases(ret harness.Retention) map[string]scenario {
	rewind := 0
	if ret == harness.Retaining {
		rewind = 4
	}
	return map[string]scenario{
		"catch-up": {retention: ret, partitions: 2, backlog: 40000, kills: 10,
			minUp: 400 * time.Millisecond, maxUp: 1500 * time.Millisecond, maxDown: 200 * time.Millisecond,
			rewindEvery: rewind},
		"streaming": {retention: ret, partitions: 2, rate: 3000, kills: 10,
			minUp: 400 * time.Millisecond, maxUp: 1500 * time.Millisecond, maxDown: 200 * time.Millisecond,
			rewindEvery: rewind},
	}
}

func runPhases(t *testing.T, ret harness.Retention) {
	ps := phases(ret)
	for _, name := range []string{"catch-up", "streaming"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, false)
			requireNoGap(t, e.run(t, ps[name]))
		})
	}
}

// TestSIGKILL_PruningUpstream_NoGap: no retention, so whatever the worker
// acknowledged is gone for good. A crash must never leave a record
// acknowledged upstream that is not durable at the raw anchor.
func TestSIGKILL_PruningUpstream_NoGap(t *testing.T) {
	runPhases(t, harness.Pruning)
}

// TestSIGKILL_RetainingUpstream_NoGap: unlimited retention, and the cursor is
// rewound to the beginning while the worker is down now and then. The
// worker must recognise what it delivered before (skip it, ack it again)
// and still miss nothing.
func TestSIGKILL_RetainingUpstream_NoGap(t *testing.T) {
	runPhases(t, harness.Retaining)
}

// TestSIGKILL_UnsafeAckOrdering_ShowsGap runs the pruning scenarios with the
// worker built with -tags thalweg_unsafe_ack, which acknowledges upstream as
// soon as a batch is submitted. Every host-crash kill then leaves records
// acknowledged upstream that never reached the receiver: the check must
// find them missing, in both phases. If it does not, the NoGap tests prove
// nothing.
func TestSIGKILL_UnsafeAckOrdering_ShowsGap(t *testing.T) {
	ps := phases(harness.Pruning)
	for _, name := range []string{"catch-up", "streaming"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, true)
			o := e.run(t, ps[name])
			if o.report.Missing == 0 {
				t.Fatalf("the unsafe-ack build lost nothing (%s): the harness cannot see an ack-before-durable gap", o)
			}
			t.Logf("as expected, the NoGap assertion fails against the unsafe build: gap after SIGKILL: %s", o.report)
		})
	}
}
