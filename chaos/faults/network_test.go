package faults_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/faultproxy"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/observability"
	"github.com/thalweg/thalweg/zerobus"
	"github.com/thalweg/thalweg/zerobus/server"
)

const (
	rowsPerBatch = 20
	payloadLen   = 256
)

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func newProxy(t *testing.T, target string) *faultproxy.Proxy {
	p, err := faultproxy.New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// runLane pushes batches 0..n-1 (rows seq i*rowsPerBatch ..) through a
// NoCommit lane over dial, calling fault(i) before submitting batch i, then
// closes the lane (which waits for every confirmation) and returns it.
// Submit blocks while the lane is full, so past its capacity the batches
// go at the pace of the confirmations, and a fault finds the lane's
// batches in flight.
func runLane(t *testing.T, m *meters, dest string, mem memory.Allocator, n int,
	dial func(ctx context.Context) (lanes.Transport, error), fault func(i int)) *lanes.Lane[lanes.NoCommit] {
	t.Helper()
	lane, err := lanes.New[lanes.NoCommit](lanes.Options{
		Destination: dest, Capacity: 16, Dial: dial, MeterProvider: m.mp,
		Backoff: lanes.Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 40*time.Second)
	for i := range n {
		fault(i)
		b := flighttest.MakeBatch(mem, 0, uint64(i*rowsPerBatch), rowsPerBatch, payloadLen)
		if err := lane.Submit(ctx, b, lanes.NoCommit{}); err != nil {
			b.Release()
			t.Fatalf("Submit %d: %v", i, err)
		}
		b.Release()
	}
	if err := lane.Close(ctx); err != nil {
		t.Fatalf("lane Close: %v", err)
	}
	if lane.Confirmed() != uint64(n) {
		t.Fatalf("lane confirmed %d of %d batches", lane.Confirmed(), n)
	}
	return lane
}

// requireAllSeqs fails unless every seq 0..n*rowsPerBatch-1 is in counts;
// it returns how many rows were stored more than once.
func requireAllSeqs(t *testing.T, counts map[uint64]int, n int) (dups int) {
	t.Helper()
	var missing []uint64
	for s := range uint64(n * rowsPerBatch) {
		switch c := counts[s]; {
		case c == 0:
			missing = append(missing, s)
		case c > 1:
			dups += c - 1
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d rows lost, first %v", len(missing), missing[:min(len(missing), 10)])
	}
	return dups
}

// ---- Flight ----

type flightRig struct {
	addr  string
	proxy *faultproxy.Proxy
	mem   memory.Allocator
	logs  crashtest.LogBuffer
}

func newFlightRig(t *testing.T, mem memory.Allocator) *flightRig {
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem})
	r := &flightRig{addr: addr, mem: mem}
	r.proxy = newProxy(t, addr)
	return r
}

func (r *flightRig) dial(path string, ackTimeout time.Duration) func(ctx context.Context) (lanes.Transport, error) {
	return func(ctx context.Context) (lanes.Transport, error) {
		// Opening a stream through a stalled proxy would wait for gRPC's
		// connect timeout: bound it.
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return flight.Dial(ctx, flight.Options{
			Endpoint: r.proxy.Addr(), Path: []string{path}, Allocator: r.mem, AckTimeout: ackTimeout,
			Logger: slog.New(slog.NewTextHandler(&r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})), // the sink reports a failed stream at Debug
		})
	}
}

func (r *flightRig) stored(t *testing.T, path string) map[uint64]int {
	t.Helper()
	got, err := flight.ReadAll(ctxT(t, 10*time.Second), flighttest.Client(t, r.addr), []string{path}, r.mem)
	if err != nil {
		t.Fatal(err)
	}
	defer flight.ReleaseAll(got)
	counts := make(map[uint64]int)
	for _, s := range got {
		seq := s.Rec.Column(1).(*array.Uint64)
		for i := range seq.Len() {
			counts[seq.Value(i)]++
		}
	}
	return counts
}

func TestFlightCutMidStream(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	m := newMeters(t)
	r := newFlightRig(t, mem)
	const n = 60
	lane := runLane(t, m, "flight-cut", mem, n, r.dial("cut", 5*time.Second), func(i int) {
		if i == 20 || i == 40 {
			r.proxy.Cut()
		}
	})
	if lane.Rebuilds() < 1 {
		t.Fatalf("lane rebuilt %d times after two cuts", lane.Rebuilds())
	}
	// A cut connection heals: every poisoning it caused is retryable.
	retry := poisoned(t, m, "flight-cut", observability.CauseAckRetryable) + poisoned(t, m, "flight-cut", observability.CauseSendRetryable)
	if retry < 1 || retry != int64(lane.Rebuilds()) {
		t.Fatalf("poisoned{retryable} = %d, rebuilds %d", retry, lane.Rebuilds())
	}
	dups := requireAllSeqs(t, r.stored(t, "cut"), n)
	t.Logf("cuts %d, rebuilds %d, duplicate rows %d", r.proxy.Cuts(), lane.Rebuilds(), dups)
}

