// Package chaos holds thalweg's end-to-end crash tests (package chaos_test):
// the worker binary against a real Pulsar broker and a durable Flight
// receiver running as a separate process, SIGKILLed at random moments.
//
// The assertion of every test is docs/design.md#at-least-once: after any crash,
// every record the producer got the broker to accept is in the raw anchor's
// store, counted at the sink by the producer's own id (duplicates allowed and
// reported, gaps never), and the subscription's backlog drains to 0.
//
//   - TestSIGKILL_PruningUpstream_NoGap / TestSIGKILL_RetainingUpstream_NoGap:
//     ≥10 worker kills during backlog catch-up and during steady streaming,
//     on a namespace without and with retention (the retaining one also
//     rewinds the cursor to the beginning while the worker is down).
//   - TestSIGKILL_UnsafeAckOrdering_ShowsGap: the same pruning run with a
//     worker built with -tags thalweg_unsafe_ack (upstream ack on submit,
//     before the durable commit) must show a gap: the harness can see the bug.
//   - TestSIGKILL_Receiver_NoGap: the Flight receiver is killed and restarted
//     while the worker streams; the lane rebuilds and replays.
//   - TestSIGKILL_FailoverTakeover_NoGap: two workers, each with its own
//     offset store, on one Failover subscription of a 4-partition topic; one
//     is killed for good and the other takes its partitions over from the
//     broker's cursor (the case that showed the broker's early dispatch to
//     a consumer not yet made active; see source/pulsar).
//   - TestRewind_DeliveredNotSentAgain: the cursor of a retaining topic is
//     rewound to the beginning between graceful runs; every redelivered
//     record is recognised from the durable positions: no duplicate at all.
//
// The receiver holds every durable ack back (--ack-delay), so that at any
// kill batches are in flight: sent, not yet acknowledged, not yet committed.
// That window is where an ack-before-durable ordering loses data.
//
// Kill moments come from a seeded generator; the seed is logged and
// CHAOS_SEED=<n> replays it. CHAOS_UNSAFE_ACK=1 runs the NoGap tests
// against the unsafe build, to see their assertions fail.
//
// The tests need a broker (PULSAR_URL, PULSAR_ADMIN_URL; `make test` or
// scripts/pulsar.sh start) and the go tool, to build the worker; they are
// skipped with -short.
package chaos
