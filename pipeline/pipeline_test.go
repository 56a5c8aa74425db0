package pipeline_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, testenv.LeakOptions()...) }

func flightDest(name, addr string, mem memory.Allocator) pipeline.Destination {
	return pipeline.Destination{
		Name: name,
		Dial: func(ctx context.Context) (lanes.Transport, error) {
			return flight.Dial(ctx, flight.Options{Endpoint: addr, Path: []string{name}, Allocator: mem})
		},
		Lane: pipeline.LaneOptions{Capacity: 32},
	}
}

// readStored tallies every row the receiver holds for path.
func readStored(t *testing.T, addr string, path []string) *audit.Tally {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := flighttest.Client(t, addr)
	stored, err := flight.ReadAll(flighttest.Ctx(t, 30*time.Second), c, path, mem)
	require.NoError(t, err)
	defer flight.ReleaseAll(stored)
	tally := audit.NewTally()
	for _, s := range stored {
		require.NoError(t, tally.AddRecord(s.Rec))
	}
	return tally
}

// TestEndToEndGeneratorToFlight runs the real pipeline — generator, assembler,
// anchor lane, Flight sink, durable receiver, Pebble store on disk — and
// checks at the sink that every record arrived, that the upstream acks and
// the durable delivered watermark reached the end, and that no Arrow memory leaked.
func TestEndToEndGeneratorToFlight(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()

	const records = 20000
	src, err := gen.NewSource(gen.Options{Seed: 7, Partitions: 3, Records: records, Mode: gen.ModeRaw})
	require.NoError(t, err)

	p, err := pipeline.New(pipeline.Options{
		Source:    src,
		Assembler: batch.AssemblerOptions{Allocator: mem, MaxRows: 500, Linger: 20 * time.Millisecond},
		Store:     store,
		Anchor:    flightDest("raw", addr, mem),
	})
	require.NoError(t, err)
	require.NoError(t, p.Run(flighttest.Ctx(t, 60*time.Second)))

	st := p.Stats()
	require.EqualValues(t, records, st.SourceRecords)
	require.EqualValues(t, records, st.Acked, "every record acknowledged upstream")

	// The sink, not the engine, says what arrived.
	last := src.Acked()
	var sum uint64
	for _, v := range last {
		sum += v
	}
	require.EqualValues(t, records, sum, "acked watermarks cover every produced seq")
	rep := readStored(t, addr, []string{"raw"}).Check(last, nil)
	require.True(t, rep.OK(), rep.String())

	delivered, err := store.Delivered("raw")
	require.NoError(t, err)
	for p, seq := range last {
		require.Equal(t, seq, delivered[p].Seq, "durable delivered of partition %s", p)
	}
}

// TestRejectedRecordsGoToDeadLetterAndAreCovered sends malformed JSON
// records: each reaches the dead-letter path with its reason, and the
// watermark still advances past it.
func TestRejectedRecordsGoToDeadLetterAndAreCovered(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()

	const records = 3000
	src, err := gen.NewSource(gen.Options{Seed: 3, Partitions: 2, Records: records, Mode: gen.ModeJSON, MalformedFraction: 0.1})
	require.NoError(t, err)
	p, err := pipeline.New(pipeline.Options{
		Source: src,
		Assembler: batch.AssemblerOptions{Allocator: mem, Mode: batch.ModeJSON, Schema: gen.JSONSchema(),
			IncludeMeta: true, MaxRows: 256, Linger: 20 * time.Millisecond},
		Store:  store,
		Anchor: flightDest("raw", addr, mem),
	})
	require.NoError(t, err)
	require.NoError(t, p.Run(flighttest.Ctx(t, 60*time.Second)))

	dead := src.DeadLetters()
	require.EqualValues(t, src.Generator().Malformed(), len(dead))
	require.NotEmpty(t, dead)
	skip := map[string]map[uint64]bool{}
	for _, d := range dead {
		require.NotEmpty(t, d.Reason)
		if skip[d.Partition] == nil {
			skip[d.Partition] = map[uint64]bool{}
		}
		skip[d.Partition][d.Seq] = true
	}
	require.EqualValues(t, len(dead), p.Stats().DeadLettered)
	require.EqualValues(t, records, p.Stats().Acked, "rejected records are acknowledged too, after their dead letter")

	rep := readStored(t, addr, []string{"raw"}).Check(src.Acked(), skip)
	require.True(t, rep.OK(), rep.String())
	require.EqualValues(t, records-len(dead), rep.Distinct)
}

