package harness

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// WorkerConfig is the part of a pipeline config the chaos tests vary; Write
// renders it as a `thalweg run` YAML file (cmd/thalweg/internal/config schema) with a
// Pulsar source and one Flight raw anchor.
type WorkerConfig struct {
	PulsarURL        string
	Topics           []string // full topic names
	Subscription     string
	SubscriptionType string // exclusive | failover | shared | key_shared
	FlightAddr       string
	FlightPath       []string
	StoreDir         string

	// Optional tuning; zero keeps the values below.
	MaxRows int           // default 500: many batches, so kills land between them
	Linger  time.Duration // default 20ms
	// LaneCapacity defaults to 64, enough that the lane is rarely full: a
	// full lane stops submitting, and then a stalled network holds no batch
	// the worker believes sent.
	LaneCapacity int
	MaxUnacked   int           // default 65536 (above LaneCapacity × MaxRows)
	AckTimeout   time.Duration // default 10s
	DrainTimeout time.Duration // default 30s
	// TeardownTimeout is store.teardown_timeout; zero keeps the worker's
	// default (10s).
	TeardownTimeout time.Duration
	// Iceberg, when set, makes the raw anchor an Iceberg table instead of
	// the Flight receiver (FlightAddr and FlightPath are then unused).
	Iceberg *IcebergAnchor
}

// IcebergAnchor is a raw anchor in an Iceberg table of a SQL catalog that
// every worker of a fleet shares.
type IcebergAnchor struct {
	CatalogDB, Warehouse string // the SQLite file and the warehouse directory
	Table                string // namespace.table, or a template ("chaos.{topic}")
	CommitInterval       time.Duration
	// PartitionBy is the destination's partition_by as a YAML flow
	// sequence ("[identity(partition)]"); empty: unpartitioned.
	PartitionBy string
	// Maintenance is the destination's maintenance keys as a YAML flow
	// mapping ("{interval: 2s, ...}"); empty: the defaults.
	Maintenance string
}

// YAML renders the config.
func (c WorkerConfig) YAML() string {
	or := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	ord := func(v, def time.Duration) time.Duration {
		if v == 0 {
			return def
		}
		return v
	}
	list := func(ss []string) string {
		q := make([]string, len(ss))
		for i, s := range ss {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "source:\n  kind: pulsar\n  url: %q\n  topics: %s\n", c.PulsarURL, list(c.Topics))
	fmt.Fprintf(&b, "  subscription:\n    name: %q\n    type: %s\n", c.Subscription, c.SubscriptionType)
	fmt.Fprintf(&b, "  max_unacked: %d\n", or(c.MaxUnacked, 65536))
	fmt.Fprintf(&b, "batching:\n  max_rows: %d\n  linger: %v\n", or(c.MaxRows, 500), ord(c.Linger, 20*time.Millisecond))
	if ic := c.Iceberg; ic != nil {
		fmt.Fprintf(&b, "destinations:\n  - name: raw\n    kind: iceberg\n    role: raw_anchor\n")
		fmt.Fprintf(&b, "    iceberg:\n      catalog: {type: sql, uri: %q}\n      warehouse: %q\n      table: %q\n      commit_interval: %v\n",
			ic.CatalogDB, ic.Warehouse, ic.Table, ord(ic.CommitInterval, 50*time.Millisecond))
		if ic.PartitionBy != "" {
			fmt.Fprintf(&b, "      partition_by: %s\n", ic.PartitionBy)
		}
		if ic.Maintenance != "" {
			fmt.Fprintf(&b, "      maintenance: %s\n", ic.Maintenance)
		}
	} else {
		fmt.Fprintf(&b, "destinations:\n  - name: raw\n    kind: flight\n    role: raw_anchor\n    endpoint: %q\n    path: %s\n",
			c.FlightAddr, list(c.FlightPath))
		// The stream's silence watchdog: a receiver that stopped
		// acknowledging is given up after AckTimeout.
		fmt.Fprintf(&b, "    silence_timeout: %v\n", ord(c.AckTimeout, 10*time.Second))
	}
	// The lane's bound on one wait.
	fmt.Fprintf(&b, "    lane:\n      capacity: %d\n      ack_timeout: %v\n      max_retries: 2\n",
		or(c.LaneCapacity, 64), ord(c.AckTimeout, 10*time.Second))
	fmt.Fprintf(&b, "store:\n  dir: %q\n", c.StoreDir)
	if c.TeardownTimeout > 0 {
		fmt.Fprintf(&b, "  teardown_timeout: %v\n", c.TeardownTimeout)
	}
	fmt.Fprintf(&b, "shutdown:\n  drain_timeout: %v\n", ord(c.DrainTimeout, 30*time.Second))
	b.WriteString("metrics:\n  listen: \"127.0.0.1:0\"\nlog:\n  level: info\n")
	return b.String()
}

// Worker is a `thalweg run` process that can be killed and restarted on the
// same config and offset store. Not safe for concurrent use.
type Worker struct {
	name, bin, cfg, log string
	proc                *Process
	starts              int
	logFrom             int64 // size of the log when the current run started
}

// NewWorker writes cfg into dir and returns a stopped worker running bin.
// The test's cleanup kills it if it still runs.
func NewWorker(t testing.TB, name, bin, dir string, cfg WorkerConfig) *Worker {
	t.Helper()
	w := &Worker{name: name, bin: bin, cfg: filepath.Join(dir, name+".yaml"), log: filepath.Join(dir, name+".log")}
	if err := os.WriteFile(w.cfg, []byte(cfg.YAML()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if w.proc != nil {
			w.proc.Kill()
		}
		if t.Failed() {
			t.Logf("%s log (tail):\n%s", w.name, Tail(w.log, 30))
		}
	})
	return w
}

// Start starts the worker; it must not be running.
func (w *Worker) Start(t testing.TB) {
	t.Helper()
	if w.Running() {
		t.Fatalf("harness: %s is already running", w.name)
	}
	w.starts++
	w.logFrom = 0
	if fi, err := os.Stat(w.log); err == nil {
		w.logFrom = fi.Size()
	}
	p, err := StartProcess(fmt.Sprintf("%s#%d", w.name, w.starts), w.log, w.bin, "run", "--config", w.cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.proc = p
}

// readyLine is what `thalweg run` logs once the pipeline is built: the
// source is subscribed and the lanes are dialling.
const readyLine = "pipeline started"

// activeLine is what a Failover worker logs once the broker made it the
// active consumer of a partition: from then on its records move.
const activeLine = "became the active consumer"

// WaitReady waits until the current run logged that its pipeline started,
// failing the test if it exits first or takes longer than 30s.
func (w *Worker) WaitReady(t testing.TB) {
	t.Helper()
	w.waitLog(t, readyLine, "ready")
}

// WaitActive waits until the current run of a Failover worker is the
// active consumer of a partition, about a second after WaitReady (the
// broker's activation): a kill meant to catch batches in flight must count
// its up-time from here, or it may land before any record moved.
func (w *Worker) WaitActive(t testing.TB) {
	t.Helper()
	w.waitLog(t, activeLine, "the active consumer of a partition")
}

// waitLog waits until the current run logged line, failing the test if it
// exits first or takes longer than 30s; what names the state in the
// failure.
func (w *Worker) waitLog(t testing.TB, line, what string) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, w.name+" to be "+what, func() bool {
		if w.logged(line) {
			return true
		}
		if !w.Running() {
			t.Fatalf("harness: %s exited before it was %s: %v", w.name, what, w.proc.State())
		}
		return false
	})
}

