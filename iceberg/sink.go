package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceberg "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/errlog"
)

// Sink writes batches into data files of one table and commits them as
// snapshots. It satisfies lanes.Transport structurally (see the package
// documentation for the state machine and the invariants).
//
// Goroutine safety: Send is called from one goroutine, WaitDurable from
// another, concurrently; Close from any goroutine, once. The Sink's own
// committer, writer and encoder goroutines run from Dial to Close (or a
// permanent failure).
type Sink struct {
	t    *Table
	opts *Options
	cat  catalogIO
	m    *metrics

	ctx    context.Context // ends with Close: the committer's, the writer's, the encoders' and the catalog calls'
	cancel context.CancelFunc
	wake   chan struct{} // a batch is pending (capacity 1)
	done   chan struct{} // closed when the committer returned
	wdone  chan struct{} // closed when the writer and the encoders returned
	slots  chan struct{} // a token per batch queued or being written (capacity QueueDepth+len(encs))

	encs []*encoder // the Sink's encoders (encode.go)

	closing atomic.Bool // Close was called

	// sendLast, sendSent, sendPlans: the Send goroutine's own.
	sendLast  uint64
	sendSent  bool
	sendPlans map[*arrow.Schema]*plan

	// q is what Send queued for the writer, in offset order.
	q struct {
		sync.Mutex
		items  []*queued
		closed bool          // the writer returned: Send queues no more
		ready  chan struct{} // an item was queued (capacity 1)
	}
	fails errlog.Throttle

	// arrowDone remembers, per PropArrowSchema value, a batch schema it
	// already names (committer goroutine only).
	arrowDone map[string]*arrow.Schema
	// boundsSet are the bounded-metadata properties the last commit
	// attempt set on a table that lacked them (committer goroutine only).
	boundsSet iceberg.Properties
	mt        maintainer // committer goroutine only
	// specChecked: the table's partition spec was compared with
	// Options.PartitionBy (under mu).
	specChecked bool

	mu struct {
		sync.Mutex
		err     error        // the permanent failure, set once
		closed  bool         // Close was called
		tbl     *table.Table // the table as last seen; nil: it does not exist yet
		fs      table.FSysF  // the file system of the tables made from committed ones (rebind); set with the first table
		pos     positions    // what the table holds, as last seen or committed
		plans   map[*arrow.Schema]*plan
		pending []*pendingOne // sent batches no commit took yet, in offset order
		// cut is the commit the batches admitted now belong to: each
		// commit takes the pending batches and starts the next cut at
		// once, so an encoder's data files hold the batches of one cut.
		cut        uint64
		last       uint64        // the offset of the last batch written (in pending or committed)
		durable    uint64        // every offset <= durable is in a committed snapshot ...
		hasDurable bool          // ... once a commit made anything durable
		changed    chan struct{} // closed (and replaced) when durable, err or closed change
	}
}

// pendingOne is a batch sent and not yet committed.
type pendingOne struct {
	offset uint64
	spans  []batch.OffsetSpan
	// rec is what was written of the batch (retained; nil: no row), kept
	// for an ordered sink so that a commit that finds its rows stored by
	// another worker can write the file again without them.
	rec    arrow.RecordBatch
	plan   *plan
	ranges map[string]seqRange // rec's rows per partition; nil: the spans stand for them
	// done is closed by the encoder that wrote the batch (nil: no row to
	// write); err (a write failure) and newest are set before.
	done   chan struct{}
	err    error
	newest time.Time // the newest publish_time of the rows written; zero: none
}

// dataFile is one Parquet data file of the sink.
type dataFile struct {
	location string
	plan     *plan
	rows     int64
	size     int64
	batches  []*pendingOne
	df       iceberg.DataFile // set when closed
	// split: written by writePartitioned, one of the files of its one
	// batch's partition values.
	split bool
	cut   uint64 // the commit cut of its batches (an encoder's files)
}

