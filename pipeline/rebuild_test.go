package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/observability"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
	"github.com/thalweg/thalweg/zerobus"
	zbserver "github.com/thalweg/thalweg/zerobus/server"
)

const zbTable = "main.default.events"

// zbHarness is a Zerobus-compatible server that can be stopped and started
// again on the same address and data directory, as an operator would.
type zbHarness struct {
	t    *testing.T
	dir  string
	addr string

	mu     sync.Mutex
	srv    *zbserver.Server
	served chan error
}

// newZB reserves a loopback port; the server is not running until start.
func newZB(t *testing.T) *zbHarness {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h := &zbHarness{t: t, dir: t.TempDir(), addr: lis.Addr().String()}
	require.NoError(t, lis.Close())
	t.Cleanup(h.stop)
	return h
}

func (h *zbHarness) start() {
	h.mu.Lock()
	defer h.mu.Unlock()
	srv, err := zbserver.New(zbserver.Options{Dir: h.dir})
	require.NoError(h.t, err)
	var lis net.Listener
	testenv.WaitFor(h.t, 5*time.Second, "the old listener's port on "+h.addr+" to free", func() bool {
		lis, err = net.Listen("tcp", h.addr)
		return err == nil
	})
	h.srv, h.served = srv, make(chan error, 1)
	go func() { h.served <- srv.Serve(lis) }()
}

func (h *zbHarness) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.srv == nil {
		return
	}
	if err := h.srv.Stop(); err != nil {
		h.t.Errorf("zerobus server Stop: %v", err)
	}
	if err := <-h.served; err != nil {
		h.t.Errorf("zerobus server Serve: %v", err)
	}
	h.srv = nil
}

// tally reads the table back: what the secondary durably holds.
func (h *zbHarness) tally() *audit.Tally {
	h.t.Helper()
	lines, err := zbserver.ReadTable(h.dir, zbTable)
	require.NoError(h.t, err)
	t := audit.NewTally()
	for _, l := range lines {
		var row struct {
			T *string `json:"topic"`
			P *int32  `json:"partition"`
			S *uint64 `json:"seq"`
		}
		require.NoError(h.t, json.Unmarshal(l, &row), "%s", l)
		require.True(h.t, row.T != nil && row.P != nil && row.S != nil, "row without topic/partition/seq: %s", l)
		t.Add(batch.JoinPartition(*row.T, *row.P), *row.S)
	}
	return t
}

// confirmedPrefix follows a lane's OnConfirm: the gap-free prefix of seqs,
// per partition, the destination durably acknowledged.
type confirmedPrefix struct {
	mu   sync.Mutex
	seqs map[string]uint64
}

func (c *confirmedPrefix) onConfirm(_ uint64, spans []batch.OffsetSpan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sp := range spans {
		if cur := c.seqs[sp.Partition]; sp.First <= cur+1 && sp.Last > cur {
			c.seqs[sp.Partition] = sp.Last
		}
	}
}

func (c *confirmedPrefix) get(p string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seqs[p]
}

func (h *zbHarness) dest(name string, mem memory.Allocator, conf *confirmedPrefix) pipeline.Destination {
	zo := zerobus.Options{
		Endpoint: "http://" + h.addr, Table: zbTable, TLS: zerobus.TLSOptions{Insecure: true},
		Allocator: mem, OpenTimeout: 2 * time.Second, AckTimeout: 5 * time.Second,
	}
	lo := pipeline.LaneOptions{Capacity: 8, Backoff: lanes.Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond}}
	if conf != nil {
		lo.OnConfirm = conf.onConfirm
	}
	return pipeline.Destination{
		Name:  name,
		Dial:  func(ctx context.Context) (lanes.Transport, error) { return zerobus.Dial(ctx, zo) },
		Lane:  lo,
		Queue: 8,
	}
}

// leadWatch samples, while the pipeline runs, a secondary's durable
// coverage against what it durably acknowledged and against the anchor's
// durable delivered watermark. Coverage is read first: the other two only
// grow, so a violation seen here is real.
type leadWatch struct {
	stop    chan struct{}
	done    chan struct{}
	samples int
	errs    []string
}

