package chaos_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/thalweg/thalweg/chaos/internal/harness"
	"github.com/thalweg/thalweg/internal/testkit/faultproxy"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
)

// fleetScenario is a run of several workers on one subscription, each with
// its own offset store and its own network path (a fault proxy) to one
// durable Flight receiver, while a producer writes a backlog and a steady
// stream. The events below happen in an order and at moments chosen by the
// seed.
type fleetScenario struct {
	subType string // failover | shared | key_shared | exclusive
	// topics is the number of topics the subscription reads (0: one),
	// each with partitions partitions and a producer of its own.
	topics     int
	partitions int
	workers    int // started before the first event
	backlog    int // per topic, produced before the first worker starts
	bursts     int // events that produce backlog/2 records per topic at once (catch-up under kills)
	rate       int // records/s per topic from the first worker start to the drain
	// kills SIGKILL a random running worker and restart it after a pause
	// in [0, maxDown]; every second one is a host crash (its network to
	// the receiver stalls for 100–300ms first, then is cut).
	kills   int
	maxDown time.Duration
	// addWorker starts one more worker mid-run; stopForGood stops one
	// (SIGTERM, it must exit 0) and never restarts it; loseStore kills one,
	// deletes its offset store and restarts it on an empty one (a new pod).
	addWorker, stopForGood, loseStore bool
	// receiverKills SIGKILL the receiver, restarted after 0.3–1.5s.
	receiverKills int
	// gap is the time between two events: [minGap, maxGap].
	minGap, maxGap time.Duration
	// iceberg puts the raw anchor in Iceberg (a SQL catalog and a
	// warehouse every worker shares) instead of the receiver: one table,
	// or with several topics a table per topic (the template
	// chaos.{topic}); the rows are read back with pyiceberg. Kills are
	// then plain SIGKILLs (no network path to stall) and receiverKills
	// must be 0.
	iceberg bool
	// partitionBy is the Iceberg anchor's partition_by (a YAML flow
	// sequence); empty: unpartitioned.
	partitionBy string
	// maintenance is the Iceberg anchor's maintenance keys (a YAML flow
	// mapping); empty: the defaults.
	maintenance string
	// commitInterval is the Iceberg anchor's commit_interval; 0: 50ms.
	commitInterval time.Duration
	// killInMaintenance times each kill: it waits for a worker to log the
	// start of a maintenance run and SIGKILLs that worker 0–800ms later,
	// during the run's commit rounds or its background rewrite, or after
	// it; after the events, one more run must complete.
	killInMaintenance bool
	// stalls polls every partition's acknowledged position from the first
	// owners to the end of the stream (fleetOutcome.stalls).
	stalls bool
}

// member is one worker of a fleet.
type member struct {
	w     *harness.Worker
	px    *faultproxy.Proxy // nil with an Iceberg anchor
	store string
	gone  bool // stopped for good
}

// fleet runs a fleetScenario; not safe for concurrent use.
type fleet struct {
	e       *env
	sc      fleetScenario
	tps     []harness.Topic
	dir     string
	rcv     *harness.Receiver      // nil with an Iceberg anchor
	iceberg *harness.IcebergAnchor // nil with the receiver
	members []*member
	start   time.Time

	kills, crashes, lostStores, receiverKills int
}

// fleetOutcome is what a fleet run found at the end.
type fleetOutcome struct {
	reports []topicReport // one per topic
	backlog int64         // summed over the topics
	elapsed time.Duration
	// stalls are the intervals during which a partition's acknowledged
	// position stood still, from the first owners to the end of the
	// stream (harness.StallWatch).
	stalls []harness.Stall
	start  time.Time // of the run: events are logged relative to it
	// expired and compacted are the snapshots expired and the data files
	// compacted by the maintenance runs the workers completed (their
	// "iceberg table maintained" log lines).
	expired, compacted int64
}

// topicReport is the check of one topic's rows (in its own table when
// the Iceberg anchor routes a table per topic).
type topicReport struct {
	topic string
	// spec is the partition spec of the topic's Iceberg table, as
	// pyiceberg prints it ("" with the receiver).
	spec string
	harness.IdentityReport
}