func newSink(t *Table, cat catalogIO, tbl *table.Table, pos positions) *Sink {
	ctx, cancel := context.WithCancel(context.Background())
	k := t.opts.Encoders
	if k == 0 {
		k = DefaultEncoders()
		if t.shared != nil {
			k = 1 // a template's table (see DefaultEncoders)
		}
	}
	s := &Sink{t: t, opts: &t.opts, cat: cat, m: t.metrics, ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), done: make(chan struct{}), wdone: make(chan struct{}),
		slots: make(chan struct{}, QueueDepth+k), sendPlans: map[*arrow.Schema]*plan{},
		fails: errlog.Throttle{Log: t.opts.Logger, What: "iceberg commit failing; retrying"},
		mt: maintainer{throttle: errlog.Throttle{Log: t.opts.Logger, What: "iceberg table maintenance failing; retrying"},
			results: make(chan background, 1)},
		arrowDone: map[string]*arrow.Schema{}}
	s.mu.tbl, s.mu.pos = tbl, pos
	if tbl != nil {
		s.mu.fs = tbl.FS
	}
	// The first maintenance run comes one Interval after the start, not
	// with the first commit: a fleet's workers restart (a deploy, a
	// failover), and each would otherwise hold its first commits behind a
	// run at once.
	s.mt.nextRun = time.Now().Add(t.opts.Maintenance.Interval)
	s.mu.plans = map[*arrow.Schema]*plan{}
	s.mu.changed = make(chan struct{})
	s.q.ready = make(chan struct{}, 1)
	for range k {
		s.encs = append(s.encs, &encoder{})
	}
	go s.run()
	go s.writer()
	return s
}

// QueueDepth is how many sent batches a Sink holds for its writer beside
// the ones its encoders write: Send returns once a batch is queued, so the
// lane's dispatch goroutine plans the next batch (and a Router hands the
// next table its part) while the encoders convert and encode. The queued
// batches are the lane's own (retained, not copied; a Router's are its
// parts), and the lane holds every batch until its commit anyway.
const QueueDepth = 2

// queued is a batch Send handed to the writer.
type queued struct {
	offset uint64
	b      *batch.Batch // retained; the writer releases it
	plan   *plan        // nil: no row
}

// Send plans b's schema (the first batch of a schema may create the table,
// or evolve its schema, before Send returns) and queues b for the Sink's
// writer goroutine, which hands its rows (for an ordered sink, those
// above their partition's position) to an encoder, which writes them into
// its data file; Send waits only while QueueDepth batches are queued
// beside those being encoded, never for a commit. A write failure is the
// sink's permanent failure, returned by the next Send or WaitDurable (the
// lane then replays its batches into a new Sink). Send retains b's record until it is written; it does not take
// ownership of b.
func (s *Sink) Send(ctx context.Context, offset uint64, b *batch.Batch) error {
	if s.ctx.Err() != nil {
		return s.stateErr()
	}
	if s.sendSent && offset <= s.sendLast {
		return newError("write", fmt.Errorf("%w: %d after %d", ErrOffsetOrder, offset, s.sendLast), true)
	}
	q := &queued{offset: offset, b: b}
	if b.NumRows() > 0 {
		pl, err := s.sendPlan(ctx, b.Rec.Schema())
		if err != nil {
			return err
		}
		q.plan = pl
	}
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return newError("write", ctx.Err(), false)
	case <-s.ctx.Done():
		return s.stateErr()
	}
	s.q.Lock()
	if s.q.closed {
		s.q.Unlock()
		<-s.slots
		return s.stateErr()
	}
	b.Retain()
	s.q.items = append(s.q.items, q)
	s.q.Unlock()
	select {
	case s.q.ready <- struct{}{}:
	default:
	}
	s.sendLast, s.sendSent = offset, true
	return nil
}

