package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/source/gen"
	zbserver "github.com/thalweg/thalweg/zerobus/server"
)

// connProxy forwards TCP connections to target and records when each was
// accepted: every Dial of a Flight sink is one connection, so the times are
// the lane's dial attempts.
type connProxy struct {
	lis    net.Listener
	target string
	wg     sync.WaitGroup
	mu     struct {
		sync.Mutex
		at    []time.Time
		conns []net.Conn
	}
}

func startProxy(t *testing.T, target string) *connProxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &connProxy{lis: lis, target: target}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		_ = lis.Close()
		p.mu.Lock()
		for _, c := range p.mu.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *connProxy) addr() string { return p.lis.Addr().String() }

func (p *connProxy) serve() {
	defer p.wg.Done()
	for {
		in, err := p.lis.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		p.mu.Lock()
		p.mu.at = append(p.mu.at, time.Now())
		p.mu.conns = append(p.mu.conns, in)
		if out != nil {
			p.mu.conns = append(p.mu.conns, out)
		}
		p.mu.Unlock()
		if err != nil {
			_ = in.Close()
			continue
		}
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { defer p.wg.Done(); _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}

func (p *connProxy) times() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.mu.at...)
}

// withAnchorLane adds lane keys and a token_env to the raw anchor of a
// pipelineYAML config.
func withAnchorLane(t *testing.T, path, laneKeys, tokenEnv string) string {
	t.Helper()
	cfg := readFile(t, path)
	cfg = strings.Replace(cfg, "    lane: {capacity: 64}\n", "    lane: {capacity: 64"+laneKeys+"}\n    token_env: "+tokenEnv+"\n", 1)
	return writeConfig(t, cfg)
}

// jsonLines returns the JSON log lines of logs.
func jsonLines(logs string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil {
			out = append(out, line)
		}
	}
	return out
}

// laneLines are the log lines about destination dest's lane.
func laneLines(logs, dest string) []map[string]any {
	var out []map[string]any
	for _, l := range jsonLines(logs) {
		if l["destination"] == dest && l["lane"] != nil {
			out = append(out, l)
		}
	}
	return out
}

func lastError(logs string) string {
	var last string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			last = line
		}
	}
	return last
}

// A wrong Flight token, against the real receiver: the lane backs off
// (dial attempts far fewer than the old loop's hundreds per second, the
// gaps between them growing), logs a handful of lines, and when the
// permanent budget is spent `thalweg run` exits 5 with the gRPC status in
// its last ERROR line.
func TestRunWrongTokenBacksOffAndExits5(t *testing.T) {
	bin := binary(t)
	recvAt := startFlight(t, receiver.Options{Token: "right-token"})
	proxy := startProxy(t, recvAt)
	storeDir := filepath.Join(t.TempDir(), "offsets")
	const budget = 12 * time.Second
	cfg := withAnchorLane(t, pipelineYAML{Partitions: 1, Rate: 2000, FlightAt: proxy.addr(), StoreDir: storeDir,
		Drain: 30 * time.Second}.write(t), ", permanent_budget: "+budget.String(), "RUN_TOKEN")
	t.Setenv("RUN_TOKEN", "wrong-token")
	start := time.Now()
	p := startRun(t, bin, cfg)

	// 50ms doubling to 5s, each wait drawn from the upper half: a gap of a
	// second or more comes after 6-8 attempts, within about 6s; a lane
	// that does not back off never leaves one.
	testenv.WaitFor(t, 10*time.Second, "a gap of 1s between dial attempts", func() bool {
		at := proxy.times()
		return len(at) >= 2 && at[len(at)-1].Sub(at[len(at)-2]) >= time.Second
	})
	at := proxy.times()
	logs := p.stderr.String()
	if len(at) > 16 {
		t.Fatalf("%d dial attempts before a 1s gap: the lane does not back off\n%s", len(at), tail(logs, 20))
	}
	if len(at) < 4 {
		t.Fatalf("only %d dial attempts before a 1s gap", len(at))
	}
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, at[i].Sub(at[i-1]))
	}
	if last, first := gaps[len(gaps)-1], gaps[0]; last < 4*first || last < time.Second {
		t.Errorf("gaps between dial attempts do not grow: %v", gaps)
	}
	// Jitter draws each wait from the upper half of Initial·2^n (capped), so
	// no gap falls below 40% of the one before; a count that resets does.
	for i := 1; i < len(gaps); i++ {
		if gaps[i] < gaps[i-1]*2/5 {
			t.Errorf("gap %d (%v) after %v: the backoff was reset without progress: %v", i, gaps[i], gaps[i-1], gaps)
			break
		}
	}
	t.Logf("%d dial attempts in %v, gaps %v", len(at), at[len(at)-1].Sub(start).Round(time.Millisecond), gaps)

	code := p.exitCode(t, budget+20*time.Second)
	took := time.Since(start)
	logs = p.stderr.String()
	if code != exitAnchorFailed {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitAnchorFailed, tail(logs, 30))
	}
	if took > budget+15*time.Second {
		t.Errorf("exit after %v with a %v budget", took, budget)
	}
	last := lastError(logs)
	if !strings.Contains(last, "Unauthenticated") || strings.Contains(last, "context canceled") {
		t.Errorf("last ERROR line does not name the real cause:\n%s", last)
	}
	// One line when it started failing, one when it ended, maybe a summary.
	lane := laneLines(logs, "raw")
	if len(lane) > 6 {
		var b strings.Builder
		for _, l := range lane {
			j, _ := json.Marshal(l)
			b.Write(append(j, '\n'))
		}
		t.Errorf("%d lane log lines for %d attempts:\n%s", len(lane), len(proxy.times()), b.String())
	}
	first := lane[0]
	if first["msg"] != "lane failing" || first["class"] != "permanent" || first["code"] != "Unauthenticated" {
		t.Errorf("first lane line %v, want lane failing, class permanent, code Unauthenticated", first)
	}
	t.Logf("exit %d after %v, %d attempts, %d lane lines; last ERROR: %s", code, took.Round(time.Millisecond),
		len(proxy.times()), len(lane), last)
}