// add creates worker name with its own store and (with the receiver)
// proxy and starts it.
func (f *fleet) add(t *testing.T) *member {
	t.Helper()
	name := fmt.Sprintf("worker-%d", len(f.members)+1)
	store := filepath.Join(f.dir, "offsets-"+name)
	names := make([]string, len(f.tps))
	for i, tp := range f.tps {
		names[i] = tp.Name
	}
	cfg := harness.WorkerConfig{
		PulsarURL: f.e.pulsarURL, Topics: names, Subscription: subscription,
		SubscriptionType: f.sc.subType, StoreDir: store, Iceberg: f.iceberg,
	}
	var px *faultproxy.Proxy
	if f.rcv != nil {
		var err error
		if px, err = faultproxy.New(f.rcv.Addr()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { px.Close() })
		cfg.FlightAddr, cfg.FlightPath = px.Addr(), flightPath
	}
	m := &member{px: px, store: store, w: harness.NewWorker(t, name, f.e.bin, f.dir, cfg)}
	f.members = append(f.members, m)
	m.w.Start(t)
	return m
}

// running lists the members that run now.
func (f *fleet) running() []*member {
	var out []*member
	for _, m := range f.members {
		if m.w.Running() {
			out = append(out, m)
		}
	}
	return out
}

// logf logs an event with its moment in the run.
func (f *fleet) logf(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Logf("+%5.1fs "+format, append([]any{time.Since(f.start).Seconds()}, args...)...)
}

// sleep waits d and fails the test if a worker that should run exited by
// itself meanwhile: only the test kills or stops workers.
func (f *fleet) sleep(t *testing.T, d time.Duration) {
	t.Helper()
	exited := make(chan *member, len(f.members))
	stop := make(chan struct{})
	defer close(stop)
	for _, m := range f.running() {
		go func(done <-chan struct{}) {
			select {
			case <-done:
				exited <- m
			case <-stop:
			}
		}(m.w.Process().Done())
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case m := <-exited:
		t.Fatalf("%s exited by itself: %v; log (tail):\n%s", m.w.Log(), m.w.Process().State(), harness.Tail(m.w.Log(), 30))
	case <-timer.C:
	}
}

// kill SIGKILLs m; a crash first stalls m's network to the receiver (so
// batches pile up unacknowledged) and cuts it after the kill.
func (f *fleet) kill(t *testing.T, m *member, crash bool) {
	t.Helper()
	if crash {
		m.px.Stall()
		f.sleep(t, f.e.between(100*time.Millisecond, 300*time.Millisecond))
	}
	m.w.Kill()
	if crash {
		m.px.Cut()
		m.px.Resume()
		f.crashes++
	}
	f.kills++
}

// maintenanceRun is the line a worker logs when it starts a run of its
// Iceberg table's maintenance.
const maintenanceRun = `msg="iceberg table maintenance run"`

// maintainedMsg is the line a worker logs when it completed a run.
const maintainedMsg = `msg="iceberg table maintained"`

// waitLogged waits up to d for a running member to log line once more
// than it had, and returns it (nil when none did).
func (f *fleet) waitLogged(t *testing.T, line string, d time.Duration) *member {
	t.Helper()
	seen := map[*member]int{}
	for _, m := range f.running() {
		seen[m] = m.w.LogCount(line)
	}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		for _, m := range f.running() {
			if m.w.LogCount(line) > seen[m] {
				return m
			}
		}
		time.Sleep(20 * time.Millisecond) // polls the logs: a condition wait
	}
	f.logf(t, "no worker logged %s within %v", line, d)
	return nil
}

// inMaintenance waits for a running member to log the start of a
// maintenance run and returns it 0–800ms later; after 20 s without one, a
// random running member.
func (f *fleet) inMaintenance(t *testing.T) *member {
	t.Helper()
	found := f.waitLogged(t, maintenanceRun, 20*time.Second)
	if found == nil || !found.w.Running() {
		f.logf(t, "no maintenance run started: a random worker is killed")
		return f.pick(t)
	}
	f.sleep(t, f.e.between(0, 800*time.Millisecond))
	f.logf(t, "%s started a maintenance run", found.w.Name())
	return found
}

// pick returns a random running member, failing if none runs.
func (f *fleet) pick(t *testing.T) *member {
	t.Helper()
	r := f.running()
	if len(r) == 0 {
		t.Fatal("no worker runs")
	}
	return r[f.e.rng.IntN(len(r))]
}

// events returns the scenario's events in the seed's order.
func (sc fleetScenario) events(e *env) []string {
	var ev []string
	for range sc.kills {
		ev = append(ev, "kill")
	}
	for range sc.bursts {
		ev = append(ev, "burst")
	}
	for range sc.receiverKills {
		ev = append(ev, "receiver")
	}
	if sc.addWorker {
		ev = append(ev, "add")
	}
	if sc.stopForGood {
		ev = append(ev, "stop")
	}
	if sc.loseStore {
		ev = append(ev, "lose-store")
	}
	e.rng.Shuffle(len(ev), func(i, j int) { ev[i], ev[j] = ev[j], ev[i] })
	return ev
}

