package chaos_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/thalweg/thalweg/chaos/internal/harness"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// TestBrokerOutage_StopIsBounded: the broker is SIGKILLed while the worker
// catches up a backlog, and the worker gets SIGTERM while the broker is
// down, with records durable at the raw anchor whose upstream
// acknowledgement cannot complete (the client waits for the broker's answer
// without a deadline). The stop must end, with exit 0, within the
// documented bound, shutdown.drain_timeout + store.teardown_timeout, and
// say that it abandoned those acknowledgements. Then the broker comes back
// on its data, the worker restarts and drains the subscription: every
// record the broker accepted is at the anchor, none twice (Failover: the
// redelivered ones are recognised from the durable positions), every row's
// identity right.
//
// The test starts (and kills, and restarts) a broker of its own
// (harness.StartBroker); the broker the other tests share is never touched.
func TestBrokerOutage_StopIsBounded(t *testing.T) {
	e := newEnv(t, false)
	b := harness.StartBroker(t, "chaos-outage")
	admin := harness.NewAdmin(t, b.AdminURL)
	ns := admin.Namespace(t, "outage", harness.Pruning)
	tp := admin.CreateTopic(t, ns, "events", 2)
	dir := t.TempDir()
	keepLogs(t, dir)
	rcv := harness.StartReceiver(t, e.bin, dir, ackDelay)
	prod, err := harness.NewProducer(b.URL, tp)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	const backlog = 30000
	prod.Send(context.Background(), backlog)
	if err := prod.Flush(); err != nil {
		t.Fatalf("producer: %v", err)
	}
	if f := prod.Failed(); len(f) > 0 {
		t.Fatalf("the broker refused %d sends (e.g. %v): the expected set is unknown", len(f), f)
	}

	const drain, teardown = 10 * time.Second, 5 * time.Second
	w := harness.NewWorker(t, "worker", e.bin, dir, harness.WorkerConfig{
		PulsarURL: b.URL, Topics: []string{tp.Name}, Subscription: subscription, SubscriptionType: "failover",
		FlightAddr: rcv.Addr(), FlightPath: flightPath, StoreDir: filepath.Join(dir, "offsets"),
		DrainTimeout: drain, TeardownTimeout: teardown,
	})
	w.Start(t)
	w.WaitReady(t)
	w.WaitActive(t)
	// Kill the broker as the catch-up begins: the worker holds prefetched
	// records that become durable at the anchor after the broker is gone.
	testenv.WaitFor(t, 30*time.Second, "the worker to read the backlog", func() bool {
		return w.Metric(t, "thalweg_source_records_total") > 0
	})
	b.Kill(t)
	killed := time.Now()
	testenv.WaitFor(t, 10*time.Second, "/readyz to say the source is disconnected", func() bool {
		code, _ := w.Readyz(t)
		return code == 503
	})
	_, why := w.Readyz(t)
	t.Logf("/readyz 503 %v after the broker's SIGKILL: %s", time.Since(killed).Round(time.Millisecond), why)
	var durable, acked float64
	testenv.WaitFor(t, 20*time.Second, "records durable at the anchor and unacknowledged upstream", func() bool {
		durable = w.Metric(t, "thalweg_source_records_total")
		acked = w.Metric(t, "thalweg_source_acked_total")
		return w.Metric(t, "thalweg_lane_pending") == 0 && durable > acked
	})
	t.Logf("broker down: %.0f records read, %.0f acknowledged upstream", durable, acked)

	bound := drain + teardown
	stopped := time.Now()
	err = w.Process().Stop(bound + 5*time.Second)
	took := time.Since(stopped)
	t.Logf("SIGTERM with the broker down: %v after %v (bound %v)", w.Process().State(), took.Round(time.Millisecond), bound)
	if err != nil {
		t.Fatalf("the stop with the broker down: %v", err)
	}
	if took > bound {
		t.Errorf("the stop took %v, more than shutdown.drain_timeout + store.teardown_timeout = %v", took, bound)
	}
	log, err := os.ReadFile(w.Log())
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`upstream acknowledgements abandoned at the drain deadline.* records=(\d+)`).FindSubmatch(log)
	if m == nil {
		t.Fatalf("the worker did not log the abandoned acknowledgements:\n%s", harness.Tail(w.Log(), 20))
	}
	if n, _ := strconv.Atoi(string(m[1])); n == 0 {
		t.Fatal("no acknowledgement was abandoned: the stop did not meet the case under test")
	}
	t.Logf("abandoned upstream acknowledgements of %s records", m[1])

	b.Restart(t)
	w.Start(t)
	w.WaitReady(t)
	admin.WaitBacklog(t, tp, subscription, 90*time.Second, w.Process().Done())
	w.Stop(t, 40*time.Second)
	out := outcome{subType: "failover"}
	if out.backlog, err = admin.Backlog(context.Background(), tp, subscription); err != nil {
		t.Fatal(err)
	}
	tally, rows := readSink(t, rcv, prod)
	out.report = tally.Check(map[string]uint64{audit.PayloadPartition: prod.Last()}, nil)
	out.identity = harness.CheckIdentity(rows, prod, tp.Name)
	t.Logf("produced %d records; sink holds %d rows: %s; identity: %s", prod.Last(), tally.Rows(), out.report, out.identity)
	requireNoGap(t, out)
}
