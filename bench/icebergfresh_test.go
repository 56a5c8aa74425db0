package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

var (
	icebergFreshRate    = flag.Int("icebergfresh.rate", 50_000, "IcebergFreshness: the producer's records/s")
	icebergFreshSeconds = flag.Int("icebergfresh.seconds", 100, "IcebergFreshness: the seconds of records produced")
)

// BenchmarkIcebergFreshness measures how long a record takes from its
// producer to a scan of an Iceberg raw anchor's current snapshot, on the
// real broker with the real processes: a producer writes records of 100 B
// at a fixed rate (-icebergfresh.rate, 50,000 a second) for
// -icebergfresh.seconds (100) to a one-partition topic, and `thalweg run`
// (every default but the addresses: a commit a second, maintenance on,
// its first run a minute in) streams them into a table of a local SQL
// catalog (SQLite and a warehouse directory); a second run turns
// maintenance off (maintenance.enabled: false), to compare. An independent reader,
// pyiceberg (testdata/iceberg/poll_visible.py), loads the table every
// 50 ms and notes when the current snapshot's record count changed. One
// partition keeps the records in order, so a count of n says records 1..n
// are visible; a record's latency is the moment the reader had loaded the
// first snapshot holding it minus the moment the producer was handed it.
//
// Metrics: p50-ms, p99-ms and max-ms over the records after the first 5
// seconds, produced-rec/s (the rate the producer kept), the worker's CPU
// time per record (cpu-us/rec), and what maintenance did during the run
// (compacted-files, expired-snapshots, maintenance-failures, from the
// worker's metrics). The run fails unless pyiceberg's plan of the final
// snapshot lists exactly the records produced. Run with -benchtime=1x.
func BenchmarkIcebergFreshness(b *testing.B) {
	url, admin := testenv.PulsarURL(b)
	bins := e2eBuild(b)
	for _, maintenance := range []bool{true, false} {
		b.Run(fmt.Sprintf("rate=%d/maintenance=%t", *icebergFreshRate, maintenance), func(b *testing.B) {
			var lat []time.Duration
			var f icebergFresh
			for b.Loop() {
				f = icebergFreshRun(b, bins, url, admin, *icebergFreshRate, *icebergFreshSeconds, maintenance)
				lat = append(lat, f.lat...)
			}
			slices.Sort(lat)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
			b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
			b.ReportMetric(f.produced, "produced-rec/s")
			b.ReportMetric(f.cpuUs, "cpu-us/rec")
			for _, m := range icebergFreshCounters {
				b.ReportMetric(f.metrics[m.metric], m.name)
			}
		})
	}
}

// icebergFreshCounters are the worker's maintenance counters the benchmark
// reports.
var icebergFreshCounters = []struct{ name, metric string }{
	{"compacted-files", "thalweg_iceberg_compacted_files_total"},
	{"expired-snapshots", "thalweg_iceberg_snapshots_expired_total"},
	{"maintenance-failures", "thalweg_iceberg_maintenance_failures_total"},
}

// icebergFresh is one run's latencies (after the warm-up), the rate the
// producer kept, the worker's CPU time per record, and its maintenance
// counters at the end.
type icebergFresh struct {
	lat      []time.Duration
	produced float64
	cpuUs    float64
	metrics  map[string]float64
}

// icebergVisible is a line of poll_visible.py: the records of the current
// snapshot, from the moment at (Unix nanoseconds).
type icebergVisible struct{ at, n int64 }

