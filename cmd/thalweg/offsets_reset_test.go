package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/pulsartest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/offsetstore"
	zbserver "github.com/thalweg/thalweg/zerobus/server"
)

func TestParseResetPoint(t *testing.T) {
	for in, want := range map[string]string{
		"earliest":                    "earliest",
		"latest":                      "latest",
		"2026-12-01T10:00:00Z":        "2026-12-01T10:00:00Z",
		"2026-12-01T11:00:00.5+01:00": "2026-12-01T10:00:00.5Z",
		"12:34":                       "message 12:34",
		"12:34:5":                     "message 12:34:5",
	} {
		p, err := parseResetPoint(in)
		if err != nil || p.String() != want {
			t.Errorf("parseResetPoint(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
	for _, in := range []string{"", "yesterday", "12", "2026-12-01", "1:-2"} {
		if _, err := parseResetPoint(in); err == nil {
			t.Errorf("parseResetPoint(%q) succeeded", in)
		}
	}
}

// resetTopic is a partitioned topic of the test broker and what the test
// produced to it.
type resetTopic struct {
	url, adminURL, short, full string
	mu                         sync.Mutex
	partition                  map[string]string // payload -> partition name
}

func newResetTopic(t *testing.T, partitions int) *resetTopic {
	u, a := testenv.PulsarURL(t)
	short := fmt.Sprintf("thalweg-cmd-reset-%d", time.Now().UnixNano()%1e12)
	pulsartest.Admin{URL: a}.CreatePartitioned(t, short, partitions)
	return &resetTopic{url: u, adminURL: a, short: short, full: "persistent://public/default/" + short, partition: map[string]string{}}
}

// produce publishes payloads "r-<i>" for i in [from, to), keyed, batched
// (so that message ids carry batch indexes), and records each one's partition.
func (rt *resetTopic) produce(t *testing.T, from, to int) {
	t.Helper()
	c, err := pclient.NewClient(pclient.ClientOptions{URL: rt.url, Logger: plog.DefaultNopLogger(), MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.CreateProducer(pclient.ProducerOptions{Topic: rt.full, SendTimeout: -1,
		BatchingMaxMessages: 10, BatchingMaxPublishDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, to-from)
	for i := from; i < to; i++ {
		payload := "r-" + strconv.Itoa(i)
		wg.Add(1)
		p.SendAsync(ctx, &pclient.ProducerMessage{Payload: []byte(payload), Key: "k" + strconv.Itoa(i)},
			func(id pclient.MessageID, _ *pclient.ProducerMessage, err error) {
				defer wg.Done()
				if err != nil {
					errc <- err
					return
				}
				rt.mu.Lock()
				rt.partition[payload] = rt.full + "-partition-" + strconv.Itoa(int(id.PartitionIdx()))
				rt.mu.Unlock()
			})
	}
	if err := p.FlushWithCtx(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

// stored is what one sink holds: per payload the number of rows, and per
// identity key (partition name, seq) the payloads stored under it.
type stored struct {
	count map[string]int
	keys  map[string]map[string]bool
	last  map[string]uint64 // highest seq per partition name
}

func newStored() *stored {
	return &stored{count: map[string]int{}, keys: map[string]map[string]bool{}, last: map[string]uint64{}}
}

func (s *stored) add(topic string, partition int32, seq uint64, payload string) {
	name := topic
	if partition >= 0 {
		name = topic + "-partition-" + strconv.Itoa(int(partition))
	}
	key := name + "#" + strconv.FormatUint(seq, 10)
	if s.keys[key] == nil {
		s.keys[key] = map[string]bool{}
	}
	s.keys[key][payload] = true
	s.count[payload]++
	s.last[name] = max(s.last[name], seq)
}

// collisions lists the identity keys stored for more than one payload.
func (s *stored) collisions() []string {
	var out []string
	for k, ps := range s.keys {
		if len(ps) > 1 {
			out = append(out, fmt.Sprintf("%s: %d payloads", k, len(ps)))
		}
	}
	slices.Sort(out)
	return out
}

// anchorRows reads every row the receiver at addr stores for dataset raw
// (RawSchema v2: topic, partition, seq, payload).
func anchorRows(t *testing.T, addr string) *stored {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	recs, err := flight.ReadAll(flighttest.Ctx(t, 30*time.Second), flighttest.Client(t, addr), []string{"raw"}, mem)
	if status.Code(err) == codes.NotFound {
		return newStored() // nothing delivered yet
	}
	if err != nil {
		t.Fatal(err)
	}
	defer flight.ReleaseAll(recs)
	out := newStored()
	for _, r := range recs {
		rec := r.Rec
		col := func(name string) int {
			idx := rec.Schema().FieldIndices(name)
			if len(idx) != 1 {
				t.Fatalf("anchor rows have no column %q: %v", name, rec.Schema())
			}
			return idx[0]
		}
		topic := rec.Column(col("topic")).(*array.String)
		part := rec.Column(col("partition")).(*array.Int32)
		seq := rec.Column(col("seq")).(*array.Uint64)
		payload := rec.Column(col("payload")).(*array.Binary)
		for i := 0; i < int(rec.NumRows()); i++ {
			out.add(topic.Value(i), part.Value(i), seq.Value(i), string(payload.Value(i)))
		}
	}
	return out
}

// zerobusRows reads every row the Zerobus server in dir stores for table.
func zerobusRows(t *testing.T, dir, table string) *stored {
	t.Helper()
	lines, err := zbserver.ReadTable(dir, table)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := newStored()
	for i, l := range lines {
		var row struct {
			Topic     *string `json:"topic"`
			Partition *int32  `json:"partition"`
			Seq       *uint64 `json:"seq"`
			Payload   []byte  `json:"payload"`
		}
		if err := json.Unmarshal(l, &row); err != nil || row.Topic == nil || row.Partition == nil || row.Seq == nil {
			t.Fatalf("zerobus row %d: %v: %s", i, err, l)
		}
		out.add(*row.Topic, *row.Partition, *row.Seq, string(row.Payload))
	}
	return out
}

// positions reads delivered and coverage of dest from a closed store.
func positions(t *testing.T, dir, dest string) (delivered, coverage map[string]uint64) {
	t.Helper()
	store, err := offsetstore.Open(dir, offsetstore.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	del, err := store.Delivered(dest)
	if err != nil {
		t.Fatal(err)
	}
	cov, err := store.Coverage(dest)
	if err != nil {
		t.Fatal(err)
	}
	delivered, coverage = map[string]uint64{}, map[string]uint64{}
	for p, pos := range del {
		delivered[p] = pos.Seq
	}
	for p, pos := range cov {
		coverage[p] = pos.Seq
	}
	return delivered, coverage
}

// startWorker runs `thalweg run` as a process (the test binary as the
// command) until stop is called, which stops it with SIGTERM and checks its
// exit code.
func startWorker(t *testing.T, cfg string) (p *process, stop func()) {
	t.Helper()
	p = startRun(t, binary(t), cfg)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			p.signal(t, syscall.SIGTERM)
			if code := p.exitCode(t, 30*time.Second); code != exitOK {
				t.Errorf("thalweg run exited %d\n%s", code, tail(p.stderr.String(), 20))
			}
		})
	}
	return p, stop
}

func resetConfig(t *testing.T, rt *resetTopic, flightAt, zbAt, storeDir string) string {
	t.Helper()
	doc := fmt.Sprintf(`source:
  url: %s
  admin_url: %s
  topics: [%s]
  subscription: {name: sub, type: failover}
batching: {max_rows: 16, linger: 20ms}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: '%s'}
  - {name: zb, kind: zerobus, role: secondary, endpoint: '%s', table: main.reset.events}
store: {dir: %s}
shutdown: {drain_timeout: 10s}
metrics: {listen: ""}
log: {level: info, format: json}
`, rt.url, rt.adminURL, rt.short, flightAt, zbAt, storeDir)
	path := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func payloads(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, "r-"+strconv.Itoa(i))
	}
	return out
}

// A reset that moves the cursor back: 100 records
// delivered to a Flight anchor and a Zerobus secondary, `offsets reset` to
// a time between record 49 and 50, a restart, 100 more records. Every
// record after the reset point reaches both sinks again (the secondary
// stores records 50..99 a second time; the anchor of this Failover
// subscription keeps exactly one copy of each), no (partition, seq) is
// stored for two payloads, and the secondary's coverage never ends ahead
// of the anchor's delivered position.
func TestOffsetsResetRedeliversToEverySink(t *testing.T) {
	rt := newResetTopic(t, 2)
	flightAt := startFlight(t, receiver.Options{})
	const table = "main.reset.events"
	zbAt, zbDir := startZerobus(t, zbserver.Options{})
	storeDir := filepath.Join(t.TempDir(), "offsets")
	cfg := resetConfig(t, rt, flightAt, zbAt, storeDir)

	rt.produce(t, 0, 50)
	// Publish times are whole milliseconds: the reset point lies in a
	// millisecond of its own, after record 49's and before record 50's.
	last := time.Now()
	testenv.WaitFor(t, time.Second, "the clock past record 49's millisecond", func() bool { return time.Now().UnixMilli() > last.UnixMilli() })
	point := time.Now()
	testenv.WaitFor(t, time.Second, "the clock past the reset point's millisecond", func() bool { return time.Now().UnixMilli() > point.UnixMilli() })
	rt.produce(t, 50, 100)

	all := func(s *stored, want []string) bool {
		for _, p := range want {
			if s.count[p] == 0 {
				return false
			}
		}
		return true
	}
	c, stop := startWorker(t, cfg)
	testenv.WaitFor(t, 60*time.Second, "the first 100 records at both sinks", func() bool {
		return all(anchorRows(t, flightAt), payloads(0, 100)) && all(zerobusRows(t, zbDir, table), payloads(0, 100))
	})

	// While the worker runs, the reset refuses before touching anything.
	code, _, stderr := runCLI(t, "offsets", "reset", "--config", cfg, "--to", point.Format(time.RFC3339Nano), "--yes")
	if want := "is locked by a running worker (pid " + strconv.Itoa(c.cmd.Process.Pid) + "); stop it first"; code != exitFail || !strings.Contains(stderr, want) {
		t.Errorf("reset while the worker runs: exit %d, stderr %q; want exit %d naming %q", code, stderr, exitFail, want)
	}
	stop()
	if t.Failed() {
		t.Fatalf("first run:\n%s", tail(c.stderr.String(), 30))
	}
	pulsartest.Admin{URL: rt.adminURL}.WaitBacklog(t, rt.short, "sub", true, 0)

	// Unconfirmed (no terminal, no --yes): nothing changes.
	del0, _ := positions(t, storeDir, "raw")
	code, _, stderr = runCLI(t, "offsets", "reset", "--config", cfg, "--to", point.Format(time.RFC3339Nano))
	if code != exitUsage || !strings.Contains(stderr, "not confirmed") {
		t.Fatalf("unconfirmed reset: exit %d, stderr %q", code, stderr)
	}
	if del, _ := positions(t, storeDir, "raw"); fmt.Sprint(del) != fmt.Sprint(del0) {
		t.Fatalf("an unconfirmed reset changed the positions: %v -> %v", del0, del)
	}
	if b := (pulsartest.Admin{URL: rt.adminURL}).Backlog(t, rt.short, "sub", true); b != 0 {
		t.Fatalf("an unconfirmed reset moved the cursor: backlog %d", b)
	}

	code, stdout, stderr := runCLI(t, "offsets", "reset", "--config", cfg, "--to", point.Format(time.RFC3339Nano), "--yes")
	if code != exitOK {
		t.Fatalf("offsets reset: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("offsets reset:\n%s", stdout)
	// Each partition's positions are the seq of its last record before
	// the reset point: on a new topic, the number of its records before it.
	before := map[string]uint64{}
	for _, p := range payloads(0, 50) {
		before[rt.partition[p]]++
	}
	for _, dest := range []string{"raw", "zb"} {
		del, cov := positions(t, storeDir, dest)
		for i := 0; i < 2; i++ {
			name := rt.full + "-partition-" + strconv.Itoa(i)
			if del[name] != before[name] || cov[name] != before[name] {
				t.Errorf("%s %s after the reset: delivered %d, coverage %d; want both %d", dest, name, del[name], cov[name], before[name])
			}
			if !strings.Contains(stdout, name+": cursor reset to") {
				t.Errorf("the output does not report %s:\n%s", name, stdout)
			}
		}
	}

	c, stop = startWorker(t, cfg)
	rt.produce(t, 100, 200)
	again := payloads(50, 100)
	testenv.WaitFor(t, 90*time.Second, "records 50..199 at both sinks, 50..99 twice at the secondary", func() bool {
		zb := zerobusRows(t, zbDir, table)
		for _, p := range again {
			if zb.count[p] < 2 {
				return false
			}
		}
		return all(anchorRows(t, flightAt), payloads(0, 200)) && all(zb, payloads(100, 200))
	})
	stop()
	if t.Failed() {
		t.Fatalf("second run:\n%s", tail(c.stderr.String(), 30))
	}

	anchor, zb := anchorRows(t, flightAt), zerobusRows(t, zbDir, table)
	for _, s := range []struct {
		name string
		s    *stored
	}{{"anchor", anchor}, {"secondary", zb}} {
		if col := s.s.collisions(); len(col) > 0 {
			t.Errorf("%s: %d identity keys stored for two payloads: %v", s.name, len(col), col[:min(len(col), 5)])
		}
		for _, p := range payloads(0, 200) {
			if s.s.count[p] == 0 {
				t.Errorf("%s: %s missing", s.name, p)
			}
		}
	}
	for _, p := range payloads(0, 200) {
		if n := anchor.count[p]; n != 1 {
			t.Errorf("anchor (failover: ordered) holds %s %d times, want once", p, n)
		}
	}
	del, _ := positions(t, storeDir, "raw")
	_, cov := positions(t, storeDir, "zb")
	for name, last := range anchor.last {
		if del[name] != last {
			t.Errorf("%s: raw delivered %d, the anchor's last seq %d", name, del[name], last)
		}
		if cov[name] > del[name] {
			t.Errorf("%s: the secondary's coverage %d is ahead of the anchor's delivered %d", name, cov[name], del[name])
		}
	}
}

// What the reset refuses, before it moves anything.
func TestOffsetsResetRefuses(t *testing.T) {
	rt := newResetTopic(t, 2)
	storeDir := filepath.Join(t.TempDir(), "offsets")
	s, err := offsetstore.Open(storeDir, offsetstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	s.CommitDelivered("raw", []batch.OffsetSpan{{Partition: rt.full + "-partition-0", First: 1, Last: 9}}, func(err error) { done <- err })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := resetConfig(t, rt, "127.0.0.1:1", "127.0.0.1:2", storeDir)
	noAdmin := filepath.Join(t.TempDir(), "noadmin.yaml")
	text, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noAdmin, []byte(strings.Replace(string(text), "  admin_url: "+rt.adminURL+"\n", "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	// topics_pattern: the namespace's topics it matches, partition by partition.
	pattern := filepath.Join(t.TempDir(), "pattern.yaml")
	if err := os.WriteFile(pattern, []byte(strings.Replace(string(text), "  topics: ["+rt.short+"]\n",
		"  topics_pattern: 'persistent://public/default/"+rt.short+".*'\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--config", noAdmin, "--to", "earliest", "--yes"}, exitUsage, "source.admin_url is required"},
		{[]string{"--config", pattern, "--to", "earliest", "--yes"}, exitFail, rt.full + `-partition-0 has no subscription "sub"`},
		{[]string{"--config", pattern, "--to", "earliest", "--topic", rt.full, "--partition", "1", "--yes"}, exitFail, rt.full + `-partition-1 has no subscription "sub"`},
		{[]string{"--config", cfg, "--yes"}, exitUsage, "--to is required"},
		{[]string{"--config", cfg, "--to", "tomorrow", "--yes"}, exitUsage, "want earliest, latest, an RFC 3339 time"},
		{[]string{"--config", cfg, "--to", "1:2", "--yes"}, exitUsage, "a message id names a message of one partition"},
		{[]string{"--config", cfg, "--to", "earliest", "--topic", "other", "--yes"}, exitUsage, "is not a topic of the config"},
		{[]string{"--config", cfg, "--to", "earliest", "--partition", "7", "--yes"}, exitUsage, "--partition 7: the topic has 2 partition(s)"},
		{[]string{"--config", cfg, "--to", "earliest", "--yes"}, exitFail, `has no subscription "sub"`},
		{[]string{"--config", cfg, "--to", "earliest", "--store", filepath.Join(t.TempDir(), "typo"), "--yes"}, exitUsage, "not an offset store"},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"offsets", "reset"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q (stdout %q); want exit %d naming %q", c.args, code, stderr, stdout, c.code, c.want)
		}
	}
	if del, _ := positions(t, storeDir, "raw"); del[rt.full+"-partition-0"] != 9 {
		t.Errorf("a refused reset changed the store: %v", del)
	}
}

// A reset to a message id inside a batched entry, on one partition: the
// cursor goes there and the partition's positions become that message's
// broker index (its seq - 1), as a reader at the id sees it; the other
// partition is not touched.
func TestOffsetsResetToMessageID(t *testing.T) {
	rt := newResetTopic(t, 2)
	rt.produce(t, 0, 60)
	c, err := pclient.NewClient(pclient.ClientOptions{URL: rt.url, Logger: plog.DefaultNopLogger(), MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p0 := rt.full + "-partition-0"
	// Consume partition 0 to its end on the subscription, remembering the
	// id and index of every message.
	cons, err := c.Subscribe(pclient.ConsumerOptions{Topic: rt.full, SubscriptionName: "sub", Type: pclient.Failover,
		SubscriptionInitialPosition: pclient.SubscriptionPositionEarliest})
	if err != nil {
		t.Fatal(err)
	}
	type msg struct {
		id  pclient.MessageID
		idx uint64
	}
	var msgs []msg
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for n := 0; n < 60; n++ {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := cons.Ack(m); err != nil {
			t.Fatal(err)
		}
		if m.Index() == nil {
			t.Fatal("message without a broker index: the broker lacks AppendIndexMetadataInterceptor")
		}
		if m.Topic() == p0 {
			msgs = append(msgs, msg{m.ID(), *m.Index()})
		}
	}
	cons.Close()
	var target msg
	for _, m := range msgs {
		if m.id.BatchIdx() > 0 {
			target = m
			break
		}
	}
	if target.id == nil {
		t.Fatalf("no batched message among %d on %s", len(msgs), p0)
	}
	storeDir := filepath.Join(t.TempDir(), "offsets")
	s, err := offsetstore.Open(storeDir, offsetstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{p0, rt.full + "-partition-1"} {
		if err := s.SetPosition("raw", p, offsetstore.Position{Seq: 1000}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := resetConfig(t, rt, "127.0.0.1:1", "127.0.0.1:2", storeDir)
	id := fmt.Sprintf("%d:%d:%d", target.id.LedgerID(), target.id.EntryID(), target.id.BatchIdx())
	// Confirmed on the terminal instead of --yes.
	var cl cli
	env := cl.cliEnv()
	env.stdin = strings.NewReader("yes\n")
	code := dispatch(flighttest.Ctx(t, time.Minute), []string{"offsets", "reset", "--config", cfg, "--to", id, "--partition", "0"}, env)
	stdout, stderr := cl.stdout.String(), cl.stderr.String()
	if code != exitOK || !strings.Contains(stdout, "Reset? Type yes to continue: ") {
		t.Fatalf("offsets reset --to %s: exit %d\n%s\n%s", id, code, stdout, stderr)
	}
	want := fmt.Sprintf("%s: cursor reset to message %s; next record: seq %d", p0, id, target.idx+1)
	if !strings.Contains(stdout, want) {
		t.Errorf("output lacks %q:\n%s", want, stdout)
	}
	for _, dest := range []string{"raw", "zb"} {
		del, cov := positions(t, storeDir, dest)
		if del[p0] != target.idx || cov[p0] != target.idx {
			t.Errorf("%s %s: delivered %d, coverage %d; want %d", dest, p0, del[p0], cov[p0], target.idx)
		}
		if dest == "raw" && del[rt.full+"-partition-1"] != 1000 {
			t.Errorf("partition 1 was touched: %v", del)
		}
	}
	// The subscription delivers from the target on: every message from it
	// to the end, and nothing of an earlier entry (without batch-index
	// acknowledgement the broker may deliver the target entry's earlier
	// messages too; the source drops those by seq).
	cons, err = c.Subscribe(pclient.ConsumerOptions{Topic: p0, SubscriptionName: "sub", Type: pclient.Failover})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := map[uint64]bool{}
	for wait := 10 * time.Second; ; wait = time.Second { // the first after the broker's failover delay
		rctx, rcancel := context.WithTimeout(ctx, wait)
		m, err := cons.Receive(rctx)
		rcancel()
		if err != nil {
			break
		}
		got[*m.Index()] = true
	}
	entryStart := target.idx - uint64(target.id.BatchIdx())
	for _, m := range msgs {
		if m.idx >= target.idx && !got[m.idx] {
			t.Errorf("message %v (index %d) not delivered after the reset to %s", m.id, m.idx, id)
		}
		if m.idx < entryStart && got[m.idx] {
			t.Errorf("message %v (index %d) of an earlier entry delivered after the reset to %s", m.id, m.idx, id)
		}
	}
}

// A topic that is not partitioned is its own partition name: reset to
// earliest and to latest set its positions to before the first record and
// to the last record.
func TestOffsetsResetUnpartitioned(t *testing.T) {
	u, a := testenv.PulsarURL(t)
	short := fmt.Sprintf("thalweg-cmd-reset-np-%d", time.Now().UnixNano()%1e12)
	rt := &resetTopic{url: u, adminURL: a, short: short, full: "persistent://public/default/" + short, partition: map[string]string{}}
	rt.produce(t, 0, 5) // creates the topic
	c, err := pclient.NewClient(pclient.ClientOptions{URL: u, Logger: plog.DefaultNopLogger(), MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cons, err := c.Subscribe(pclient.ConsumerOptions{Topic: rt.full, SubscriptionName: "sub", Type: pclient.Exclusive})
	if err != nil {
		t.Fatal(err)
	}
	cons.Close()
	storeDir := filepath.Join(t.TempDir(), "offsets")
	s, err := offsetstore.Open(storeDir, offsetstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := resetConfig(t, rt, "127.0.0.1:1", "127.0.0.1:2", storeDir)
	for _, tc := range []struct {
		to   string
		seq  uint64
		want string
	}{
		{"earliest", 0, rt.full + ": cursor reset to earliest; next record: seq 1 ("},
		{"latest", 5, rt.full + ": cursor reset to latest; past the last record (seq 5, message "},
	} {
		code, stdout, stderr := runCLI(t, "offsets", "reset", "--config", cfg, "--to", tc.to, "--yes")
		if code != exitOK || !strings.Contains(stdout, tc.want) {
			t.Fatalf("reset --to %s: exit %d, want %q in\n%s\n%s", tc.to, code, tc.want, stdout, stderr)
		}
		del, cov := positions(t, storeDir, "zb")
		if len(del) != 1 || del[rt.full] != tc.seq || cov[rt.full] != tc.seq {
			t.Errorf("after reset --to %s: zb delivered %v, coverage %v; want %s at %d", tc.to, del, cov, rt.full, tc.seq)
		}
	}
}
