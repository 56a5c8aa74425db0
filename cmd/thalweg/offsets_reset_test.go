package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
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
	for _, in := range []string{"", "yesterday", "12", "2026-12-01", "1:-2", "-1:0", "a:b", "1:2:3:4", "1:2:-1", "1:2:x"} {
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

// flightRows reads every row a receiver stores for dataset (RawSchema v2:
// topic, partition, seq, payload) through client (one per receiver and
// test: each holds a connection until the test ends).
func flightRows(t *testing.T, client arrowflight.Client, dataset string) *stored {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	recs, err := flight.ReadAll(flighttest.Ctx(t, 30*time.Second), client, []string{dataset}, mem)
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
	return resetConfigOf(t, rt, fmt.Sprintf(`  - {name: raw, kind: flight, role: raw_anchor, endpoint: '%s'}
  - {name: zb, kind: zerobus, role: secondary, endpoint: '%s', table: main.reset.events}
`, flightAt, zbAt), storeDir)
}

// resetConfigOf is a worker's config for rt's Failover subscription "sub",
// with the destinations' list items dests.
func resetConfigOf(t *testing.T, rt *resetTopic, dests, storeDir string) string {
	t.Helper()
	return writeConfig(t, fmt.Sprintf(`source:
  url: %s
  admin_url: %s
  topics: [%s]
  subscription: {name: sub, type: failover}
batching: {max_rows: 16, linger: 20ms}
destinations:
%sstore: {dir: %s}
shutdown: {drain_timeout: 10s}
metrics: {listen: ""}
log: {level: info, format: json}
`, rt.url, rt.adminURL, rt.short, dests, storeDir))
}

func payloads(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, "r-"+strconv.Itoa(i))
	}
	return out
}

// resetSink is one destination of a reset test: its name in the config
// and an independent read of everything it stores.
type resetSink struct {
	name  string
	read  func(t *testing.T) *stored
	count func(t *testing.T) int // the rows it holds, when cheaper than read; nil: read's
}

// icebergRows reads every row of table with pyiceberg.
func icebergRows(t *testing.T, storeDir, table string) *stored {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	v := icebergpeer.ReadRows(t, ctx, icebergpeer.SQLProps(storeDir+".iceberg/catalog.db", storeDir+".iceberg/warehouse"), table)
	out := newStored()
	for _, r := range v.RawRows {
		out.add(r.Topic, r.Partition, r.Seq, string(r.Payload))
	}
	return out
}

