package chaos_test

import (
	"testing"
	"time"
)

// TestScaleOut_Failover_ExactlyOnce is the scale-out scenario: three
// workers, each with its own offset store, on one Failover subscription of
// an 8-partition topic, one durable Flight receiver; a backlog, two bursts
// and a steady stream. In the seed's order: 8 random SIGKILLs with restarts
// (every second one a host crash), a fourth worker added, one stopped for
// good, one killed and restarted with its offset store deleted, and the
// receiver killed twice. Counted at the sink by the producer's ids, with
// every row's identity columns checked against the broker's message ids:
// 0 missing, 0 duplicates, no identity key (topic, partition, seq) shared
// by two records, the stored partition the producer's, and the backlog
// drained to 0.
//
// Load: 20 000 records of backlog, 2 bursts of 10 000 and 1 000 records/s
// over the ~40 s of events (about 80 000 records); the whole test takes
// 51–57 s on a 2-core machine (the drain gives up after 2 minutes).
func TestScaleOut_Failover_ExactlyOnce(t *testing.T) {
	e := newEnv(t, false)
	sc := fleetScenario{
		subType: "failover", partitions: 8, workers: 3,
		backlog: 20000, bursts: 2, rate: 1000,
		kills: 8, maxDown: time.Second,
		addWorker: true, stopForGood: true, loseStore: true,
		receiverKills: 2,
		minGap:        1500 * time.Millisecond, maxGap: 3 * time.Second,
	}
	requireIdentity(t, sc.subType, e.runFleet(t, sc))
}

// TestShared_AtLeastOnce_KeysNeverCollide: three workers on one Shared
// subscription of a 4-partition topic, with random SIGKILLs and restarts,
// one restart on a deleted offset store and one receiver kill. Shared is
// at-least-once: the broker redelivers a killed worker's unacknowledged
// messages to any consumer, so duplicates are allowed (counted and logged),
// but nothing may be missing and every stored row must carry its record's
// own identity: no key shared by two records, none stored under two keys.
func TestShared_AtLeastOnce_KeysNeverCollide(t *testing.T) {
	e := newEnv(t, false)
	sc := fleetScenario{
		subType: "shared", partitions: 4, workers: 3,
		backlog: 10000, bursts: 1, rate: 1000,
		kills: 6, maxDown: time.Second,
		loseStore:     true,
		receiverKills: 1,
		minGap:        1500 * time.Millisecond, maxGap: 3 * time.Second,
	}
	requireIdentity(t, sc.subType, e.runFleet(t, sc))
}
