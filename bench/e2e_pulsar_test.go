package bench_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/pulsaradmin"
	"github.com/thalweg/thalweg/internal/testkit/pulsartest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// BenchmarkE2EPulsar measures end to end on the real broker two readers of
// equal, freshly produced backlogs, each in a process of its own:
//
//	bare:   bench/internal/bareconsumer, a pulsar-client-go consumer
//	        (Failover, the client's and Go's defaults) receiving every
//	        message: the source's own limit. It acknowledges the way
//	        the sub-benchmark names (e2eBareModes): bare=cumulative
//	        acknowledges cumulatively per partition every
//	        batch.DefaultMaxRows/partitions messages, as the worker does
//	        once per full batch (the cheapest honest baseline);
//	        bare=each acknowledges every message on its own.
//	worker: the real `thalweg run` binary with a config that keeps every
//	        default but the addresses (so metrics are on as in a default
//	        run: the OpenTelemetry SDK behind the Prometheus endpoint, and
//	        the GC defaults of cmd/thalweg/gc.go), reading the topic into
//	        its raw anchor, a `thalweg receive` process of its own. Records
//	        are counted at the sink: its clock stops when the receiver
//	        reports every record durable (GetFlightInfo.TotalRecords), never
//	        from the worker's counters. After the timed part the sink is read
//	        back and every producer id must be there.
//
// Every iteration produces two topics of the shape's size (e2eShapes),
// both before either reader runs, and each reader reads its own. The order
// alternates A B B A (bare first in iterations 0 and 3 mod 4, the worker
// first in 1 and 2), and the first reader gets the first topic produced.
// Before each reader starts, the machine's memory is warmed
// (e2eWarmMemory, as in BenchmarkE2EPartitions; THALWEG_E2E_COLD_MEMORY=1
// leaves it cold): otherwise the reader that follows the production pays
// for its first touch of every page several times over, in the kernel.
//
// A reader's rate and CPU time per record are measured over one interval,
// from its first record (for the worker, the first batch durable at the
// sink) to its last (acknowledged by the bare consumer, durable at the sink
// for the worker); the CPU time is the process's user + system time
// (/proc/<pid>/stat) at both ends. The processes' start-up, about a second
// either (mostly the subscription to a partitioned topic), is logged on its
// own, with the whole-run figures, rather than diluting the rates. Metrics
// over all iterations: bare-rec/s, worker-rec/s, worker/bare (rate ratio),
// bare-cpu-ns/rec, worker-cpu-ns/rec, cpu-ratio, and the medians of the
// per-iteration ratios (rate-ratio-med, cpu-ratio-med); every iteration is
// logged with its ratios, the receiver's CPU per record, the machine's busy
// cores over each interval and its load. Run with -benchtime=4x (one ABBA
// cycle; -benchtime=8x for eight pairs); the binaries are built once
// (without -race).
//
// Environment: GOMEMLIMIT and GOGC reach the worker only (the bare
// consumer always runs with Go's defaults); GOMEMLIMIT=off turns the
// worker's GC defaults off. THALWEG_E2E_PROFILE=DIR writes CPU profiles of
// both readers of every iteration to DIR (the worker's through its
// metrics.pprof endpoint, over THALWEG_E2E_PROFILE_SECONDS, default 2).
// THALWEG_E2E_MAX_UNACKED sets the worker's source.max_unacked (an
// experiment: how far the worker reads ahead of its sink);
// THALWEG_E2E_RECEIVER_QUEUE its source.receiver_queue_size,
// THALWEG_E2E_SUBSCRIPTION_TYPE its source.subscription.type and
// THALWEG_E2E_BATCHING its batching mapping (e.g. "{linger_when_idle:
// true}"), for the experiments BENCHMARKS.md lists.
// THALWEG_E2E_RECORDS sets every shape's backlog (a short one weighs the
// processes' start-up, which the whole-run figures count).
func BenchmarkE2EPulsar(b *testing.B) {
	url, admin := testenv.PulsarURL(b)
	bins := e2eBuild(b)
	for _, sh := range e2eShapes {
		if v := os.Getenv("THALWEG_E2E_RECORDS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				b.Fatalf("THALWEG_E2E_RECORDS=%q: not a positive count", v)
			}
			sh.records = n
		}
		for _, mode := range e2eBareModes {
			b.Run(sh.name+"/bare="+mode.name, func(b *testing.B) { e2eBench(b, url, admin, bins, sh, mode) })
		}
	}
}