// runFleet executes sc: topic, receiver, producer, the workers, the events,
// a drain with every remaining worker, a graceful stop, then reads the
// receiver's rows back and checks them against the producer.
func (e *env) runFleet(t *testing.T, sc fleetScenario) fleetOutcome {
	t.Helper()
	f := &fleet{e: e, sc: sc, dir: t.TempDir(), start: time.Now()}
	keepLogs(t, f.dir)
	ns := e.admin.Namespace(t, "chaos", harness.Pruning)
	topicNames := []string{"events"}
	if sc.topics > 1 {
		if !sc.iceberg {
			t.Fatal("several topics need the Iceberg anchor: it keeps each topic's rows in a table of its own")
		}
		// Hyphens, which the table template sanitises to underscores.
		topicNames = topicNames[:0]
		for i := range sc.topics {
			topicNames = append(topicNames, fmt.Sprintf("events-%c", 'a'+i))
		}
	}
	for _, name := range topicNames {
		f.tps = append(f.tps, e.admin.CreateTopic(t, ns, name, sc.partitions))
	}
	anchor := fmt.Sprintf("receiver ack delay %v", ackDelay)
	if sc.iceberg {
		if sc.receiverKills > 0 {
			t.Fatal("an Iceberg-anchor fleet has no receiver to kill")
		}
		table := "chaos.events"
		if len(f.tps) > 1 {
			table = "chaos.{topic}"
		}
		ci := sc.commitInterval
		if ci == 0 {
			ci = 50 * time.Millisecond
		}
		f.iceberg = &harness.IcebergAnchor{
			CatalogDB: filepath.Join(f.dir, "catalog.db"), Warehouse: filepath.Join(f.dir, "warehouse"),
			Table: table, CommitInterval: ci, Maintenance: sc.maintenance,
			PartitionBy: sc.partitionBy,
		}
		anchor = "Iceberg anchor " + f.iceberg.Table
		if sc.partitionBy != "" {
			anchor += " partitioned by " + sc.partitionBy
		}
	} else {
		f.rcv = harness.StartReceiver(t, e.bin, f.dir, ackDelay)
	}
	prods := make([]*harness.Producer, len(f.tps))
	for i, tp := range f.tps {
		p, err := harness.NewProducer(e.pulsarURL, tp)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		prods[i] = p
	}
	ctx := context.Background()
	send := func(n int) {
		for _, p := range prods {
			p.Send(ctx, n)
		}
		for _, p := range prods {
			if err := p.Flush(); err != nil {
				t.Fatalf("producer: %v", err)
			}
		}
	}
	if sc.backlog > 0 {
		send(sc.backlog)
	}
	events := sc.events(e)
	f.logf(t, "%s subscription on %s (%d partitions each): backlog %d, %d records/s, %d workers, events %s; %s",
		sc.subType, strings.Join(topicNames, ", "), sc.partitions, sc.backlog, sc.rate, sc.workers, strings.Join(events, " "), anchor)

	for range sc.workers {
		f.add(t)
	}
	for _, m := range f.members {
		m.w.WaitReady(t)
	}
	if sc.rate > 0 {
		for _, p := range prods {
			p.Stream(sc.rate)
		}
	}
	if sc.subType == "failover" {
		// A real scale-out: the broker spread the partitions over all of them.
		ws := make([]*harness.Worker, len(f.members))
		for i, m := range f.members {
			ws[i] = m.w
		}
		for _, tp := range f.tps {
			own := waitOwners(t, e, tp, len(ws), min(len(ws), sc.partitions), ws...)
			f.logf(t, "partition owners of %s %q", tp.Name, own)
		}
	}

	var watch *harness.StallWatch
	if sc.stalls {
		if len(f.tps) > 1 {
			t.Fatal("the stall watch follows one topic")
		}
		watch = e.admin.WatchStalls(f.tps[0], subscription, 200*time.Millisecond)
	}
	var stalls []harness.Stall
	stopWatch := func() {
		if watch != nil {
			var failed int
			var slowest time.Duration
			stalls, failed, slowest = watch.Stop()
			watch = nil
			f.logf(t, "stall watch: %d polls failed, the slowest poll took %v", failed, slowest.Round(time.Millisecond))
			for _, s := range longestStalls(stalls, 4) {
				f.logf(t, "stall: partition %d stood still %v from +%.1fs", s.Partition, s.For.Round(10*time.Millisecond), s.From.Sub(f.start).Seconds())
			}
		}
	}
	defer stopWatch()
	for _, ev := range events {
		f.sleep(t, e.between(sc.minGap, sc.maxGap))
		switch ev {
		case "kill":
			m := f.pick(t)
			if sc.killInMaintenance {
				m = f.inMaintenance(t)
			}
			crash := f.kills%2 == 1 && m.px != nil
			f.kill(t, m, crash)
			down := e.between(0, sc.maxDown)
			f.logf(t, "SIGKILL %s (host crash %v), restart in %v", m.w.Name(), crash, down.Round(time.Millisecond))
			f.sleep(t, down)
			m.w.Start(t)
		case "burst":
			f.logf(t, "burst of %d records", sc.backlog/2)
			send(sc.backlog / 2)
		case "receiver":
			f.rcv.Kill()
			f.receiverKills++
			down := e.between(300*time.Millisecond, 1500*time.Millisecond)
			f.logf(t, "SIGKILL the receiver, restart in %v", down.Round(time.Millisecond))
			f.sleep(t, down)
			f.rcv.Restart(t)
		case "add":
			m := f.add(t)
			f.logf(t, "added %s", m.w.Name())
		case "stop":
			m := f.pick(t)
			if len(f.running()) < 2 {
				t.Fatalf("stop for good would leave no worker running")
			}
			m.w.Stop(t, 40*time.Second)
			m.gone = true
			f.logf(t, "stopped %s for good", m.w.Name())
		case "lose-store":
			m := f.pick(t)
			f.kill(t, m, false)
			if err := os.RemoveAll(m.store); err != nil {
				t.Fatal(err)
			}
			f.lostStores++
			f.logf(t, "SIGKILL %s, its offset store deleted, restarted on an empty one", m.w.Name())
			m.w.Start(t)
		}
	}

	if sc.killInMaintenance {
		// A run completes with every worker up, the stream on.
		f.waitLogged(t, maintainedMsg, 30*time.Second)
	}
	if watch != nil {
		// One more gap after the last event: a stall it caused ends, or
		// shows.
		f.sleep(t, sc.maxGap)
		stopWatch()
	}
	for _, p := range prods {
		p.StopStream()
		if err := p.Flush(); err != nil {
			t.Fatalf("producer: %v", err)
		}
		if failed := p.Failed(); len(failed) > 0 {
			t.Fatalf("the broker refused or misrouted %d sends (e.g. %v): the expected set is unknown", len(failed), failed)
		}
	}

	// Drain with every worker not stopped for good, then stop them all.
	var live []*harness.Worker
	for _, m := range f.members {
		if m.gone {
			continue
		}
		if !m.w.Running() {
			m.w.Start(t)
		}
		live = append(live, m.w)
	}
	f.logf(t, "draining with %d workers", len(live))
	waitCtx, cancel := context.WithCancel(ctx)
	t.Cleanup(func() {
		if t.Failed() {
			f.logBacklog(t)
		}
	})
	exited := anyExited(waitCtx, live)
	for _, tp := range f.tps {
		e.admin.WaitBacklog(t, tp, subscription, 120*time.Second, exited)
	}
	cancel()
	for _, w := range live {
		w.Stop(t, 40*time.Second)
	}
	out := fleetOutcome{stalls: stalls, start: f.start}
	for i, tp := range f.tps {
		n, err := e.admin.Backlog(ctx, tp, subscription)
		if err != nil {
			t.Fatal(err)
		}
		out.backlog += n
		var (
			rows []harness.Row
			spec string
		)
		if f.iceberg != nil {
			readCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			rows, spec = harness.ReadIcebergRows(t, readCtx, icebergpeer.SQLProps(f.iceberg.CatalogDB, f.iceberg.Warehouse), tableOf(f.iceberg.Table, tp))
			cancel()
		} else {
			_, rows = readSink(t, f.rcv, prods[i])
		}
		out.reports = append(out.reports, topicReport{tp.Name, spec, harness.CheckIdentity(rows, prods[i], tp.Name)})
	}
	for _, m := range f.members {
		e, c := maintained(t, m.w.Log())
		out.expired += e
		out.compacted += c
	}
	out.elapsed = time.Since(f.start)
	starts := 0
	for _, m := range f.members {
		starts += m.w.Starts()
	}
	f.logf(t, "%d workers, %d worker runs, %d worker kills (%d host crashes), %d lost stores, %d receiver kills; backlog %d",
		len(f.members), starts, f.kills, f.crashes, f.lostStores, f.receiverKills, out.backlog)
	for i, r := range out.reports {
		spec := ""
		if r.spec != "" {
			spec = "; partition spec " + r.spec
		}
		f.logf(t, "%s: produced %d records; sink: %s%s", r.topic, prods[i].Last(), r.IdentityReport, spec)
	}
	return out
}