// icebergCount is the number of rows table's current snapshot holds,
// through thalweg's own reader (used only to wait).
func icebergCount(t *testing.T, storeDir, table string) int64 {
	t.Helper()
	tbl, err := iceberg.Open(iceberg.Options{
		Catalog:   iceberg.CatalogOptions{Type: iceberg.CatalogSQL, URI: storeDir + ".iceberg/catalog.db"},
		Warehouse: storeDir + ".iceberg/warehouse", Table: table,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	n, err := tbl.Rows(flighttest.Ctx(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// offsetsTable runs `thalweg offsets --store dir` and returns its rows:
// destination -> partition -> [DELIVERED, COVERAGE, LAG].
func offsetsTable(t *testing.T, dir string) map[string]map[string][3]string {
	t.Helper()
	code, stdout, stderr := runCLI(t, "offsets", "--store", dir)
	if code != exitOK {
		t.Fatalf("thalweg offsets: exit %d\n%s", code, stderr)
	}
	out := map[string]map[string][3]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) != 5 {
			t.Fatalf("thalweg offsets: line %q", l)
		}
		if out[f[0]] == nil {
			out[f[0]] = map[string][3]string{}
		}
		out[f[0]][f[1]] = [3]string{f[2], f[3], f[4]}
	}
	return out
}

// A reset that moves the cursor back, with a Flight and with an Iceberg
// raw anchor and two secondaries of other kinds: 100 records delivered,
// `offsets reset` to a time between record 49 and 50, a restart with no
// new records. Every secondary gets records 50..99 again at once, exactly
// once more (the worker reads them back from the anchor), the anchor of
// this Failover subscription keeps exactly one copy, `thalweg offsets`
// shows the refill owed as the secondaries' lag after the reset and none
// after it, and 50 records published then reach every sink once. Every
// sink is read back by an independent reader (the receiver's DoGet, the
// Zerobus server's files, pyiceberg); no (partition, seq) is stored for two
// payloads.
func TestOffsetsResetRefillsEverySecondary(t *testing.T) {
	t.Run("flight anchor", func(t *testing.T) { testOffsetsResetRefill(t, "flight") })
	t.Run("iceberg anchor", func(t *testing.T) { testOffsetsResetRefill(t, "iceberg") })
}

func testOffsetsResetRefill(t *testing.T, anchorKind string) {
	rt := newResetTopic(t, 3)
	flightAt := startFlight(t, receiver.Options{})
	const table = "main.reset.events"
	fc := flighttest.Client(t, flightAt)
	zbAt, zbDir := startZerobus(t, zbserver.Options{})
	storeDir := filepath.Join(t.TempDir(), "offsets")
	var dests string
	var anchor resetSink
	var seconds []resetSink
	zb := resetSink{name: "zb", read: func(t *testing.T) *stored { return zerobusRows(t, zbDir, table) }}
	flightSink := func(name string) resetSink {
		return resetSink{name: name, read: func(t *testing.T) *stored { return flightRows(t, fc, name) }}
	}
	icebergSink := func(name, table string) resetSink {
		return resetSink{name: name, read: func(t *testing.T) *stored { return icebergRows(t, storeDir, table) },
			count: func(t *testing.T) int { return int(icebergCount(t, storeDir, table)) }}
	}
	switch anchorKind {
	case "flight":
		dests = fmt.Sprintf(`  - {name: raw, kind: flight, role: raw_anchor, endpoint: '%s'}
  - {name: zb, kind: zerobus, role: secondary, endpoint: '%s', table: %s}
  - {name: copy, kind: iceberg, role: secondary, iceberg: {table: reset.copy, commit_interval: 100ms}}
`, flightAt, zbAt, table)
		anchor, seconds = flightSink("raw"), []resetSink{zb, icebergSink("copy", "reset.copy")}
	case "iceberg":
		dests = fmt.Sprintf(`  - {name: lake, kind: iceberg, role: raw_anchor, iceberg: {table: reset.lake, commit_interval: 100ms}}
  - {name: zb, kind: zerobus, role: secondary, endpoint: '%s', table: %s}
  - {name: fl, kind: flight, role: secondary, endpoint: '%s'}
`, zbAt, table, flightAt)
		anchor, seconds = icebergSink("lake", "reset.lake"), []resetSink{zb, flightSink("fl")}
	}
	// count is a sink's row count, cheap enough to poll.
	count := func(t *testing.T, s resetSink) int {
		if s.count != nil {
			return s.count(t)
		}
		n := 0
		for _, c := range s.read(t).count {
			n += c
		}
		return n
	}
	cfg := resetConfigOf(t, rt, dests, storeDir)
	all := append([]resetSink{anchor}, seconds...)
	// counts waits until every sink holds want rows.
	counts := func(what string, want func(s resetSink) int) {
		t.Helper()
		testenv.WaitFor(t, 60*time.Second, what, func() bool {
			for _, s := range all {
				if count(t, s) < want(s) {
					return false
				}
			}
			return true
		})
	}

	// run runs the worker until every sink holds its rows: n at the anchor,
	// n plus the reset range's 50 at a secondary once refilled.
	run := func(name string, produce func(), n int, refilled bool) {
		t.Helper()
		c, stop := startWorker(t, cfg)
		produce()
		counts(fmt.Sprintf("%s: %d records at every sink", name, n), func(s resetSink) int {
			if refilled && s.name != anchor.name {
				return n + 50
			}
			return n
		})
		stop()
		if t.Failed() {
			t.Fatalf("%s:\n%s", name, tail(c.stderr.String(), 30))
		}
	}
	// copies checks that every sink holds each of the first n records
	// once, and a secondary those of the reset range twice once refilled;
	// and that no identity key is stored for two payloads.
	copies := func(when string, n int, refilled bool) {
		t.Helper()
		for _, s := range all {
			got := s.read(t)
			if col := got.collisions(); len(col) > 0 {
				t.Errorf("%s: %s: %d identity keys stored for two payloads: %v", when, s.name, len(col), col[:min(len(col), 5)])
			}
			for i, p := range payloads(0, n) {
				want := 1
				if refilled && s.name != anchor.name && i >= 50 && i < 100 {
					want = 2
				}
				if got := got.count[p]; got != want {
					t.Errorf("%s: %s holds %s %d times, want %d", when, s.name, p, got, want)
				}
			}
		}
	}

	rt.produce(t, 0, 50)
	// Publish times are whole milliseconds: the reset point lies in a
	// millisecond of its own, after record 49's and before record 50's.
	last := time.Now()
	testenv.WaitFor(t, time.Second, "the clock past record 49's millisecond", func() bool { return time.Now().UnixMilli() > last.UnixMilli() })
	point := time.Now()
	testenv.WaitFor(t, time.Second, "the clock past the reset point's millisecond", func() bool { return time.Now().UnixMilli() > point.UnixMilli() })
	rt.produce(t, 50, 100)

	run("first run", func() {}, 100, false)
	pulsartest.Admin{URL: rt.adminURL}.WaitBacklog(t, rt.short, "sub", true, 0)
	copies("first run", 100, false)
	stored0 := anchor.read(t)

	code, stdout, stderr := runCLI(t, "offsets", "reset", "--config", cfg, "--to", point.Format(time.RFC3339Nano), "--yes")
	if code != exitOK {
		t.Fatalf("offsets reset: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("offsets reset:\n%s", stdout)
	// Each partition's reset point is the seq of its last record before it:
	// on a new topic, the number of its records before it. The anchor's
	// delivered position stays what it stores; the secondaries' coverage
	// goes back to the reset point, and their lag is the refill owed.
	before := map[string]uint64{}
	for _, p := range payloads(0, 50) {
		before[rt.partition[p]]++
	}
	table0 := offsetsTable(t, storeDir)
	for i := range 3 {
		name := rt.full + "-partition-" + strconv.Itoa(i)
		h := stored0.last[name]
		if got := table0[anchor.name][name][0]; got != fmt.Sprint(h) {
			t.Errorf("%s %s after the reset: delivered %s; want %d (what the anchor stores)", anchor.name, name, got, h)
		}
		for _, s := range seconds {
			if got, want := table0[s.name][name], fmt.Sprint(before[name]); got[1] != want || got[2] != fmt.Sprint(h-before[name]) {
				t.Errorf("%s %s after the reset: coverage %s, lag %s; want %s, %d", s.name, name, got[1], got[2], want, h-before[name])
			}
		}
		if !strings.Contains(stdout, name+": cursor reset to") {
			t.Errorf("the output does not report %s:\n%s", name, stdout)
		}
	}

	// The refill comes without any new record.
	run("second run", func() {}, 100, true)
	copies("after the refill", 100, true)
	table1 := offsetsTable(t, storeDir)
	for name, h := range stored0.last {
		for _, s := range seconds {
			if got := table1[s.name][name]; got[1] != fmt.Sprint(h) || got[2] != "0" {
				t.Errorf("%s %s after the refill: coverage %s, lag %s; want %d, 0", s.name, name, got[1], got[2], h)
			}
		}
	}

	run("third run", func() { rt.produce(t, 100, 150) }, 150, true)
	copies("after new records", 150, true)
	end := anchor.read(t)
	del, _ := positions(t, storeDir, anchor.name)
	for name, last := range end.last {
		if del[name] != last {
			t.Errorf("%s: %s delivered %d, the anchor's last seq %d", name, anchor.name, del[name], last)
		}
		for _, s := range seconds {
			if _, cov := positions(t, storeDir, s.name); cov[name] != last {
				t.Errorf("%s: %s coverage %d, the anchor's last seq %d", name, s.name, cov[name], last)
			}
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
	cfg := resetConfig(t, rt, startFlight(t, receiver.Options{}), "127.0.0.1:2", storeDir)
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
	// A raw anchor that cannot say what it stores: refused before anything
	// is moved (the secondaries' refill needs its positions).
	code, stdout, stderr := runCLI(t, "offsets", "reset", "--config", resetConfig(t, rt, "127.0.0.1:1", "127.0.0.1:2", storeDir), "--to", "earliest", "--yes")
	if want := `asking the raw anchor "raw" for the positions it stores`; code != exitFail || !strings.Contains(stderr, want) || !strings.Contains(stderr, "nothing changed") {
		t.Errorf("reset with the anchor unreachable: exit %d, stderr %q (stdout %q); want exit %d naming %q", code, stderr, stdout, exitFail, want)
	}
	if del, _ := positions(t, storeDir, "zb"); len(del) != 0 {
		t.Errorf("a refused reset set positions: %v", del)
	}
	// The subscription began at the end (backlog 0); a reset to earliest
	// would make it 5.
	if b := (pulsartest.Admin{URL: a}).Backlog(t, short, "sub", false); b != 0 {
		t.Errorf("a refused reset moved the cursor: backlog %d, want 0", b)
	}
	cfg := resetConfig(t, rt, startFlight(t, receiver.Options{}), "127.0.0.1:2", storeDir)
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

// A topics_pattern resets what the worker subscribes: the persistent
// topics it matches (the client's regex consumer asks the broker for
// persistent topics only), not the non-persistent ones the admin API
// lists beside them.
func TestPatternTopicsPersistentOnly(t *testing.T) {
	names := []string{
		"persistent://public/default/orders-partition-0",
		"persistent://public/default/orders-partition-1",
		"non-persistent://public/default/orders-live",
		"persistent://public/default/payments",
	}
	got := patternTopics(names, regexp.MustCompile("orders.*"))
	want := []string{"persistent://public/default/orders-partition-0", "persistent://public/default/orders-partition-1"}
	if !slices.Equal(got, want) {
		t.Errorf("patternTopics = %v, want %v", got, want)
	}
}