// logged reports whether the current run has logged line.
func (w *Worker) logged(line string) bool {
	b, err := os.ReadFile(w.log)
	return err == nil && int64(len(b)) > w.logFrom && strings.Contains(string(b[w.logFrom:]), line)
}

// LogCount counts the lines of every run's log that contain line.
func (w *Worker) LogCount(line string) int {
	b, err := os.ReadFile(w.log)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), line)
}

// Running reports whether the worker process runs.
func (w *Worker) Running() bool { return w.proc != nil && !w.proc.Exited() }

// Process is the current (or last) run; nil before Start.
func (w *Worker) Process() *Process { return w.proc }

// Starts counts the runs so far.
func (w *Worker) Starts() int { return w.starts }

// Kill SIGKILLs the worker and waits until it is gone.
func (w *Worker) Kill() {
	if w.proc != nil {
		w.proc.Kill()
	}
}

// Stop shuts the worker down gracefully (SIGTERM) and fails the test unless
// it exits 0 within timeout. A run that had not yet logged that its
// pipeline started may also end by the signal itself: until main installs
// its handler (during the packages' initialisation) SIGTERM terminates the
// process, which has then read nothing and has nothing to drain.
func (w *Worker) Stop(t testing.TB, timeout time.Duration) {
	t.Helper()
	ready := w.logged(readyLine)
	if err := w.proc.Stop(timeout); err != nil && (ready || !w.proc.signalled(syscall.SIGTERM)) {
		t.Errorf("%s: %v", w.name, err)
	}
}

// Name is the worker's name (its log and config file are named after it).
func (w *Worker) Name() string { return w.name }

// Log is the path of the worker's log (all runs).
func (w *Worker) Log() string { return w.log }

var metricsAddrRE = regexp.MustCompile(`serving /metrics.*addr=(127\.0\.0\.1:\d+)`)

// Metric returns the sum over all label sets of the Prometheus metric name
// (e.g. "thalweg_lane_poisoned_total") served by the worker's current run,
// reading the address of its /metrics endpoint from the log.
func (w *Worker) Metric(t testing.TB, name string) float64 {
	t.Helper()
	_, body := w.get(t, "/metrics")
	var sum float64
	for line := range strings.Lines(body) {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		if i := strings.LastIndexByte(rest, '}'); i >= 0 {
			rest = rest[i+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			t.Fatalf("harness: %s metric line %q: %v", w.name, line, err)
		}
		sum += v
	}
	return sum
}

// Readyz returns the status code and body of the current run's /readyz.
func (w *Worker) Readyz(t testing.TB) (int, string) {
	t.Helper()
	return w.get(t, "/readyz")
}

// get GETs path from the current run's metrics endpoint, whose address it
// reads from the log.
func (w *Worker) get(t testing.TB, path string) (int, string) {
	t.Helper()
	if !w.Running() {
		t.Fatalf("harness: %s is not running", w.name)
	}
	b, err := os.ReadFile(w.log)
	if err != nil {
		t.Fatal(err)
	}
	ms := metricsAddrRE.FindAllSubmatch(b, -1)
	if len(ms) == 0 {
		t.Fatalf("harness: %s has not logged its metrics address", w.name)
	}
	addr := string(ms[len(ms)-1][1]) // the current run logged last
	resp, err := (&http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}).
		Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("harness: %s %s: %v", w.name, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}