// sendPlan is the plan of src, made under the lock the first time (the
// writer reads the table and the positions under it); later batches of
// src find it in the Send goroutine's own map. A failure to plan the
// schema is the sink's permanent failure when it will not heal (an
// incompatible schema).
func (s *Sink) sendPlan(ctx context.Context, src *arrow.Schema) (*plan, error) {
	if pl, ok := s.sendPlans[src]; ok {
		return pl, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stateErrLocked(); err != nil {
		return nil, err
	}
	pl, err := s.planLocked(ctx, src)
	if err != nil {
		e := newError("schema", err, false)
		if !e.Retryable() {
			return nil, s.failLocked(e)
		}
		return nil, e
	}
	s.sendPlans[src] = pl
	return pl, nil
}

// stateErr is the sink's failure once it ended; ErrClosed without the lock
// after Close (a committer's rewrite may hold it in a store call that
// ignores the cancellation).
func (s *Sink) stateErr() error {
	if s.closing.Load() {
		return newError("write", ErrClosed, true)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stateErrLocked()
}

// writer admits the batches Send queued, in offset order, and hands
// each to the first idle encoder, until Close or a permanent failure;
// then it releases what is left queued, refuses more and waits for the
// encoders to return.
func (s *Sink) writer() {
	defer close(s.wdone)
	jobs := make(chan *job)
	var encoders sync.WaitGroup
	for _, e := range s.encs {
		encoders.Go(func() { s.encode(e, jobs) })
	}
	defer encoders.Wait() // they return with s.ctx, which ends when the writer does
	defer func() {
		s.q.Lock()
		s.q.closed = true
		items := s.q.items
		s.q.items = nil
		s.q.Unlock()
		for _, q := range items {
			q.b.Release()
		}
	}()
	for {
		select {
		case <-s.q.ready:
		case <-s.ctx.Done():
			return
		}
		for {
			s.q.Lock()
			if len(s.q.items) == 0 {
				s.q.Unlock()
				break
			}
			q := s.q.items[0]
			s.q.items = s.q.items[1:]
			s.q.Unlock()
			if !s.write(q, jobs) {
				return
			}
		}
	}
}

// write admits q to the next commit and hands its rows to an encoder
// (which releases q's batch and slot); false: the sink failed or is
// closing.
func (s *Sink) write(q *queued, jobs chan<- *job) bool {
	j, ok := s.admit(q)
	if j == nil {
		q.b.Release()
		<-s.slots
		return ok
	}
	select {
	case jobs <- j:
		return true
	case <-s.ctx.Done():
		j.p.err = s.ctx.Err()
		close(j.p.done)
		q.b.Release()
		<-s.slots
		return false
	}
}

// admit appends q to the pending batches, in offset order, and returns
// the job of writing its rows that are new to the table (nil: none). For
// an ordered sink those are the rows above their partition's position
// (keep). A failure ends the sink, and the lane replays the batches into
// a new one.
func (s *Sink) admit(q *queued) (*job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stateErrLocked() != nil || s.ctx.Err() != nil {
		return nil, false
	}
	p := &pendingOne{offset: q.offset, spans: q.b.Spans, plan: q.plan}
	var j *job
	if q.plan != nil {
		rec := q.b.Rec
		if s.opts.Ordered {
			kept, ranges, err := keep(s.ctx, q.b, q.plan.identity, s.mu.pos, s.opts.Allocator)
			if err != nil {
				s.failLocked(newError("write", err, true))
				return nil, false
			}
			if kept == nil {
				s.m.dropped(q.b.NumRows())
			} else {
				s.m.dropped(q.b.NumRows() - kept.NumRows())
			}
			rec, p.rec, p.ranges = kept, kept, ranges // the reference keep returned
		}
		if rec != nil {
			p.done = make(chan struct{})
			j = &job{p: p, pl: q.plan, tbl: s.mu.tbl, b: q.b, rec: rec, cut: s.mu.cut}
		}
	}
	s.mu.pending = append(s.mu.pending, p)
	s.mu.last = q.offset
	s.poke()
	return j, true
}

// fileWriter is an open data file.
type fileWriter struct {
	df  *dataFile
	tbl *table.Table // the table the file is written for
	w   *pqarrow.FileWriter
	out *countingWriter
}

type countingWriter struct {
	w iceio.FileWriter
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Close syncs a local file before it closes it: a committed snapshot
// acknowledges the batches in it, so its files must survive a host crash.
func (c *countingWriter) Close() error {
	if f, ok := c.w.(interface{ Sync() error }); ok {
		if err := f.Sync(); err != nil {
			c.w.Close()
			return err
		}
	}
	return c.w.Close()
}

// createFile starts a data file of tbl for batches planned by pl. It ends
// with the sink (its store calls take s.ctx).
func (s *Sink) createFile(tbl *table.Table, pl *plan) (*fileWriter, error) {
	fs, err := tbl.FS(s.ctx)
	if err != nil {
		return nil, err
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("the warehouse's file system %T cannot write", fs)
	}
	lp, err := tbl.LocationProvider()
	if err != nil {
		return nil, err
	}
	loc := lp.NewDataLocation(fmt.Sprintf("thalweg-%s.parquet", uuid.NewString()))
	w, err := wfs.Create(loc)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", loc, err)
	}
	cw := &countingWriter{w: w}
	pw, err := pqarrow.NewFileWriter(pl.file, cw, pl.props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(s.opts.Allocator)))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("create %s: %w", loc, err)
	}
	s.m.files.Add(1)
	return &fileWriter{df: &dataFile{location: loc, plan: pl}, tbl: tbl, w: pw, out: cw}, nil
}