// TestCancelStopsARunWhoseAnchorIsDown: with the anchor's sink unreachable
// from the start, the first batch can never be handed over; cancelling must
// still end Run within the drain timeout, acknowledging nothing.
func TestCancelStopsARunWhoseAnchorIsDown(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()

	src, err := gen.NewSource(gen.Options{Seed: 1, Partitions: 2})
	require.NoError(t, err)
	down := flightDest("raw", "127.0.0.1:1", mem) // nothing listens on port 1
	down.Lane.Capacity = 2
	down.Lane.Backoff = lanes.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond}
	p, err := pipeline.New(pipeline.Options{
		Source:       src,
		Assembler:    batch.AssemblerOptions{Allocator: mem, MaxRows: 100, Linger: 10 * time.Millisecond},
		Store:        store,
		Anchor:       down,
		DrainTimeout: 500 * time.Millisecond,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	testenv.WaitFor(t, 10*time.Second, "records taken and the anchor's lane failing to dial", func() bool {
		st := p.Stats()
		return st.SourceRecords > 0 && st.Anchor.Retries > 0
	})
	cancel()
	select {
	case err := <-done:
		require.Error(t, err, "an undrained run is not clean")
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel: intake is stuck behind the unreachable anchor")
	}
	require.Zero(t, p.Stats().Acked)
}

// TestDrainTimeoutCountsFromTheStop: the whole drain, from the cancel to
// Run's return, takes one DrainTimeout even when intake is blocked behind a
// full anchor lane whose sink does not acknowledge: one deadline covers the
// abandoned batch and the lanes' drain, since two in a row would be twice
// the bound terminationGracePeriodSeconds is sized from.
func TestDrainTimeoutCountsFromTheStop(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()

	src, err := gen.NewSource(gen.Options{Seed: 1, Partitions: 2})
	require.NoError(t, err)
	// A receiver that holds every ack back far longer than the drain: the
	// lane fills with sent, unconfirmed batches and Submit blocks.
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), AckDelay: time.Minute})
	down := flightDest("raw", addr, mem)
	down.Lane.Capacity = 2
	const drain = 3 * time.Second
	p, err := pipeline.New(pipeline.Options{
		Source:       src,
		Assembler:    batch.AssemblerOptions{Allocator: mem, MaxRows: 100, Linger: 10 * time.Millisecond},
		Store:        store,
		Anchor:       down,
		DrainTimeout: drain,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	testenv.WaitFor(t, 10*time.Second, "the anchor lane full of unconfirmed batches", func() bool {
		st := p.Stats().Anchor
		return st.Submitted >= uint64(st.Capacity) && st.Confirmed == 0
	})
	cancel()
	start := time.Now()
	select {
	case err := <-done:
		require.Error(t, err, "an undrained run is not clean")
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	took := time.Since(start)
	t.Logf("drain took %v", took)
	require.GreaterOrEqual(t, took, drain-100*time.Millisecond, "the drain gave up before its timeout")
	// Plus the Flight sink's own bound on closing a stream whose server
	// does not finish it (flight.Options.CloseTimeout).
	limit := drain + flight.DefaultCloseTimeout + time.Second
	require.Less(t, took, limit, "the drain took %v, more than one DrainTimeout (%v) and the sink's close", took, drain)
}

// brokerAway is a source whose broker goes away after the second Ack: every
// later Ack waits for an answer until Close ends it, as pulsar-client-go's
// acknowledgement does while its consumer reconnects.
type brokerAway struct {
	*gen.Source
	calls   atomic.Int64
	closing chan struct{}
	once    sync.Once
}

func (b *brokerAway) Ack(spans []batch.OffsetSpan) error {
	if b.calls.Add(1) <= 2 {
		return b.Source.Ack(spans)
	}
	<-b.closing
	return errors.New("consumer state is closed")
}

func (b *brokerAway) Close() error {
	b.once.Do(func() { close(b.closing) })
	return b.Source.Close()
}

// TestStopIsBoundedWhenUpstreamAcksHang: an upstream acknowledgement that
// never completes (the broker is away) does not hold the shutdown: at the
// drain deadline the acks still pending are abandoned, the source is closed
// under the one in progress (ending it: the acker's goroutine ends with the
// run, goleak), and Run returns nil — every record is durable at the
// anchor; the abandoned ones are counted (Stats.AckAbandoned) and come back
// from the broker to be recognised, so Run never waits on an Ack for as
// long as the broker is away.
func TestStopIsBoundedWhenUpstreamAcksHang(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()

	const records = 5000
	g, err := gen.NewSource(gen.Options{Seed: 12, Partitions: 2, Records: records, Mode: gen.ModeRaw})
	require.NoError(t, err)
	src := &brokerAway{Source: g, closing: make(chan struct{})}
	const drain = 2 * time.Second
	p, err := pipeline.New(pipeline.Options{
		Source:       src,
		Assembler:    batch.AssemblerOptions{Allocator: mem, MaxRows: 100, Linger: 10 * time.Millisecond},
		Store:        store,
		Anchor:       flightDest("raw", addr, mem),
		DrainTimeout: drain,
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- p.Run(context.Background()) }()
	select {
	case err := <-done:
		require.NoError(t, err, "every record is durable: the abandoned acks are not the run's failure")
	case <-time.After(drain + 20*time.Second):
		t.Fatal("Run did not return: the shutdown waits on an upstream ack that never completes")
	}
	t.Logf("run took %v", time.Since(start).Round(time.Millisecond))

	st := p.Stats()
	require.Positive(t, st.AckAbandoned, "no ack was abandoned: the test checked nothing")
	require.EqualValues(t, records, st.Acked+st.AckAbandoned, "acked and abandoned records make up the run")
	delivered, err := store.Delivered("raw")
	require.NoError(t, err)
	var sum uint64
	for _, pos := range delivered {
		sum += pos.Seq
	}
	require.EqualValues(t, records, sum, "every record durably delivered")
}

// flakyAck fails every third Ack without acknowledging anything, as a
// broker connection cut mid-acknowledgement does.
type flakyAck struct {
	*gen.Source
	calls atomic.Int64
}

func (f *flakyAck) Ack(spans []batch.OffsetSpan) error {
	if f.calls.Add(1)%3 == 0 {
		return errors.New("connection closed")
	}
	return f.Source.Ack(spans)
}

// TestFailedUpstreamAckIsCountedNotFatal: an upstream acknowledgement that
// fails is counted (Stats.AckErrors) and logged, and the run still ends
// without error — those records stay unacknowledged upstream and come back
// to be recognised, so nothing is lost and the shutdown was clean; a
// network blip is no reason to fail the run.
func TestFailedUpstreamAckIsCountedNotFatal(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()

	const records = 5000
	g, err := gen.NewSource(gen.Options{Seed: 11, Partitions: 2, Records: records, Mode: gen.ModeRaw})
	require.NoError(t, err)
	src := &flakyAck{Source: g}
	p, err := pipeline.New(pipeline.Options{
		Source:    src,
		Assembler: batch.AssemblerOptions{Allocator: mem, MaxRows: 100, Linger: 10 * time.Millisecond},
		Store:     store,
		Anchor:    flightDest("raw", addr, mem),
	})
	require.NoError(t, err)
	require.NoError(t, p.Run(flighttest.Ctx(t, 60*time.Second)))

	st := p.Stats()
	require.Positive(t, st.AckErrors, "no Ack failed: the test checked nothing")
	require.EqualValues(t, src.calls.Load()/3, st.AckErrors)
	delivered, err := store.Delivered("raw")
	require.NoError(t, err)
	last := map[string]uint64{}
	var sum uint64
	for p, pos := range delivered {
		last[p] = pos.Seq
		sum += pos.Seq
	}
	require.EqualValues(t, records, sum, "every record durably delivered")
	rep := readStored(t, addr, []string{"raw"}).Check(last, nil)
	require.True(t, rep.OK(), rep.String())
}