// e2eBareMode is how the bare consumer acknowledges.
type e2eBareMode struct {
	name string
	// ackEvery is the bare consumer's -ack-every for a shape: 0
	// acknowledges every message on its own.
	ackEvery func(e2eShape) int
}

var e2eBareModes = []e2eBareMode{
	{name: "cumulative", ackEvery: func(sh e2eShape) int { return batch.DefaultMaxRows / sh.partitions }},
	{name: "each", ackEvery: func(e2eShape) int { return 0 }},
}

// e2eShape is one backlog: records of payload bytes on partitions.
type e2eShape struct {
	name       string
	payload    int
	records    int
	partitions int
}

// e2eShapes are big enough that the batches at either end of an interval
// are a small share of it (several seconds each on 2 shared cores), and
// small enough for a test broker's disk: one ABBA cycle writes about
// 9 GB to its bookie (deleted topics are reclaimed by its garbage
// collection only minutes later; keep 20 GB free). The worker first reads MaxUnacked records
// ahead into fresh memory (the sink is slower than the source), which a
// long-running worker pays once: on a smaller backlog that start is most of
// the interval.
var e2eShapes = []e2eShape{
	{name: "payload=100B", payload: 100, records: 2_000_000, partitions: 4},
	{name: "payload=1KB", payload: 1024, records: 800_000, partitions: 4},
}

// e2eBins are the binaries the benchmark runs.
type e2eBins struct{ thalweg, bare string }

// e2eBuild builds cmd/thalweg and the bare consumer without the race
// detector into a temporary directory.
func e2eBuild(b *testing.B) e2eBins {
	b.Helper()
	dir := b.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := testenv.GoBuild(ctx, dir+"/", "", "./cmd/thalweg", "./bench/internal/bareconsumer"); err != nil {
		b.Fatal(err)
	}
	return e2eBins{thalweg: filepath.Join(dir, "thalweg"), bare: filepath.Join(dir, "bareconsumer")}
}

// e2eSample is a reader's progress and the CPU time spent so far.
type e2eSample struct {
	at     time.Time
	n      int           // records read (durable at the sink, for the worker)
	cpu    time.Duration // the reader process's user + system time
	sys    time.Duration // the system part of cpu
	minflt int64         // its minor page faults
	busy   time.Duration // the machine's busy time (every process)
	peer   time.Duration // the receiver's CPU time (the worker's reads only)
}

// e2eSample samples the reader process pid (and the receiver's, peer > 0)
// having read n records.
func e2eSampleOf(b *testing.B, pid, peer, n int) e2eSample {
	s := e2eSample{at: time.Now(), n: n, busy: machineBusy()}
	s.cpu, s.sys, s.minflt = procStat(b, pid)
	if peer > 0 {
		s.peer, _ = procCPU(b, peer)
	}
	return s
}

// e2eRead is one reader's run: measured from its first record (at the
// sink, for the worker: the first batch) to its last, so that the
// processes' start-up (about a second, mostly subscribing) is reported
// on its own rather than diluting the rates; tenth is the sample once a
// tenth of the records is durable at the sink (the bare consumer: handled),
// where the steady state starts (steadyCPUNs).
type e2eRead struct {
	start              time.Time
	first, tenth, last e2eSample
	warnings           []string // the worker's log lines at WARN or ERROR
	flushes            string   // the worker's batches by flush reason (e2eFlushes)
	peakRSS            int64    // the worker's peak resident set (VmHWM), bytes
}