// finish closes f and makes its data file entry.
func (f *fileWriter) finish() error {
	if err := f.w.Close(); err != nil { // closes f.out too
		return fmt.Errorf("close %s: %w", f.df.location, err)
	}
	md, err := f.w.FileMetadata()
	if err != nil {
		return fmt.Errorf("close %s: %w", f.df.location, err)
	}
	df, err := table.DataFileFromMetadata(table.DataFileArgs{
		Schema: f.df.plan.iceberg, Format: iceberg.ParquetFile, Metadata: md,
		FilePath: f.df.location, FileSize: f.out.n, Content: iceberg.EntryContentData,
		FormatVersion: f.tbl.Metadata().Version(), Properties: f.tbl.Properties(),
	})
	if err != nil {
		return fmt.Errorf("close %s: %w", f.df.location, err)
	}
	f.df.df, f.df.size = df, f.out.n
	return nil
}

// WaitDurable blocks until every batch sent with an offset <= offset is
// in a committed snapshot, the sink failed, or ctx is done.
func (s *Sink) WaitDurable(ctx context.Context, offset uint64) error {
	for {
		s.mu.Lock()
		if s.mu.hasDurable && s.mu.durable >= offset {
			s.mu.Unlock()
			return nil
		}
		if err := s.stateErrLocked(); err != nil {
			s.mu.Unlock()
			return err
		}
		ch := s.mu.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return newError("commit", ctx.Err(), false)
		}
	}
}

// Close stops the writer (the batches queued for it are released), the
// encoders and the committer (a commit attempt in flight is cancelled and
// waited for, so that its outcome is settled in the catalog before a new
// Sink reads the table), abandons the encoders' open data files, releases every
// batch the sink retained and gives up the table's maintenance lease when
// this sink holds it (releaseLease). Pending Send and WaitDurable calls
// return ErrClosed. Files of batches no commit took are left unreferenced.
//
// Close returns within CloseTimeout whatever the catalog and the object
// store do: the catalog and store calls under way are cancelled, and the
// abandoning is done off the sink's lock with a context that ends at the
// bound. A store that ignores the cancellation and does not answer within
// it makes Close return a permanent *Error wrapping ErrCloseTimeout; the
// retained batches are then released when the committer, the writer and
// the encoders return.
func (s *Sink) Close() error {
	if s.closing.Swap(true) {
		return nil
	}
	// Cancel first: a store call under way (an encoder's write, a
	// removal) ends with it. The lock is taken within the bound too: a
	// committer's rewrite in a store call that ignores the cancellation
	// holds it.
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), CloseTimeout)
	defer cancel()
	abandoned := make(chan struct{})
	go func() {
		defer close(abandoned)
		s.mu.Lock()
		s.mu.closed = true
		s.notifyLocked()
		s.mu.Unlock()
		<-s.done
		<-s.wdone
		s.abandon(ctx)
		s.releaseLease(ctx)
	}()
	select {
	case <-abandoned:
		return nil
	case <-ctx.Done():
		return newError("close", fmt.Errorf("%w (%v)", ErrCloseTimeout, CloseTimeout), true)
	}
}

