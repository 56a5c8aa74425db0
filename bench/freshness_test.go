package bench_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// BenchmarkFreshness measures how long a record takes from its producer to
// the raw anchor, durable, on the real broker with the real processes: a
// producer writes records of 100 B at a fixed rate to a one-partition
// topic, `thalweg run` (every default but the addresses) streams them into
// a `thalweg receive` process, and a reader asks the receiver for its
// durable record count every 2 ms. One partition keeps the records in
// order, so a count of n says records 1..n are durable; a record's latency
// is the first poll that saw it minus the moment the producer was handed
// it (its send call; the producer batches for at most 1 ms).
//
// Each rate runs the worker twice in one invocation, order A B B A over
// two iterations: "idle" at the defaults (a batch is sent at once while
// the anchor has nothing in flight) and "linger" with
// batching.linger_when_idle (every batch waits for max_rows, max_bytes or
// the 100 ms linger). Metrics per mode: p50-ms, p99-ms and max-ms over the
// records of the runs after their first second, and the worker's CPU time
// per record over them (cpu-us/rec, the median of the runs). Run with
// -benchtime=2x.
func BenchmarkFreshness(b *testing.B) {
	url, admin := testenv.PulsarURL(b)
	bins := e2eBuild(b)
	for _, rate := range []int{5_000, 50_000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			dir := b.TempDir()
			recv := e2eReceiver(b, bins, dir)
			lat := map[string][]time.Duration{}
			cpu := map[string][]float64{}
			for i := 0; b.Loop(); i++ {
				modes := []string{"idle", "linger", "linger", "idle"}[2*(i%2) : 2*(i%2)+2]
				for _, mode := range modes {
					name := fmt.Sprintf("%s-%d", mode, i)
					f := freshnessRun(b, bins, url, admin, recv, dir, name, mode == "linger", rate)
					lat[mode] = append(lat[mode], f.lat...)
					cpu[mode] = append(cpu[mode], f.cpuUs)
				}
			}
			for _, mode := range []string{"idle", "linger"} {
				l := lat[mode]
				if len(l) == 0 {
					continue
				}
				slices.Sort(l)
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
				b.ReportMetric(ms(l[len(l)/2]), mode+"-p50-ms")
				b.ReportMetric(ms(l[len(l)*99/100]), mode+"-p99-ms")
				b.ReportMetric(ms(l[len(l)-1]), mode+"-max-ms")
				b.ReportMetric(median(cpu[mode]), mode+"-cpu-us/rec")
			}
		})
	}
}

// freshnessRun runs the worker into the receiver's dataset name while a
// producer writes 6 s of records at rate, and returns the latencies of the
// records after the first second.
func freshnessRun(b *testing.B, bins e2eBins, url, admin string, recv *e2eRecv, dir, name string, lingerWhenIdle bool, rate int) freshness {
	b.Helper()
	const seconds, warmup = 6, 1
	sh := e2eShape{payload: 100, records: rate * seconds, partitions: 1}
	topic := e2eTopic(b, admin, sh)
	defer e2eDeleteTopic(admin, topic)
	metricsAt := testenv.FreeAddr(b)
	cfg := fmt.Sprintf(`source:
  url: %q
  topics: [%q]
  subscription: {name: thalweg}
batching: {linger_when_idle: %t}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: %q, path: [%q]}
store: {dir: %q}
metrics: {listen: %q}
`, url, topic, lingerWhenIdle, recv.addr, name, filepath.Join(dir, name+"-offsets"), metricsAt)
	cfgPath := filepath.Join(dir, name+".yaml")
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
	// Ready: subscribed, with the anchor connected.
	ready := false
	defer func() {
		if !ready {
			b.Logf("thalweg run:\n%s", stderr.String())
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
	ready = true

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

	sent := make([]time.Time, sh.records+1) // by id; written by the producer loop only
	seen := make([]time.Time, sh.records+1)
	progress := make(chan int, 1) // the producer's last id, for the poller
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go pacedSend(ctx, p, sh, rate, sent, progress)
	// The poller: records up to n are durable at the receiver. A record is
	// only counted once the producer's loop has passed it (its send time
	// is written before the id reaches progress).
	var have, produced int
	var cpu0 time.Duration
	warm := false
	poll := time.NewTicker(2 * time.Millisecond) // the resolution of the seen times
	defer poll.Stop()
	for ; have < sh.records; <-poll.C {
		select {
		case id := <-progress:
			produced = max(produced, id)
		default:
		}
		n, err := recv.records([]string{name})
		if err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		for ; have < int(n) && have < sh.records; have++ {
			seen[have+1] = now
		}
		if !warm && have >= warmup*rate {
			warm = true
			cpu0, _ = procCPU(b, cmd.Process.Pid)
		}
		if ctx.Err() != nil {
			b.Fatalf("%s: %d of %d records durable after 2 minutes\n%s", name, have, sh.records, stderr.String())
		}
	}
	cpu1, _ := procCPU(b, cmd.Process.Pid)
	// Drain the progress channel so every send time is visible.
	for produced < sh.records {
		produced = max(produced, <-progress)
	}
	var out []time.Duration
	for id := warmup*rate + 1; id <= sh.records; id++ {
		out = append(out, seen[id].Sub(sent[id]))
	}
	s := slices.Clone(out)
	slices.Sort(s)
	cpuUs := float64((cpu1 - cpu0).Microseconds()) / float64(len(out))
	b.Logf("%s at %d rec/s: p50 %v, p99 %v, max %v over %d records; worker %.2f cpu-us/record", name, rate,
		s[len(s)/2].Round(100*time.Microsecond), s[len(s)*99/100].Round(100*time.Microsecond), s[len(s)-1].Round(100*time.Microsecond), len(s), cpuUs)
	return freshness{lat: out, cpuUs: cpuUs}
}

// freshness is one run's latencies (after the warm-up) and the worker's
// CPU time per record over them.
type freshness struct {
	lat   []time.Duration
	cpuUs float64
}

// pacedSend sends records 1..sh.records of sh.payload bytes to p at rate a
// second, writing each one's send time to sent[id] before its id reaches
// progress (every 100th id, when progress has room, and the last one
// always), then flushes the producer.
func pacedSend(ctx context.Context, p pclient.Producer, sh e2eShape, rate int, sent []time.Time, progress chan<- int) {
	start := time.Now()
	for id := 1; id <= sh.records; id++ {
		// Pace: record id is due at start + (id-1)/rate.
		if d := time.Until(start.Add(time.Duration(id-1) * time.Second / time.Duration(rate))); d > 0 {
			select { // the producer's pace
			case <-time.After(d):
			case <-ctx.Done():
				return
			}
		}
		sent[id] = time.Now()
		p.SendAsync(ctx, &pclient.ProducerMessage{Payload: e2ePayloadOf(id, sh.payload)}, func(pclient.MessageID, *pclient.ProducerMessage, error) {})
		switch {
		case id == sh.records:
			progress <- id // the last one must arrive
		case id%100 == 0:
			select {
			case progress <- id:
			default:
			}
		}
	}
	_ = p.FlushWithCtx(ctx)
}