// SIGINT while the anchor is being refused (no budget: it would retry
// forever) stops at once with the real cause, not after the 30s drain.
func TestSIGINTWhileRefusedExitsPromptly(t *testing.T) {
	bin := binary(t)
	recvAt := startFlight(t, receiver.Options{Token: "right-token"})
	proxy := startProxy(t, recvAt)
	storeDir := filepath.Join(t.TempDir(), "offsets")
	cfg := withAnchorLane(t, pipelineYAML{Partitions: 1, Rate: 2000, FlightAt: proxy.addr(), StoreDir: storeDir,
		Drain: 30 * time.Second}.write(t), ", permanent_budget: -1s", "RUN_TOKEN")
	t.Setenv("RUN_TOKEN", "wrong-token")
	p := startRun(t, bin, cfg)
	testenv.WaitFor(t, 20*time.Second, "the first refusal", func() bool {
		return strings.Contains(p.stderr.String(), `"msg":"lane failing"`)
	})
	// The signal comes while the lane is in its retry loop, between
	// refused attempts.
	testenv.WaitFor(t, 20*time.Second, "4 refused dial attempts", func() bool { return len(proxy.times()) >= 4 })
	p.signal(t, syscall.SIGINT)
	start := time.Now()
	code := p.exitCode(t, 40*time.Second)
	took := time.Since(start)
	logs := p.stderr.String()
	if took > 5*time.Second {
		t.Errorf("SIGINT took %v to exit: it waited out the drain", took)
	}
	if code != exitAnchorFailed {
		t.Errorf("exit %d, want %d", code, exitAnchorFailed)
	}
	if last := lastError(logs); !strings.Contains(last, "Unauthenticated") {
		t.Errorf("last ERROR line does not name the real cause:\n%s", last)
	}
	t.Logf("exit %d %v after SIGINT", code, took.Round(time.Millisecond))
}

