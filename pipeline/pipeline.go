package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/instruments"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/observability"
	"github.com/thalweg/thalweg/offsetstore"
)

// DefaultDrainTimeout bounds the graceful part of shutdown.
const DefaultDrainTimeout = 30 * time.Second

// DefaultRebuildChunk is the default Options.RebuildChunk.
const DefaultRebuildChunk = 16384

// recordsReportEvery bounds how far thalweg.source.records may lag the
// records taken while no batch is emitted (see Pipeline.reportRecords).
const recordsReportEvery = 1024

var (
	// ErrInvalidOptions wraps every Options validation error.
	ErrInvalidOptions = errors.New("pipeline: invalid options")
	// ErrDeadLetter wraps a failure to hand a rejected record to the
	// dead-letter destination; it stops the pipeline.
	ErrDeadLetter = errors.New("pipeline: dead-letter write failed")
)

// Source is where records come from. The pipeline calls Next and
// DeadLetter from one goroutine (the source loop), Ack from another (the
// acker), and Close once, last.
type Source interface {
	// Next fills rec with the next record, blocking until one is available.
	// It returns io.EOF when the source is exhausted and ctx.Err() when ctx
	// ends. rec's byte slices may be reused by the source on the next call.
	Next(ctx context.Context, rec *batch.Record) error
	// Ack acknowledges upstream every record covered by spans. The pipeline
	// calls it only for spans the offset store reported durably delivered,
	// in delivery order; one call may carry the spans of several batches
	// (those released while the previous call ran), so a partition may
	// appear in it more than once.
	Ack(spans []batch.OffsetSpan) error
	// DeadLetter durably stores a rejected record with its reason before it
	// returns; rec is only valid during the call.
	DeadLetter(ctx context.Context, rec *batch.Record, reason string) error
	// Close releases the source. Called once, after the last Ack returned
	// or while one is in progress: when the drain deadline passed with an
	// Ack that does not return (its broker is away), the pipeline abandons
	// it and calls Close, which must return in bounded time and make that
	// Ack return (with an error) in bounded time, possibly after Close
	// returned; Run does not wait for it.
	Close() error
}

// Destination is one sink with its lane.
type Destination struct {
	// Name is the lane's destination: offset-store key and metric attribute.
	Name string
	// Dial builds the transport; the lane calls it again after poisoning.
	Dial func(ctx context.Context) (lanes.Transport, error)
	// Lane tunes the lane; the pipeline sets the rest of its lanes.Options.
	Lane LaneOptions
	// Queue is, for a secondary, how many live batches may wait for its
	// lane. Batches offered to a full queue are dropped for that secondary
	// and later read back from the raw anchor (Options.Rebuild). Default:
	// DefaultQueueFactor × the lane capacity.
	Queue int
	// QueueBytes bounds the same queue by memory (the batches'
	// AllocatedBytes): a batch that does not fit beside the queued ones is
	// dropped the same way; an empty queue takes any batch. Default:
	// DefaultQueueFactor × the lane's MaxBytes.
	QueueBytes int64
}

// Options configures a Pipeline.
type Options struct {
	// Source is required. Run takes ownership and closes it.
	Source Source
	// Assembler configures batching. Emit and OnReject belong to the
	// pipeline and must be left nil (New refuses them, rather than
	// overwrite what the caller set).
	Assembler batch.AssemblerOptions
	// Store is the offset store; required. The pipeline flushes it during
	// shutdown but does not close it.
	Store *offsetstore.Store
	// Anchor is the raw-anchor destination: it gates the upstream acks.
	Anchor Destination
	// Secondaries record coverage only and never gate the source.
	Secondaries []Destination
	// Rebuild reads ranges back from the raw anchor so that a secondary
	// that is behind (restarted, added to a running deployment, or whose
	// queue overflowed) catches up without a gap; see flight.Rebuild for a
	// Flight receiver anchor. Nil means secondaries cannot catch up: one
	// that would need to is detached for the run (its coverage stays
	// where it is).
	Rebuild RebuildFunc
	// RebuildChunk bounds the seqs of one partition asked for in one
	// Rebuild call (the served batches may hold more). Default
	// DefaultRebuildChunk.
	RebuildChunk uint64
	// MeterProvider for the pipeline's and the lanes' instruments. Default no-op.
	MeterProvider metric.MeterProvider
	// DrainTimeout bounds steps 2–8 of the shutdown (one deadline for all of
	// them). Default DefaultDrainTimeout.
	DrainTimeout time.Duration
	// MaxUnacked bounds the records taken from the source and not yet
	// released by the upstream ack path (acknowledged, or given up after a
	// failed Ack): the source loop stops calling Next at the bound and
	// resumes as acks come back. It is the memory bound of the pipeline for
	// any source (source/pulsar also applies its own). Default 0: no bound
	// beyond the lanes' capacity.
	MaxUnacked int
	// Unordered says the source is not monotone: within a partition it may
	// hand over a seq at or below one it handed over before, and it sees
	// only some of a partition's seqs — several consumers of a Shared or
	// KeyShared subscription (source/pulsar: every subscription type but
	// Exclusive and Failover, unless SoleConsumer), where one consumer takes
	// over the messages another dropped. It sets Assembler.Unordered (a
	// lower seq starts a new span instead of stopping the run) and switches
	// the secondaries to the unordered coverage rules (see the package
	// documentation, "Coverage"). Assembler.Unordered alone implies it.
	// Default false: the source is ordered, and a seq that goes down stops
	// the run with batch.ErrSeqOrder.
	Unordered bool
	// LingerWhenIdle holds every batch until a limit or Assembler.Linger
	// flushes it, also while the raw anchor has nothing to do. Default
	// false: while every emitted batch is durable at the anchor (nothing
	// in flight), the buffered records are flushed at once — a record
	// taken then is sent as it comes, and those that gathered while a
	// batch was in flight go out as soon as it is durable — so the linger
	// only bounds how long records wait behind a batch in flight. Under
	// load the anchor always has a batch in flight and batches fill as
	// before.
	LingerWhenIdle bool
	// Logger defaults to slog.Default(), so that a sink that cannot be
	// reached is logged (by its lane) even when nobody configured a logger.
	Logger *slog.Logger
}

