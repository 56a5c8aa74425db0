package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	zbserver "github.com/thalweg/thalweg/zerobus/server"
)

// inProcessRun is a `thalweg run` started in-process on a config file.
type inProcessRun struct {
	c      cli
	cancel context.CancelFunc
	done   chan int
}

// startInProcess starts `thalweg run --config path` in-process and waits
// for its metrics endpoint (the config must set metrics.listen).
func startInProcess(t *testing.T, path string) (*inProcessRun, string) {
	t.Helper()
	r := &inProcessRun{done: make(chan int, 1)}
	ctx, cancel := context.WithCancel(flighttest.Ctx(t, 2*time.Minute))
	r.cancel = cancel
	go func() { r.done <- r.c.run(ctx, "run", "--config", path) }()
	t.Cleanup(func() { _ = r.stop(t) })
	var addr string
	testenv.WaitFor(t, 15*time.Second, "the metrics address in the log", func() bool {
		select {
		case code := <-r.done:
			r.done <- code
			t.Fatalf("run exited %d early:\n%s", code, r.c.stderr.String())
		default:
		}
		addr = logAttr(r.c.stderr.String(), "serving /metrics", "addr")
		return addr != ""
	})
	return r, "http://" + addr
}

// stop cancels the run (a SIGINT) and returns its exit code.
func (r *inProcessRun) stop(t *testing.T) int {
	t.Helper()
	r.cancel()
	select {
	case code := <-r.done:
		r.done <- code
		return code
	case <-time.After(20 * time.Second):
		t.Fatalf("run did not stop after cancel\n%s", stacks())
		return -1
	}
}

// metrics.pprof: true serves the runtime profiles on the metrics listener;
// by default (false) they are not there.
func TestRunPprof(t *testing.T) {
	flightAt := startFlight(t, receiver.Options{})
	for _, on := range []bool{false, true} {
		cfg := pipelineYAML{Partitions: 1, Rate: 200, FlightAt: flightAt, StoreDir: filepath.Join(t.TempDir(), "offsets"),
			Metrics: "127.0.0.1:0"}.write(t)
		if on {
			cfg = writeConfig(t, strings.Replace(readFile(t, cfg), "metrics:\n", "metrics:\n  pprof: true\n", 1))
		}
		r, base := startInProcess(t, cfg)
		idx, idxBody := httpGet(t, base+"/debug/pprof/")
		gor, gorBody := httpGet(t, base+"/debug/pprof/goroutine?debug=1")
		if on {
			if idx != http.StatusOK || !strings.Contains(idxBody, "goroutine") {
				t.Errorf("pprof on: /debug/pprof/ = %d %.200q", idx, idxBody)
			}
			if gor != http.StatusOK || !strings.Contains(gorBody, "goroutine profile:") {
				t.Errorf("pprof on: /debug/pprof/goroutine = %d %.200q", gor, gorBody)
			}
			if logAttr(r.c.stderr.String(), "/debug/pprof/", "addr") == "" {
				t.Errorf("the serving line does not list /debug/pprof/:\n%s", r.c.stderr.String())
			}
		} else if idx != http.StatusNotFound || gor != http.StatusNotFound {
			t.Errorf("pprof off (default): /debug/pprof/ = %d, goroutine = %d, want 404", idx, gor)
		}
		if s := httpStatus(t, base+"/metrics"); s != http.StatusOK {
			t.Errorf("/metrics: %d", s)
		}
		if code := r.stop(t); code != exitOK {
			t.Fatalf("exit %d:\n%s", code, r.c.stderr.String())
		}
	}
}

