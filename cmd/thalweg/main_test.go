package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/offsetstore"
	zbserver "github.com/thalweg/thalweg/zerobus/server"
)

// asCLI makes the test binary behave as the thalweg command, so that the
// signal tests run the real main (signal handling, os.Exit codes) in a
// subprocess without a separate, slow `go build` — and with the race
// detector when the tests have it.
const asCLI = "THALWEG_TEST_AS_CLI"

// The commands run in-process start servers, lanes and Pebble; every one of
// them must be gone when its command returns.
func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		main() // exits
	}
	gcDefaults = false // in-process runs must not retune the test binary's GC (gc.go)
	goleak.VerifyTestMain(m, testenv.LeakOptions()...)
}

// cli is one in-process invocation of the command line.
type cli struct {
	stdout, stderr crashtest.LogBuffer
	env            map[string]string
	reload         chan struct{} // reload requests (SIGHUP in the process); nil: none
}

func (c *cli) cliEnv() *cliEnv {
	e := &cliEnv{stdout: &c.stdout, stderr: &c.stderr, getenv: func(k string) string { return c.env[k] }}
	if c.reload != nil {
		e.reload = func() (<-chan struct{}, func()) { return c.reload, func() {} }
	}
	return e
}

// run runs args to completion and returns the exit code.
func (c *cli) run(ctx context.Context, args ...string) int {
	return dispatch(ctx, args, c.cliEnv())
}

// runCLI runs args in-process with a fresh environment and returns the exit
// code and both streams.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var c cli
	code = c.run(flighttest.Ctx(t, 2*time.Minute), args...)
	return code, c.stdout.String(), c.stderr.String()
}

func startFlight(t *testing.T, opts receiver.Options) string {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	_, addr := flighttest.Receiver(t, opts)
	return addr
}

func startZerobus(t *testing.T, opts zbserver.Options) (addr, dir string) {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	srv, err := zbserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = srv.Stop()
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		_ = srv.Stop()
		<-served
	})
	return lis.Addr().String(), opts.Dir
}

// pipelineYAML is a run config for a generator source; the fields left
// empty are omitted.
type pipelineYAML struct {
	Records, Partitions int
	Rate                float64
	JSON                bool
	Malformed           float64
	FlightAt            string
	ZerobusAt, Table    string
	StoreDir            string
	Drain               time.Duration
	Metrics             string // metrics.listen; "" disables
	LaneCapacity        int    // the raw lane's lane.capacity; default 64
}

// jsonFields declares gen.JSONSchema in config form.
const jsonFields = `
schema:
  mode: json
  fields:
    - {name: id, type: int64, nullable: false}
    - {name: event, type: string, nullable: false}
    - {name: ts, type: timestamp, unit: ms, nullable: false}
    - {name: day, type: date}
    - name: user
      type: struct
      fields:
        - {name: name, type: string, nullable: false}
        - {name: age, type: int32}
        - {name: vip, type: bool}
    - {name: amount, type: float64}
    - {name: count, type: uint64}
    - {name: score, type: float32}
    - {name: tags, type: list, items: {type: string}}
    - {name: sig, type: binary}
`

func (p pipelineYAML) write(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	mode := "raw"
	if p.JSON {
		mode = "json"
	}
	fmt.Fprintf(&b, `source:
  kind: generator
  generator:
    seed: 7
    partitions: %d
    records: %d
    rate: %g
    payload_size: 64B
    malformed_fraction: %g
    mode: %s
`, p.Partitions, p.Records, p.Rate, p.Malformed, mode)
	if p.JSON {
		b.WriteString(jsonFields)
	}
	fmt.Fprintf(&b, `batching:
  max_rows: 1000
  linger: 20ms
destinations:
  - name: raw
    kind: flight
    role: raw_anchor
    endpoint: %s
    lane: {capacity: %d}
`, p.FlightAt, cmp.Or(p.LaneCapacity, 64))
	if p.ZerobusAt != "" {
		fmt.Fprintf(&b, `  - name: zb
    kind: zerobus
    role: secondary
    endpoint: %s
    table: %s
`, p.ZerobusAt, p.Table)
	}
	drain := p.Drain
	if drain == 0 {
		drain = 10 * time.Second
	}
	fmt.Fprintf(&b, `store:
  dir: %s
shutdown:
  drain_timeout: %s
metrics:
  listen: "%s"
log:
  level: info
  format: json
`, p.StoreDir, drain, p.Metrics)
	path := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// logAttr returns the value of key in the first JSON log line of logs whose
// msg contains msg, or "".
func logAttr(logs, msg, key string) string {
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if m, _ := line["msg"].(string); strings.Contains(m, msg) {
			v, _ := line[key].(string)
			return v
		}
	}
	return ""
}

// durable reads the delivered and coverage watermarks of dest from a closed
// worker's store.
func durable(t *testing.T, dir, dest string) (delivered, coverage map[string]uint64) {
	t.Helper()
	store, err := offsetstore.Open(dir, offsetstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	}()
	del, err := store.Delivered(dest)
	if err != nil {
		t.Fatal(err)
	}
	cov, err := store.Coverage(dest)
	if err != nil {
		t.Fatal(err)
	}
	delivered, coverage = map[string]uint64{}, map[string]uint64{}
	for p, pos := range del {
		delivered[p] = pos.Seq
	}
	for p, pos := range cov {
		coverage[p] = pos.Seq
	}
	return delivered, coverage
}

// checkFlight asserts that the receiver at addr holds, for dataset path,
// every seq in [1, last[p]] of every partition (duplicates allowed).
func checkFlight(t *testing.T, addr string, path string, last map[string]uint64, skip map[string]map[uint64]bool) audit.Report {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	stored, err := flight.ReadAll(flighttest.Ctx(t, 30*time.Second), flighttest.Client(t, addr), []string{path}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer flight.ReleaseAll(stored)
	tally := audit.NewTally()
	for _, s := range stored {
		if err := tally.AddRecord(s.Rec); err != nil {
			t.Fatal(err)
		}
	}
	rep := tally.Check(last, skip)
	if !rep.OK() {
		t.Errorf("flight receiver: %s", rep)
	}
	return rep
}

// stacks returns every goroutine's stack, for the failure message of a
// command that did not stop.
func stacks() string {
	buf := make([]byte, 4<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