// abandon, once the committer, the writer and the encoders returned,
// releases the retained batches and removes the encoders' open data files,
// bounded by ctx. It holds the locks only to take them.
func (s *Sink) abandon(ctx context.Context) {
	s.mu.Lock()
	pending, tbl := s.mu.pending, s.mu.tbl
	s.mu.pending = nil
	s.mu.Unlock()
	for _, p := range pending {
		if p.rec != nil {
			p.rec.Release()
			p.rec = nil
		}
	}
	for _, e := range s.encs {
		if f := e.abandon(); f != nil {
			f.w.Close()
			removeFile(ctx, f.tbl, f.df.location)
		}
	}
	// A compaction written and never tried (the committer returned, so its
	// state is this goroutine's now). One whose commit was tried may have
	// landed unseen: its files are left to the orphan cleanup.
	select {
	case r := <-s.mt.results:
		if r.compaction != nil {
			s.removeCompacted(ctx, tbl, r.compaction)
		}
	default:
	}
	if c := s.mt.staged; c != nil && c.rounds == 0 {
		s.removeCompacted(ctx, tbl, c)
	}
	s.mt.staged = nil
}

func (s *Sink) stateErrLocked() error {
	if s.mu.err != nil {
		return s.mu.err
	}
	if s.mu.closed {
		return newError("write", ErrClosed, true)
	}
	return nil
}

// failLocked makes err the sink's permanent failure and returns it.
func (s *Sink) failLocked(err *Error) error {
	if s.mu.err == nil {
		if !err.permanent {
			err = &Error{Op: err.Op, Err: err.Err, permanent: true, class: err.class}
		}
		s.mu.err = err
		s.notifyLocked()
		s.cancel()
	}
	return s.mu.err
}

func (s *Sink) notifyLocked() {
	close(s.mu.changed)
	s.mu.changed = make(chan struct{})
}

// remove deletes a data file no snapshot references, best effort: one
// left behind is an orphan file (docs/operations.md). It ends with the
// sink (Close cancels it).
func (s *Sink) remove(loc string) { removeFile(s.ctx, s.mu.tbl, loc) }

// removeFile deletes loc from tbl's file system, best effort, bounded by ctx.
func removeFile(ctx context.Context, tbl *table.Table, loc string) {
	if tbl == nil {
		return
	}
	if fs, err := tbl.FS(ctx); err == nil {
		_ = fs.Remove(loc)
	}
}

// run is the committer: it commits what is pending, at most once every
// CommitInterval, and runs the table's maintenance between two commits,
// until Close or a permanent failure.
func (s *Sink) run() {
	defer close(s.done)
	defer s.mt.jobs.Wait() // the maintenance's background job, cancelled with s.ctx
	// due wakes the committer when maintenance is due and no batch did:
	// a sink nobody sends to still maintains its table.
	due := time.NewTimer(time.Hour)
	defer due.Stop()
	var last time.Time
	for {
		if at, ok := s.maintenanceDue(); ok {
			due.Reset(time.Until(at))
		} else {
			due.Stop()
		}
		select {
		case <-s.wake:
		case <-due.C:
		case <-s.ctx.Done():
			return
		}
		if wait := s.opts.CommitInterval - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-s.ctx.Done():
				t.Stop()
				return
			}
		}
		last = time.Now()
		if err := s.commit(); err != nil {
			s.mu.Lock()
			if e, ok := errorsAs(err); ok && s.ctx.Err() == nil {
				s.failLocked(e)
			}
			s.mu.Unlock()
			return
		}
		s.maintain()
	}
}