func (o *Options) validate() error {
	var errs []error
	if o.Source == nil {
		errs = append(errs, errors.New("Options.Source is required"))
	}
	if o.Store == nil {
		errs = append(errs, errors.New("Options.Store is required"))
	}
	names := map[string]bool{}
	check := func(field string, d Destination) {
		switch {
		case d.Name == "":
			errs = append(errs, fmt.Errorf("%s.Name is required", field))
		case names[d.Name]:
			errs = append(errs, fmt.Errorf("%s.Name %q is used twice", field, d.Name))
		}
		names[d.Name] = true
		if d.Dial == nil {
			errs = append(errs, fmt.Errorf("%s.Dial is required", field))
		}
		if d.Queue < 0 {
			errs = append(errs, fmt.Errorf("%s.Queue must be >= 0", field))
		}
		if d.QueueBytes < 0 {
			errs = append(errs, fmt.Errorf("%s.QueueBytes must be >= 0", field))
		}
	}
	check("Options.Anchor", o.Anchor)
	for i, d := range o.Secondaries {
		check(fmt.Sprintf("Options.Secondaries[%d]", i), d)
	}
	if o.Assembler.Emit != nil {
		errs = append(errs, errors.New("Options.Assembler.Emit is set by the pipeline; leave it nil"))
	}
	if o.Assembler.OnReject != nil {
		errs = append(errs, errors.New("Options.Assembler.OnReject is set by the pipeline (rejects go to Source.DeadLetter); leave it nil"))
	}
	if o.DrainTimeout < 0 {
		errs = append(errs, errors.New("Options.DrainTimeout must be >= 0"))
	}
	if o.MaxUnacked < 0 {
		errs = append(errs, errors.New("Options.MaxUnacked must be >= 0"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

// withDefaults replaces every zero field by its documented default.
func (o *Options) withDefaults() {
	if o.MeterProvider == nil {
		o.MeterProvider = noop.NewMeterProvider()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.RebuildChunk == 0 {
		o.RebuildChunk = DefaultRebuildChunk
	}
}

// Stats is a snapshot of a running pipeline's counters.
type Stats struct {
	Assembler batch.Stats
	Acked     uint64 // records acknowledged upstream
	AckErrors uint64 // upstream Ack calls that failed (counted, not fatal: see Run)
	// AckAbandoned counts records durable at the raw anchor whose upstream
	// ack the shutdown abandoned at the drain deadline (the broker did not
	// answer); the broker redelivers them.
	AckAbandoned  uint64
	DeadLettered  uint64
	Anchor        LaneStats
	Secondaries   []LaneStats
	SourceRecords uint64 // records taken from the source
	// What the source could not hand out, when it can tell (LossReporter):
	// messages its client discarded, records lost in the gaps they left,
	// and records missing in gaps the upstream made (trim, expiry, skip,
	// reset).
	SourceDiscarded, SourceLost, SourceSkipped uint64
}

// LossReporter is implemented by a Source that knows of records it could
// not hand out (source/pulsar). Loss must be safe for concurrent use.
type LossReporter interface {
	Loss() (discarded, lost, skipped uint64)
}

// LaneStats describes one lane.
type LaneStats struct {
	Name      string
	State     lanes.State
	Submitted uint64
	Delivered uint64
	Pending   uint64
	Capacity  int
	Confirmed uint64 // batches confirmed durable
	Bursts    uint64 // durable waits; Confirmed/Bursts is the mean coalesce ratio
	Rows      uint64 // rows of the confirmed batches: records delivered durably
	Retries   uint64 // failed attempts retried: sends and waits on a stream, redials (either class)
	Rebuilds  uint64 // transports torn down and rebuilt
	Replayed  uint64 // rows sent again after a rebuild: the most the sink may hold twice (it may hold none of them)
	// DrainTimeouts counts the lane's graceful drains that
	// shutdown.drain_timeout cut short (0 or 1 per pipeline run).
	DrainTimeouts uint64

	// Secondaries only.
	CoverageLag uint64 // records the coverage is behind the anchor's delivered watermark
	Rebuilt     uint64 // records fed from the raw anchor (catch-up)
	// Skipped counts seqs of caught-up ranges the raw anchor holds no
	// record for (the source skipped them: a broker's TTL expiry, a cursor
	// reset forward), covered by zero-row batches.
	Skipped    uint64
	Dropped    uint64 // live batches dropped because the queue was full
	CatchingUp bool   // reading a range back from the raw anchor right now
	Detached   bool   // stopped receiving for this run: a hole it cannot fill
}

// Pipeline runs one source into its destinations. Create it with New, run
// it once with Run; Stats and Ready may be called from any goroutine.
type Pipeline struct {
	opts    Options
	log     *slog.Logger
	metrics *instruments.PipelineMetrics
	asm     *batch.Assembler
	anchor  *lanes.Lane[lanes.RawAnchor]
	seconds []*secondary
	acks    *acker
	// unacked times the source loop's waits at MaxUnacked; nil without
	// the bound.
	unacked *instruments.UnackedWait

	emitted chan *batch.Batch // assembler → dispatcher
	// abandon is closed when the drain deadline passed after intake was
	// asked to stop: a batch that cannot be handed over any more is
	// released unacknowledged (it comes back after a restart) instead of
	// holding the assembler, and so the source loop, forever.
	abandon chan struct{}

	// inflight counts the batches emitted and not yet confirmed by the
	// anchor (durable or failed); idle is signalled when it drops to 0
	// (see Options.LingerWhenIdle).
	inflight atomic.Int64
	idle     chan struct{}

	records atomic.Uint64
	// reported is the part of records added to thalweg.source.records so
	// far: the source loop counts records in the atomic only, and
	// reportRecords adds the difference to the instrument per batch, every
	// recordsReportEvery records and at the end of the loop (an instrument
	// call per record was an eighth of thalweg run's CPU).
	reported     atomic.Uint64
	deadLettered atomic.Uint64
	ran          atomic.Bool
	sourceUp     atomic.Bool

	failOnce sync.Once
	failErr  error
	failed   chan struct{} // closed by fail

	// drainOnce sets drainAt, the moment the drain began (see drainDeadline).
	drainOnce sync.Once
	drainAt   time.Time
}

// drainDeadline is when the drain must be over: DrainTimeout after it began,
// that is after the first of the stop (ctx ended or the pipeline failed, seen
// by the watchdog) and the start of shutdown (the source ended). The watchdog
// and shutdown share it: a shutdown that starts late, because intake was
// blocked behind a full anchor lane until the watchdog abandoned the batch,
// gets what is left of the one DrainTimeout, not a fresh one (which made the
// drain take two or three times the bound a supervisor's stop timeout is
// sized from). Safe from any goroutine.
func (p *Pipeline) drainDeadline() time.Time {
	p.drainOnce.Do(func() { p.drainAt = time.Now() })
	return p.drainAt.Add(p.opts.DrainTimeout)
}

// nestedErr makes an invalid-options error of a part the pipeline builds
// (a lane, the assembler; sentinel is that package's ErrInvalidOptions) one
// of the pipeline's own, naming the field by its path. The part validates
// its options itself, so that its rules live in one place.
// what names the part in any other error.
func nestedErr(field string, sentinel error, what string, err error) error {
	if errors.Is(err, sentinel) {
		return fmt.Errorf("%w: %s: %w", ErrInvalidOptions, field, err)
	}
	return fmt.Errorf("pipeline: %s: %w", what, err)
}

// New validates opts and builds the lanes; nothing runs until Run.
func New(opts Options) (*Pipeline, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.withDefaults()
	pm, err := instruments.NewPipelineMetrics(opts.MeterProvider)
	if err != nil {
		return nil, err
	}
	p := &Pipeline{
		opts:    opts,
		log:     opts.Logger,
		metrics: pm,
		emitted: make(chan *batch.Batch, 2),
		idle:    make(chan struct{}, 1),
		abandon: make(chan struct{}),
		failed:  make(chan struct{}),
	}
	p.acks = newAcker(opts.Source, pm, opts.Logger)

	anchor, err := lanes.New[lanes.RawAnchor](p.laneOptions(opts.Anchor, opts.Store))
	if err != nil {
		return nil, nestedErr("Options.Anchor.Lane", lanes.ErrInvalidOptions, fmt.Sprintf("anchor lane %q", opts.Anchor.Name), err)
	}
	p.anchor = anchor
	unordered := opts.Unordered || opts.Assembler.Unordered
	for i, d := range opts.Secondaries {
		gate := newCoverageGate(d.Name, opts.Store)
		if unordered {
			gate = newUnorderedGate(d.Name, opts.Store)
		}
		// The gate clamps coverage to the anchor's delivered watermark.
		l, err := lanes.New[lanes.Coverage](p.laneOptions(d, gate))
		if err != nil {
			p.closeLanes(context.Background())
			return nil, nestedErr(fmt.Sprintf("Options.Secondaries[%d].Lane", i), lanes.ErrInvalidOptions, fmt.Sprintf("secondary lane %q", d.Name), err)
		}
		cm, err := instruments.NewCoverageMetrics(opts.MeterProvider, d.Name, gate.lag)
		if err != nil {
			_ = l.Close(context.Background())
			p.closeLanes(context.Background())
			return nil, fmt.Errorf("pipeline: secondary %q: %w", d.Name, err)
		}
		q := d.Queue
		if q == 0 {
			q = DefaultQueueFactor * l.Capacity()
		}
		s := newSecondary(d.Name, l, gate, cm, opts.Rebuild, opts.RebuildChunk, q, opts.Logger)
		s.maxQueued = d.QueueBytes
		if s.maxQueued == 0 {
			s.maxQueued = DefaultQueueFactor * l.MaxBytes()
		}
		s.unordered = unordered
		p.seconds = append(p.seconds, s)
	}

	ao := opts.Assembler
	ao.Unordered = unordered
	ao.Emit = p.emit
	ao.OnReject = p.reject
	asm, err := batch.NewAssembler(ao)
	if err != nil {
		p.closeLanes(context.Background())
		return nil, nestedErr("Options.Assembler", batch.ErrInvalidOptions, "assembler", err)
	}
	p.asm = asm
	for _, s := range p.seconds {
		s.schema = asm.Schema()
	}
	if opts.MaxUnacked > 0 {
		// Last: nothing after it can fail and leave its callback behind.
		if p.unacked, err = instruments.NewUnackedWait(opts.MeterProvider, observability.BoundPipeline); err != nil {
			p.closeLanes(context.Background())
			return nil, fmt.Errorf("pipeline: %w", err)
		}
	}
	return p, nil
}

func (p *Pipeline) laneOptions(d Destination, c lanes.Committer) lanes.Options {
	return d.Lane.lanesOptions(d, c, p.opts.MeterProvider, p.log)
}

// fail records the first fatal error and stops the source loop.
func (p *Pipeline) fail(err error) {
	p.failOnce.Do(func() {
		p.failErr = err
		close(p.failed)
	})
}

// emit is the assembler's Emit: it runs inside Add or on the linger timer
// and hands the batch (and its ownership) to the dispatcher. A full channel
// blocks the assembler, which blocks the source: backpressure.
func (p *Pipeline) emit(b *batch.Batch) {
	p.reportRecords()
	p.metrics.BatchFlushed(context.Background(), b.Reason.String(), b.NumRows(), b.BufferBytes())
	p.inflight.Add(1)
	select {
	case p.emitted <- b:
	case <-p.abandon:
		b.Release()
	}
}

// reject is the assembler's OnReject: the record goes to the dead-letter
// destination before the batch covering it can be emitted, so before its
// span can be acknowledged.
func (p *Pipeline) reject(rec *batch.Record, reason error) {
	kind := "rejected"
	var re *batch.RejectError
	if errors.As(reason, &re) {
		kind = re.Kind.String()
	}
	// The dead-letter write is part of delivering this record: it is not
	// cancelled by the intake stop, only bounded by the drain timeout.
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.DrainTimeout)
	defer cancel()
	if err := p.opts.Source.DeadLetter(ctx, rec, reason.Error()); err != nil {
		p.fail(fmt.Errorf("%w: partition %s seq %d: %w", ErrDeadLetter, rec.Partition, rec.Seq, err))
		return
	}
	p.deadLettered.Add(1)
	p.metrics.DLQRecords(context.Background(), kind, 1)
}

// dispatch submits every emitted batch to the anchor lane and offers it to
// the secondaries. It owns each batch it receives and runs until emitted is
// closed.
func (p *Pipeline) dispatch(ctx context.Context) {
	warned := false
	for b := range p.emitted {
		p.waitForStore(ctx)
		for _, s := range p.seconds {
			// Unordered: held before the anchor can make it durable (a
			// no-op for an ordered source).
			s.gate.hold(b.Spans)
			s.offer(b)
		}
		tok := lanes.RawAnchor{OnDurable: p.onAnchorDurable(b.Spans, b.NumRecords())}
		if ackBeforeDurable {
			p.acks.enqueue(b.Spans, b.NumRecords())
			tok = lanes.RawAnchor{}
		}
		if err := p.anchor.Submit(ctx, b, tok); err != nil {
			// Only a closed or failed lane or a dead context end up here:
			// the batch is not acknowledged and is redelivered after a
			// restart. Every later batch fails the same way: one line.
			err = p.submitErr(err)
			if !warned {
				p.log.Warn("anchor submit failed; the batches still queued are not acknowledged and come back after a restart", "err", err)
				warned = true
			}
			p.fail(err)
		}
		b.Release()
	}
}

// submitErr wraps the error of a failed anchor Submit. Once the drain
// deadline has passed the lanes' context is cancelled, and "context
// canceled" alone would be the run's last ERROR line: it names the drain
// budget that ran out and the lane's state instead (the lane's own
// "lane failing" line has the sink's cause).
func (p *Pipeline) submitErr(err error) error {
	select {
	case <-p.abandon:
	default:
		return fmt.Errorf("pipeline: anchor lane: %w", err)
	}
	return fmt.Errorf("pipeline: anchor lane %q: shutdown.drain_timeout (%s) ran out while the lane was %s, handing it a batch "+
		"(%d more unconfirmed in it; none is acknowledged upstream: they come back after a restart): %w",
		p.anchor.Destination(), p.opts.DrainTimeout, p.anchor.State(), p.anchor.Pending(), err)
}

// waitForStore holds the dispatcher while the offset store waits for
// space: nothing sent now could be committed, so nothing is sent, and the
// source loop stops behind the full hand-off channel. The store logs the
// condition (throttled); the wait ends when it recovers, fails, or ctx
// (the lanes' context, cancelled at the end of the drain) ends.
func (p *Pipeline) waitForStore(ctx context.Context) {
	for {
		recovered, err := p.opts.Store.Stalled()
		if err == nil {
			return
		}
		select {
		case <-recovered:
		case <-ctx.Done():
			return
		}
	}
}

// onAnchorDurable returns the OnDurable callback of a raw-anchor batch: once
// its delivered commit is durable, the secondaries' coverage gates learn the
// new anchor watermark (which may let held-back coverage through), then the
// spans are queued for the upstream ack. It runs on the offset store's
// callback goroutine and never blocks on a secondary.
func (p *Pipeline) onAnchorDurable(spans []batch.OffsetSpan, records uint64) func(error) {
	ack := p.acks.tokenFor(spans, records)
	if len(p.seconds) == 0 && p.opts.LingerWhenIdle {
		return ack
	}
	return func(err error) {
		if err == nil {
			for _, s := range p.seconds {
				s.gate.anchorDurable(spans)
			}
		}
		ack(err)
		if !p.opts.LingerWhenIdle && p.inflight.Add(-1) == 0 {
			select {
			case p.idle <- struct{}{}:
			default:
			}
		}
	}
}

// idleFlusher flushes the assembler each time the anchor has nothing in
// flight any more (Options.LingerWhenIdle), until done is closed. It runs
// on its own goroutine because a flush blocks while the dispatcher is
// busy, and the anchor's callbacks must not block.
func (p *Pipeline) idleFlusher(done <-chan struct{}) {
	for {
		select {
		case <-p.idle:
			p.asm.FlushEarly()
		case <-done:
			return
		}
	}
}

// Run runs the pipeline until the source is exhausted, ctx ends, or a fatal
// error occurs, then shuts down in the documented order. It returns nil
// after a clean end (source exhausted or ctx cancelled, everything drained)
// and otherwise the fatal error or what kept the drain from completing. Run
// may be called once.
func (p *Pipeline) Run(ctx context.Context) error {
	if !p.ran.CompareAndSwap(false, true) {
		return errors.New("pipeline: Run called twice")
	}
	// The lanes and the dispatcher live until the shutdown ends them, not
	// until ctx ends: ctx only stops intake.
	laneCtx, cancelLanes := context.WithCancel(context.Background())
	defer cancelLanes()

	// The secondaries start from the durable state: the anchor's delivered
	// watermark and their own coverage; whatever lies between is caught up
	// from the raw anchor. They start before anything can be dispatched.
	anchorPos, err := p.opts.Store.Delivered(p.opts.Anchor.Name)
	if err != nil {
		p.fail(fmt.Errorf("pipeline: reading the anchor's delivered watermark: %w", err))
	}
	for _, s := range p.seconds {
		cov, err := p.opts.Store.Coverage(s.name)
		if err != nil {
			p.fail(fmt.Errorf("pipeline: reading the coverage of %q: %w", s.name, err))
		}
		s.start(laneCtx, anchorPos, cov)
	}
	dispatched := make(chan struct{})
	go func() { defer close(dispatched); p.dispatch(laneCtx) }()
	go p.acks.run()

	// The drain is bounded from the moment intake is asked to stop, even
	// while the source loop is still blocked handing a batch to a lane that
	// cannot take it (a sink that is down or stopped acknowledging).
	ran := make(chan struct{})
	defer close(ran)
	go p.watchdog(ctx, ran, cancelLanes)
	if !p.opts.LingerWhenIdle {
		go p.idleFlusher(ran)
	}
	// A store that failed for good (not a full disk: that stalls it) can
	// never make anything durable again: stop instead of streaming.
	// An anchor lane that failed for good (permanent failures outlasted its
	// budget) can deliver nothing more in this process: stop, with its
	// cause, instead of waiting for a drain that cannot happen.
	go func() {
		select {
		case <-p.opts.Store.Failed():
			p.fail(fmt.Errorf("pipeline: %w", p.opts.Store.Err()))
		case <-p.anchor.Failed():
			p.fail(fmt.Errorf("pipeline: anchor lane %q: %w", p.anchor.Destination(), p.anchor.Failure()))
		case <-ran:
		}
	}()

	if err := p.sourceLoop(ctx); err != nil {
		p.fail(err)
	}
	// Intake has stopped, also when a bounded source ran dry (the
	// watchdog covers ctx and failures).
	p.drainLanes()
	return p.shutdown(dispatched, cancelLanes)
}

// watchdog waits for ctx to end or the pipeline to fail, then gives the
// drain DrainTimeout before it abandons undeliverable batches and cancels
// the lanes' context, which unblocks a Submit waiting on a full lane.
func (p *Pipeline) watchdog(ctx context.Context, ran <-chan struct{}, cancelLanes context.CancelFunc) {
	select {
	case <-ctx.Done():
	case <-p.failed:
	case <-ran:
		return
	}
	p.drainLanes()
	t := time.NewTimer(time.Until(p.drainDeadline()))
	defer t.Stop()
	select {
	case <-t.C:
		close(p.abandon)
		cancelLanes()
	case <-ran:
	}
}

// drainLanes tells every lane that the pipeline is stopping. A lane being
// refused cannot drain: from now on a permanent failure ends it at once
// (the anchor's then stops the run with its cause) instead of holding the
// dispatcher in Submit for the whole drain. Idempotent.
func (p *Pipeline) drainLanes() {
	p.anchor.Drain()
	for _, s := range p.seconds {
		if d, ok := s.lane.(interface{ Drain() }); ok {
			d.Drain()
		}
	}
}

// sourceLoop pulls records until the source ends, ctx ends or the pipeline failed.
func (p *Pipeline) sourceLoop(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.failed:
			cancel()
		case <-ctx.Done():
		}
	}()
	p.sourceUp.Store(true)
	defer p.sourceUp.Store(false)
	defer p.reportRecords()
	var rec batch.Record
	for {
		if err := p.waitUnacked(ctx); err != nil {
			return nil // ctx ended or the pipeline failed: intake stops
		}
		err := p.opts.Source.Next(ctx, &rec)
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return nil
		case ctx.Err() != nil:
			return nil
		default:
			return fmt.Errorf("pipeline: source: %w", err)
		}
		if p.records.Add(1)%recordsReportEvery == 0 {
			p.reportRecords()
		}
		if err := p.asm.Add(&rec); err != nil {
			// ErrSeqOrder: an ordered source broke its contract (or the
			// source is not monotone and Options.Unordered is not set);
			// stop rather than emit overlapping spans.
			return fmt.Errorf("pipeline: assembler: %w", err)
		}
		if !p.opts.LingerWhenIdle && p.inflight.Load() == 0 {
			p.asm.FlushEarly() // nothing in flight: waiting only adds latency
		}
	}
}

// reportRecords adds to thalweg.source.records the records taken since the
// last call. It runs on the source loop's goroutine and inside emit (the
// linger timer's too), so a record taken reaches the instrument when its
// batch is emitted, after recordsReportEvery more, or when the loop ends,
// whichever comes first. Safe from any goroutine: the compare-and-swap
// hands each increment to exactly one caller.
func (p *Pipeline) reportRecords() {
	for {
		done, taken := p.reported.Load(), p.records.Load()
		if taken <= done {
			return
		}
		if p.reported.CompareAndSwap(done, taken) {
			p.metrics.SourceRecords(context.Background(), int64(taken-done))
			return
		}
	}
}

// waitUnacked blocks while Options.MaxUnacked records are outstanding
// (taken from the source, not yet released by the acker). Waiting, it
// flushes the assembler's partial batch so that those records can reach the
// ack path at all (a bound below Batching.MaxRows would otherwise wait for
// the linger timer, or forever without one).
func (p *Pipeline) waitUnacked(ctx context.Context) error {
	limit := uint64(p.opts.MaxUnacked)
	if limit == 0 {
		return nil
	}
	below := func() bool {
		taken := p.records.Load()
		return taken-min(p.acks.released.Load(), taken) < limit
	}
	// The common case, far from the bound, costs two atomic loads per
	// record: the release channel (behind the acker's mutex) is taken only
	// at the bound, and the count is checked again after taking it so that
	// a release in between is not missed. Only a wait that blocks is timed
	// (thalweg.source.unacked_wait{bound="pipeline"}).
	flushed, waiting := false, false
	var w instruments.Wait
	for !below() {
		if !flushed {
			p.asm.Flush()
			flushed = true
			continue
		}
		wake := p.acks.releasedCh()
		if below() {
			break
		}
		if !waiting {
			w, waiting = p.unacked.Begin(), true
		}
		select {
		case <-wake:
		case <-ctx.Done():
			w.End()
			return ctx.Err()
		}
	}
	if waiting {
		w.End()
	}
	return nil
}

// shutdown runs steps 2–8 of the order documented in the package doc. It
// is the only place that stops the pipeline's parts.
func (p *Pipeline) shutdown(dispatched <-chan struct{}, cancelLanes context.CancelFunc) error {
	drain, cancel := context.WithDeadline(context.Background(), p.drainDeadline())
	defer cancel()

	// 2. Flush the assembler (its last Emit may block on a full lane) and
	// let the dispatcher submit the rest. If the drain expires first,
	// cancelling the lane context unblocks a Submit stuck on a full lane:
	// that batch is not acknowledged and comes back after a restart.
	flushed := make(chan struct{})
	go func() {
		p.asm.Close()
		close(p.emitted)
		close(flushed)
	}()
	select {
	case <-dispatched:
	case <-drain.Done():
		cancelLanes()
		<-dispatched
	}
	<-flushed

	// 3. Close the anchor lane, bounded: it waits for its confirmations
	// and their delivered commits. After it no RawAnchor token is left
	// unreleased, and the anchor's watermark is final.
	anchorErr := p.anchor.Close(drain)

	// 4. Final synced commit.
	storeErr := p.opts.Store.Flush(drain)

	// 5. Acknowledge upstream everything that became durable, within what
	// is left of the drain. A failed acknowledgement is counted
	// (thalweg.source.ack_errors), not an error of the run: those records
	// come back and are recognised. An acknowledgement that cannot
	// complete (the broker is away) is abandoned at the deadline, for the
	// same reason.
	acked := p.acks.close(drain)

	// 6. Close the source: nothing below needs it. It also ends an Ack the
	// deadline abandoned (the Source contract); that Ack may return after
	// Close does, when the broker is away, and the acker's goroutine then
	// ends with it.
	srcErr := p.opts.Source.Close()
	if !acked {
		p.log.Warn("upstream acknowledgements abandoned at the drain deadline (the broker did not answer): "+
			"those records are durable at the raw anchor; the broker redelivers them and the next run "+
			"recognises them as delivered", "records", p.acks.abandonedRecs.Load(), "drain_timeout", p.opts.DrainTimeout)
	}

	// 7. Finish the secondaries, bounded: each takes what is queued,
	// catches up from the raw anchor what it missed (the anchor's
	// watermark is final now), waits for its confirmations and closes. They
	// come after the upstream acks so that none of them can hold those up.
	secErr := p.closeSecondaries(drain)

	// 8. Their coverage commits, synced.
	covErr := p.opts.Store.Flush(drain)
	if p.unacked != nil {
		_ = p.unacked.Close() // only a broken MeterProvider fails to unregister: not the run's error
	}

	// failErr is only read once failed is closed: the watcher goroutine in
	// Run may still be calling fail while the shutdown ends.
	select {
	case <-p.failed:
		return p.failErr
	default:
	}
	if err := errors.Join(anchorErr, storeErr, srcErr, secErr, covErr); err != nil {
		p.log.Warn("shutdown was not clean; unacknowledged records are redelivered on restart", "err", err)
		return err
	}
	return nil
}

// closeSecondaries closes every secondary concurrently (they share
// nothing), bounded by ctx.
func (p *Pipeline) closeSecondaries(ctx context.Context) error {
	errs := make([]error, len(p.seconds))
	var wg sync.WaitGroup
	for i, s := range p.seconds {
		wg.Go(func() { errs[i] = s.close(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// closeLanes closes every lane of a pipeline that never ran (New failed).
func (p *Pipeline) closeLanes(ctx context.Context) {
	if p.anchor != nil {
		_ = p.anchor.Close(ctx)
	}
	_ = p.closeSecondaries(ctx)
}

// Stats returns a snapshot of the pipeline's counters.
func (p *Pipeline) Stats() Stats {
	st := Stats{
		Assembler:     p.asm.Stats(),
		Acked:         p.acks.acked.Load(),
		AckErrors:     p.acks.failed.Load(),
		AckAbandoned:  p.acks.abandonedRecs.Load(),
		DeadLettered:  p.deadLettered.Load(),
		SourceRecords: p.records.Load(),
		Anchor:        laneStats(p.anchor),
	}
	if lr, ok := p.opts.Source.(LossReporter); ok {
		st.SourceDiscarded, st.SourceLost, st.SourceSkipped = lr.Loss()
	}
	for _, s := range p.seconds {
		ls := laneStats(s.lane)
		ls.CoverageLag = s.gate.lag()
		ls.Rebuilt = s.rebuilt.Load()
		ls.Skipped = s.skipped.Load()
		ls.Dropped = s.dropped.Load()
		ls.CatchingUp = s.catching.Load()
		ls.Detached = s.detached.Load()
		st.Secondaries = append(st.Secondaries, ls)
	}
	return st
}

type statLane interface {
	Destination() string
	State() lanes.State
	Submitted() uint64
	Delivered() uint64
	Pending() uint64
	Capacity() int
	Confirmed() uint64
	Bursts() uint64
}

// laneCounters is what a *lanes.Lane adds to statLane; the model test's
// fake lane does without.
type laneCounters interface {
	Rows() uint64
	Retries() uint64
	Rebuilds() uint64
	Replayed() uint64
	DrainTimeouts() uint64
}

func laneStats(l statLane) LaneStats {
	ls := LaneStats{
		Name: l.Destination(), State: l.State(), Submitted: l.Submitted(),
		Delivered: l.Delivered(), Pending: l.Pending(), Capacity: l.Capacity(),
		Confirmed: l.Confirmed(), Bursts: l.Bursts(),
	}
	if c, ok := l.(laneCounters); ok {
		ls.Rows, ls.Retries, ls.Rebuilds, ls.Replayed = c.Rows(), c.Retries(), c.Rebuilds(), c.Replayed()
		ls.DrainTimeouts = c.DrainTimeouts()
	}
	return ls
}

// Ready reports whether the pipeline is serving: the offset store can
// commit (not failed, not waiting for space), the source loop is running,
// the source is healthy (when it has a Health() error method, as
// source/pulsar's reports its broker connection), every lane is open and no
// secondary is detached. It returns a reason when it is not; for a
// secondary whose lane failed for good it names the destination and the
// cause (gRPC status and message).
func (p *Pipeline) Ready() (bool, string) {
	if err := p.opts.Store.Err(); err != nil {
		return false, "offset store: " + err.Error()
	}
	if _, err := p.opts.Store.Stalled(); err != nil {
		return false, "offset store: " + strings.TrimPrefix(err.Error(), "offsetstore: ") + " (intake and sending paused until it can commit)"
	}
	if !p.sourceUp.Load() {
		return false, "source not running"
	}
	if h, ok := p.opts.Source.(interface{ Health() error }); ok {
		if err := h.Health(); err != nil {
			return false, "source: " + err.Error()
		}
	}
	if st := p.anchor.State(); st != lanes.StateOpen {
		return false, fmt.Sprintf("lane %s is %s", p.anchor.Destination(), st)
	}
	for _, s := range p.seconds {
		if why := s.detachedWhy(); why != "" {
			return false, fmt.Sprintf("secondary %s detached (its coverage lags until a restart): %s", s.name, why)
		}
		if st := s.lane.State(); st != lanes.StateOpen {
			return false, fmt.Sprintf("lane %s is %s", s.lane.Destination(), st)
		}
	}
	return true, ""
}
