package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/thalweg/thalweg/chaos/internal/harness"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/faultproxy"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

const (
	// ackDelay holds every receiver ack back, so a kill always finds
	// batches sent but not yet durable (see the package doc).
	ackDelay = 200 * time.Millisecond
	// flightPath is the receiver dataset every worker writes.
	subscription = "chaos"
)

var flightPath = []string{"chaos"}

// env is what every chaos test needs: a broker, the worker binary and a
// seeded random source.
type env struct {
	pulsarURL string
	admin     *harness.Admin
	bin       string
	rng       *rand.Rand
	unsafe    bool
}

// newEnv skips in -short mode, finds the broker, builds (once) the worker
// binary, and seeds the kill schedule from CHAOS_SEED or the clock.
// CHAOS_UNSAFE_ACK=1, or unsafe, selects the thalweg_unsafe_ack build.
func newEnv(t *testing.T, unsafe bool) *env {
	t.Helper()
	url, adminURL := testenv.PulsarURL(t)
	if os.Getenv("CHAOS_UNSAFE_ACK") == "1" {
		unsafe = true
	}
	tags := ""
	if unsafe {
		tags = harness.UnsafeAckTag
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CHAOS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay the kill schedule with CHAOS_SEED=%d); worker build tags %q", seed, seed, tags)
	return &env{
		pulsarURL: url,
		admin:     harness.NewAdmin(t, adminURL),
		bin:       harness.Binary(t, tags),
		rng:       rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		unsafe:    unsafe,
	}
}

// between returns a random duration in [lo, hi].
func (e *env) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(e.rng.Int64N(int64(hi-lo)+1))
}

// scenario is one SIGKILL run of a single worker.
type scenario struct {
	retention harness.Retention
	// subType is the subscription type ("" = failover, an ordered type:
	// the run must then end with 0 duplicates at the anchor).
	subType    string
	partitions int
	// backlog is produced before the worker first starts; while the kills
	// run it is topped up whenever it falls below a quarter, so that every
	// kill lands during catch-up. 0: no backlog phase.
	backlog int
	// rate is the records/s produced while the kills run (0: none).
	rate int
	// kills is the number of SIGKILLs; each after an up-time in
	// [minUp, maxUp] and followed by a pause in [0, maxDown]. Every second
	// kill is a host crash: the network to the receiver stalls for the
	// last 100–300ms of the up-time (batches pile up in flight, none is
	// acknowledged), then the worker is killed and its connections are cut,
	// so whatever was in flight never arrives.
	kills        int
	minUp, maxUp time.Duration
	maxDown      time.Duration
	// rewindEvery rewinds the cursor to the beginning of the topic after
	// every rewindEvery-th kill (retaining upstreams only; 0: never).
	rewindEvery int
}

// outcome is what a scenario run found at the end.
type outcome struct {
	subType string // the subscription type the worker(s) used
	report  audit.Report
	// identity is the check of every stored row's identity columns.
	identity harness.IdentityReport
	backlog  int64 // after the graceful stop
	kills    int
	crashes  int // kills with the network stalled and cut
	rewinds  int
	elapsed  time.Duration
}