// tableOf is the table chaos.{topic} gives tp's records, spelled out
// here rather than rendered by the worker's code: the topic's short name
// with its hyphens as underscores (docs/iceberg.md "A table per topic").
func tableOf(template string, tp harness.Topic) string {
	return strings.ReplaceAll(template, "{topic}", strings.ReplaceAll(path.Base(tp.Name), "-", "_"))
}

var maintainedLine = regexp.MustCompile(`msg="iceberg table maintained" .*snapshots_expired=(\d+) files_compacted=(\d+)`)

// maintained sums the snapshots expired and the files compacted that the
// worker's log at path reports.
func maintained(t *testing.T, path string) (expired, compacted int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range maintainedLine.FindAllStringSubmatch(string(b), -1) {
		e, _ := strconv.ParseInt(m[1], 10, 64)
		c, _ := strconv.ParseInt(m[2], 10, 64)
		expired += e
		compacted += c
	}
	return expired, compacted
}

// logBacklog logs, per partition, the subscription's backlog, its active
// consumer and each attached consumer's unacknowledged messages: where a
// drain that never ends is stuck.
func (f *fleet) logBacklog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tp := range f.tps {
		f.logTopicBacklog(t, ctx, tp)
	}
}

// logTopicBacklog is logBacklog for tp.
func (f *fleet) logTopicBacklog(t *testing.T, ctx context.Context, tp harness.Topic) {
	st, err := f.e.admin.PartitionStats(ctx, tp, subscription)
	if err != nil {
		t.Logf("partition stats of %s: %v", tp.Name, err)
		return
	}
	for i, s := range st {
		if s.MsgBacklog == 0 && len(s.Consumers) == 0 {
			continue // drained, and nobody holds anything
		}
		var cs []string
		for _, c := range s.Consumers {
			cs = append(cs, fmt.Sprintf("%s unacked %d", c.ConsumerName, c.UnAckedMessages))
		}
		t.Logf("%s partition %d: backlog %d, active %q, consumers [%s]", tp.Name, i, s.MsgBacklog, s.ActiveConsumerName, strings.Join(cs, ", "))
	}
}

