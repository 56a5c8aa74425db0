package chaos_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/thalweg/thalweg/chaos/internal/harness"
)

// TestRewind_DeliveredNotSentAgain rewinds the subscription of a retaining
// topic to its beginning after every run of the worker. The broker then
// delivers every record again, as it would after a crash between the offset
// store's commit and the upstream acknowledgement. The worker must recognise
// all of them from its durable positions (acknowledge, not send): the sink
// gains no duplicate, and the backlog still drains.
func TestRewind_DeliveredNotSentAgain(t *testing.T) {
	const records, rounds = 20000, 3
	e := newEnv(t, false)
	ns := e.admin.Namespace(t, "chaos", harness.Retaining)
	tp := e.admin.CreateTopic(t, ns, "events", 2)
	dir := t.TempDir()
	keepLogs(t, dir)
	rcv := harness.StartReceiver(t, e.bin, dir, 0)
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
	for round := range rounds {
		// New records each round, so that the worker also has to tell the
		// redelivered ones from the new ones.
		prod.Send(context.Background(), records/rounds)
		if err := prod.Flush(); err != nil {
			t.Fatal(err)
		}
		w.Start(t)
		w.WaitReady(t)
		e.admin.WaitBacklog(t, tp, subscription, 60*time.Second, w.Process().Done())
		w.Stop(t, 30*time.Second)
		_, rows := readSink(t, rcv, prod)
		rep := harness.CheckIdentity(rows, prod, tp.Name)
		t.Logf("round %d: %s", round+1, rep)
		// A rewind redelivers every record with its own identity: none may
		// be stored again, none under another key.
		if v := rep.Violations(true); len(v) > 0 {
			t.Fatalf("round %d: after a rewind the sink must hold every record exactly once, under its own key: %v", round+1, v)
		}
		e.admin.ResetCursor(t, tp, subscription, time.UnixMilli(0))
	}
}
