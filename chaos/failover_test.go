package chaos_test

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"path/filepath"
	"testing"
	"time"

	"github.com/thalweg/thalweg/chaos/internal/harness"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// owners returns, per partition, the active consumer of the Failover
// subscription and how many consumers are attached.
func owners(t *testing.T, e *env, tp harness.Topic) (active []string, attached []int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := e.admin.PartitionStats(ctx, tp, subscription)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		active = append(active, s.ActiveConsumerName)
		attached = append(attached, len(s.Consumers))
	}
	return active, attached
}

// waitOwners polls until every partition has exactly consumers attached and
// an active consumer, and the active consumers have distinct different names;
// it returns the owner per partition.
func waitOwners(t *testing.T, e *env, tp harness.Topic, consumers, distinct int, running ...*harness.Worker) []string {
	t.Helper()
	var (
		active   []string
		attached []int
		settled  bool
	)
	defer func() {
		if !settled {
			t.Logf("last seen: active %q, attached %v", active, attached)
		}
	}()
	testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("the partitions to settle on %d consumers / %d owners", consumers, distinct), func() bool {
		for _, w := range running {
			if !w.Running() {
				t.Fatalf("%s exited by itself: %v", w.Log(), w.Process().State())
			}
		}
		active, attached = owners(t, e, tp)
		names := map[string]bool{}
		ok := true
		for i := range active {
			ok = ok && active[i] != "" && attached[i] == consumers
			names[active[i]] = true
		}
		return ok && len(names) == distinct
	})
	settled = true
	return active
}

// partitionsOf lists the partitions whose owner is (or, with not, is not) name.
func partitionsOf(owner []string, name string, not bool) []int {
	var out []int
	for i, o := range owner {
		if (o == name) != not {
			out = append(out, i)
		}
	}
	return out
}

// TestSIGKILL_FailoverTakeover_NoGap runs two workers, each with its own
// offset store, on one Failover subscription of a 4-partition topic while a
// producer streams:
//
//  1. A and B share the partitions (A subscribed first).
//  2. One of them, chosen by the seed, is SIGKILLed for good; the other
//     takes its partitions over from the broker's cursor (the dead one's
//     unacknowledged records come again: duplicates allowed). When B
//     survives it takes over partitions for which it was a standby whose
//     notification the client dropped.
//
// This scenario lost records intermittently (51 of 20 489 in one run of
// 12) until the Source stopped emitting messages the broker dispatched to
// A before making it active on B's partitions (source/pulsar activation):
// A acknowledged them cumulatively, and with them B's unacknowledged
// messages, which nobody had delivered. On a gap, traceGaps logs where the
// missing records were written, to match against the workers' logs.
func TestSIGKILL_FailoverTakeover_NoGap(t *testing.T) {
	const partitions, rate = 4, 3000
	e := newEnv(t, false)
	ns := e.admin.Namespace(t, "chaos", harness.Pruning)
	tp := e.admin.CreateTopic(t, ns, "events", partitions)
	dir := t.TempDir()
	keepLogs(t, dir)
	rcv := harness.StartReceiver(t, e.bin, dir, ackDelay)
	prod, err := harness.NewProducer(e.pulsarURL, tp)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	cfg := func(store string) harness.WorkerConfig {
		return harness.WorkerConfig{
			PulsarURL: e.pulsarURL, Topics: []string{tp.Name}, Subscription: subscription,
			SubscriptionType: "failover", FlightAddr: rcv.Addr(), FlightPath: flightPath,
			StoreDir: filepath.Join(dir, store),
		}
	}
	a := harness.NewWorker(t, "worker-a", e.bin, dir, cfg("offsets-a"))
	b := harness.NewWorker(t, "worker-b", e.bin, dir, cfg("offsets-b"))
	prod.Stream(rate)

	// 1. A and B share the partitions. A subscribes first: B takes half
	// of them from A through the broker's active-consumer change, whose
	// notifications both workers receive; for the other half B is a
	// standby that the broker told of A, a notification the client drops
	// (B's Source holds such a partition's first messages; see
	// source/pulsar).
	a.Start(t)
	a.WaitReady(t)
	b.Start(t)
	owner1 := waitOwners(t, e, tp, 2, 2, a, b)
	e.sleepWhileRunning(t, a, e.between(2*time.Second, 4*time.Second))

	// 2. One of them (the seed decides) dies for good; the other takes
	// everything over.
	victim, survivor, vName, sName := b, a, "B", "A"
	if e.rng.IntN(2) == 0 {
		victim, survivor, vName, sName = a, b, "A", "B"
	}
	victim.Kill()
	owner2 := waitOwners(t, e, tp, 1, 1, survivor)
	survivorID := owner2[0]
	taken := partitionsOf(owner1, survivorID, true)
	t.Logf("phase 1: %s (%s) owned %v, %s owned %v; %s killed, %s took them over",
		sName, survivorID, partitionsOf(owner1, survivorID, false), vName, taken, vName, sName)
	if len(taken) == 0 {
		t.Fatalf("%s owned no partition in phase 1 (owners %q): nothing was taken over", vName, owner1)
	}
	e.sleepWhileRunning(t, survivor, e.between(2*time.Second, 4*time.Second))

	prod.StopStream()
	if err := prod.Flush(); err != nil {
		t.Fatal(err)
	}
	if f := prod.Failed(); len(f) > 0 {
		t.Fatalf("the broker refused %d sends", len(f))
	}
	e.admin.WaitBacklog(t, tp, subscription, 90*time.Second, survivor.Process().Done())
	survivor.Stop(t, 40*time.Second)
	backlog, err := e.admin.Backlog(context.Background(), tp, subscription)
	if err != nil {
		t.Fatal(err)
	}
	tally, rows := readSink(t, rcv, prod)
	o := outcome{subType: "failover", report: tally.Check(map[string]uint64{audit.PayloadPartition: prod.Last()}, nil), backlog: backlog,
		identity: harness.CheckIdentity(rows, prod, tp.Name)}
	t.Logf("produced %d records over 2 workers on %d partitions; sink: %s", prod.Last(), partitions, o.report)
	// How often the broker dispatched to the survivor before making it
	// active (messages left to the rewind): the race this test is about.
	if log, err := os.ReadFile(survivor.Log()); err == nil {
		t.Logf("worker %s left early-dispatched messages to the broker's redelivery %d times; took a partition's messages as its own after waiting in vain for a notification %d times",
			sName, bytes.Count(log, []byte("left messages dispatched before this consumer was active")),
			bytes.Count(log, []byte("no active-consumer notification arrived")))
	}
	if !o.report.OK() {
		traceGaps(t, tally, prod)
	}
	requireNoGap(t, o)
}

// traceGaps logs every missing producer id with the broker position it was
// written at, in runs of consecutive ids, so that a gap can be matched
// against the workers' logs (which partition, which entry, who owned it).
func traceGaps(t *testing.T, tally *audit.Tally, prod *harness.Producer) {
	t.Helper()
	var first, last uint64
	flush := func() {
		if first != 0 {
			t.Logf("missing ids %d..%d: first at %s, last at %s", first, last, prod.Where(first), prod.Where(last))
		}
		first = 0
	}
	for id := uint64(1); id <= prod.Last(); id++ {
		if tally.Count(audit.PayloadPartition, id) > 0 {
			flush()
			continue
		}
		if first == 0 {
			first = id
		}
		last = id
	}
	flush()
}
