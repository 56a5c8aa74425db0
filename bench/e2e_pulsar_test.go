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
	"net"
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

	"github.com/apache/arrow-go/v18/arrow/array"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/pulsartest"
	"github.com/thalweg/thalweg/internal/testenv"
)

// BenchmarkE2EPulsar measures end to end on the real broker two readers of
// equal, freshly produced backlogs, each in a process of its own:
//
//	bare:   bench/internal/bareconsumer, a pulsar-client-go consumer
//	        (Failover, the client's and Go's defaults) receiving every
//	        message and acknowledging it: the source's own limit.
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
//
// A reader's interval runs from starting its process to its last record
// (acknowledged for the bare consumer, durable at the sink for the worker),
// process start-up included; its CPU time is the process's user + system
// time (/proc/<pid>/stat) at that moment. Metrics over all iterations:
// bare-rec/s, worker-rec/s, worker/bare (rate ratio), bare-cpu-ns/rec,
// worker-cpu-ns/rec, cpu-ratio, and the medians of the per-iteration
// ratios (rate-ratio-med, cpu-ratio-med); every iteration is logged with
// its ratios and the machine's load. Run with -benchtime=4x (one ABBA
// cycle); the binaries are built once (without -race).
//
// Environment: GOMEMLIMIT and GOGC reach the worker only (the bare
// consumer always runs with Go's defaults); GOMEMLIMIT=off turns the
// worker's GC defaults off. THALWEG_E2E_PROFILE=DIR writes CPU profiles of
// both readers of every iteration to DIR (the worker's through its
// metrics.pprof endpoint, over THALWEG_E2E_PROFILE_SECONDS, default 2).
func BenchmarkE2EPulsar(b *testing.B) {
	url, admin := testenv.PulsarURL(b)
	bins := e2eBuild(b)
	for _, sh := range e2eShapes {
		b.Run(sh.name, func(b *testing.B) { e2eBench(b, url, admin, bins, sh) })
	}
}

// e2eShape is one backlog: records of payload bytes on partitions.
type e2eShape struct {
	name       string
	payload    int
	records    int
	partitions int
}

// e2eShapes are big enough that a process's start-up is a small share of
// its interval (a few seconds each on 2 shared cores).
var e2eShapes = []e2eShape{
	{name: "payload=100B", payload: 100, records: 500_000, partitions: 4},
	{name: "payload=1KB", payload: 1024, records: 200_000, partitions: 4},
}

// e2eBins are the binaries the benchmark runs.
type e2eBins struct{ thalweg, bare string }