func icebergFreshRun(b *testing.B, bins e2eBins, url, admin string, rate, seconds int, maintenance bool) icebergFresh {
	b.Helper()
	const warmup = 5 // seconds
	sh := e2eShape{payload: 100, records: rate * seconds, partitions: 1}
	topic := e2eTopic(b, admin, sh)
	defer e2eDeleteTopic(admin, topic)
	// Not b.TempDir(): the sub-benchmark's name ends up in the path, and a
	// warehouse location is a URL.
	dir, err := os.MkdirTemp("", "thalweg-icebergfresh-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	catalogDB, warehouse := filepath.Join(dir, "catalog.db"), filepath.Join(dir, "warehouse")
	const table = "bench.fresh"
	metricsAt := testenv.FreeAddr(b)
	cfg := fmt.Sprintf(`source:
  url: %q
  topics: [%q]
  subscription: {name: thalweg}
destinations:
  - {name: raw, kind: iceberg, role: raw_anchor, iceberg: {catalog: {uri: %q}, warehouse: %q, table: %q, maintenance: {enabled: %t}}}
store: {dir: %q}
metrics: {listen: %q}
`, url, topic, catalogDB, warehouse, table, maintenance, filepath.Join(dir, "offsets"), metricsAt)
	cfgPath := filepath.Join(dir, "fresh.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bins.thalweg, "run", "--config", cfgPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	testenv.WaitFor(b, 60*time.Second, "thalweg run to be ready", func() bool {
		resp, err := e2eHTTP.Get("http://" + metricsAt + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	// The reader, from before the first record.
	pj, err := json.Marshal(icebergpeer.SQLProps(catalogDB, warehouse))
	if err != nil {
		b.Fatal(err)
	}
	reader := exec.Command(testenv.Python(b), filepath.Join(testenv.RepoRoot(), "testdata", "iceberg", "poll_visible.py"), string(pj), table, "0.05")
	var readerErr bytes.Buffer
	reader.Stderr = &readerErr
	stdin, err := reader.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := reader.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := reader.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = reader.Process.Kill(); _ = reader.Wait() }()
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []icebergVisible
	readLine := func(timeout time.Duration) (string, bool) {
		select {
		case l, ok := <-lines:
			return l, ok
		case <-time.After(timeout):
			return "", false
		}
	}
	if l, ok := readLine(60 * time.Second); !ok || l == "" {
		b.Fatalf("poll_visible.py printed nothing in 60 s\n%s", readerErr.String())
	}

	c, err := pclient.NewClient(pclient.ClientOptions{URL: url, Logger: plog.DefaultNopLogger(), MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p, err := c.CreateProducer(pclient.ProducerOptions{Topic: topic, SendTimeout: -1, BatchingMaxPublishDelay: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	sent := make([]time.Time, sh.records+1)
	progress := make(chan int, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds)*time.Second+5*time.Minute)
	defer cancel()
	sending := make(chan struct{})
	go func() { defer close(sending); pacedSend(ctx, p, sh, rate, sent, progress) }()
	go func() { // the reader's counts say what is visible; progress is not needed
		for {
			select {
			case <-progress:
			case <-sending:
				return
			}
		}
	}()
	var cpu0 time.Duration
	for {
		l, ok := readLine(time.Until(deadlineOf(ctx)))
		if !ok {
			b.Fatalf("the reader saw %v records of %d (last lines %v)\n%s\n%s", lastOf(seen), sh.records, seen[max(0, len(seen)-3):],
				readerErr.String(), stderr.String())
		}
		var v icebergVisible
		if _, err := fmt.Sscan(l, &v.at, &v.n); err != nil {
			b.Fatalf("poll_visible.py: %q: %v", l, err)
		}
		seen = append(seen, v)
		if cpu0 == 0 && v.n >= int64(warmup*rate) {
			cpu0, _ = procCPU(b, cmd.Process.Pid)
		}
		if v.n >= int64(sh.records) {
			break
		}
	}
	cpu1, _ := procCPU(b, cmd.Process.Pid)
	<-sending
	if err := stdin.Close(); err != nil {
		b.Fatal(err)
	}
	var planned int64
	for l := range lines {
		if v, ok := strings.CutPrefix(l, "plan "); ok {
			planned, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if planned != int64(sh.records) {
		b.Fatalf("pyiceberg plans %d records in the final snapshot, want the %d produced\n%s", planned, sh.records, readerErr.String())
	}
	f := icebergFresh{metrics: icebergFreshMetrics(b, metricsAt)}
	j := 0
	for id := warmup*rate + 1; id <= sh.records; id++ {
		for seen[j].n < int64(id) {
			j++
		}
		f.lat = append(f.lat, time.Duration(seen[j].at-sent[id].UnixNano()))
	}
	f.produced = float64(sh.records-1) / sent[sh.records].Sub(sent[1]).Seconds()
	f.cpuUs = float64((cpu1 - cpu0).Microseconds()) / float64(len(f.lat))
	s := slices.Clone(f.lat)
	slices.Sort(s)
	// When the records that waited longest were produced, and when the
	// records slower than the p99 were, in seconds after the first one.
	p99 := s[len(s)*99/100]
	worst, slow := 0, map[int]int{}
	for k, d := range f.lat {
		id := warmup*rate + 1 + k
		if d > f.lat[worst] {
			worst = k
		}
		if d > p99 {
			slow[int(sent[id].Sub(sent[1]).Seconds())]++
		}
	}
	counters := map[string]float64{}
	for _, m := range icebergFreshCounters {
		counters[m.name] = f.metrics[m.metric]
	}
	b.Logf("%d records at %d rec/s (kept %.0f), maintenance %t: p50 %v, p99 %v, max %v (produced at %.1f s) over the %d after %d s; records slower than the p99 by the second they were produced: %v; %d snapshots seen by the reader; worker %.2f cpu-us/record; %v; load %s",
		sh.records, rate, f.produced, maintenance, s[len(s)/2].Round(time.Millisecond), p99.Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond),
		sent[warmup*rate+1+worst].Sub(sent[1]).Seconds(), len(s), warmup, slow, len(seen), f.cpuUs, counters, e2eLoad())
	return f
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

func lastOf(seen []icebergVisible) int64 {
	if len(seen) == 0 {
		return 0
	}
	return seen[len(seen)-1].n
}

// icebergFreshMetrics reads the worker's maintenance counters (summed
// over their labels).
func icebergFreshMetrics(b *testing.B, metricsAt string) map[string]float64 {
	b.Helper()
	resp, err := e2eHTTP.Get("http://" + metricsAt + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := map[string]float64{}
	for l := range strings.Lines(string(body)) {
		name, _, ok := strings.Cut(l, "{")
		if !ok || !strings.HasPrefix(name, "thalweg_iceberg_") {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(l[strings.LastIndexByte(l, ' ')+1:]), 64); err == nil {
			out[name] += v
		}
	}
	return out
}
