package chaos_test

import (
	"testing"
	"time"
)

// TestSIGKILL_IcebergAnchor_ExactlyOnce: three workers, each with its own
// offset store, on one Failover subscription of a 4-partition topic, all
// writing one Iceberg table (a SQL catalog and a warehouse they share,
// commits every 50 ms, so kills land before, during and after commits); a
// backlog, bursts and a steady stream; 8 SIGKILLs with restarts, one
// restart on an emptied offset store, a worker added. pyiceberg reads the
// table back: 0 missing, 0 duplicates, every row's identity right.
func TestSIGKILL_IcebergAnchor_ExactlyOnce(t *testing.T) {
	e := newEnv(t, false)
	sc := fleetScenario{
		subType: "failover", partitions: 4, workers: 3,
		backlog: 6000, bursts: 2, rate: 1500,
		kills: 8, maxDown: time.Second,
		addWorker: true, loseStore: true,
		minGap: 500 * time.Millisecond, maxGap: 2 * time.Second,
		iceberg: true,
	}
	requireIdentity(t, sc.subType, e.runFleet(t, sc))
}