// produceIDs publishes {"id":i} for i in [from, to] to topic.
func produceIDs(ctx context.Context, t *testing.T, url, topic string, from, to int) {
	t.Helper()
	c, err := pclient.NewClient(pclient.ClientOptions{URL: url, Logger: plog.DefaultNopLogger(),
		MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.CreateProducer(pclient.ProducerOptions{Topic: topic, SendTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := from; i <= to; i++ {
		if _, err := p.Send(ctx, &pclient.ProducerMessage{Payload: []byte(`{"id":` + strconv.Itoa(i) + `}`)}); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
}

// pulsarRunYAML is a run config consuming topic with subscription sub
// into the Flight receiver at flightAt, dataset [path]; extra is added
// under source:.
func pulsarRunYAML(t *testing.T, url, topic, sub, extra, flightAt, path string) string {
	t.Helper()
	return writeConfig(t, fmt.Sprintf(`source:
  url: %s
  topics: [%s]
  subscription: {name: %s}
%sbatching: {max_rows: 100, linger: 20ms}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "%s", path: [%s]}
store: {dir: %s}
shutdown: {drain_timeout: 10s}
metrics: {listen: "127.0.0.1:0"}
log: {level: debug, format: json}
`, url, topic, sub, extra, flightAt, path, filepath.Join(t.TempDir(), "offsets")))
}

// metricSum sums the samples of family in a Prometheus exposition.
func metricSum(text, family string) float64 {
	var sum float64
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, family+"{") && !strings.HasPrefix(line, family+" ") {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// source.start on the real broker: a new subscription with start: latest
// skips the backlog the topic already holds and takes only what is
// published after it subscribed; with the default (earliest) a new
// subscription takes the backlog too. The JSON log lines of both runs,
// the Pulsar source's included, never repeat a key.
func TestPulsarStartPosition(t *testing.T) {
	url, _ := testenv.PulsarURL(t)
	ctx := flighttest.Ctx(t, 2*time.Minute)
	topic := fmt.Sprintf("thalweg-cmd-start-%d", time.Now().UnixNano())
	const backlog, later = 40, 20
	produceIDs(ctx, t, url, topic, 1, backlog)
	flightAt := startFlight(t, receiver.Options{})

	for _, tc := range []struct {
		name, extra string
		want        int // records the run must take
	}{
		{"latest", "  start: latest\n", later},
		{"earliest", "", backlog + later},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, base := startInProcess(t, pulsarRunYAML(t, url, topic, "sub-"+tc.name, tc.extra, flightAt, tc.name))
			testenv.WaitFor(t, 20*time.Second, "/readyz 200 (subscribed)", func() bool { return httpStatus(t, base+"/readyz") == http.StatusOK })
			if tc.name == "latest" {
				produceIDs(ctx, t, url, topic, backlog+1, backlog+later)
			}
			testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("%d records acknowledged upstream", tc.want), func() bool {
				return metricSum(httpBody(t, base+"/metrics"), "thalweg_source_acked_total") >= float64(tc.want)
			})
			// The topic delivers in order: once its last record is at the
			// sink, so is any earlier one the subscription took.
			testenv.WaitFor(t, 30*time.Second, "the topic's last record at the sink", func() bool {
				tally, err := readFlight(flightAt, []string{tc.name}, true)
				return err == nil && tally.Count(audit.PayloadPartition, backlog+later) > 0
			})
			if code := r.stop(t); code != exitOK {
				t.Fatalf("exit %d:\n%s", code, r.c.stderr.String())
			}
			tally, err := readFlight(flightAt, []string{tc.name}, true)
			if err != nil {
				t.Fatal(err)
			}
			first := backlog + later - tc.want + 1
			for id := 1; id <= backlog+later; id++ {
				n := tally.Count(audit.PayloadPartition, uint64(id))
				if id < first && n != 0 {
					t.Errorf("start %s: backlog record %d reached the sink", tc.name, id)
				}
				if id >= first && n == 0 {
					t.Errorf("start %s: record %d is missing", tc.name, id)
				}
			}
			if checkLogKeys(t, r.c.stderr.String()) == 0 || !strings.Contains(r.c.stderr.String(), `"component":"source/pulsar"`) {
				t.Errorf("no JSON log line of the Pulsar source:\n%s", r.c.stderr.String())
			}
		})
	}
}

// logLines returns the JSON log lines of logs whose msg starts with msg.
func logLines(t *testing.T, logs, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(logs, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		if s, _ := m["msg"].(string); strings.HasPrefix(s, msg) {
			out = append(out, m)
		}
	}
	return out
}

// `thalweg run` with stderr not a terminal logs a one-line stats summary
// every log.stats_interval, and at exit a summary of the whole run: read,
// dead-lettered, acknowledged upstream, and per destination delivered,
// duplicates and retries. A run that dead-letters records says so.
func TestRunStatsAndSummary(t *testing.T) {
	const records = 6000
	flightAt := startFlight(t, receiver.Options{})
	zbAt, _ := startZerobus(t, zbserver.Options{DropStreamAfter: 1500, DropStreams: 1})
	cfg := pipelineYAML{Records: records, Partitions: 2, Rate: 20000, JSON: true, Malformed: 0.02, FlightAt: flightAt,
		ZerobusAt: zbAt, Table: "main.test.events", StoreDir: filepath.Join(t.TempDir(), "offsets")}.write(t)
	cfg = writeConfig(t, strings.Replace(readFile(t, cfg), "log:\n", "log:\n  stats_interval: 100ms\n", 1))
	var c cli
	if code := c.run(t.Context(), "run", "--config", cfg); code != exitOK {
		t.Fatalf("run: exit %d; stderr:\n%s", code, c.stderr.String())
	}
	logs := c.stderr.String()
	stats := logLines(t, logs, "stats")
	if len(stats) < 2 {
		t.Errorf("%d stats lines in a run of ~0.3s with stats_interval 100ms:\n%s", len(stats), logs)
	}
	for _, st := range stats {
		for _, k := range []string{"read", "dead_lettered", "acked", "rec_per_s", "destinations"} {
			if _, ok := st[k]; !ok {
				t.Errorf("stats line lacks %q: %v", k, st)
			}
		}
		if d, _ := st["destinations"].(map[string]any); d["raw"] == nil || d["zb"] == nil {
			t.Errorf("stats line lacks a destination: %v", st)
		}
	}
	sum := logLines(t, logs, "run summary")
	if len(sum) != 1 {
		t.Fatalf("%d run summary lines:\n%s", len(sum), logs)
	}
	s := sum[0]
	dead := s["dead_lettered"].(float64)
	if s["read"].(float64) != records || dead == 0 || s["acked"].(float64) != records {
		t.Errorf("summary read %v dead_lettered %v acked %v, want %d read and acked, some dead-lettered", s["read"], dead, s["acked"], records)
	}
	if s["level"] != "WARN" || !strings.Contains(s["msg"].(string), fmt.Sprintf("%d records were dead-lettered", int(dead))) {
		t.Errorf("the summary of a run that dead-lettered %v records does not say so: %v", dead, s)
	}
	for _, dest := range []string{"raw", "zb"} {
		d, _ := s["destinations"].(map[string]any)[dest].(map[string]any)
		for _, k := range []string{"delivered", "replayed", "retries", "drain_timeouts"} {
			if _, ok := d[k]; !ok {
				t.Errorf("summary %s lacks %s: %v", dest, k, d)
			}
		}
		if d["delivered"] != float64(records)-dead {
			t.Errorf("summary %s delivered %v, want %v (records - dead letters)", dest, d["delivered"], float64(records)-dead)
		}
	}
	if zb := s["destinations"].(map[string]any)["zb"].(map[string]any); zb["replayed"].(float64) == 0 {
		t.Errorf("the zerobus stream was dropped once, yet no replayed rows are counted as possible duplicates: %v", zb)
	}
}