// keepLogs copies the logs of a failed run into $CHAOS_LOG_DIR/<test>, if
// set, so that a failure can be traced through every worker's log (the
// test's own directory is removed with it).
func keepLogs(t *testing.T, dir string) {
	t.Cleanup(func() {
		out := os.Getenv("CHAOS_LOG_DIR")
		if out == "" || !t.Failed() {
			return
		}
		dst := filepath.Join(out, strings.ReplaceAll(t.Name(), "/", "_"))
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Logf("keep logs: %v", err)
			return
		}
		for _, l := range logs {
			if b, err := os.ReadFile(l); err == nil {
				_ = os.WriteFile(filepath.Join(dst, filepath.Base(l)), b, 0o644)
			}
		}
		t.Logf("logs of this run kept in %s", dst)
	})
}

// anyExited returns a channel closed when one of ws exits, watched until
// ctx ends.
func anyExited(ctx context.Context, ws []*harness.Worker) <-chan struct{} {
	out := make(chan struct{})
	var once sync.Once
	for _, w := range ws {
		go func(done <-chan struct{}) {
			select {
			case <-done:
				once.Do(func() { close(out) })
			case <-ctx.Done():
			}
		}(w.Process().Done())
	}
	return out
}

// requireIdentity is the assertion of the fleet scenarios: every guarantee
// of the subscription type (README "Scaling out") holds at the raw anchor
// and the backlog drained.
func requireIdentity(t *testing.T, subType string, o fleetOutcome) {
	t.Helper()
	for _, r := range o.reports {
		for _, v := range r.Violations(ordered(subType)) {
			t.Errorf("%s subscription, %s: %s", subType, r.topic, v)
		}
		if !ordered(subType) {
			t.Logf("%s: duplicates (allowed on a %s subscription, at-least-once): %d rows of %d records", r.topic, subType, r.Duplicates, r.DuplicatedRecords)
		}
	}
	if o.backlog != 0 {
		t.Errorf("subscription backlog %d after the drain, want 0", o.backlog)
	}
}

// longestStalls returns the n longest of stalls, longest first.
func longestStalls(stalls []harness.Stall, n int) []harness.Stall {
	s := slices.Clone(stalls)
	slices.SortFunc(s, func(a, b harness.Stall) int { return cmp.Compare(b.For, a.For) })
	return s[:min(n, len(s))]
}