// backoff is the wait before attempt n+1 of a failing commit: growing,
// jittered, bounded by MaxBackoff.
func (s *Sink) backoff(n int) time.Duration {
	d := 100 * time.Millisecond << min(n, 10)
	d = min(d, s.opts.MaxBackoff)
	return d/2 + rand.N(d/2+1)
}

// conflictWait is the wait before retrying a commit that lost to another
// writer's, after three in a row: jittered up to twice the commit interval
// (at least 100 ms, at most MaxBackoff). It does not grow with the
// conflicts, unlike backoff: a conflict is another writer's progress, not
// a failure, and a wait that grew would hand the table to the writers that
// commit most often while this one's batches, and the partitions they
// hold, wait — tens of seconds under three workers committing every 50 ms.
func (s *Sink) conflictWait() time.Duration {
	d := min(max(2*s.opts.CommitInterval, 100*time.Millisecond), s.opts.MaxBackoff)
	return rand.N(d + 1)
}

func (s *Sink) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// taken is what one commit covers: every batch pending when it started.
type taken struct {
	files   []*dataFile
	batches []*pendingOne
	upto    uint64
	base    *table.Table
}

// take cuts a commit: every batch pending now, once its encoder wrote it,
// and the data files of their cut (encoder.cut); the writer admits and
// hands out later batches meanwhile, into the next cut. ok is false when
// nothing is pending or the sink is closing.
func (s *Sink) take() (tk taken, ok bool, err error) {
	s.mu.Lock()
	tk = taken{batches: slices.Clone(s.mu.pending), upto: s.mu.last, base: s.mu.tbl}
	cut := s.mu.cut
	if len(tk.batches) > 0 {
		s.mu.cut++
	}
	s.mu.Unlock()
	if len(tk.batches) == 0 {
		return tk, false, nil
	}
	for _, p := range tk.batches {
		if p.done == nil {
			continue
		}
		select {
		case <-p.done:
		case <-s.ctx.Done():
			return tk, false, nil
		}
		if p.err != nil {
			return tk, false, newError("write", p.err, true)
		}
	}
	for _, e := range s.encs {
		files, err := e.cut(cut)
		if err != nil {
			return tk, false, newError("write", err, true)
		}
		tk.files = append(tk.files, files...)
	}
	return tk, true, nil
}

// commit commits every batch pending now in one snapshot (see the package
// documentation, "Commits"). A nil error means they are durable, or the
// sink is closing; an *Error is the sink's permanent failure.
func (s *Sink) commit() error {
	tk, ok, err := s.take()
	if !ok {
		return err
	}

	add := positions{}
	for _, p := range tk.batches {
		add.addSpans(p.spans)
	}
	start := time.Now()
	id := uuid.NewString()
	files := tk.files
	base := tk.base
	for attempt, conflicts := 0, 0; ; {
		if base == nil {
			// No batch had a row to write, so no table was created: the
			// batches' records were all dead-lettered. Nothing to store.
			return s.committed(tk, nil, nil)
		}
		basePos, err := tablePositions(base)
		if err != nil {
			return newError("commit", err, true)
		}
		if s.opts.Ordered {
			if files, err = s.dedupe(files, basePos, tk.files); err != nil {
				return newError("commit", err, true)
			}
		}
		merged := basePos.clone()
		merged.merge(add)
		if len(files) == 0 && basePos.covers(add) {
			// Every row is in the table already (another worker stored
			// them): the batches are durable as they are.
			return s.committed(tk, base, nil)
		}
		next, err := s.attempt(base, files, merged, id)
		if err == nil {
			s.fails.Clear("table", s.opts.Table)
			s.m.commit(time.Since(start), files, tk.newest())
			s.reportBoundsSet()
			return s.committed(tk, next, files)
		}
		if s.ctx.Err() != nil {
			return nil // closing
		}
		// The outcome is unknown until the table says otherwise.
		latest, found, lerr := loadTable(s.ctx, s.cat, s.t.ident, s.opts.hooks)
		switch {
		case lerr == nil && found && hasCommit(latest, snapshotID(base), id):
			s.fails.Clear("table", s.opts.Table)
			s.m.commit(time.Since(start), files, tk.newest())
			s.reportBoundsSet()
			return s.committed(tk, latest, files)
		case lerr == nil && found && latest.MetadataLocation() != base.MetadataLocation():
			// Another writer committed first: merge again on top of its
			// snapshot and retry at once (a few times, then after a short
			// jittered wait, so that workers in lockstep spread out).
			base = latest
			conflicts++
			s.m.conflicts.Add(1)
			if conflicts > 3 && !s.sleep(s.conflictWait()) {
				return nil
			}
			continue
		case lerr == nil && !found:
			return newError("commit", fmt.Errorf("table %s no longer exists", s.opts.Table), true)
		}
		cause := err
		if lerr != nil {
			cause = errors.Join(err, lerr)
		}
		e := newError("commit", cause, false)
		s.m.failures.Add(1)
		if !e.Retryable() {
			return newError("commit", cause, true)
		}
		s.fails.Fail(cause, "table", s.opts.Table, "attempt", attempt+1)
		attempt++
		if !s.sleep(s.backoff(attempt)) {
			return nil
		}
		if lerr == nil && found {
			base = latest
		}
	}
}

