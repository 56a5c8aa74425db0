package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/pulsartest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/observability"
	"github.com/thalweg/thalweg/source/gen"
	zbserver "github.com/thalweg/thalweg/zerobus/server"
)

// produced returns, per partition, the last seq the generator of a
// pipelineYAML config (raw mode) produces: what the sinks must hold.
func produced(t *testing.T, records, partitions int) map[string]uint64 {
	t.Helper()
	g, err := gen.New(gen.Options{Seed: 7, Partitions: partitions, Records: uint64(records), PayloadSize: 64, Mode: gen.ModeRaw})
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]uint64{}
	var rec batch.Record
	for g.Next(&rec) {
		last[rec.Partition] = max(last[rec.Partition], rec.Seq)
	}
	if len(last) != partitions {
		t.Fatalf("generator used %d partitions, want %d", len(last), partitions)
	}
	return last
}

// TestRunToCompletion runs `thalweg run` on a bounded generator against a
// real Flight receiver and Zerobus server, then checks at the sinks that every
// record arrived, and that `thalweg offsets` reports the durable watermarks
// and resets them only when confirmed.
func TestRunToCompletion(t *testing.T) {
	const records, partitions = 12000, 3
	flightAt := startFlight(t, receiver.Options{})
	zbAt, zbDir := startZerobus(t, zbserver.Options{})
	storeDir := filepath.Join(t.TempDir(), "offsets")
	cfg := pipelineYAML{Records: records, Partitions: partitions, FlightAt: flightAt,
		ZerobusAt: zbAt, Table: "main.test.events", StoreDir: storeDir, Metrics: "127.0.0.1:0"}.write(t)

	var c cli
	// No deadline short of the test's: a cancelled run also exits 0, and the
	// point here is that the run ends because the source is exhausted.
	if code := c.run(t.Context(), "run", "--config", cfg); code != exitOK {
		t.Fatalf("run: exit %d; stderr:\n%s", code, c.stderr.String())
	}
	logs := c.stderr.String()
	for _, msg := range []string{"pipeline started", "serving /metrics", "pipeline stopped cleanly"} {
		if logAttr(logs, msg, "level") == "" {
			t.Errorf("no %q log line in:\n%s", msg, logs)
		}
	}

	want := produced(t, records, partitions)
	rep := checkFlight(t, flightAt, "raw", want, nil)
	if rep.Expected != records || rep.Distinct != records {
		t.Errorf("flight receiver: %s, want %d distinct records", rep, records)
	}
	zt, err := zerobusTally(zbDir, "main.test.events")
	if err != nil {
		t.Fatal(err)
	}
	if zrep := zt.Check(want, nil); !zrep.OK() || zrep.Distinct != records {
		t.Errorf("zerobus server: %s", zrep)
	}

	// The durable positions: delivered for the anchor, coverage for the
	// secondary, both at the last produced seq of every partition.
	delivered, _ := durable(t, storeDir, "raw")
	_, coverage := durable(t, storeDir, "zb")
	for p, last := range want {
		if delivered[p] != last {
			t.Errorf("raw delivered[%s] = %d, want %d", p, delivered[p], last)
		}
		if coverage[p] != last {
			t.Errorf("zb coverage[%s] = %d, want %d", p, coverage[p], last)
		}
	}

	// thalweg offsets prints one row per (destination, partition).
	code, stdout, stderr := runCLI(t, "offsets", "--store", storeDir)
	if code != exitOK {
		t.Fatalf("offsets: exit %d: %s", code, stderr)
	}
	rows := offsetRows(t, stdout)
	for p, last := range want {
		if got := rows["raw/"+p]; got[0] != strconv.FormatUint(last, 10) {
			t.Errorf("offsets raw/%s: delivered %q, want %d\n%s", p, got[0], last, stdout)
		}
		if got := rows["zb/"+p]; got[0] != "-" || got[1] != strconv.FormatUint(last, 10) || got[2] != "0" {
			t.Errorf("offsets zb/%s: delivered/coverage/lag %q, want -/%d/0\n%s", p, got, last, stdout)
		}
	}
	if len(rows) != 2*partitions {
		t.Errorf("offsets printed %d rows, want %d:\n%s", len(rows), 2*partitions, stdout)
	}

	// A reset needs --yes, and changes nothing without it.
	code, stdout, stderr = runCLI(t, "offsets", "--store", storeDir, "--reset", "raw")
	if code != exitUsage || !strings.Contains(stderr, "--yes") || stdout != "" {
		t.Errorf("reset without --yes: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if d, _ := durable(t, storeDir, "raw"); len(d) != partitions {
		t.Errorf("reset without --yes changed the store: %v", d)
	}
	// One partition, then the whole destination.
	code, stdout, stderr = runCLI(t, "offsets", "--store", storeDir, "--reset", "raw", "--partition", gen.PartitionName(1), "--yes")
	if code != exitOK || !strings.HasPrefix(stdout, "reset raw\n") {
		t.Fatalf("reset --partition gen-1: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	rows = offsetRows(t, stdout)
	if _, ok := rows["raw/gen-1"]; ok || rows["raw/gen-0"][0] != strconv.FormatUint(want[gen.PartitionName(0)], 10) {
		t.Errorf("after resetting raw/1:\n%s", stdout)
	}
	code, stdout, _ = runCLI(t, "offsets", "--store", storeDir, "--reset", "raw", "--yes")
	if code != exitOK {
		t.Fatalf("reset: exit %d", code)
	}
	for k := range offsetRows(t, stdout) {
		if strings.HasPrefix(k, "raw/") {
			t.Errorf("after reset raw still has row %s:\n%s", k, stdout)
		}
	}
	if d, _ := durable(t, storeDir, "raw"); len(d) != 0 {
		t.Errorf("raw delivered after reset: %v", d)
	}
	if _, c := durable(t, storeDir, "zb"); len(c) != partitions {
		t.Errorf("resetting raw touched zb: %v", c)
	}
}

// offsetRows parses `thalweg offsets` output into "dest/partition" →
// [delivered, coverage, lag].
func offsetRows(t *testing.T, out string) map[string][3]string {
	t.Helper()
	rows := map[string][3]string{}
	header := false
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "DESTINATION" {
			header = true
			continue
		}
		if !header || len(f) == 0 || f[0] == "(empty)" {
			continue
		}
		// DESTINATION PARTITION DELIVERED COVERAGE LAG
		if len(f) < 5 {
			t.Fatalf("offsets row %q", line)
		}
		n := len(f)
		rows[f[0]+"/"+f[1]] = [3]string{f[n-3], f[n-2], f[n-1]}
	}
	if !header {
		t.Fatalf("offsets output has no header:\n%s", out)
	}
	return rows
}

// TestRunEndpoints runs an unbounded, rate-limited JSON pipeline whose
// Zerobus stream is dropped once, and checks the HTTP endpoints while it runs:
// /healthz and /readyz answer 200, /metrics serves every instrument of the
// catalogue under its Prometheus name (the drop shows up as a poisoning by
// cause), and cancelling the context stops the pipeline cleanly (exit 0).
func TestRunEndpoints(t *testing.T) {
	flightAt := startFlight(t, receiver.Options{})
	zbAt, _ := startZerobus(t, zbserver.Options{DropStreamAfter: 200, DropStreams: 1})
	storeDir := filepath.Join(t.TempDir(), "offsets")
	// Every counter series exists from the start (at zero), so /metrics must
	// serve every instrument of the catalogue, not just those this run moves.
	cfg := pipelineYAML{Partitions: 2, Rate: 500, JSON: true, Malformed: 0.01, FlightAt: flightAt,
		ZerobusAt: zbAt, Table: "main.test.events", StoreDir: storeDir, Metrics: "127.0.0.1:0"}.write(t)

	r := runInProcess(t, cfg)
	defer r.cancel()
	c, cancel, done, addr := r.c, r.cancel, r.done, r.addr
	base := "http://" + addr
	testenv.WaitFor(t, 10*time.Second, "/readyz 200", func() bool { return httpStatus(t, base+"/readyz") == http.StatusOK })
	if s := httpStatus(t, base+"/healthz"); s != http.StatusOK {
		t.Errorf("/healthz: %d", s)
	}

	// Wait until the dropped stream was rebuilt and the lane is ready again.
	poisoned := regexp.MustCompile(`(?m)^thalweg_lane_poisoned_total\{cause="\w+",destination="zb"[^}]*\} [1-9]`)
	var text string
	dlq := regexp.MustCompile(`(?m)^thalweg_dlq_records_total\{[^}]*reason="\w+"`)
	testenv.WaitFor(t, 20*time.Second, "the zerobus lane's poisoning and a dead letter in /metrics", func() bool {
		text = httpBody(t, base+"/metrics")
		return poisoned.MatchString(text) && dlq.MatchString(text)
	})
	t.Logf("%s", poisoned.FindString(text))
	testenv.WaitFor(t, 10*time.Second, "/readyz 200 after the rebuild", func() bool { return httpStatus(t, base+"/readyz") == http.StatusOK })
	text = httpBody(t, base+"/metrics")

	for _, in := range observability.Instruments() {
		if in.Owner == observability.OwnerIceberg || in.Owner == observability.OwnerPulsar {
			// Created only for a kind iceberg destination and by a Pulsar
			// source, which this run (a generator into Flight and Zerobus)
			// has none of; internal/instruments checks their names.
			continue
		}
		family := "# TYPE " + in.Prometheus + " "
		if !strings.Contains(text, family) {
			t.Errorf("/metrics lacks %s (instrument %s)", in.Prometheus, in.Name)
		}
		if strings.Contains(text, in.Name+"{") || strings.Contains(text, in.Name+" ") {
			t.Errorf("/metrics exposes the dotted name %s", in.Name)
		}
	}
	// One series per lane for the lane instruments, and the dead letters by reason.
	for _, dest := range []string{"raw", "zb"} {
		for _, fam := range []string{"thalweg_lane_pending", "thalweg_lane_saturation_ratio", "thalweg_lane_delivered_offset",
			"thalweg_lane_delivery_latency_seconds_bucket", "thalweg_lane_coalesce_ratio_count"} {
			if !strings.Contains(text, fam+`{destination="`+dest+`"`) {
				t.Errorf("/metrics has no %s series for destination %s", fam, dest)
			}
		}
	}
	if !strings.Contains(text, "go_goroutines") {
		t.Error("/metrics lacks the Go runtime collector")
	}
	buildInfo := regexp.MustCompile(`(?m)^thalweg_build_info\{go_version="go[^"]+",.*revision="[^"]+",version="dev"\} 1$`)
	if !buildInfo.MatchString(text) {
		t.Errorf("/metrics lacks thalweg_build_info{go_version,revision,version=\"dev\"} 1:\n%s",
			regexp.MustCompile(`(?m)^thalweg_build_info.*$`).FindAllString(text, -1))
	}

	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("run after cancel: exit %d; stderr:\n%s", code, c.stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("run did not return within the drain timeout after cancel\n%s", stacks())
	}
	if logAttr(c.stderr.String(), "pipeline stopped cleanly", "level") == "" {
		t.Errorf("no clean-stop log line:\n%s", c.stderr.String())
	}
	// The endpoint is gone with the worker.
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("the metrics endpoint still accepts connections after run returned")
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func httpStatus(t *testing.T, url string) int {
	s, _ := httpGet(t, url)
	return s
}

func httpBody(t *testing.T, url string) string {
	s, body := httpGet(t, url)
	if s != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, s, body)
	}
	return body
}

// serveCommand runs a server command until cancelled and checks that it
// listens, answers on its port, and exits 0 once the context is cancelled.
func serveCommand(t *testing.T, args ...string) {
	t.Helper()
	var c cli
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- c.run(ctx, args...) }()
	listening := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)
	var addr string
	testenv.WaitFor(t, 10*time.Second, args[0]+" to listen", func() bool {
		if m := listening.FindStringSubmatch(c.stderr.String()); m != nil {
			addr = m[1]
		}
		select {
		case code := <-done:
			t.Fatalf("%s returned %d before cancel: %s", args[0], code, c.stderr.String())
		default:
		}
		return addr != ""
	})
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("%s does not accept connections: %v", args[0], err)
	}
	conn.Close()
	// Still serving a while later: it only stops on cancellation.
	select {
	case code := <-done:
		t.Fatalf("%s returned %d without cancel", args[0], code)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("%s after cancel: exit %d: %s", args[0], code, c.stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not stop after cancel", args[0])
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Errorf("%s still accepts connections after it returned", args[0])
	}
}