func TestFlightStallTripsAckTimeout(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	m := newMeters(t)
	r := newFlightRig(t, mem)
	const n = 30
	lane := runLane(t, m, "flight-stall", mem, n, r.dial("stall", 300*time.Millisecond), func(i int) {
		if i == 10 {
			r.proxy.Stall()
			// Resume later, from outside the submitter, which may block on
			// a full lane meanwhile.
			time.AfterFunc(1500*time.Millisecond, r.proxy.Resume)
		}
	})
	if lane.Rebuilds() < 1 {
		t.Fatal("a stall longer than the ack timeout did not rebuild the lane")
	}
	if !strings.Contains(r.logs.String(), flight.ErrAckTimeout.Error()) {
		t.Fatalf("the sink never reported an ack timeout; logs:\n%s", r.logs.String())
	}
	if p := poisoned(t, m, "flight-stall", observability.CauseAckRetryable) + poisoned(t, m, "flight-stall", observability.CauseSendRetryable); p < 1 {
		t.Fatalf("poisoned{retryable} = %d (a stalled link heals)", p)
	}
	requireAllSeqs(t, r.stored(t, "stall"), n)
}

func TestFlightSlowIsOnlySlower(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	m := newMeters(t)
	r := newFlightRig(t, mem)
	const n, rate = 20, 100 << 10 // ~110 KiB of batches at 100 KiB/s
	r.proxy.Slow(rate)
	start := time.Now()
	lane := runLane(t, m, "flight-slow", mem, n, r.dial("slow", 5*time.Second), func(int) {})
	elapsed := time.Since(start)
	if lane.Rebuilds() != 0 {
		t.Fatalf("a slow link rebuilt the lane %d times", lane.Rebuilds())
	}
	for _, c := range observability.Causes() {
		if p := poisoned(t, m, "flight-slow", c); p != 0 {
			t.Fatalf("poisoned{%s} = %d on a slow link", c, p)
		}
	}
	if dups := requireAllSeqs(t, r.stored(t, "slow"), n); dups != 0 {
		t.Fatalf("%d duplicates without any fault", dups)
	}
	if elapsed < 500*time.Millisecond {
		t.Fatalf("~110 KiB through a 100 KiB/s link took only %v: the throttle did not apply", elapsed)
	}
	t.Logf("slow link: %v", elapsed)
}

// ---- Zerobus ----

const zbTable = "main.faults.events"

type zbRig struct {
	srv   *server.Server
	proxy *faultproxy.Proxy
	mem   memory.Allocator
}

func newZerobusRig(t *testing.T, mem memory.Allocator) *zbRig {
	srv, err := server.New(server.Options{Dir: t.TempDir(), Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
		<-done
	})
	return &zbRig{srv: srv, proxy: newProxy(t, lis.Addr().String()), mem: mem}
}

func (r *zbRig) dial(mode zerobus.Mode, ackTimeout time.Duration) func(ctx context.Context) (lanes.Transport, error) {
	return func(ctx context.Context) (lanes.Transport, error) {
		return zerobus.Dial(ctx, zerobus.Options{
			Endpoint: r.proxy.Addr(), Table: zbTable, TLS: zerobus.TLSOptions{Insecure: true},
			Mode: mode, Schema: flighttest.Schema, Allocator: r.mem,
			AckTimeout: ackTimeout, OpenTimeout: 2 * time.Second,
		})
	}
}

func (r *zbRig) stored(t *testing.T) map[uint64]int {
	t.Helper()
	lines, err := server.ReadTable(r.srv.Dir(), zbTable)
	if err != nil {
		t.Fatal(err)
	}
	counts := make(map[uint64]int)
	for _, l := range lines {
		var row struct{ Seq uint64 }
		if err := json.Unmarshal(l, &row); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		counts[row.Seq]++
	}
	return counts
}

func TestZerobusCutAndStall(t *testing.T) {
	for _, mode := range []zerobus.Mode{zerobus.ModeEphemeral, zerobus.ModeFlight} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			m := newMeters(t)
			r := newZerobusRig(t, mem)
			const n = 60
			dest := "zb-" + mode.String()
			lane := runLane(t, m, dest, mem, n, r.dial(mode, 300*time.Millisecond), func(i int) {
				switch i {
				case 15:
					r.proxy.Cut()
				case 35:
					r.proxy.Stall()
					time.AfterFunc(time.Second, r.proxy.Resume)
				}
			})
			if lane.Rebuilds() < 2 {
				t.Fatalf("rebuilds %d after a cut and a stall", lane.Rebuilds())
			}
			// A cut and a stall heal: every poisoning they caused is retryable.
			retry := poisoned(t, m, dest, observability.CauseAckRetryable) + poisoned(t, m, dest, observability.CauseSendRetryable)
			if retry != int64(lane.Rebuilds()) {
				t.Fatalf("poisoned{retryable} %d, rebuilds %d", retry, lane.Rebuilds())
			}
			dups := requireAllSeqs(t, r.stored(t), n)
			t.Logf("rebuilds %d, duplicate rows %d", lane.Rebuilds(), dups)
		})
	}
}
