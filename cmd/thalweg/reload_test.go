package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/pulsartest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	zbserver "github.com/thalweg/thalweg/zerobus/server"
)

// produceSteady publishes {"id":i} for i in [1, n] at about rate per
// second and closes done when all are persisted.
func produceSteady(ctx context.Context, t *testing.T, url, topic string, n int, rate float64, done chan<- error) {
	c, err := pclient.NewClient(pclient.ClientOptions{URL: url, Logger: plog.DefaultNopLogger(),
		MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		done <- err
		return
	}
	defer c.Close()
	p, err := c.CreateProducer(pclient.ProducerOptions{Topic: topic, SendTimeout: -1})
	if err != nil {
		done <- err
		return
	}
	defer p.Close()
	start := time.Now()
	for i := 1; i <= n; i++ {
		if d := time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))); d > 0 {
			select { // the producer's pace
			case <-time.After(d):
			case <-ctx.Done():
				done <- ctx.Err()
				return
			}
		}
		if _, err := p.Send(ctx, &pclient.ProducerMessage{Payload: []byte(fmt.Sprintf(`{"id":%d}`, i))}); err != nil {
			done <- fmt.Errorf("produce %d: %w", i, err)
			return
		}
	}
	done <- nil
}

// SIGHUP reloads `thalweg run` (the real main in a subprocess, on the real
// broker, while records keep arriving): a config that does not validate is
// refused with one log line naming file, line and field, and the running
// pipeline goes on; a valid one drains the pipeline and restarts it in the
// same process. Every record produced reaches the sink — no gap — and the
// process exits 0 on SIGINT at the end, never 129.
func TestRunReloadsOnSIGHUP(t *testing.T) {
	url, admin := testenv.PulsarURL(t)
	ctx := flighttest.Ctx(t, 3*time.Minute)
	topic := fmt.Sprintf("thalweg-cmd-reload-%d", time.Now().UnixNano())
	flightAt := startFlight(t, receiver.Options{})
	path := pulsarRunYAML(t, url, topic, "reload", "", flightAt, "raw")
	valid := readFile(t, path)
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	const n, rate = 6000, 1500.0
	produced := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); produceSteady(ctx, t, url, topic, n, rate, produced) }()
	defer wg.Wait()

	p := startRun(t, binary(t), path)
	base := p.waitReady(t)
	alive := func(what string) {
		t.Helper()
		select {
		case <-p.done:
			t.Fatalf("thalweg run exited (%v) after %s:\n%s", p.err, what, p.stderr.String())
		default:
		}
	}

	// 1. An invalid config: refused, the pipeline keeps running.
	write(strings.Replace(valid, "batching: {max_rows: 100, linger: 20ms}", "batching: {max_rows: -1, linger: 20ms, colour: blue}", 1))
	p.signal(t, syscall.SIGHUP)
	testenv.WaitFor(t, 10*time.Second, "the reload refusal", func() bool {
		return logAttr(p.stderr.String(), "reload: config rejected", "err") != ""
	})
	why := logAttr(p.stderr.String(), "reload: config rejected", "err")
	for _, want := range []string{path + ":5: batching.colour: unknown key", "; "} {
		if !strings.Contains(why, want) {
			t.Errorf("the refusal %q lacks %q", why, want)
		}
	}
	// The running pipeline goes on: records keep being acknowledged after
	// the refusal (up to the last one produced).
	acked := metricSum(httpBody(t, base+"/metrics"), "thalweg_source_acked_total")
	testenv.WaitFor(t, 10*time.Second, "records acknowledged after the refused reload", func() bool {
		alive("an invalid reload")
		return metricSum(httpBody(t, base+"/metrics"), "thalweg_source_acked_total") >= min(acked+100, n)
	})
	if s := httpStatus(t, base+"/readyz"); s != 200 {
		t.Errorf("/readyz %d after a refused reload: the running pipeline was disturbed", s)
	}
	if strings.Count(p.stderr.String(), `"msg":"pipeline started"`) != 1 {
		t.Errorf("a refused reload restarted the pipeline:\n%s", p.stderr.String())
	}

	// 2. A valid config (smaller batches): drained and restarted in-process.
	write(strings.Replace(valid, "max_rows: 100", "max_rows: 50", 1))
	p.signal(t, syscall.SIGHUP)
	testenv.WaitFor(t, 20*time.Second, "the second pipeline", func() bool {
		alive("a valid reload")
		return strings.Count(p.stderr.String(), `"msg":"pipeline started"`) == 2
	})
	for _, msg := range []string{"reload: config valid; draining", "reload: pipeline drained"} {
		if logAttr(p.stderr.String(), msg, "level") == "" {
			t.Errorf("no %q log line:\n%s", msg, p.stderr.String())
		}
	}

	// Everything produced is consumed and acknowledged, then SIGINT.
	select {
	case err := <-produced:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("producer did not finish")
	}
	pulsartest.Admin{URL: admin}.WaitBacklog(t, topic, "reload", false, 0)
	alive("the whole backlog")
	p.signal(t, syscall.SIGINT)
	if code := p.exitCode(t, 20*time.Second); code != exitOK {
		t.Fatalf("exit %d after SIGINT, want 0:\n%s", code, p.stderr.String())
	}
	tally, err := readFlight(flightAt, []string{"raw"}, true)
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	for id := 1; id <= n; id++ {
		if tally.Count(audit.PayloadPartition, uint64(id)) == 0 {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d records produced during the reloads are not at the sink", missing, n)
	}
	if logAttr(p.stderr.String(), "run summary", "level") == "" || !strings.Contains(p.stderr.String(), `"reloads":1`) {
		t.Errorf("no run summary counting one reload:\n%s", p.stderr.String())
	}
	checkLogKeys(t, p.stderr.String())
	t.Logf("rows at the sink %d for %d records", tally.Rows(), n)
}

