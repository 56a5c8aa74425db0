package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// The "not pipelining" alert of docs/operations.md, evaluated on a real
// worker's /metrics (the alert's 5-minute windows become the run, the
// pending gauge is sampled every 10ms): it must stay quiet on a healthy,
// lightly loaded worker — each batch is confirmed before the next one
// exists, so the median burst is 1 but the lane is idle between batches —
// and on a loaded, pipelining one, and fire on a lane that serialises
// (capacity 1 against a sink whose acks take 100ms) under load. The naive
// expression (oldAlert: median burst < 2 while traffic flows) fires on the
// healthy, lightly loaded worker, which is why the alert also asks for a
// busy lane (mean pending ≥ 0.75).
func TestNotPipeliningAlert(t *testing.T) {
	light := scrapeRun(t, receiver.Options{}, pipelineYAML{Partitions: 2, Rate: 300}, 2*time.Second)
	t.Logf("lightly loaded: %s", light)
	if light.coalesceP50() >= 2 {
		t.Fatalf("lightly loaded: median burst %.2f, want < 2 (the premise of the test)", light.coalesceP50())
	}
	if !light.oldAlert() {
		t.Error("lightly loaded: the old alert expression should fire here (that was the bug)")
	}
	if light.alert() {
		t.Errorf("lightly loaded: the not-pipelining alert fires on a healthy worker: %s", light)
	}
	// operations.md: a healthy worker exports its trouble counters at 0.
	for _, series := range []string{`thalweg_lane_retries_total\{destination="raw",`, `thalweg_lane_poisoned_total\{cause="ack_permanent",destination="raw",`,
		`thalweg_source_ack_errors_total\{`} {
		if !regexp.MustCompile(`(?m)^` + series + `[^}]*\} 0$`).MatchString(light.text) {
			t.Errorf("a healthy worker's /metrics has no %s...} 0 series", series)
		}
	}

	slow := receiver.Options{AckDelay: 50 * time.Millisecond}
	loaded := scrapeRun(t, slow, pipelineYAML{Partitions: 2}, 2*time.Second) // unbounded, as fast as it goes
	t.Logf("loaded, pipelining: %s", loaded)
	if loaded.alert() {
		t.Errorf("loaded, pipelining: the alert fires: %s", loaded)
	}

	slower := receiver.Options{AckDelay: 100 * time.Millisecond}
	serial := scrapeRun(t, slower, pipelineYAML{Partitions: 2, LaneCapacity: 1}, 2*time.Second)
	t.Logf("loaded, lane capacity 1: %s", serial)
	if !serial.alert() {
		t.Errorf("loaded, lane capacity 1: the alert stays quiet: %s", serial)
	}
}

// runMetrics is what one run's /metrics said at its end.
type runMetrics struct {
	buckets map[float64]float64 // raw lane's coalesce_ratio buckets: le → cumulative count
	flushes map[string]float64  // by reason
	text    string              // the last scrape
	// avgPending and maxPending are avg_over_time and max_over_time of the
	// raw lane's thalweg_lane_pending.
	avgPending, maxPending float64
}

// scrapeRun runs the worker on p against a receiver with ro (the only
// destination) for d, scraping /metrics, and stops it.
func scrapeRun(t *testing.T, ro receiver.Options, p pipelineYAML, d time.Duration) runMetrics {
	t.Helper()
	p.FlightAt = startFlight(t, ro)
	p.StoreDir = filepath.Join(t.TempDir(), "offsets")
	p.Metrics = "127.0.0.1:0"
	r := runInProcess(t, p.write(t))
	defer r.cancel()
	// Sample the pending gauge as Prometheus would, only more often, for
	// avg_over_time; the last scrape holds the counters and buckets.
	url := "http://" + r.addr + "/metrics"
	var pending []float64
	var text string
	sample := time.NewTicker(10 * time.Millisecond)
	defer sample.Stop()
	for end := time.Now().Add(d); time.Now().Before(end); <-sample.C {
		text = httpBody(t, url)
		if g := pendingGauge.FindStringSubmatch(text); g != nil {
			v, err := strconv.ParseFloat(g[1], 64)
			if err != nil {
				t.Fatalf("pending %q", g[0])
			}
			pending = append(pending, v)
		}
	}
	r.cancel()
	if code := <-r.done; code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, r.c.stderr.String())
	}
	m := parseRunMetrics(t, text)
	m.text = text
	for _, v := range pending {
		m.avgPending += v / float64(len(pending))
		m.maxPending = max(m.maxPending, v)
	}
	return m
}

