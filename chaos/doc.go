// Package chaos holds thalweg's end-to-end crash tests (package chaos_test):
// the worker binary against a real Pulsar broker and a durable Flight
// receiver running as a separate process, SIGKILLed at random moments.
//
// Every test counts at the sink, by the producer's own ids, never from the
// worker's counters. The producer (chaos/internal/harness) chooses each
// record's partition itself, writes its id and partition into the payload
// ({"id":N,"p":P,...}) and keeps the broker's message id of every send it
// got confirmed.
//
// # Invariants
//
// What the tests assert, by subscription type (README "Scaling out",
// docs/design.md#at-least-once):
//
//   - Every subscription: after any crash, every record the broker accepted
//     is in the raw anchor's store (gaps never), and the subscription's
//     backlog drains to 0 (TestSIGKILL_PruningUpstream_NoGap,
//     TestSIGKILL_RetainingUpstream_NoGap, TestSIGKILL_Receiver_NoGap,
//     TestSIGKILL_FailoverTakeover_NoGap).
//   - Ordered subscriptions (Exclusive, Failover; every single-worker
//     scenario below uses Failover): 0 duplicates at the raw anchor, whatever
//     the kills, restarts, lost stores and takeovers (the receiver's
//     idempotent append and the workers' reconciliation with its positions;
//     TestRewind_DeliveredNotSentAgain, TestScaleOut_Failover_ExactlyOnce,
//     TestSIGKILL_IcebergAnchor_ExactlyOnce,
//     TestSIGKILL_IcebergRoutedPartitioned_ExactlyOnce).
//   - Shared / Key_Shared: at-least-once; duplicates are allowed, counted
//     and logged (TestShared_AtLeastOnce_KeysNeverCollide).
//   - Failover: a partition that changes owner (a kill, a stop, a worker
//     added) resumes: its acknowledged position, polled at the broker,
//     stands still at most 10 s, at p99 5 s, with a Flight and with an
//     Iceberg anchor (TestFailover_StallBound).
//   - Every subscription: the identity of every stored row is checked
//     (harness.CheckIdentity) against the broker: no key (topic, partition,
//     seq) holds two different records, no record is stored under two keys,
//     topic is the base topic, partition is the producer's (and the
//     payload's) partition, message_id is the broker's id of the record and
//     seq its broker index + 1 (TestScaleOut_Failover_ExactlyOnce,
//     TestShared_AtLeastOnce_KeysNeverCollide).
//
// # The tests
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
//     broker's cursor (where the broker dispatches early to a consumer not
//     yet made active; see source/pulsar).
//   - TestRewind_DeliveredNotSentAgain: the cursor of a retaining topic is
//     rewound to the beginning between graceful runs; every redelivered
//     record is recognised from the durable positions: no duplicate at all.
//   - TestScaleOut_Failover_ExactlyOnce: three workers, each with its own
//     offset store and network path, on one Failover subscription of an
//     8-partition topic, one receiver; a backlog, bursts and a steady
//     stream; in the seed's order 8 SIGKILLs with restarts (half of them
//     host crashes), a fourth worker added, one stopped for good, one
//     restarted with its offset store deleted, the receiver killed twice.
//     0 missing, 0 duplicates, every row's identity right.
//   - TestBrokerOutage_StopIsBounded: on a broker of the test's own
//     (harness.StartBroker: a second scripts/pulsar.sh instance, so the
//     shared broker is never touched), the broker is SIGKILLed while the
//     worker catches up a backlog, and the worker gets SIGTERM with records
//     durable at the anchor whose upstream acknowledgement cannot complete:
//     it exits 0 within shutdown.drain_timeout + store.teardown_timeout,
//     abandoning those acknowledgements; the broker restarts on its data,
//     the worker restarts and drains: 0 missing, 0 duplicates.
//   - TestSIGKILL_IcebergAnchor_ExactlyOnce: the scale-out scenario with the
//     raw anchor in one Iceberg table (a SQL catalog and a warehouse the
//     workers share, a commit every 50 ms, so kills land before, during and
//     after commits): three workers, a fourth added, 8 SIGKILLs with
//     restarts, one restart on an emptied offset store. pyiceberg reads the
//     table back: 0 missing, 0 duplicates, every row's identity right.
//   - TestSIGKILL_IcebergRoutedPartitioned_ExactlyOnce: the same on two
//     3-partition topics under one subscription, the anchor a table per
//     topic (the template chaos.{topic}) partitioned by
//     [identity(partition), bucket(2, seq)]: 6 SIGKILLs, a lost store, a
//     worker added; pyiceberg reads each table back: 0 missing, 0
//     duplicates, every row in its topic's table. SQL catalog and local
//     warehouse, as every chaos test (the harness runs no REST catalog or
//     S3 server).
//   - TestShared_AtLeastOnce_KeysNeverCollide: three workers on one Shared
//     subscription of a 4-partition topic, kills, a lost store, a receiver
//     kill: 0 missing, every row's identity right, duplicates counted.
//   - TestFailover_StallBound: three workers on one Failover subscription
//     of a 4-partition topic, records streaming, 3 SIGKILLs with restarts, a
//     worker added, one stopped for good; every partition's mark-delete
//     position polled every 200 ms (harness.StallWatch): the longest stall
//     per partition and p50/p99/max over every interval between two rises
//     are logged (BENCHMARKS.md) and bounded; the identity checked as in the
//     scale-out scenario. Once with the receiver, once with an Iceberg
//     anchor.
//
// The receiver holds every durable ack back (--ack-delay), so that at any
// kill batches are in flight: sent, not yet acknowledged, not yet committed.
// That window is where an ack-before-durable ordering loses data, and where
// a dead worker's batches are synced after its successor took over.
//
// Kill moments (and the fleet scenarios' order of events and victims) come
// from a seeded generator; the seed is logged and CHAOS_SEED=<n> replays it.
// CHAOS_UNSAFE_ACK=1 runs the NoGap tests against the unsafe build, to see
// their assertions fail. CHAOS_LOG_DIR=<dir> keeps the logs of every process
// of a failed test in <dir>/<test name> (a fleet scenario also logs each
// partition's backlog and unacknowledged messages per consumer).
//
// Each test is bounded (measured on a 2-core machine shared with a broker):
// the single-worker ones take 6–40 s each, the scale-out scenario (about
// 80 000 records) under a minute, the Iceberg one (about 40 000) about a
// minute, the Shared one about 35 s, the failover stall bound 40–90 s for
// both anchors, the broker
// outage 60–90 s (two broker starts of 15–25 s each); the drain of a fleet
// gives up after 2 minutes.
//
// The tests need a broker (PULSAR_URL, PULSAR_ADMIN_URL; `make test` or
// scripts/pulsar.sh start) and the go tool, to build the worker; they are
// skipped with -short.
package chaos