func (r e2eRead) records() int        { return r.last.n - r.first.n }
func (r e2eRead) span() time.Duration { return r.last.at.Sub(r.first.at) }
func (r e2eRead) cpu() time.Duration  { return r.last.cpu - r.first.cpu }
func (r e2eRead) rate() float64       { return float64(r.records()) / r.span().Seconds() }
func (r e2eRead) cpuNs() float64      { return float64(r.cpu().Nanoseconds()) / float64(r.records()) }
func (r e2eRead) steadyCPUNs() float64 {
	return float64((r.last.cpu - r.tenth.cpu).Nanoseconds()) / float64(r.last.n-r.tenth.n)
}
func (r e2eRead) startup() time.Duration { return r.first.at.Sub(r.start).Round(time.Millisecond) }
func (r e2eRead) busy() float64          { return (r.last.busy - r.first.busy).Seconds() / r.span().Seconds() }
func (r e2eRead) peerNs() float64 {
	return float64((r.last.peer - r.first.peer).Nanoseconds()) / float64(r.records())
}
func (r e2eRead) faults() float64 {
	return float64(r.last.minflt-r.first.minflt) / float64(r.records())
}

// wholeRate and wholeCPUNs count the whole run, start-up included.
func (r e2eRead) wholeRate() float64 { return float64(r.last.n) / r.last.at.Sub(r.start).Seconds() }
func (r e2eRead) wholeCPUNs() float64 {
	return float64(r.last.cpu.Nanoseconds()) / float64(r.last.n)
}
func (r e2eRead) wholeFaults() float64 { return float64(r.last.minflt) / float64(r.last.n) }