var (
	coalesceBucket = regexp.MustCompile(`(?m)^thalweg_lane_coalesce_ratio_bucket\{destination="raw",[^}]*le="([^"]+)"\} (\S+)$`)
	pendingGauge   = regexp.MustCompile(`(?m)^thalweg_lane_pending\{destination="raw",[^}]*\} (\S+)$`)
	flushCounter   = regexp.MustCompile(`(?m)^thalweg_batch_flushes_total\{[^}]*reason="(\w+)"[^}]*\} (\S+)$`)
)

func parseRunMetrics(t *testing.T, text string) runMetrics {
	t.Helper()
	m := runMetrics{buckets: map[float64]float64{}, flushes: map[string]float64{}}
	for _, g := range coalesceBucket.FindAllStringSubmatch(text, -1) {
		le, err1 := strconv.ParseFloat(g[1], 64)
		n, err2 := strconv.ParseFloat(g[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bucket %q", g[0])
		}
		m.buckets[le] = n
	}
	for _, g := range flushCounter.FindAllStringSubmatch(text, -1) {
		n, err := strconv.ParseFloat(g[2], 64)
		if err != nil {
			t.Fatalf("counter %q", g[0])
		}
		m.flushes[g[1]] = n
	}
	if m.buckets[math.Inf(1)] == 0 || len(m.flushes) == 0 {
		t.Fatalf("no coalesce buckets or flushes in /metrics:\n%s", text)
	}
	return m
}

// coalesceP50 is histogram_quantile(0.5, ...) over the buckets.
func (m runMetrics) coalesceP50() float64 {
	les := make([]float64, 0, len(m.buckets))
	for le := range m.buckets {
		les = append(les, le)
	}
	sort.Float64s(les)
	rank := 0.5 * m.buckets[math.Inf(1)]
	lower, below := 0.0, 0.0
	for _, le := range les {
		n := m.buckets[le]
		if n >= rank {
			if math.IsInf(le, 1) {
				return lower
			}
			return lower + (le-lower)*(rank-below)/(n-below)
		}
		lower, below = le, n
	}
	return math.NaN()
}

// alert is the suggested alert of docs/operations.md: a median burst below
// 2 while the lane is busy most of the time (mean pending ≥ 0.75) and yet
// never has a second batch outstanding.
func (m runMetrics) alert() bool {
	return m.coalesceP50() < 2 && m.avgPending >= 0.75 && m.maxPending <= 1
}

// oldAlert is the naive expression, which the test shows wrong: median
// burst below 2 while confirmations happen at all.
func (m runMetrics) oldAlert() bool { return m.coalesceP50() < 2 && m.buckets[math.Inf(1)] > 0 }

func (m runMetrics) String() string {
	return fmt.Sprintf("median burst %.2f, pending mean %.2f max %.0f, flushes %v", m.coalesceP50(), m.avgPending, m.maxPending, m.flushes)
}

// bgRun is `thalweg run` in the background.
type bgRun struct {
	c      *cli
	addr   string // the metrics endpoint
	cancel context.CancelFunc
	done   chan int // the exit code
}

// runInProcess starts `thalweg run --config cfg` in-process and waits until it serves
// its metrics endpoint.
func runInProcess(t *testing.T, cfg string) *bgRun {
	t.Helper()
	r := &bgRun{c: &cli{}, done: make(chan int, 1)}
	var ctx context.Context
	ctx, r.cancel = context.WithCancel(flighttest.Ctx(t, 90*time.Second))
	go func() { r.done <- r.c.run(ctx, "run", "--config", cfg) }()
	testenv.WaitFor(t, 10*time.Second, "the metrics address in the log", func() bool {
		r.addr = logAttr(r.c.stderr.String(), "serving /metrics", "addr")
		return r.addr != ""
	})
	return r
}