// e2eBuild builds cmd/thalweg and the bare consumer without the race
// detector into a temporary directory.
func e2eBuild(b *testing.B) e2eBins {
	b.Helper()
	dir := b.TempDir()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		b.Fatalf("the go command is not on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, gocmd, "build", "-o", dir+"/", "./cmd/thalweg", "./bench/internal/bareconsumer")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return e2eBins{thalweg: filepath.Join(dir, "thalweg"), bare: filepath.Join(dir, "bareconsumer")}
}

// e2eRead is one reader's interval.
type e2eRead struct {
	elapsed time.Duration
	cpu     time.Duration // the reader process's user + system time
	busy    float64       // the machine's busy cores over the interval
	other   time.Duration // CPU time of the reader's peer (the receiver), if any
}

func (r e2eRead) rate(n int) float64  { return float64(n) / r.elapsed.Seconds() }
func (r e2eRead) cpuNs(n int) float64 { return float64(r.cpu.Nanoseconds()) / float64(n) }

func e2eBench(b *testing.B, url, admin string, bins e2eBins, sh e2eShape) {
	dir := b.TempDir()
	recv := e2eReceiver(b, bins, dir)
	profile := os.Getenv("THALWEG_E2E_PROFILE")

	var bare, worker []e2eRead
	var rateRatios, cpuRatios []float64
	// b.Loop wants the timer running: only the readers' runs are timed.
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
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

		bareFirst := i%4 == 0 || i%4 == 3
		var br, wr e2eRead
		runBare := func(topic string) {
			b.StartTimer()
			br = e2eBareRun(b, bins, url, topic, sh, profileFile(profile, sh, "bare", i))
			b.StopTimer()
		}
		runWorker := func(topic string) {
			path := fmt.Sprintf("e2e-%d", i)
			b.StartTimer()
			wr = e2eWorkerRun(b, bins, url, topic, recv, path, dir, sh, profileFile(profile, sh, "worker", i))
			b.StopTimer()
			recv.verify(b, path, sh.records)
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
		rr := wr.rate(sh.records) / br.rate(sh.records)
		cr := wr.cpuNs(sh.records) / br.cpuNs(sh.records)
		rateRatios, cpuRatios = append(rateRatios, rr), append(cpuRatios, cr)
		order := "bare, worker"
		if !bareFirst {
			order = "worker, bare"
		}
		b.Logf("run %d (%s): bare %.0f rec/s %.0f cpu-ns/rec (machine %.2f cores busy); "+
			"worker %.0f rec/s %.0f cpu-ns/rec (machine %.2f cores busy, receiver %.0f cpu-ns/rec); "+
			"worker/bare rate %.3f, cpu %.3f; load %s",
			i, order, br.rate(sh.records), br.cpuNs(sh.records), br.busy,
			wr.rate(sh.records), wr.cpuNs(sh.records), wr.busy, float64(wr.other.Nanoseconds())/float64(sh.records),
			rr, cr, e2eLoad())
		b.StartTimer()
	}
	if len(bare) == 0 {
		return
	}
	sum := func(rs []e2eRead) (e2eRead, int) {
		var t e2eRead
		for _, r := range rs {
			t.elapsed += r.elapsed
			t.cpu += r.cpu
		}
		return t, sh.records * len(rs)
	}
	bt, n := sum(bare)
	wt, _ := sum(worker)
	b.ReportMetric(bt.rate(n), "bare-rec/s")
	b.ReportMetric(wt.rate(n), "worker-rec/s")
	b.ReportMetric(wt.rate(n)/bt.rate(n), "worker/bare")
	b.ReportMetric(bt.cpuNs(n), "bare-cpu-ns/rec")
	b.ReportMetric(wt.cpuNs(n), "worker-cpu-ns/rec")
	b.ReportMetric(wt.cpuNs(n)/bt.cpuNs(n), "cpu-ratio")
	b.ReportMetric(median(rateRatios), "rate-ratio-med")
	b.ReportMetric(median(cpuRatios), "cpu-ratio-med")
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

// e2eHTTP talks to the broker's admin API and the worker's pprof endpoint.
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

// e2eDeleteTopic deletes a partitioned topic, best effort.
func e2eDeleteTopic(admin, topic string) {
	short := strings.TrimPrefix(topic, "persistent://public/default/")
	path := "/admin/v2/persistent/public/default/" + short + "/partitions"
	req, _ := http.NewRequest(http.MethodDelete, strings.TrimRight(admin, "/")+path+"?force=true", nil)
	if resp, err := e2eHTTP.Do(req); err == nil {
		resp.Body.Close()
	}
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
func e2eBareRun(b *testing.B, bins e2eBins, url, topic string, sh e2eShape, profile string) e2eRead {
	b.Helper()
	args := []string{"-url", url, "-topic", topic, "-n", strconv.Itoa(sh.records), "-timeout", "5m"}
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
	busy0 := machineBusy()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	line := make([]byte, 5)
	if _, err := io.ReadFull(stdout, line); err != nil || string(line) != "done\n" {
		_ = cmd.Wait()
		b.Fatalf("bare consumer: %q, %v\n%s", line, err, stderr.String())
	}
	elapsed := time.Since(start)
	cpu := procCPU(b, cmd.Process.Pid)
	return e2eRead{elapsed: elapsed, cpu: cpu, busy: (machineBusy() - busy0).Seconds() / elapsed.Seconds()}
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
	addr := e2eFreeAddr(b)
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
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := r.records([]string{"none"}); err == nil {
			return r
		} else if time.Now().After(end) {
			b.Fatalf("thalweg receive does not answer on %s: %v\n%s", addr, err, stderr.String())
		}
	}
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

// e2eWorkerRun runs `thalweg run` from topic to the receiver's dataset
// path until the receiver holds every record durably, then stops it with
// SIGTERM (it must exit 0).
func e2eWorkerRun(b *testing.B, bins e2eBins, url, topic string, recv *e2eRecv, path, dir string, sh e2eShape, profile string) e2eRead {
	b.Helper()
	metricsAt := e2eFreeAddr(b)
	cfg := fmt.Sprintf(`source:
  url: %q
  topics: [%q]
  subscription: {name: thalweg}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: %q, path: [%q]}
store: {dir: %q}
metrics: {listen: %q, pprof: %t}
`, url, topic, recv.addr, path, filepath.Join(dir, path+"-offsets"), metricsAt, profile != "")
	cfgPath := filepath.Join(dir, path+".yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bins.thalweg, "run", "--config", cfgPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	busy0, recv0 := machineBusy(), procCPU(b, recv.pid)
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

	var r e2eRead
	for {
		n, err := recv.records([]string{path})
		if err != nil {
			b.Fatal(err)
		}
		if n >= int64(sh.records) {
			r.elapsed = time.Since(start)
			r.cpu = procCPU(b, cmd.Process.Pid)
			r.other = procCPU(b, recv.pid) - recv0
			r.busy = (machineBusy() - busy0).Seconds() / r.elapsed.Seconds()
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
	return r
}

// e2eProfile fetches a CPU profile of the worker from its pprof endpoint,
// from as soon as it answers.
func e2eProfile(metricsAt, file string) error {
	secs := os.Getenv("THALWEG_E2E_PROFILE_SECONDS")
	if secs == "" {
		secs = "2"
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
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
// 1..n is there (duplicates are logged).
func (r *e2eRecv) verify(b *testing.B, path string, n int) {
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
	for _, s := range stored {
		idx := s.Rec.Schema().FieldIndices("payload")
		if len(idx) != 1 {
			b.Fatalf("no payload column in %s", s.Rec.Schema())
		}
		col, ok := s.Rec.Column(idx[0]).(*array.Binary)
		if !ok {
			b.Fatal("payload column is not binary")
		}
		for i := range col.Len() {
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
	if dups > 0 {
		b.Logf("worker: %d duplicates at the sink", dups)
	}
}

// procCPU is a process's user + system CPU time, all its threads
// (/proc/<pid>/stat, Linux; clock ticks of 10 ms).
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) in parentheses;
	// utime and stime are fields 14 and 15 of the line.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
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

// e2eFreeAddr is a loopback address no one listens on (for a child process
// to bind).
func e2eFreeAddr(b *testing.B) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}