// run executes sc: namespace and topic, receiver, producer, the kill loop,
// a final drain and graceful stop, then reads the sink back and checks it.
func (e *env) run(t *testing.T, sc scenario) outcome {
	t.Helper()
	start := time.Now()
	ns := e.admin.Namespace(t, "chaos", sc.retention)
	tp := e.admin.CreateTopic(t, ns, "events", sc.partitions)
	dir := t.TempDir()
	keepLogs(t, dir)
	rcv := harness.StartReceiver(t, e.bin, dir, ackDelay)
	px, err := faultproxy.New(rcv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()

	prod, err := harness.NewProducer(e.pulsarURL, tp)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx := context.Background()
	if sc.backlog > 0 {
		prod.Send(ctx, sc.backlog)
		if err := prod.Flush(); err != nil {
			t.Fatalf("producer: %v", err)
		}
	}
	w := harness.NewWorker(t, "worker", e.bin, dir, harness.WorkerConfig{
		PulsarURL: e.pulsarURL, Topics: []string{tp.Name}, Subscription: subscription,
		SubscriptionType: sc.subscriptionType(), FlightAddr: px.Addr(), FlightPath: flightPath,
		StoreDir: filepath.Join(dir, "offsets"),
	})
	if sc.rate > 0 {
		prod.Stream(sc.rate)
	}
	t.Logf("%s upstream %s (%d partitions), backlog %d, %d records/s, %d kills, receiver ack delay %v",
		sc.retention, tp.Name, sc.partitions, sc.backlog, sc.rate, sc.kills, ackDelay)

	out := outcome{subType: sc.subscriptionType()}
	for i := range sc.kills {
		w.Start(t)
		up := e.between(sc.minUp, sc.maxUp)
		crash := i%2 == 1
		var stall time.Duration
		if crash {
			// A host crash is only a test of the ordering if batches are
			// moving: count its up-time from readiness, and for Failover
			// from the broker's activation, a second later (counted from
			// readiness, most crashes landed before any record moved, and
			// the unsafe-ack control lost nothing in about a third of its
			// streaming runs). Clean kills count from the process start,
			// so some land during startup.
			stall = e.between(100*time.Millisecond, 300*time.Millisecond)
			w.WaitReady(t)
			if sc.subscriptionType() == "failover" {
				w.WaitActive(t)
			}
		}
		e.sleepWhileRunning(t, w, up-stall)
		if sc.backlog > 0 {
			e.topUp(t, prod, tp, sc.backlog)
		}
		if crash {
			px.Stall()
			e.sleepWhileRunning(t, w, stall)
		}
		w.Kill()
		if crash {
			px.Cut()
			px.Resume()
			out.crashes++
		}
		out.kills++
		if sc.rewindEvery > 0 && (i+1)%sc.rewindEvery == 0 {
			e.admin.ResetCursor(t, tp, subscription, time.UnixMilli(0))
			out.rewinds++
		}
		time.Sleep(e.between(0, sc.maxDown)) // the worker's random down time between runs: the chaos itself
	}
	prod.StopStream()
	if err = prod.Flush(); err != nil {
		t.Fatalf("producer: %v", err)
	}
	if f := prod.Failed(); len(f) > 0 {
		t.Fatalf("the broker refused %d sends (e.g. %v): the expected set is unknown", len(f), f)
	}

	// Drain: one last run until the backlog is 0, then a graceful stop.
	w.Start(t)
	w.WaitReady(t)
	e.admin.WaitBacklog(t, tp, subscription, 90*time.Second, w.Process().Done())
	w.Stop(t, 40*time.Second)
	out.backlog, err = e.admin.Backlog(ctx, tp, subscription)
	if err != nil {
		t.Fatal(err)
	}

	tally, rows := readSink(t, rcv, prod)
	out.report = tally.Check(map[string]uint64{audit.PayloadPartition: prod.Last()}, nil)
	out.identity = harness.CheckIdentity(rows, prod, tp.Name)
	out.elapsed = time.Since(start)
	t.Logf("produced %d records; %d kills (%d with the network cut), %d rewinds, %d worker runs in %v; sink holds %d rows: %s; identity: %s",
		prod.Last(), out.kills, out.crashes, out.rewinds, w.Starts(), out.elapsed.Round(time.Millisecond), tally.Rows(), out.report, out.identity)
	return out
}

// topUp keeps a catch-up going: when the subscription's backlog fell below
// a quarter of backlog it produces half a backlog more, so the kill that
// follows lands while the worker is busy catching up.
func (e *env) topUp(t *testing.T, prod *harness.Producer, tp harness.Topic, backlog int) {
	t.Helper()
	bl, err := e.admin.Backlog(context.Background(), tp, subscription)
	if errors.Is(err, harness.ErrNoSubscription) {
		return // the first worker is not subscribed yet: the backlog is whole
	}
	if err != nil {
		t.Fatalf("backlog: %v", err)
	}
	if bl < int64(backlog/4) {
		prod.Send(context.Background(), backlog/2)
		if err := prod.Flush(); err != nil {
			t.Fatalf("producer: %v", err)
		}
	}
}

// sleepWhileRunning sleeps for d and fails the test if the worker exits
// meanwhile: only the test kills it.
func (e *env) sleepWhileRunning(t *testing.T, w *harness.Worker, d time.Duration) {
	t.Helper()
	select {
	case <-w.Process().Done():
		t.Fatalf("worker exited by itself: %v", w.Process().State())
	case <-time.After(d):
	}
}

func (sc scenario) subscriptionType() string {
	if sc.subType == "" {
		return "failover"
	}
	return sc.subType
}

// ordered reports whether subType is an ordered subscription type
// (Exclusive, Failover), for which the raw anchor's idempotent append and
// the workers' reconciliation promise zero duplicates (docs/design.md,
// README "Scaling out"); Shared and Key_Shared are at-least-once.
func ordered(subType string) bool {
	return subType == "exclusive" || subType == "failover"
}

// requireNoGap is the assertion of every NoGap test: nothing missing, the
// backlog drained, and for an ordered subscription no duplicate at the raw
// anchor either (Shared: duplicates allowed, counted in the log).
func requireNoGap(t *testing.T, o outcome) {
	t.Helper()
	if o.report.Missing > 0 || o.report.Unexpected > 0 {
		t.Errorf("gap after SIGKILL: %s", o.report)
	}
	if o.backlog != 0 {
		t.Errorf("subscription backlog %d after the drain, want 0", o.backlog)
	}
	for _, v := range o.identity.IdentityViolations() {
		t.Errorf("identity of the stored rows: %s (%s)", v, o.identity)
	}
	switch {
	case o.report.Duplicates > 0 && ordered(o.subType):
		t.Errorf("%d duplicates at the raw anchor on a %s (ordered) subscription, want 0: %s",
			o.report.Duplicates, o.subType, o.report)
	case o.report.Duplicates > 0:
		t.Logf("duplicates (allowed on a %s subscription, at-least-once): %d", o.subType, o.report.Duplicates)
	}
}

// readSink reads the raw anchor's rows (harness.ReadRows) and tallies them
// by the producer's ids. A store without the identity columns fails the
// test, after logging what it holds by payload id.
func readSink(t *testing.T, rcv *harness.Receiver, prod *harness.Producer) (*audit.Tally, []harness.Row) {
	t.Helper()
	rows, err := harness.ReadRows(rcv.Addr(), flightPath)
	if err != nil {
		if tally, terr := harness.ReadTally(rcv.Addr(), flightPath); terr == nil {
			t.Logf("by payload id: %s", tally.Check(map[string]uint64{audit.PayloadPartition: prod.Last()}, nil))
		}
		t.Fatalf("read the receiver's rows: %v", err)
	}
	return harness.TallyRows(rows), rows
}

func (o outcome) String() string {
	return fmt.Sprintf("%s; backlog %d", o.report, o.backlog)
}