func watchLead(store *offsetstore.Store, anchor, dest string, conf *confirmedPrefix) *leadWatch {
	w := &leadWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(15 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			cov, err1 := store.Coverage(dest)
			del, err2 := store.Delivered(anchor)
			if err1 != nil || err2 != nil {
				w.errs = append(w.errs, fmt.Sprint(err1, err2))
				continue
			}
			w.samples++
			for p, c := range cov {
				if a := del[p].Seq; c.Seq > a {
					w.errs = append(w.errs, fmt.Sprintf("%s coverage %d leads the anchor's delivered %d", p, c.Seq, a))
				}
				if acked := conf.get(p); c.Seq > acked {
					w.errs = append(w.errs, fmt.Sprintf("%s coverage %d leads what %s acknowledged (%d)", p, c.Seq, dest, acked))
				}
			}
		}
	}()
	return w
}

func (w *leadWatch) finish(t *testing.T) {
	close(w.stop)
	<-w.done
	require.Empty(t, w.errs, "coverage led")
	require.Greater(t, w.samples, 10)
}

func sum(m map[string]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}

// metricValue returns the value of an int64 gauge or sum for destination.
func metricValue(t *testing.T, r *sdkmetric.ManualReader, name, dest string) (int64, bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			var pts []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				pts = d.DataPoints
			case metricdata.Sum[int64]:
				pts = d.DataPoints
			}
			for _, p := range pts {
				if v, ok := p.Attributes.Value(observability.AttrDestination); ok && v.AsString() == dest {
					return p.Value, true
				}
			}
		}
	}
	return 0, false
}