func e2eBench(b *testing.B, url, admin string, bins e2eBins, sh e2eShape, mode e2eBareMode) {
	dir := b.TempDir()
	recv := e2eReceiver(b, bins, dir)
	profile := os.Getenv("THALWEG_E2E_PROFILE")

	var bare, worker []e2eRead
	var rateRatios, cpuRatios []float64
	// b.Loop wants the timer running: only the readers' runs are timed.
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		topics := e2eTopics(b, url, admin, sh)

		bareFirst := i%4 == 0 || i%4 == 3
		var br, wr e2eRead
		runBare := func(topic string) {
			e2eWarmMemory(b, bins)
			b.StartTimer()
			br = e2eBareRun(b, bins, url, topic, sh, mode.ackEvery(sh), false, profileFile(profile, sh, "bare-"+mode.name, i))
			b.StopTimer()
		}
		runWorker := func(topic string) {
			path := fmt.Sprintf("e2e-%d", i)
			e2eWarmMemory(b, bins)
			b.StartTimer()
			wr = e2eWorkerRun(b, bins, url, []string{topic}, e2eFlightAnchor{recv, path}, path, dir, sh, profileFile(profile, sh, "worker", i))
			b.StopTimer()
			if dups := recv.verify(b, path, sh.records); dups > 0 {
				// The same payload at distinct broker indexes: the
				// producer resent it (verify fails on a record
				// stored twice, which would be the worker's).
				b.Logf("producer: %d payloads written twice to the topic; the worker's warnings:\n%s", dups, strings.Join(wr.warnings, "\n"))
			}
		}
		if bareFirst {
			runBare(topics[0])
			runWorker(topics[1])
		} else {
			runWorker(topics[0])
			runBare(topics[1])
		}
		for _, t := range topics {
			e2eDeleteTopic(admin, t)
		}

		bare, worker = append(bare, br), append(worker, wr)
		rr := wr.rate() / br.rate()
		cr := wr.cpuNs() / br.cpuNs()
		rateRatios, cpuRatios = append(rateRatios, rr), append(cpuRatios, cr)
		order := "bare, worker"
		if !bareFirst {
			order = "worker, bare"
		}
		b.Logf("run %d (%s): worker/bare rate %.3f, cpu %.3f; "+
			"bare %.0f rec/s %.0f cpu-ns/rec (start-up %v; whole run %.0f rec/s %.0f cpu-ns/rec; %.2f page faults/rec; machine %.2f cores busy); "+
			"worker %.0f rec/s %.0f cpu-ns/rec (start-up %v to the first batch at the sink; whole run %.0f rec/s %.0f cpu-ns/rec; %.2f page faults/rec; machine %.2f cores busy, receiver %.0f cpu-ns/rec; %s); "+
			"load %s",
			i, order, rr, cr,
			br.rate(), br.cpuNs(), br.startup(), br.wholeRate(), br.wholeCPUNs(), br.faults(), br.busy(),
			wr.rate(), wr.cpuNs(), wr.startup(), wr.wholeRate(), wr.wholeCPUNs(), wr.faults(), wr.busy(), wr.peerNs(), wr.flushes,
			e2eLoad())
		b.StartTimer()
	}
	if len(bare) == 0 {
		return
	}
	// Over every run: records, span and CPU time summed.
	sum := func(rs []e2eRead) (rate, cpuNs float64) {
		var n int
		var span, cpu time.Duration
		for _, r := range rs {
			n, span, cpu = n+r.records(), span+r.span(), cpu+r.cpu()
		}
		return float64(n) / span.Seconds(), float64(cpu.Nanoseconds()) / float64(n)
	}
	bRate, bCPU := sum(bare)
	wRate, wCPU := sum(worker)
	b.ReportMetric(bRate, "bare-rec/s")
	b.ReportMetric(wRate, "worker-rec/s")
	b.ReportMetric(wRate/bRate, "worker/bare")
	b.ReportMetric(bCPU, "bare-cpu-ns/rec")
	b.ReportMetric(wCPU, "worker-cpu-ns/rec")
	b.ReportMetric(wCPU/bCPU, "cpu-ratio")
	b.ReportMetric(median(rateRatios), "rate-ratio-med")
	b.ReportMetric(median(cpuRatios), "cpu-ratio-med")
	// Go keeps a benchmark's first 10 log lines: one per pair, then this.
	b.Logf("per pair: cpu ratios %.3f; rate ratios %.3f", cpuRatios, rateRatios)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func profileFile(dir string, sh e2eShape, who string, i int) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, fmt.Sprintf("%s-%s-%d.pprof", strings.TrimPrefix(sh.name, "payload="), who, i))
}

// e2eHTTP talks to the worker's metrics and pprof endpoints.
var e2eHTTP = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// e2eTopic creates a fresh partitioned topic (deleted by e2eDeleteTopic,
// and at the end of the benchmark in any case).
func e2eTopic(b *testing.B, admin string, sh e2eShape) string {
	b.Helper()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	short := "thalweg-bench-e2e-" + hex.EncodeToString(rnd[:])
	pulsartest.Admin{URL: admin}.CreatePartitioned(b, short, sh.partitions)
	topic := "persistent://public/default/" + short
	b.Cleanup(func() { e2eDeleteTopic(admin, topic) })
	return topic
}

