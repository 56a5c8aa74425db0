package chaos_test

import (
	"strings"
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

// TestSIGKILL_IcebergMaintenance_ExactlyOnce: three workers on one
// Iceberg anchor with maintenance on and fast (a run every second:
// snapshot expiry past 2 s, manifest rewriting, compaction of 3 small
// files and more; a 3 s lease). Each of 5 SIGKILLs waits for a worker to
// log the start of a maintenance run and kills that worker 0–800ms later:
// during an expiry's, a manifest rewrite's or a compaction's commit round,
// while its compaction writes files, or just after the run. After the
// kills one more run completes. pyiceberg reads the table back: 0
// missing, 0 duplicates; and the workers' logs show snapshots expired and
// files compacted.
func TestSIGKILL_IcebergMaintenance_ExactlyOnce(t *testing.T) {
	e := newEnv(t, false)
	sc := fleetScenario{
		subType: "failover", partitions: 4, workers: 3,
		backlog: 3000, bursts: 1, rate: 1000,
		kills: 5, maxDown: time.Second,
		minGap: 300 * time.Millisecond, maxGap: time.Second,
		iceberg:     true,
		maintenance: "{interval: 1s, snapshot_max_age: 2s, min_snapshots: 3, compact_min_files: 3, lease_ttl: 3s}",
		// Three workers committing every 50 ms made 60 appends a second
		// on one table: on a loaded machine every maintenance commit lost
		// its compare-and-swap to them and no run completed; 200 ms is
		// still five times the default rate per worker.
		commitInterval:    200 * time.Millisecond,
		killInMaintenance: true,
	}
	out := e.runFleet(t, sc)
	requireIdentity(t, sc.subType, out)
	t.Logf("maintenance runs completed: %d snapshots expired, %d files compacted", out.expired, out.compacted)
	if out.expired == 0 || out.compacted == 0 {
		t.Errorf("the workers' logs show %d snapshots expired and %d files compacted; want both > 0", out.expired, out.compacted)
	}
}

// TestSIGKILL_IcebergRoutedPartitioned_ExactlyOnce: three workers on one
// Failover subscription of two 3-partition topics (events-a, events-b),
// the Iceberg anchor a table per topic (chaos.{topic}: chaos.events_a,
// chaos.events_b) partitioned by [identity(partition), bucket(2, seq)],
// commits every 50 ms; a backlog, a burst and a steady stream on both
// topics; 6 SIGKILLs with restarts, one restart on an emptied offset
// store, a worker added. pyiceberg reads each table back: 0 missing, 0
// duplicates, every row's identity right and of the table's own topic.
// The catalog is SQL on a SQLite file and the warehouse local: the chaos
// harness runs no REST catalog or S3 server.
func TestSIGKILL_IcebergRoutedPartitioned_ExactlyOnce(t *testing.T) {
	e := newEnv(t, false)
	sc := fleetScenario{
		subType: "failover", topics: 2, partitions: 3, workers: 3,
		backlog: 2000, bursts: 1, rate: 500,
		kills: 6, maxDown: time.Second,
		addWorker: true, loseStore: true,
		minGap: 500 * time.Millisecond, maxGap: 1500 * time.Millisecond,
		iceberg:     true,
		partitionBy: `["identity(partition)", "bucket(2, seq)"]`,
	}
	out := e.runFleet(t, sc)
	requireIdentity(t, sc.subType, out)
	if len(out.reports) != sc.topics {
		t.Fatalf("%d tables read, want one per topic (%d)", len(out.reports), sc.topics)
	}
	for _, r := range out.reports {
		if !strings.Contains(r.spec, "partition: identity(") || !strings.Contains(r.spec, "bucket[2](") {
			t.Errorf("%s: pyiceberg sees the partition spec %q, want identity(partition) and bucket[2](seq)", r.topic, r.spec)
		}
	}
}