// TestSecondaryOutageCatchesUpFromRaw runs the real pipeline — rate-limited
// generator, Flight receiver as raw anchor, Zerobus-compatible server as a
// secondary — and stops the Zerobus server twice under load: once in the
// middle (live traffic continues after it comes back, so catch-up and live
// stream meet at a seam) and once across the end of the source. While it
// is down the upstream acks keep pace with the source and reach the end;
// after it is back, catch-up from the raw anchor fills its table with every
// record; and throughout, its coverage never leads what it acknowledged or
// what the anchor delivered.
func TestSecondaryOutageCatchesUpFromRaw(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	_, rawAddr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	zb := newZB(t)
	zb.start()

	const records, rate = 12000, 6000.0
	src, err := gen.NewSource(gen.Options{Seed: 5, Partitions: 3, Records: records, Rate: rate})
	require.NoError(t, err)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()

	conf := &confirmedPrefix{seqs: map[string]uint64{}}
	p, err := pipeline.New(pipeline.Options{
		Source:        src,
		Assembler:     batch.AssemblerOptions{Allocator: mem, MaxRows: 200, Linger: 20 * time.Millisecond},
		Store:         store,
		Anchor:        flightDest("raw", rawAddr, mem),
		Secondaries:   []pipeline.Destination{zb.dest("zb", mem, conf)},
		Rebuild:       flight.Rebuild(flighttest.Client(t, rawAddr), []string{"raw"}, mem),
		RebuildChunk:  1000,
		MeterProvider: mp,
		DrainTimeout:  30 * time.Second,
	})
	require.NoError(t, err)
	watch := watchLead(store, "raw", "zb", conf)
	ran := make(chan error, 1)
	go func() { ran <- p.Run(flighttest.Ctx(t, 60*time.Second)) }()

	// Outage 1, mid-stream, once the secondary has confirmed records.
	testenv.WaitFor(t, 20*time.Second, "a fifth of the records acknowledged upstream and confirmed by the secondary", func() bool {
		st := p.Stats()
		return st.Acked >= records/5 && st.Secondaries[0].Confirmed > 0
	})
	zb.stop()
	down := time.Now()
	ackedAtStop := p.Stats().Acked
	// The rate is measured over a quarter of the records acknowledged
	// while the secondary is down, after its queue overflowed.
	testenv.WaitFor(t, 20*time.Second, "a quarter of the records acknowledged upstream and dropped batches while the secondary is down", func() bool {
		st := p.Stats()
		return st.Acked-ackedAtStop >= records/4 && st.Secondaries[0].Dropped > 0
	})
	ackedWhileDown := p.Stats().Acked - ackedAtStop
	rateWhileDown := float64(ackedWhileDown) / time.Since(down).Seconds()
	t.Logf("outage 1: %d records acknowledged upstream in %.2fs (%.0f rec/s; source rate %.0f); secondary dropped %d batches",
		ackedWhileDown, time.Since(down).Seconds(), rateWhileDown, rate, p.Stats().Secondaries[0].Dropped)
	require.Greater(t, rateWhileDown, 0.6*rate, "the upstream acks slowed down while the secondary was down")
	require.NotZero(t, p.Stats().Secondaries[0].Dropped, "the outage did not overflow the secondary's queue")
	zb.start()

	// Outage 2, across the end of the source: every record is acknowledged
	// upstream while the secondary is still down. It starts once the
	// secondary, back, has confirmed batches again, and while records are
	// still to come.
	confirmed := p.Stats().Secondaries[0].Confirmed
	testenv.WaitFor(t, 20*time.Second, "the secondary confirming batches again after outage 1", func() bool {
		return p.Stats().Secondaries[0].Confirmed > confirmed
	})
	require.Less(t, p.Stats().Acked, uint64(records), "the source ended before outage 2")
	zb.stop()
	testenv.WaitFor(t, 20*time.Second, "every record acknowledged upstream", func() bool { return sum(src.Acked()) == records })
	st := p.Stats()
	require.EqualValues(t, records, st.Acked)
	require.NotZero(t, st.Secondaries[0].CoverageLag, "the secondary is down, its coverage must lag")
	lag, ok := metricValue(t, reader, observability.LaneCoverageLag, "zb")
	require.True(t, ok, "no %s series for zb", observability.LaneCoverageLag)
	require.Positive(t, lag)
	t.Logf("all %d records acknowledged upstream while the secondary is down; coverage lag %d records", records, lag)
	// Run keeps going, and the lane keeps redialling, while the secondary
	// is down and behind.
	retries := p.Stats().Secondaries[0].Retries
	testenv.WaitFor(t, 10*time.Second, "the secondary's lane to redial while it is down", func() bool {
		return p.Stats().Secondaries[0].Retries > retries
	})
	select {
	case err := <-ran:
		t.Fatalf("Run returned while the secondary was down and behind: %v", err)
	default:
	}
	zb.start()

	require.NoError(t, <-ran)
	watch.finish(t)

	st = p.Stats()
	sec := st.Secondaries[0]
	t.Logf("secondary: dropped %d live batches, rebuilt %d records from raw, lag %d", sec.Dropped, sec.Rebuilt, sec.CoverageLag)
	require.NotZero(t, sec.Rebuilt)
	require.Zero(t, sec.CoverageLag)
	require.False(t, sec.Detached)
	rebuilt, ok := metricValue(t, reader, observability.LaneRebuiltRecords, "zb")
	require.True(t, ok)
	require.EqualValues(t, sec.Rebuilt, rebuilt)
	lag, _ = metricValue(t, reader, observability.LaneCoverageLag, "zb")
	require.Zero(t, lag)

	produced := src.Produced()
	rep := zb.tally().Check(produced, nil)
	require.True(t, rep.OK(), "secondary table: %s", rep)
	t.Logf("secondary table: %s", rep)
	rep = readStored(t, rawAddr, []string{"raw"}).Check(produced, nil)
	require.True(t, rep.OK(), "raw anchor: %s", rep)

	cov, err := store.Coverage("zb")
	require.NoError(t, err)
	del, err := store.Delivered("raw")
	require.NoError(t, err)
	for part, last := range produced {
		require.Equal(t, last, del[part].Seq)
		require.Equal(t, last, cov[part].Seq, "coverage of partition %s", part)
	}
}