// e2eTopics creates two fresh topics and produces sh's backlog to both at
// once: the two readers of one iteration each read their own.
func e2eTopics(b *testing.B, url, admin string, sh e2eShape) [2]string {
	b.Helper()
	topics := [2]string{e2eTopic(b, admin, sh), e2eTopic(b, admin, sh)}
	var wg sync.WaitGroup
	errs := make([]error, len(topics))
	for k, t := range topics {
		wg.Go(func() { errs[k] = e2eProduce(url, t, sh) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	return topics
}

// e2eDeleteTopic deletes a partitioned topic, best effort.
func e2eDeleteTopic(admin, topic string) {
	c, err := pulsaradmin.New(pulsaradmin.Options{URL: admin, DisableKeepAlives: true})
	tn, err2 := utils.GetTopicName(topic)
	if err != nil || err2 != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), pulsaradmin.DefaultTimeout)
	defer cancel()
	_ = c.Topics().DeleteWithContext(ctx, *tn, true, false)
}

// e2ePayloadOf returns record id's payload, size bytes: {"id":N,"pad":"xx…"}.
func e2ePayloadOf(id, size int) []byte {
	p := strconv.AppendInt(make([]byte, 0, size), int64(id), 10)
	p = append([]byte(`{"id":`), p...)
	p = append(p, `,"pad":"`...)
	for len(p) < size-2 {
		p = append(p, 'x')
	}
	return append(p, `"}`...)
}

// e2eProduce writes records 1..sh.records, batched, and waits for the broker.
func e2eProduce(url, topic string, sh e2eShape) error {
	c, err := pclient.NewClient(pclient.ClientOptions{URL: url, Logger: plog.DefaultNopLogger(),
		MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		return err
	}
	defer c.Close()
	p, err := c.CreateProducer(pclient.ProducerOptions{Topic: topic, SendTimeout: -1,
		BatchingMaxPublishDelay: 5 * time.Millisecond})
	if err != nil {
		return err
	}
	defer p.Close()
	errc := make(chan error, 1)
	for id := 1; id <= sh.records; id++ {
		p.SendAsync(context.Background(), &pclient.ProducerMessage{Payload: e2ePayloadOf(id, sh.payload)},
			func(_ pclient.MessageID, _ *pclient.ProducerMessage, err error) {
				if err != nil {
					select {
					case errc <- err:
					default:
					}
				}
			})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.FlushWithCtx(ctx); err != nil {
		return fmt.Errorf("produce %s: %w", topic, err)
	}
	select {
	case err := <-errc:
		return fmt.Errorf("produce %s: %w", topic, err)
	default:
	}
	return nil
}

// e2eBareRun runs the bare consumer's process over topic.
// With read, it reads every message as the worker does (bareconsumer -read).
func e2eBareRun(b *testing.B, bins e2eBins, url, topic string, sh e2eShape, ackEvery int, read bool, profile string) e2eRead {
	b.Helper()
	args := []string{"-url", url, "-topic", topic, "-n", strconv.Itoa(sh.records), "-ack-every", strconv.Itoa(ackEvery), "-timeout", "5m"}
	if read {
		args = append(args, "-read")
		if v := os.Getenv("THALWEG_E2E_BARE_WORK"); v != "" {
			args = append(args, "-work", v)
		}
	}
	if profile != "" {
		args = append(args, "-cpuprofile", profile)
	}
	cmd := exec.Command(bins.bare, args...)
	// Go's defaults, whatever the benchmark's environment says for the worker.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=")
	})
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	r := e2eRead{start: start}
	for k, want := range []string{"first\n", "tenth\n", "done\n"} {
		line := make([]byte, len(want))
		if _, err := io.ReadFull(stdout, line); err != nil || string(line) != want {
			_ = cmd.Wait()
			b.Fatalf("bare consumer: %q, %v\n%s", line, err, stderr.String())
		}
		switch k {
		case 0:
			r.first = e2eSampleOf(b, cmd.Process.Pid, 0, 1)
		case 1:
			r.tenth = e2eSampleOf(b, cmd.Process.Pid, 0, max(sh.records/10, 1))
		default:
			r.last = e2eSampleOf(b, cmd.Process.Pid, 0, sh.records)
		}
	}
	return r
}

// e2eRecv is the `thalweg receive` process the worker writes to.
type e2eRecv struct {
	addr string
	pid  int
	fc   arrowflight.FlightServiceClient
}

// e2eReceiver starts `thalweg receive` for the whole sub-benchmark; every
// iteration writes its own dataset.
func e2eReceiver(b *testing.B, bins e2eBins, dir string) *e2eRecv {
	b.Helper()
	addr := testenv.FreeAddr(b)
	cmd := exec.Command(bins.thalweg, "receive", "--listen", addr, "--dir", filepath.Join(dir, "sink"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	r := &e2eRecv{addr: addr, pid: cmd.Process.Pid, fc: arrowflight.NewFlightServiceClient(conn)}
	var lastErr error
	defer func() {
		if lastErr != nil {
			b.Logf("thalweg receive on %s: %v\n%s", addr, lastErr, stderr.String())
		}
	}()
	testenv.WaitFor(b, 20*time.Second, "thalweg receive to answer", func() bool {
		_, lastErr = r.records([]string{"none"})
		return lastErr == nil
	})
	return r
}

// records is the number of records the receiver holds durably in the
// dataset at path (0 before the dataset exists).
func (r *e2eRecv) records(path []string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := r.fc.GetFlightInfo(ctx, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: path})
	if status.Code(err) == codes.NotFound {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return info.TotalRecords, nil
}

// e2eAnchor is where an e2e worker run stores the records.
type e2eAnchor interface {
	// destination is the raw anchor's entry of the worker's destinations
	// (a YAML flow mapping).
	destination() string
	// records is the number of records it holds durably.
	records() (int64, error)
	// pid is the process that stores them, whose CPU time counts with
	// the worker's; 0 when the worker stores them itself.
	pid() int
}

// e2eFlightAnchor is a dataset of the `thalweg receive` process.
type e2eFlightAnchor struct {
	recv *e2eRecv
	path string
}

func (a e2eFlightAnchor) destination() string {
	return fmt.Sprintf("{name: raw, kind: flight, role: raw_anchor, endpoint: %q, path: [%q]}", a.recv.addr, a.path)
}
func (a e2eFlightAnchor) records() (int64, error) { return a.recv.records([]string{a.path}) }
func (a e2eFlightAnchor) pid() int                { return a.recv.pid }

// e2eWorkerRun runs `thalweg run` from topic into anchor until it holds
// every record durably, then stops it with SIGTERM (it must exit 0). name
// names the run's config and offset store in dir.
func e2eWorkerRun(b *testing.B, bins e2eBins, url string, topics []string, anchor e2eAnchor, name, dir string, sh e2eShape, profile string) e2eRead {
	b.Helper()
	metricsAt := testenv.FreeAddr(b)
	// Experiments (see the benchmark's documentation): each setting is
	// left at its default unless its variable is set.
	source, sub, extra := "", "", ""
	if v := os.Getenv("THALWEG_E2E_MAX_UNACKED"); v != "" {
		source += "\n  max_unacked: " + v
	}
	if v := os.Getenv("THALWEG_E2E_RECEIVER_QUEUE"); v != "" {
		source += "\n  receiver_queue_size: " + v
	}
	if v := os.Getenv("THALWEG_E2E_SUBSCRIPTION_TYPE"); v != "" {
		sub = ", type: " + v
	}
	if v := os.Getenv("THALWEG_E2E_BATCHING"); v != "" {
		extra = "batching: " + v + "\n"
	}
	cfg := fmt.Sprintf(`source:
  url: %q
  topics: %s
  subscription: {name: thalweg`+sub+`}`+source+`
destinations:
  - %s
`+extra+`store: {dir: %q}
metrics: {listen: %q, pprof: %t}
`, url, e2eYAMLList(topics), anchor.destination(), filepath.Join(dir, name+"-offsets"), metricsAt, profile != "")
	cfgPath := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bins.thalweg, "run", "--config", cfgPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	var profiled chan error
	if profile != "" {
		profiled = make(chan error, 1)
		go func() { profiled <- e2eProfile(metricsAt, profile) }()
	}

	r := e2eRead{start: start}
	for {
		n, err := anchor.records()
		if err != nil {
			b.Fatal(err)
		}
		if n > 0 && r.first.n == 0 {
			r.first = e2eSampleOf(b, cmd.Process.Pid, anchor.pid(), int(n))
		}
		if n >= int64(max(sh.records/10, 1)) && r.tenth.n == 0 {
			r.tenth = e2eSampleOf(b, cmd.Process.Pid, anchor.pid(), int(n))
		}
		if n >= int64(sh.records) {
			r.last = e2eSampleOf(b, cmd.Process.Pid, anchor.pid(), int(n))
			if r.records() <= 0 {
				b.Fatalf("the sink held all %d records at once: no interval to measure", n)
			}
			break
		}
		select {
		case err := <-done:
			exited = true
			b.Fatalf("thalweg run exited with %v before the sink held every record (%d of %d)\n%s", err, n, sh.records, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("worker: the sink holds %d of %d records after 5 minutes\n%s", n, sh.records, stderr.String())
		}
	}
	r.peakRSS = procPeakRSS(b, cmd.Process.Pid)
	r.flushes = e2eFlushes(metricsAt)
	if profiled != nil {
		if err := <-profiled; err != nil {
			b.Logf("worker profile: %v", err)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		exited = true
		if err != nil {
			b.Fatalf("thalweg run: %v\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		b.Fatalf("thalweg run did not stop within 60 s of SIGTERM\n%s", stderr.String())
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			r.warnings = append(r.warnings, l)
		}
	}
	return r
}

// e2eYAMLList is a YAML flow sequence of quoted strings.
func e2eYAMLList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// e2eFlushes describes the worker's batches by flush reason, from its own
// Prometheus endpoint (what explains a batch size: rows, bytes, linger or
// idle), and where it waited.
func e2eFlushes(metricsAt string) string {
	resp, err := e2eHTTP.Get("http://" + metricsAt + "/metrics")
	if err != nil {
		return fmt.Sprintf("worker metrics: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var got, waits []string
	for _, l := range strings.Split(string(body), "\n") {
		switch {
		case strings.HasPrefix(l, "thalweg_batch_flushes_total{"):
			_, reason, _ := strings.Cut(l, `reason="`)
			reason, _, _ = strings.Cut(reason, `"`)
			got = append(got, reason+" "+l[strings.LastIndexByte(l, ' ')+1:])
		case strings.HasPrefix(l, "thalweg_source_unacked_wait_seconds_total"),
			strings.HasPrefix(l, "thalweg_lane_intake_blocked"),
			strings.HasPrefix(l, "thalweg_lane_delivery_latency_seconds_sum"),
			strings.HasPrefix(l, "thalweg_lane_delivery_latency_seconds_count"),
			strings.HasPrefix(l, "thalweg_offsetstore_commit_latency_seconds_sum"),
			strings.HasPrefix(l, "thalweg_offsetstore_commit_latency_seconds_count"):
			name, _, _ := strings.Cut(l, "{")
			waits = append(waits, name+" "+l[strings.LastIndexByte(l, ' ')+1:])
		}
	}
	// Where the worker waited: at source.max_unacked, at a full lane, for
	// its sink's acks and for the offset store.
	return fmt.Sprintf("batches by flush reason: %s; waits: %s", strings.Join(got, ", "), strings.Join(waits, ", "))
}

// e2eProfile fetches a CPU profile of the worker from its pprof endpoint,
// from as soon as it answers.
func e2eProfile(metricsAt, file string) error {
	secs := os.Getenv("THALWEG_E2E_PROFILE_SECONDS")
	if secs == "" {
		secs = "2"
	}
	// Polled on a ticker: this runs on a goroutine of its own, where the
	// benchmark cannot fail (testenv.WaitFor would).
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for end := time.Now().Add(10 * time.Second); ; <-poll.C {
		resp, err := e2eHTTP.Get("http://" + metricsAt + "/debug/pprof/profile?seconds=" + secs)
		if err != nil {
			if time.Now().After(end) {
				return err
			}
			continue
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("pprof: %s", resp.Status)
		}
		f, err := os.Create(file)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, resp.Body); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}

// verify reads the dataset at path back and fails unless every producer id
// 1..n is there and no record (partition, seq) is stored twice: the anchor
// is ordered, so the receiver keeps one copy of every record. It returns
// the number of payloads stored under more than one identity, which the
// producer wrote more than once (a retried send), not the worker.
func (r *e2eRecv) verify(b *testing.B, path string, n int) int {
	b.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stored, err := flight.ReadAll(ctx, r.fc, []string{path}, mem)
	if err != nil {
		b.Fatal(err)
	}
	defer flight.ReleaseAll(stored)
	seen := make([]uint8, n+1)
	type identity struct {
		partition int32
		seq       uint64
	}
	ids := make(map[identity]struct{}, n)
	for _, s := range stored {
		col, okP := e2eColumn(b, s.Rec, "payload").(*array.Binary)
		part, okR := e2eColumn(b, s.Rec, "partition").(*array.Int32)
		seq, okS := e2eColumn(b, s.Rec, "seq").(*array.Uint64)
		if !okP || !okR || !okS {
			b.Fatalf("not the raw schema: %s", s.Rec.Schema())
		}
		for i := range col.Len() {
			id := identity{part.Value(i), seq.Value(i)}
			if _, dup := ids[id]; dup {
				b.Fatalf("worker: record %d/%d stored twice at the ordered anchor", id.partition, id.seq)
			}
			ids[id] = struct{}{}
			var v struct {
				ID int `json:"id"`
			}
			if err := json.Unmarshal(col.Value(i), &v); err != nil || v.ID < 1 || v.ID > n {
				b.Fatalf("payload %.40q: not a producer record (%v)", col.Value(i), err)
			}
			if seen[v.ID] < 255 {
				seen[v.ID]++
			}
		}
	}
	var missing, dups int
	for _, c := range seen[1:] {
		switch {
		case c == 0:
			missing++
		case c > 1:
			dups += int(c) - 1
		}
	}
	if missing > 0 {
		b.Fatalf("worker: %d of %d records missing at the sink", missing, n)
	}
	return dups
}

// e2eColumn is rec's column name.
func e2eColumn(b *testing.B, rec arrow.RecordBatch, name string) arrow.Array {
	b.Helper()
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		b.Fatalf("no %s column in %s", name, rec.Schema())
	}
	return rec.Column(idx[0])
}

// procCPU is a process's user + system CPU time, all its threads
// (/proc/<pid>/stat, Linux; clock ticks of 10 ms), and its minor page
// faults.
func procCPU(b *testing.B, pid int) (time.Duration, int64) {
	cpu, _, minflt := procStat(b, pid)
	return cpu, minflt
}

// procStat is procCPU with the system part of the CPU time on its own.
func procStat(b *testing.B, pid int) (cpu, sys time.Duration, minflt int64) {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) in parentheses;
	// utime and stime are fields 14 and 15 of the line.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	minflt, err0 := strconv.ParseInt(f[7], 10, 64)
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err0 != nil || err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	return time.Duration(u+s) * 10 * time.Millisecond, time.Duration(s) * 10 * time.Millisecond, minflt
}

// procPeakRSS is a process's peak resident set size (VmHWM in
// /proc/<pid>/status), in bytes.
func procPeakRSS(b *testing.B, pid int) int64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for l := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("/proc/%d/status: %q", pid, l)
			}
			return kb << 10
		}
	}
	b.Fatalf("/proc/%d/status: no VmHWM", pid)
	return 0
}

// machineBusy is the machine's non-idle CPU time since boot (/proc/stat).
func machineBusy() time.Duration {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	var busy int64
	for i, v := range strings.Fields(line)[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i != 3 && i != 4 && i < 8 { // idle and iowait; guest time is in user already
			busy += n
		}
	}
	return time.Duration(busy) * 10 * time.Millisecond
}

// e2eLoad is the 1-, 5- and 15-minute load averages.
func e2eLoad() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}