// A receiver killed under the running worker and restarted on the same
// address and directory: the lane labels it retryable (log and metric),
// recovers, and nothing is lost.
func TestRunRestartedReceiverIsRetryable(t *testing.T) {
	dir := t.TempDir()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	serve := func(lis net.Listener) (stop func()) {
		srv, err := receiver.New(receiver.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan struct{})
		go func() { defer close(served); _ = srv.Serve(lis) }()
		return func() { _ = srv.Stop(); <-served }
	}
	stop := serve(lis)
	defer func() { stop() }()

	const records, partitions = 12000, 2
	storeDir := filepath.Join(t.TempDir(), "offsets")
	cfg := pipelineYAML{Records: records, Partitions: partitions, Rate: 3000, FlightAt: addr, StoreDir: storeDir,
		Drain: 20 * time.Second, Metrics: "127.0.0.1:0"}.write(t)
	var c cli
	ctx := t.Context()
	done := make(chan int, 1)
	go func() { done <- c.run(ctx, "run", "--config", cfg) }()
	var base string
	testenv.WaitFor(t, 10*time.Second, "the metrics address in the log", func() bool {
		base = logAttr(c.stderr.String(), "serving /metrics", "addr")
		return base != ""
	})
	base = "http://" + base
	testenv.WaitFor(t, 20*time.Second, "records acknowledged before the receiver stops", func() bool {
		return metricSum(httpBody(t, base+"/metrics"), "thalweg_source_acked_total") > 0
	})
	stop()
	// The receiver comes back only once the lane has met its absence.
	testenv.WaitFor(t, 20*time.Second, "the lane failing on the stopped receiver", func() bool {
		return strings.Contains(c.stderr.String(), `"msg":"lane failing"`)
	})
	lis, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("re-listening on %s: %v", addr, err)
	}
	stop = serve(lis)
	testenv.WaitFor(t, 20*time.Second, "the lane to recover", func() bool {
		return strings.Contains(c.stderr.String(), `"msg":"lane recovered"`)
	})
	metrics := httpBody(t, base+"/metrics")
	retryable := regexp.MustCompile(`(?m)^thalweg_lane_poisoned_total\{cause="(dial|send|ack)_retryable",destination="raw"[^}]*\} [1-9]`)
	permanent := regexp.MustCompile(`(?m)^thalweg_lane_poisoned_total\{cause="(dial|send|ack)_permanent",destination="raw"[^}]*\} [1-9]`)
	if !retryable.MatchString(metrics) || permanent.MatchString(metrics) {
		t.Errorf("poisoned causes after a receiver restart:\n%s", grepLines(metrics, "thalweg_lane_poisoned_total"))
	}
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("run: exit %d\n%s", code, tail(c.stderr.String(), 30))
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("run did not finish\n%s", stacks())
	}
	logs := c.stderr.String()
	for _, l := range laneLines(logs, "raw") {
		if l["class"] == "permanent" {
			t.Errorf("a restart was labelled permanent: %v", l)
		}
	}
	if logAttr(logs, "lane failing", "class") != "retryable" {
		t.Errorf("no retryable 'lane failing' line:\n%s", tail(logs, 30))
	}
	stop()
	stop = func() {}
	rep := checkFlight(t, startFlight(t, receiver.Options{Dir: dir}), "raw", produced(t, records, partitions), nil)
	if rep.Distinct != records {
		t.Errorf("receiver holds %s", rep)
	}
}