func TestReceiveServesUntilCancelled(t *testing.T) {
	serveCommand(t, "receive", "--listen", "127.0.0.1:0", "--dir", t.TempDir())
}

func TestZerobusServerServesUntilCancelled(t *testing.T) {
	serveCommand(t, "zerobus-server", "--listen", "127.0.0.1:0", "--dir", t.TempDir())
}

// The bundled receiver is a real sink: `thalweg run` delivers into a
// `thalweg receive` started from the CLI, with a bearer token from the
// environment on both sides.
func TestRunIntoReceiveCommand(t *testing.T) {
	dir := t.TempDir()
	recv := cli{env: map[string]string{"RECV_TOKEN": "t0ken"}}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- recv.run(ctx, "receive", "--listen", "127.0.0.1:0", "--dir", dir, "--token-env", "RECV_TOKEN")
	}()
	listening := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)
	var addr string
	testenv.WaitFor(t, 10*time.Second, "receive to listen", func() bool {
		if m := listening.FindStringSubmatch(recv.stderr.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})

	const records, partitions = 5000, 2
	path := pipelineYAML{Records: records, Partitions: partitions, FlightAt: addr,
		StoreDir: filepath.Join(t.TempDir(), "offsets")}.write(t)
	withToken := readFile(t, path)
	withToken = strings.Replace(withToken, "    role: raw_anchor\n", "    role: raw_anchor\n    token_env: RUN_TOKEN\n", 1)
	path = writeConfig(t, withToken)

	// Without the token variable the worker refuses to start: a config error.
	var bad cli
	if code := bad.run(t.Context(), "run", "--config", path); code != exitUsage {
		t.Errorf("run without RUN_TOKEN: exit %d, want %d: %s", code, exitUsage, bad.stderr.String())
	}
	if !strings.Contains(bad.stderr.String(), "RUN_TOKEN") {
		t.Errorf("the error does not name RUN_TOKEN: %s", bad.stderr.String())
	}

	run := cli{env: map[string]string{"RUN_TOKEN": "t0ken"}}
	if code := run.run(t.Context(), "run", "--config", path); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, run.stderr.String())
	}
	if strings.Contains(run.stderr.String(), "t0ken") {
		t.Error("the worker logged the token")
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("receive: exit %d: %s", code, recv.stderr.String())
	}

	// Read the data back through a fresh receiver on the same directory.
	rep := checkFlight(t, startFlight(t, receiver.Options{Dir: dir}), "raw", produced(t, records, partitions), nil)
	if rep.Distinct != records {
		t.Errorf("receiver holds %s", rep)
	}
}