// attempt makes one commit of files on top of base: an append (merging
// manifests as the table's commit.manifest-merge.* properties say) whose
// summary carries the merged positions and the commit id, the positions
// also set as a table property, and so are the bounded-metadata
// properties the table lacks.
func (s *Sink) attempt(base *table.Table, files []*dataFile, merged positions, id string) (*table.Table, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.CommitTimeout)
	defer cancel()
	enc := merged.encode()
	dfs := make([]iceberg.DataFile, len(files))
	for i, f := range files {
		dfs[i] = f.df
	}
	fs := s.fsys()
	if retriesConfigured(base) {
		base = rebind(base, fs, noReplay{s.cat})
	}
	tx := base.NewTransaction()
	props := missingBoundedMetadataProps(base.Properties())
	s.boundsSet = maps.Clone(props)
	props[PropPositions] = enc
	if v := s.leaseValue(base, time.Now()); v != "" {
		props[PropMaintenanceLease] = v
	}
	if a := s.arrowSchemaChange(base, files); a != "" {
		props[PropArrowSchema] = a
	}
	if err := tx.SetProperties(props); err != nil {
		return nil, err
	}
	summary := iceberg.Properties{PropPositions: enc, PropCommitID: id, PropFormat: propFormatVersion}
	if err := tx.AddDataFiles(ctx, dfs, summary, table.WithoutDuplicateCheck()); err != nil {
		return nil, err
	}
	next, err := tx.Commit(ctx)
	if err != nil {
		return nil, err
	}
	return rebind(next, fs, s.cat), nil
}

// fsys is the file system of the tables the sink makes from committed
// ones (see rebind).
func (s *Sink) fsys() table.FSysF {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.fs
}

// committed records that tk's batches are durable in tbl (nil: nothing
// was committed) and wakes their waiters.
func (s *Sink) committed(tk taken, tbl *table.Table, files []*dataFile) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tbl != nil {
		s.setTableLocked(tbl)
		s.mt.appended = true
	}
	for _, p := range tk.batches {
		s.mu.pos.addSpans(p.spans)
		if p.rec != nil {
			p.rec.Release()
			p.rec = nil
		}
	}
	// Files replaced by a rewrite (dedupe) are referenced by no snapshot.
	kept := map[string]bool{}
	for _, f := range files {
		kept[f.location] = true
	}
	for _, f := range tk.files {
		if !kept[f.location] {
			s.remove(f.location)
		}
	}
	s.mu.pending = s.mu.pending[len(tk.batches):]
	s.mu.durable, s.mu.hasDurable = tk.upto, true
	s.notifyLocked()
	return nil
}
