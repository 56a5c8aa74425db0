package chaos_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/thalweg/thalweg/chaos/internal/harness"
	"github.com/thalweg/thalweg/internal/audit"
)

// TestSIGKILL_Receiver_NoGap kills the Flight receiver (SIGKILL, same
// directory and address on restart) several times while one worker streams:
// the worker must not exit, its lane must rebuild the stream and replay what
// was never confirmed, and at the end nothing is missing.
func TestSIGKILL_Receiver_NoGap(t *testing.T) {
	const kills, rate = 6, 3000
	e := newEnv(t, false)
	ns := e.admin.Namespace(t, "chaos", harness.Pruning)
	tp := e.admin.CreateTopic(t, ns, "events", 2)
	dir := t.TempDir()
	keepLogs(t, dir)
	rcv := harness.StartReceiver(t, e.bin, dir, ackDelay)
	prod, err := harness.NewProducer(e.pulsarURL, tp)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	w := harness.NewWorker(t, "worker", e.bin, dir, harness.WorkerConfig{
		PulsarURL: e.pulsarURL, Topics: []string{tp.Name}, Subscription: subscription,
		SubscriptionType: "failover", FlightAddr: rcv.Addr(), FlightPath: flightPath,
		StoreDir: filepath.Join(dir, "offsets"),
	})
	prod.Stream(rate)
	w.Start(t)
	e.sleepWhileRunning(t, w, time.Second)
	for i := range kills {
		rcv.Kill()
		down := e.between(100*time.Millisecond, 1500*time.Millisecond)
		e.sleepWhileRunning(t, w, down)
		rcv.Restart(t)
		t.Logf("receiver kill %d/%d: down %v", i+1, kills, down.Round(time.Millisecond))
		e.sleepWhileRunning(t, w, e.between(time.Second, 2500*time.Millisecond))
	}
	prod.StopStream()
	if err := prod.Flush(); err != nil {
		t.Fatal(err)
	}
	if f := prod.Failed(); len(f) > 0 {
		t.Fatalf("the broker refused %d sends", len(f))
	}
	e.admin.WaitBacklog(t, tp, subscription, 90*time.Second, w.Process().Done())
	// The lane noticed the dead streams: transient errors retried, or the
	// stream poisoned and rebuilt. Either way it came back by itself.
	retries := w.Metric(t, "thalweg_lane_retries_total")
	poisoned := w.Metric(t, "thalweg_lane_poisoned_total")
	w.Stop(t, 40*time.Second)
	if retries+poisoned == 0 {
		t.Errorf("the lane saw no retry and no poisoning across %d receiver kills: the test did not exercise the rebuild", kills)
	}
	backlog, err := e.admin.Backlog(context.Background(), tp, subscription)
	if err != nil {
		t.Fatal(err)
	}
	tally, rows := readSink(t, rcv, prod)
	o := outcome{subType: "failover", report: tally.Check(map[string]uint64{audit.PayloadPartition: prod.Last()}, nil), backlog: backlog,
		identity: harness.CheckIdentity(rows, prod, tp.Name)}
	t.Logf("produced %d records, %d receiver kills, one worker run (lane retries %v, poisonings %v); sink: %s",
		prod.Last(), kills, retries, poisoned, o.report)
	requireNoGap(t, o)
}