// The embedded demo runs the whole pipeline and verifies it at the sinks.
func TestDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := runCLI(t, "demo", "--records", "20000", "--partitions", "3", "--dir", dir)
	if code != exitOK {
		t.Fatalf("demo: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"== thalweg demo summary",
		"source:    20000 records",
		"verify flight receiver (raw anchor): expected",
		"missing 0",
		"\nOK: every produced record is stored at the raw anchor",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
	// The JSON mode dead-letters malformed records and the check skips
	// exactly those: expected = produced - dead letters.
	m := regexp.MustCompile(`(\d+) rejected to the dead-letter path`).FindStringSubmatch(stdout)
	e := regexp.MustCompile(`raw anchor\): expected (\d+), present (\d+)`).FindStringSubmatch(stdout)
	if m == nil || e == nil {
		t.Fatalf("demo summary not parseable:\n%s", stdout)
	}
	rejected, _ := strconv.Atoi(m[1])
	expected, _ := strconv.Atoi(e[1])
	present, _ := strconv.Atoi(e[2])
	if rejected == 0 || expected != 20000-rejected || present != expected {
		t.Errorf("rejected %d, expected %d, present %d", rejected, expected, present)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// zerobusTally counts the (partition, seq) of every row the Zerobus server
// stored for table; rows of the raw schema carry them as "partition"/"seq".
func zerobusTally(dir, table string) (*audit.Tally, error) {
	lines, err := zbserver.ReadTable(dir, table)
	if err != nil {
		return nil, err
	}
	t := audit.NewTally()
	for i, l := range lines {
		var row struct {
			T *string `json:"topic"`
			P *int32  `json:"partition"`
			S *uint64 `json:"seq"`
		}
		if err := json.Unmarshal(l, &row); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		if row.T == nil || row.P == nil || row.S == nil {
			return nil, fmt.Errorf("row %d has no topic/partition/seq: %s", i, l)
		}
		t.Add(batch.JoinPartition(*row.T, *row.P), *row.S)
	}
	return t, nil
}

// While the anchor lane cannot connect the worker is alive (/healthz 200)
// but not ready (/readyz 503 naming the lane); once the receiver comes up
// the lane connects, the worker becomes ready and delivers.
func TestReadyzFollowsTheLanes(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	flightAt := lis.Addr().String()
	lis.Close() // nothing listens here yet

	storeDir := filepath.Join(t.TempDir(), "offsets")
	cfg := pipelineYAML{Partitions: 1, Rate: 1000, FlightAt: flightAt, StoreDir: storeDir,
		Drain: 5 * time.Second, Metrics: "127.0.0.1:0"}.write(t)
	var c cli
	ctx, cancel := context.WithCancel(flighttest.Ctx(t, 90*time.Second))
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- c.run(ctx, "run", "--config", cfg) }()
	var addr string
	testenv.WaitFor(t, 10*time.Second, "the metrics address in the log", func() bool {
		addr = logAttr(c.stderr.String(), "serving /metrics", "addr")
		return addr != ""
	})
	base := "http://" + addr
	testenv.WaitFor(t, 10*time.Second, "the lane failing on the unreachable anchor", func() bool {
		return strings.Contains(c.stderr.String(), `"msg":"lane failing"`)
	})
	var (
		status int
		body   string
	)
	// Past start-up the source may still be starting ("source not
	// running") when the lane first fails; what must come is the lane.
	testenv.WaitFor(t, 10*time.Second, "/readyz 503 naming lane raw", func() bool {
		status, body = httpGet(t, base+"/readyz")
		if status == http.StatusOK {
			t.Fatalf("/readyz 200 %q with an unreachable anchor", body)
		}
		return status == http.StatusServiceUnavailable && strings.Contains(body, "raw")
	})
	if s := httpStatus(t, base+"/healthz"); s != http.StatusOK {
		t.Errorf("/healthz: %d", s)
	}

	// The receiver comes up on the configured address.
	srv, err := receiver.New(receiver.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	lis, err = net.Listen("tcp", flightAt)
	if err != nil {
		_ = srv.Stop()
		t.Fatalf("re-listening on %s: %v", flightAt, err)
	}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(lis) }()
	defer func() { _ = srv.Stop(); <-served }()

	testenv.WaitFor(t, 15*time.Second, "/readyz 200 once the receiver is up", func() bool {
		return httpStatus(t, base+"/readyz") == http.StatusOK
	})
	testenv.WaitFor(t, 10*time.Second, "a delivered offset", func() bool {
		return regexp.MustCompile(`(?m)^thalweg_lane_delivered_offset\{destination="raw"[^}]*\} [1-9]`).MatchString(httpBody(t, base+"/metrics"))
	})
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d after cancel; stderr:\n%s", code, c.stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("run did not stop after cancel\n%s", stacks())
	}
	delivered, _ := durable(t, storeDir, "raw")
	if len(delivered) != 1 {
		t.Fatalf("delivered %v", delivered)
	}
}

// A metrics address already in use fails the start cleanly: exit 1, the
// address named, and nothing left running (TestMain checks for leaks).
func TestRunMetricsAddressInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	flightAt := startFlight(t, receiver.Options{})
	cfg := pipelineYAML{Records: 100, Partitions: 1, FlightAt: flightAt, StoreDir: filepath.Join(t.TempDir(), "offsets"),
		Metrics: busy.Addr().String()}.write(t)
	code, _, stderr := runCLI(t, "run", "--config", cfg)
	if code != exitFail {
		t.Errorf("exit %d, want %d", code, exitFail)
	}
	if !strings.Contains(stderr, "metrics.listen "+busy.Addr().String()) {
		t.Errorf("stderr does not name metrics.listen:\n%s", stderr)
	}
}