// A secondary whose receiver refuses its token is detached once its budget
// is spent, while the anchor keeps delivering; /readyz names the
// destination and the cause, thalweg_lane_detached says so, and the run
// still stops cleanly.
func TestRunRefusedSecondaryDetaches(t *testing.T) {
	rawAt := startFlight(t, receiver.Options{})
	secAt := startFlight(t, receiver.Options{Token: "right-token"})
	storeDir := filepath.Join(t.TempDir(), "offsets")
	path := pipelineYAML{Partitions: 1, Rate: 2000, FlightAt: rawAt, StoreDir: storeDir,
		Drain: 10 * time.Second, Metrics: "127.0.0.1:0"}.write(t)
	cfg := strings.Replace(readFile(t, path), "store:\n", `  - name: sec
    kind: flight
    role: secondary
    endpoint: `+secAt+`
    token_env: SEC_TOKEN
    lane: {permanent_budget: 2s}
store:
`, 1)
	path = writeConfig(t, cfg)
	c := cli{env: map[string]string{"SEC_TOKEN": "wrong-token"}}
	runCtx, stopRun := context.WithCancel(t.Context())
	defer stopRun()
	done := make(chan int, 1)
	go func() { done <- c.run(runCtx, "run", "--config", path) }()
	var base string
	testenv.WaitFor(t, 10*time.Second, "the metrics address in the log", func() bool {
		base = logAttr(c.stderr.String(), "serving /metrics", "addr")
		return base != ""
	})
	base = "http://" + base
	var body string
	testenv.WaitFor(t, 20*time.Second, "/readyz to name the detached secondary", func() bool {
		var status int
		status, body = httpGet(t, base+"/readyz")
		return status == http.StatusServiceUnavailable && strings.Contains(body, "secondary sec detached")
	})
	if !strings.Contains(body, "Unauthenticated") {
		t.Errorf("/readyz does not name the cause: %q", body)
	}
	delivered := regexp.MustCompile(`(?m)^thalweg_lane_delivered_offset\{destination="raw"[^}]*\} (\d+)`)
	offset := func() string {
		m := delivered.FindStringSubmatch(httpBody(t, base+"/metrics"))
		if m == nil {
			return ""
		}
		return m[1]
	}
	before := offset()
	testenv.WaitFor(t, 10*time.Second, "the anchor to keep delivering", func() bool { o := offset(); return o != "" && o != before && len(o) >= len(before) })
	metrics := httpBody(t, base+"/metrics")
	if !regexp.MustCompile(`(?m)^thalweg_lane_detached\{destination="sec"[^}]*\} 1$`).MatchString(metrics) {
		t.Errorf("thalweg_lane_detached for sec:\n%s", grepLines(metrics, "thalweg_lane_detached"))
	}
	stopRun()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("run: exit %d\n%s", code, tail(c.stderr.String(), 30))
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not stop\n%s", stacks())
	}
	if logAttr(c.stderr.String(), "lane failed for good", "code") != "Unauthenticated" {
		t.Errorf("no 'lane failed for good' line with the code:\n%s", tail(c.stderr.String(), 30))
	}
}

// The same with a Zerobus secondary whose server refuses the token at
// stream creation (the dial step): it detaches after its budget while the
// raw anchor delivers everything, and the run ends cleanly.
func TestRunRefusedZerobusSecondaryDetaches(t *testing.T) {
	rawAt := startFlight(t, receiver.Options{})
	const table = "main.thalweg.events"
	zbAt, _ := startZerobus(t, zbserver.Options{Token: "right-token", Tables: []string{table}})
	storeDir := filepath.Join(t.TempDir(), "offsets")
	const records = 8000
	path := pipelineYAML{Records: records, Partitions: 1, Rate: 2000, FlightAt: rawAt, ZerobusAt: zbAt, Table: table,
		StoreDir: storeDir, Drain: 10 * time.Second, Metrics: "127.0.0.1:0"}.write(t)
	cfg := strings.Replace(readFile(t, path), "    table: "+table+"\n",
		"    table: "+table+"\n    token_env: ZB_TOKEN\n    lane: {permanent_budget: 1s}\n", 1)
	path = writeConfig(t, cfg)
	c := cli{env: map[string]string{"ZB_TOKEN": "wrong-token"}}
	done := make(chan int, 1)
	go func() { done <- c.run(t.Context(), "run", "--config", path) }()
	var base string
	testenv.WaitFor(t, 10*time.Second, "the metrics address in the log", func() bool {
		base = logAttr(c.stderr.String(), "serving /metrics", "addr")
		return base != ""
	})
	var body string
	testenv.WaitFor(t, 20*time.Second, "/readyz to name the detached secondary", func() bool {
		var status int
		status, body = httpGet(t, "http://"+base+"/readyz")
		return status == http.StatusServiceUnavailable && strings.Contains(body, "secondary zb detached")
	})
	if !strings.Contains(body, "Unauthenticated") || !strings.Contains(body, "dial failure") {
		t.Errorf("/readyz does not name the step and cause: %q", body)
	}
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("run: exit %d\n%s", code, tail(c.stderr.String(), 30))
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("run did not finish\n%s", stacks())
	}
	if d, _ := durable(t, storeDir, "raw"); d[gen.PartitionName(0)] != records {
		t.Errorf("raw anchor delivered %v, want all %d records", d, records)
	}
	if logAttr(c.stderr.String(), "lane failed for good", "step") != "dial" {
		t.Errorf("no 'lane failed for good' line for the dial step:\n%s", tail(c.stderr.String(), 30))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