// The in-process reload hook on the generator with a secondary: a refused
// and an accepted reload mid-run, and the bounded run still ends by itself
// with every record at both sinks (the generator starts over after the
// reload: duplicates, never gaps) and the secondary attached.
func TestRunReloadGenerator(t *testing.T) {
	const records, partitions = 12000, 2
	flightAt := startFlight(t, receiver.Options{})
	zbAt, zbDir := startZerobus(t, zbserver.Options{})
	path := pipelineYAML{Records: records, Partitions: partitions, Rate: 6000, FlightAt: flightAt, ZerobusAt: zbAt,
		Table: "main.test.events", StoreDir: filepath.Join(t.TempDir(), "offsets"), Metrics: "127.0.0.1:0"}.write(t)
	valid := readFile(t, path)
	c := cli{reload: make(chan struct{}, 1)}
	done := make(chan int, 1)
	go func() { done <- c.run(flighttest.Ctx(t, 2*time.Minute), "run", "--config", path) }()
	var metricsAt string
	testenv.WaitFor(t, 10*time.Second, "the metrics address in the log", func() bool {
		metricsAt = logAttr(c.stderr.String(), "serving /metrics", "addr")
		return metricsAt != ""
	})
	// The reloads come mid-run: the first pipeline has delivered records.
	testenv.WaitFor(t, 10*time.Second, "the first pipeline's records acknowledged", func() bool {
		return metricSum(httpBody(t, "http://"+metricsAt+"/metrics"), "thalweg_source_acked_total") > 0
	})
	if err := os.WriteFile(path, []byte(strings.Replace(valid, "role: secondary", "role: tertiary", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	c.reload <- struct{}{}
	testenv.WaitFor(t, 10*time.Second, "the refusal", func() bool {
		return strings.Contains(c.stderr.String(), "reload: config rejected")
	})
	if err := os.WriteFile(path, []byte(valid), 0o600); err != nil {
		t.Fatal(err)
	}
	c.reload <- struct{}{}
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d:\n%s", code, c.stderr.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("the run did not end\n%s", stacks())
	}
	logs := c.stderr.String()
	if strings.Count(logs, `"msg":"pipeline started"`) != 2 || !strings.Contains(logs, `"reloads":1`) {
		t.Fatalf("want two pipelines and one reload:\n%s", logs)
	}
	if strings.Contains(logs, "DETACHED") || strings.Contains(logs, `"level":"ERROR","msg":"pipeline`) {
		t.Errorf("the reload disturbed a lane:\n%s", logs)
	}
	want := produced(t, records, partitions)
	checkFlight(t, flightAt, "raw", want, nil)
	zt, err := zerobusTally(zbDir, "main.test.events")
	if err != nil {
		t.Fatal(err)
	}
	if rep := zt.Check(want, nil); !rep.OK() {
		t.Errorf("zerobus server after the reload: %s", rep)
	}
}

// TestReloadKeepsListenerAndSeries: `thalweg run` (the real main in a
// subprocess, on the real broker) with metrics.listen 127.0.0.1:0. A reload
// that leaves metrics.listen alone keeps the very address (no second
// "serving" line; /readyz and /metrics answer there all along) and the
// scrape series continuous (thalweg_source_records_total goes on from where
// it was, not from 0). A reload that changes metrics.listen moves the
// endpoints: the new address answers, the old one no longer does.
func TestReloadKeepsListenerAndSeries(t *testing.T) {
	url, _ := testenv.PulsarURL(t)
	ctx := flighttest.Ctx(t, 3*time.Minute)
	topic := fmt.Sprintf("thalweg-cmd-reload-listen-%d", time.Now().UnixNano())
	flightAt := startFlight(t, receiver.Options{})
	path := pulsarRunYAML(t, url, topic, "reload", "", flightAt, "raw")
	valid := readFile(t, path)
	const n = 3000
	produced := make(chan error, 1)
	produceSteady(ctx, t, url, topic, n, 1e9, produced)
	if err := <-produced; err != nil {
		t.Fatal(err)
	}

	p := startRun(t, binary(t), path)
	base := p.waitReady(t)
	records := func(at string) float64 {
		t.Helper()
		return metricSum(httpBody(t, at+"/metrics"), "thalweg_source_records_total")
	}
	testenv.WaitFor(t, 30*time.Second, "the first pipeline to read every record", func() bool { return records(base) >= n })
	before := records(base)

	// A reload that changes the batching, not metrics.listen.
	if err := os.WriteFile(path, []byte(strings.Replace(valid, "max_rows: 100", "max_rows: 50", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	var during []int
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() { // /readyz on the old address, throughout the reload
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			s, _ := httpGetNoFail(base + "/readyz")
			during = append(during, s)
		}
	}()
	p.signal(t, syscall.SIGHUP)
	testenv.WaitFor(t, 30*time.Second, "the second pipeline", func() bool {
		return strings.Count(p.stderr.String(), `"msg":"pipeline started"`) == 2
	})
	testenv.WaitFor(t, 10*time.Second, "/readyz 200 after the reload", func() bool { return httpStatus(t, base+"/readyz") == 200 })
	close(stop)
	<-polled
	for _, s := range during {
		if s == 0 {
			t.Fatalf("the listener at %s stopped answering during the reload (statuses %v)", base, during)
		}
	}
	if c := strings.Count(p.stderr.String(), `"msg":"serving /metrics`); c != 1 {
		t.Errorf("%d \"serving\" lines: the reload rebound the listener", c)
	}
	if after := records(base); after < before {
		t.Errorf("thalweg_source_records_total went from %v to %v over the reload: the series restarted", before, after)
	}

	// A reload that changes metrics.listen moves the endpoints.
	moved := testenv.FreeAddr(t)
	if err := os.WriteFile(path, []byte(strings.Replace(valid, `listen: "127.0.0.1:0"`, `listen: "`+moved+`"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	p.signal(t, syscall.SIGHUP)
	testenv.WaitFor(t, 30*time.Second, "the third pipeline, served on "+moved, func() bool {
		return strings.Count(p.stderr.String(), `"msg":"pipeline started"`) == 3
	})
	testenv.WaitFor(t, 10*time.Second, "/readyz 200 on "+moved, func() bool { return httpStatus(t, "http://"+moved+"/readyz") == 200 })
	if s, err := httpGetNoFail(base + "/readyz"); err == nil {
		t.Errorf("the old address %s still answers (%d) after metrics.listen moved", base, s)
	}
	p.signal(t, syscall.SIGINT)
	if code := p.exitCode(t, 20*time.Second); code != exitOK {
		t.Fatalf("exit %d after SIGINT, want 0:\n%s", code, p.stderr.String())
	}
}

// httpGetNoFail GETs url and returns the status, or 0 and the error when
// nothing answers.
func httpGetNoFail(url string) (int, error) {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}