// demo --pulsar runs twice on the one topic its --topic names: each run
// reads exactly its own records, and neither leaves a subscription (nor a
// second topic) behind.
func TestDemoPulsarReusesItsTopic(t *testing.T) {
	url, adminURL := testenv.PulsarURL(t)
	admin := pulsartest.Admin{URL: adminURL}
	topic := fmt.Sprintf("demo-reuse-%d", time.Now().UnixNano())
	for run := 1; run <= 2; run++ {
		dir := filepath.Join(t.TempDir(), "demo")
		code, stdout, stderr := runCLI(t, "demo", "--pulsar", url, "--pulsar-admin", adminURL, "--topic", topic, "--records", "300", "--mode", "raw", "--dir", dir)
		if code != exitOK || !strings.Contains(stdout, "missing 0") || !strings.Contains(stdout, "expected 300, present 300") {
			t.Fatalf("run %d: exit %d\nstdout:\n%s\nstderr:\n%s", run, code, stdout, stderr)
		}
		subs := admin.Subscriptions(t, topic)
		if len(subs) != 0 {
			t.Fatalf("run %d left subscriptions %v on %s", run, subs, topic)
		}
	}
	topics := admin.Topics(t, "public/default")
	n := 0
	for _, tp := range topics {
		if strings.Contains(tp, topic) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("two runs made %d topics named after %s, want the one: %v", n, topic, topics)
	}
}
