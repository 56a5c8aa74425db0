package pipeline_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/faultproxy"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/pulsartest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/pulsar"
)

// proxyAt starts a fault proxy on addr, forwarding to target. The address is
// fixed (the broker advertises it), so it waits for another test that holds
// it to let go.
func proxyAt(t *testing.T, addr, target string) *faultproxy.Proxy {
	t.Helper()
	var p *faultproxy.Proxy
	testenv.WaitFor(t, 30*time.Second, "a proxy on the broker's advertised proxy address "+addr, func() bool {
		var err error
		p, err = faultproxy.NewAt(addr, target)
		return err == nil
	})
	t.Cleanup(func() { p.Close() })
	return p
}

// idWatch is the Pulsar source, noting the highest payload id (see
// produceSteadily) the pipeline took from it.
type idWatch struct {
	*pulsar.Source
	max atomic.Uint64
}

func (w *idWatch) Next(ctx context.Context, rec *batch.Record) error {
	if err := w.Source.Next(ctx, rec); err != nil {
		return err
	}
	if id, err := audit.PayloadID(rec.Payload); err == nil && id > w.max.Load() {
		w.max.Store(id)
	}
	return nil
}

// produceSteadily publishes records {"id":1} … {"id":n} to topic at about
// rate records per second, straight to the broker (not through the proxy).
// sent is the highest id handed to the producer so far, persisted the number
// of records the broker confirmed.
func produceSteadily(ctx context.Context, url, topic string, n, rate int, sent, persisted *atomic.Int64) error {
	c, err := pclient.NewClient(pclient.ClientOptions{URL: url,
		Logger: plog.NewLoggerWithSlog(slog.New(slog.DiscardHandler)), MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		return err
	}
	defer c.Close()
	p, err := c.CreateProducer(pclient.ProducerOptions{Topic: topic,
		BatchingMaxPublishDelay: 5 * time.Millisecond,
		SendTimeout:             -1, // its goroutine would outlive Close (goleak); ctx bounds the sends
	})
	if err != nil {
		return err
	}
	defer p.Close()
	var (
		mu      sync.Mutex
		sendErr error
	)
	const tick = 20 * time.Millisecond
	perTick := max(rate*int(tick)/int(time.Second), 1)
	t := time.NewTicker(tick)
	defer t.Stop()
	for id := 1; id <= n; {
		for end := min(id+perTick, n+1); id < end; id++ {
			p.SendAsync(ctx, &pclient.ProducerMessage{
				Payload: []byte(`{"id":` + strconv.Itoa(id) + `}`),
				Key:     "k" + strconv.Itoa(id%5),
			}, func(_ pclient.MessageID, _ *pclient.ProducerMessage, err error) {
				if err != nil {
					mu.Lock()
					sendErr = err
					mu.Unlock()
					return
				}
				persisted.Add(1)
			})
			sent.Store(int64(id))
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := p.FlushWithCtx(ctx); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	return sendErr
}

// TestPulsarConnectionFaults runs the real pipeline — Pulsar source, Flight
// sink, durable receiver, Pebble store — with a fault proxy between the
// source and the broker, while records keep arriving: it stalls the
// connection, cuts it, throttles it and cuts it again. The sink must hold
// every produced record (counted by payload at the receiver) and the
// subscription's backlog must drain to zero.
//
// The source reaches the broker through the proxy for every connection, not
// only the first: the broker advertises the proxy's address under its
// "proxy" listener (scripts/pulsar.sh), and the source names that listener
// (Options.ListenerName), so topic lookups answer with the proxy's address.
// The client then finds the lookup's broker to be the very address of its
// service URL and uses one connection for both — without the listener name
// it would open a second one, to the internal address (which a standalone
// broker on loopback tells it to reach through the service URL too). The
// stall checks that the records flow through the proxy: none may arrive
// while it lasts.
func TestPulsarConnectionFaults(t *testing.T) {
	brokerURL, adminURL := testenv.PulsarURL(t)
	listener, proxyAddr := testenv.PulsarProxyListener(t)
	adminURL = strings.TrimRight(adminURL, "/")

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	_, sinkAddr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()

	proxy := proxyAt(t, proxyAddr, strings.TrimPrefix(brokerURL, "pulsar://"))

	topic := fmt.Sprintf("thalweg-pipeline-faults-%d", time.Now().UnixNano())
	adm := pulsartest.Admin{URL: adminURL}
	adm.CreatePartitioned(t, topic, 2)
	const (
		sub     = "thalweg"
		records = 4000
		rate    = 400 // per second: production spans the whole fault schedule
	)

	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	defer cancel()
	src, err := pulsar.Open(ctx, pulsar.Options{
		URL:          "pulsar://" + proxyAddr,
		ListenerName: listener,
		Topics:       []string{topic},
		Subscription: sub,
		Positions: pulsar.PositionFuncs{
			DeliveredFunc: func() (map[string]pulsar.Position, error) {
				d, err := store.Delivered("raw")
				out := make(map[string]pulsar.Position, len(d))
				for p, pos := range d {
					out[p] = pulsar.Position{Seq: pos.Seq, ID: pos.ID}
				}
				return out, err
			},
		},
		OperationTimeout: 10 * time.Second,
	})
	require.NoError(t, err)
	watch := &idWatch{Source: src}
	p, err := pipeline.New(pipeline.Options{
		Source:    watch,
		Assembler: batch.AssemblerOptions{Allocator: mem, MaxRows: 200, Linger: 20 * time.Millisecond},
		Store:     store,
		Anchor:    flightDest("raw", sinkAddr, mem),
	})
	if err != nil {
		src.Close()
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	var runErr, prodErr error
	ran, produced := make(chan struct{}), make(chan struct{})
	go func() { defer close(ran); runErr = p.Run(runCtx) }()
	var sent, persisted atomic.Int64
	go func() {
		defer close(produced)
		prodErr = produceSteadily(ctx, brokerURL, topic, records, rate, &sent, &persisted)
	}()
	// On an early failure, too, nothing is left running (and nothing
	// waits on a stalled or throttled connection).
	defer func() { proxy.Resume(); proxy.Slow(0); cancel(); <-produced; <-ran }()

	defer func() {
		if t.Failed() {
			t.Logf("pipeline stats %+v", p.Stats())
		}
	}()
	waitFor := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		testenv.WaitFor(t, d, what, cond)
	}
	taken := func() uint64 { return p.Stats().SourceRecords }
	waitFor("first records through the proxy", 15*time.Second, func() bool { return taken() >= 300 })
	require.EqualValues(t, 1, proxy.Accepted(),
		"lookups, answered with the proxy listener's address, and the consumers share the service URL's connection")

	// Stall: the connection stays open and silent. No record the producer
	// handed over after the stall began may arrive while it lasts, however
	// many the broker has persisted meanwhile; a connection that bypassed
	// the proxy would deliver them.
	proxy.Stall()
	last := sent.Load() // every later id reaches the broker after the stall began
	const afterStall = 800
	waitFor(fmt.Sprintf("the broker to persist %d records produced during the stall", afterStall), 30*time.Second,
		func() bool { return persisted.Load() >= last+afterStall })
	ready, why := p.Ready()
	require.LessOrEqual(t, watch.max.Load(), uint64(last),
		"a record produced during the stall arrived while the proxy stalled every connection")
	// A silent connection is noticed only when the client's keepalive
	// gives it up (tens of seconds), so readiness may still say yes here.
	t.Logf("readiness during the stall: %v %q", ready, why)
	proxy.Resume()
	waitFor("records produced during the stall, after it", 15*time.Second, func() bool { return watch.max.Load() > uint64(last) })

	// Cut while stalled: the client reconnects at once, but its new
	// connection hangs in the handshake; readiness says so.
	// Then the client looks the topic up again through the proxy and is
	// sent back to it.
	accepted := proxy.Accepted()
	proxy.Stall()
	require.Positive(t, proxy.Cut(), "connections to cut")
	before := taken()
	waitFor("not ready while the consumers reconnect", 20*time.Second, func() bool {
		ok, why := p.Ready()
		if !ok && strings.Contains(why, "not connected to the broker") {
			t.Logf("readiness while reconnecting: %q", why)
			return true
		}
		return false
	})
	proxy.Resume()
	waitFor("reconnect through the proxy after a cut", 30*time.Second, func() bool {
		return proxy.Accepted() > accepted && taken() > before
	})
	waitFor("ready again after the reconnect", 20*time.Second, func() bool { ok, _ := p.Ready(); return ok })

	// Throttle to far below the production rate until a record produced
	// 100 records after the throttle began came through it, then lift it.
	proxy.Slow(4 << 10)
	throttledID := uint64(min(sent.Load()+100, records))
	waitFor(fmt.Sprintf("record %d through the throttled proxy", throttledID), 30*time.Second,
		func() bool { return watch.max.Load() >= throttledID })
	proxy.Slow(0)

	// Cut again, with acknowledgements in flight.
	accepted = proxy.Accepted()
	require.Positive(t, proxy.Cut())
	waitFor("reconnect after the second cut", 20*time.Second, func() bool { return proxy.Accepted() > accepted })

	<-produced
	require.NoError(t, prodErr)
	waitFor("every record acknowledged upstream (backlog 0)", 30*time.Second, func() bool {
		return adm.Backlog(t, topic, sub, true) == 0
	})
	ok, why := p.Ready()
	require.True(t, ok, "ready after the faults: %s", why)

	stop()
	<-ran
	// An acknowledgement a cut interrupted is counted, not the run's
	// error: the broker redelivered those messages and the source
	// recognised and acknowledged them again (the backlog is 0).
	require.NoError(t, runErr)
	require.GreaterOrEqual(t, proxy.Cuts(), int64(2))

	// The sink, not the engine, says what arrived: every id, by payload.
	c := flighttest.Client(t, sinkAddr)
	stored, err := flight.ReadAll(flighttest.Ctx(t, 30*time.Second), c, []string{"raw"}, mem)
	require.NoError(t, err)
	defer flight.ReleaseAll(stored)
	tally := audit.NewTally()
	for _, s := range stored {
		require.NoError(t, tally.AddPayloadIDs(s.Rec))
	}
	rep := tally.Check(map[string]uint64{audit.PayloadPartition: records}, nil)
	require.True(t, rep.OK(), rep.String())
	t.Logf("sink: %s; proxy: %d connections accepted, %d cut; pipeline %+v",
		rep, proxy.Accepted(), proxy.Cuts(), p.Stats())
}
