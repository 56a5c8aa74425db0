package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/observability"
	"github.com/thalweg/thalweg/offsetstore"
)

// DefaultDrainTimeout bounds the graceful part of shutdown.
const DefaultDrainTimeout = 30 * time.Second

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
	// in delivery order.
	Ack(spans []batch.OffsetSpan) error
	// DeadLetter durably stores a rejected record with its reason before it
	// returns; rec is only valid during the call.
	DeadLetter(ctx context.Context, rec *batch.Record, reason string) error
	// Close releases the source. Called once, after the last Ack.
	Close() error
}

// Destination is one sink with its lane.
type Destination struct {
	// Name is the lane's destination: offset-store key and metric attribute.
	Name string
	// Dial builds the transport; the lane calls it again after poisoning.
	Dial func(ctx context.Context) (lanes.Transport, error)
	// Lane tunes the lane (Capacity, Backoff, MaxRetries, AckTimeout,
	// OnConfirm). Destination, Dial, Committer, MeterProvider and Logger are
	// set by the pipeline.
	Lane lanes.Options
	// Queue is, for a secondary, how many batches may wait for its lane
	// before the secondary is detached. Default: twice the lane capacity.
	Queue int
}

// Options configures a Pipeline.
type Options struct {
	// Source is required. Run takes ownership and closes it.
	Source Source
	// Assembler configures batching. Emit and OnReject are set by the
	// pipeline.
	Assembler batch.AssemblerOptions
	// Store is the offset store; required. The pipeline flushes it during
	// shutdown but does not close it.
	Store *offsetstore.Store
	// Anchor is the raw-anchor destination: it gates the upstream acks.
	Anchor Destination
	// Secondaries record coverage only and never gate the source.
	Secondaries []Destination
	// MeterProvider for the pipeline's and the lanes' instruments. Default no-op.
	MeterProvider metric.MeterProvider
	// DrainTimeout bounds steps 2–5 of the shutdown. Default DefaultDrainTimeout.
	DrainTimeout time.Duration
	// Logger defaults to discarding.
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
	}
	check("Options.Anchor", o.Anchor)
	for i, d := range o.Secondaries {
		check(fmt.Sprintf("Options.Secondaries[%d]", i), d)
	}
	if o.DrainTimeout < 0 {
		errs = append(errs, errors.New("Options.DrainTimeout must be >= 0"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

// Stats is a snapshot of a running pipeline's counters.
type Stats struct {
	Assembler     batch.Stats
	Acked         uint64 // records acknowledged upstream
	DeadLettered  uint64
	Anchor        LaneStats
	Secondaries   []LaneStats
	SourceRecords uint64 // records taken from the source
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
	Detached  bool   // secondaries only: fell behind and stopped receiving
}

// Pipeline runs one source into its destinations. Create it with New, run
// it once with Run; Stats and Ready may be called from any goroutine.
type Pipeline struct {
	opts    Options
	log     *slog.Logger
	metrics *observability.PipelineMetrics
	asm     *batch.Assembler
	anchor  *lanes.Lane[lanes.RawAnchor]
	seconds []*secondary
	acks    *acker

	emitted chan *batch.Batch // assembler → dispatcher

	records      atomic.Uint64
	deadLettered atomic.Uint64
	ran          atomic.Bool
	sourceUp     atomic.Bool

	failOnce sync.Once
	failErr  error
	failed   chan struct{} // closed by fail
}

// New validates opts and builds the lanes; nothing runs until Run.
func New(opts Options) (*Pipeline, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.MeterProvider == nil {
		opts.MeterProvider = noop.NewMeterProvider()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.DrainTimeout == 0 {
		opts.DrainTimeout = DefaultDrainTimeout
	}
	pm, err := observability.NewPipelineMetrics(opts.MeterProvider)
	if err != nil {
		return nil, err
	}
	p := &Pipeline{
		opts:    opts,
		log:     opts.Logger,
		metrics: pm,
		emitted: make(chan *batch.Batch, 2),
		failed:  make(chan struct{}),
	}
	p.acks = newAcker(opts.Source, pm, opts.Logger)

	anchor, err := lanes.New[lanes.RawAnchor](p.laneOptions(opts.Anchor))
	if err != nil {
		return nil, fmt.Errorf("pipeline: anchor lane %q: %w", opts.Anchor.Name, err)
	}
	p.anchor = anchor
	for _, d := range opts.Secondaries {
		l, err := lanes.New[lanes.Coverage](p.laneOptions(d))
		if err != nil {
			p.closeLanes(context.Background())
			return nil, fmt.Errorf("pipeline: secondary lane %q: %w", d.Name, err)
		}
		q := d.Queue
		if q == 0 {
			q = 2 * l.Capacity()
		}
		p.seconds = append(p.seconds, newSecondary(d.Name, l, q, opts.Logger))
	}

	ao := opts.Assembler
	ao.Emit = p.emit
	ao.OnReject = p.reject
	asm, err := batch.NewAssembler(ao)
	if err != nil {
		p.closeLanes(context.Background())
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	p.asm = asm
	return p, nil
}

func (p *Pipeline) laneOptions(d Destination) lanes.Options {
	lo := d.Lane
	lo.Destination = d.Name
	lo.Dial = d.Dial
	lo.Committer = p.opts.Store
	lo.MeterProvider = p.opts.MeterProvider
	lo.Logger = p.log.With("destination", d.Name)
	return lo
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
	p.metrics.BatchFlushed(context.Background(), b.Reason.String(), b.NumRows(), batchBytes(b))
	p.emitted <- b
}

func batchBytes(b *batch.Batch) int64 {
	var n int64
	for _, c := range b.Rec.Columns() {
		for _, buf := range c.Data().Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
	}
	return n
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
		p.fail(fmt.Errorf("%w: partition %d seq %d: %w", ErrDeadLetter, rec.Partition, rec.Seq, err))
		return
	}
	p.deadLettered.Add(1)
	p.metrics.DLQRecords(context.Background(), kind, 1)
}

// dispatch submits every emitted batch to the anchor lane and offers it to
// the secondaries. It owns each batch it receives and runs until emitted is
// closed.
func (p *Pipeline) dispatch(ctx context.Context) {
	for b := range p.emitted {
		for _, s := range p.seconds {
			s.offer(b)
		}
		tok := lanes.RawAnchor{OnDurable: p.acks.tokenFor(b.Spans)}
		if ackBeforeDurable {
			p.acks.enqueue(b.Spans)
			tok = lanes.RawAnchor{}
		}
		if err := p.anchor.Submit(ctx, b, tok); err != nil {
			// Only a closed lane or a dead context end up here: the batch
			// is not acknowledged and is redelivered after a restart.
			p.log.Warn("anchor submit failed", "err", err)
			p.fail(fmt.Errorf("pipeline: anchor lane: %w", err))
		}
		b.Release()
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

	dispatched := make(chan struct{})
	go func() { defer close(dispatched); p.dispatch(laneCtx) }()
	go p.acks.run()
	for _, s := range p.seconds {
		s.start(laneCtx)
	}

	if err := p.sourceLoop(ctx); err != nil {
		p.fail(err)
	}
	return p.shutdown(dispatched, cancelLanes)
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
	var rec batch.Record
	for {
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
		p.records.Add(1)
		p.metrics.SourceRecords(ctx, 1)
		if err := p.asm.Add(&rec); err != nil {
			// ErrSeqOrder: the source broke its contract; stop rather than
			// emit overlapping spans.
			return fmt.Errorf("pipeline: assembler: %w", err)
		}
	}
}

// shutdown runs steps 2–6 of the order documented in the package doc. It
// is the only place that stops the pipeline's parts.
func (p *Pipeline) shutdown(dispatched <-chan struct{}, cancelLanes context.CancelFunc) error {
	drain, cancel := context.WithTimeout(context.Background(), p.opts.DrainTimeout)
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

	// 3. Close the lanes, bounded: each waits for its confirmations and
	// their commits, then closes its transport. After the anchor lane is
	// closed no RawAnchor token is left unreleased.
	laneErr := p.closeLanes(drain)

	// 4. Final synced commit.
	storeErr := p.opts.Store.Flush(drain)

	// 5. Acknowledge upstream everything that became durable.
	ackErr := p.acks.close()

	// 6. Close the source.
	srcErr := p.opts.Source.Close()

	if p.failErr != nil {
		return p.failErr
	}
	if err := errors.Join(laneErr, storeErr, ackErr, srcErr); err != nil {
		p.log.Warn("shutdown was not clean; unacknowledged records are redelivered on restart", "err", err)
		return err
	}
	return nil
}

// closeLanes stops the secondaries' forwarders and closes every lane
// concurrently (they share nothing), bounded by ctx.
func (p *Pipeline) closeLanes(ctx context.Context) error {
	errs := make([]error, 1+len(p.seconds))
	var wg sync.WaitGroup
	if p.anchor != nil {
		wg.Go(func() { errs[0] = p.anchor.Close(ctx) })
	}
	for i, s := range p.seconds {
		wg.Go(func() { errs[i+1] = s.close(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Stats returns a snapshot of the pipeline's counters.
func (p *Pipeline) Stats() Stats {
	st := Stats{
		Assembler:     p.asm.Stats(),
		Acked:         p.acks.acked.Load(),
		DeadLettered:  p.deadLettered.Load(),
		SourceRecords: p.records.Load(),
		Anchor:        laneStats(p.anchor, false),
	}
	for _, s := range p.seconds {
		st.Secondaries = append(st.Secondaries, laneStats(s.lane, s.detached.Load()))
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

func laneStats(l statLane, detached bool) LaneStats {
	return LaneStats{
		Name: l.Destination(), State: l.State(), Submitted: l.Submitted(),
		Delivered: l.Delivered(), Pending: l.Pending(), Capacity: l.Capacity(),
		Confirmed: l.Confirmed(), Bursts: l.Bursts(), Detached: detached,
	}
}

// Ready reports whether the pipeline is serving: the source loop is running
// and every lane is open. It returns a reason when it is not.
func (p *Pipeline) Ready() (bool, string) {
	if !p.sourceUp.Load() {
		return false, "source not running"
	}
	if st := p.anchor.State(); st != lanes.StateOpen {
		return false, fmt.Sprintf("lane %s is %s", p.anchor.Destination(), st)
	}
	for _, s := range p.seconds {
		if st := s.lane.State(); st != lanes.StateOpen {
			return false, fmt.Sprintf("lane %s is %s", s.lane.Destination(), st)
		}
	}
	return true, ""
}