// resumed continues a deterministic generator after a restart, as a broker
// would: records at or below the durable delivered watermark are not
// delivered again.
type resumed struct {
	*gen.Source
	after map[string]offsetstore.Position
}

func (r *resumed) Next(ctx context.Context, rec *batch.Record) error {
	for {
		if err := r.Source.Next(ctx, rec); err != nil {
			return err
		}
		if rec.Seq > r.after[rec.Partition].Seq {
			return nil
		}
	}
}

// TestSecondaryRestartCatchesUpFromRaw: run 1 with the secondary down the
// whole time — the anchor delivers and acknowledges everything, the
// secondary has no coverage; run 2 with it up: at startup its coverage is
// behind the anchor's delivered watermark, and catch-up from the raw anchor
// fills its table with the records of run 1 while run 2's live records
// flow.
func TestSecondaryRestartCatchesUpFromRaw(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	_, rawAddr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	zb := newZB(t) // not started: the secondary is down for all of run 1
	client := flighttest.Client(t, rawAddr)
	genOpts := gen.Options{Seed: 9, Partitions: 2, Records: 4000}
	options := func(src pipeline.Source, conf *confirmedPrefix, drain time.Duration) pipeline.Options {
		return pipeline.Options{
			Source:       src,
			Assembler:    batch.AssemblerOptions{Allocator: mem, MaxRows: 250, Linger: 20 * time.Millisecond},
			Store:        store,
			Anchor:       flightDest("raw", rawAddr, mem),
			Secondaries:  []pipeline.Destination{zb.dest("zb", mem, conf)},
			Rebuild:      flight.Rebuild(client, []string{"raw"}, mem),
			RebuildChunk: 700,
			DrainTimeout: drain,
		}
	}

	// Run 1.
	src1, err := gen.NewSource(genOpts)
	require.NoError(t, err)
	p1, err := pipeline.New(options(src1, &confirmedPrefix{seqs: map[string]uint64{}}, time.Second))
	require.NoError(t, err)
	err = p1.Run(flighttest.Ctx(t, 30*time.Second))
	require.ErrorContains(t, err, "zb", "only the secondary fails to drain")
	require.EqualValues(t, genOpts.Records, p1.Stats().Acked)
	cov, err := store.Coverage("zb")
	require.NoError(t, err)
	require.Empty(t, cov)
	del1, err := store.Delivered("raw")
	require.NoError(t, err)
	require.EqualValues(t, genOpts.Records, sumPos(del1))

	// Run 2: the same generator, longer, resumed after the delivered watermark.
	zb.start()
	genOpts.Records = 8000
	genOpts.Rate = 4000
	g2, err := gen.NewSource(genOpts)
	require.NoError(t, err)
	conf := &confirmedPrefix{seqs: map[string]uint64{}}
	p2, err := pipeline.New(options(&resumed{Source: g2, after: del1}, conf, 30*time.Second))
	require.NoError(t, err)
	watch := watchLead(store, "raw", "zb", conf)
	require.NoError(t, p2.Run(flighttest.Ctx(t, 30*time.Second)))
	watch.finish(t)

	sec := p2.Stats().Secondaries[0]
	t.Logf("run 2 secondary: rebuilt %d records from raw, dropped %d live batches", sec.Rebuilt, sec.Dropped)
	require.GreaterOrEqual(t, sec.Rebuilt, uint64(4000), "run 1's records come from the raw anchor")
	produced := g2.Produced()
	rep := zb.tally().Check(produced, nil)
	require.True(t, rep.OK(), "secondary table: %s", rep)
	cov, err = store.Coverage("zb")
	require.NoError(t, err)
	del, err := store.Delivered("raw")
	require.NoError(t, err)
	for part, last := range produced {
		require.Equal(t, last, del[part].Seq)
		require.Equal(t, last, cov[part].Seq, "coverage of partition %s", part)
	}
}

func sumPos(m map[string]offsetstore.Position) uint64 {
	var n uint64
	for _, p := range m {
		n += p.Seq
	}
	return n
}
