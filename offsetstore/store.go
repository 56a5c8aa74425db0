package offsetstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/errlog"
)

// Sentinel errors. Errors returned by the store wrap one of them (and the
// underlying cause, where there is one) with %w.
var (
	// ErrClosed: the store is closed or closing; a callback released with it
	// was not made durable before Close gave up.
	ErrClosed = errors.New("offsetstore: closed")
	// ErrFailed: a group commit failed. The store stays failed until it is
	// closed and reopened (see doc.go, "Failure rule").
	ErrFailed = errors.New("offsetstore: commit failed")
	// ErrTeardownTimeout: Close hit Options.TeardownTimeout.
	ErrTeardownTimeout = errors.New("offsetstore: teardown timed out")
	// ErrInvalidName: a destination or partition name is unusable.
	ErrInvalidName = errors.New("offsetstore: invalid name")
	// ErrInvalidSpan: an OffsetSpan has Last < First or an oversized LastID.
	ErrInvalidSpan = errors.New("offsetstore: invalid offset span")
	// ErrInvalidOptions: a field of Options is out of range.
	ErrInvalidOptions = errors.New("offsetstore: invalid options")
	// ErrIncompatibleLayout: the directory holds data of another key layout.
	ErrIncompatibleLayout = errors.New("offsetstore: incompatible on-disk layout")
	// ErrFormat: the directory holds a store of an older format that this
	// build can migrate but not use (a version 1 store, whose partition ids
	// and seqs were local to it). The error names the command that
	// migrates it: `thalweg offsets migrate --store <dir>` (Migrate).
	ErrFormat = errors.New("offsetstore: store format needs migration")
	// ErrNoSpace: the disk (or quota) is full. The store waits and retries
	// (see doc.go, "Full disk"); Stalled returns an error wrapping it.
	ErrNoSpace = errors.New("offsetstore: no space left on device")
	// ErrLocked: another process (a running worker) has the store open.
	ErrLocked = errors.New("offsetstore: store is locked")
	// ErrNotStore: Options.MustExist (or ReadOnly) and dir is missing or
	// holds no store.
	ErrNotStore = errors.New("offsetstore: not an offset store")
	// ErrReadOnly: a write on a store opened with Options.ReadOnly.
	ErrReadOnly = errors.New("offsetstore: opened read-only")
)

// Position is the watermark of one partition: Seq is the highest sequence
// number covered, ID the upstream id of the record at Seq (nil if the source
// had none). Positions returned by the store are copies the caller owns.
type Position struct {
	Seq uint64
	ID  []byte
}

// Store keeps delivered and coverage watermarks per (destination,
// partition) in Pebble and commits them in synced groups. All methods are
// safe for concurrent use. See doc.go for the commit pipeline, the callback
// contract and the shutdown order.
type Store struct {
	opts Options
	dir  string
	db   *pebble.DB // swapped only by the committer (recover) while no group is in flight
	log  *slog.Logger
	inst *instruments

	watch    *diskWatch       // paces Pebble's background errors (full disk)
	stallLog *errlog.Throttle // "cannot commit" while stalled
	pebLog   *errlog.Throttle // Pebble's Errorf/Fatalf lines
	failedCh chan struct{}    // closed by failLocked

	// fatal is the first error Pebble reported through Logger.Fatalf. Pebble
	// does not stop after Fatalf when the logger returns, and DB.Apply then
	// reports success for a commit whose WAL write failed; every commit is
	// therefore checked against fatal after Pebble returns.
	fatal atomic.Pointer[error]

	kick          chan struct{} // cap 1; the queue became non-empty
	notify        chan struct{} // cap 1; ready became non-empty, or the notifier should stop
	stop          chan struct{} // closed by Close; the committer exits
	slots         chan struct{} // MaxInFlight tokens; held from taking a group until its sync returned
	committerDone chan struct{}
	notifierDone  chan struct{}
	done          chan struct{} // closed once Pebble is closed
	waiters       sync.WaitGroup
	abandoned     sync.WaitGroup // Pebble opens given up on (openDB); Done waits for them

	closeOnce  sync.Once
	closeErr   error
	dbCloseErr error // written before done is closed

	// applied is the watermark state as written into Pebble batches: the
	// durable state plus every group in flight. Only the committer goroutine
	// touches it, which is what makes the monotone max check race-free.
	applied map[wmKey]Position

	mu struct {
		sync.Mutex
		nextTicket    uint64        // FIFO ticket of the next request; tickets start at 1
		nextGroup     uint64        // id of the next group commit
		queue         []*request    // accepted, not yet taken into a group
		pending       []*request    // every unreleased request, in ticket order
		ready         []*request    // released, waiting for the notifier to run the callback
		inflight      []*group      // groups handed to Pebble and not yet known durable, in submission order
		durableTicket uint64        // every request with ticket <= durableTicket is durable
		failed        error         // sticky; see doc.go
		stalled       error         // waiting for space (wraps ErrNoSpace); see doc.go, "Full disk"
		recovered     chan struct{} // closed when the current stall ends
		epoch         uint64        // incremented by each recovery; reports of older groups are ignored
		closing       bool          // Close started: new requests are refused
		closed        bool          // Close released everything: completions are ignored
		notifierStop  bool

		// durable holds exactly what synced commits made durable (or what
		// Open read back), by kind, destination and partition name.
		durable map[kind]map[string]map[string]Position
	}

	// migrated counts the watermarks a migrating open dropped (Migrate).
	migrated int
}

// Open opens (creating if needed, unless Options.MustExist) the store in dir
// on opts.FS. It reads the durable state back into memory, so the cost of
// Open grows with the number of (destination, partition) pairs, not with
// the number of commits made. On a full disk it fails with an error
// wrapping ErrNoSpace — though Pebble itself may first spend a while
// retrying the flush of its WAL; OpenContext bounds that and waits for
// space instead.
//
// The returned Store owns two goroutines and the Pebble DB until Close.
func Open(dir string, opts Options) (*Store, error) {
	return open(context.Background(), dir, opts, false)
}

// OpenContext is Open for a process that must come up on a full disk: it
// retries an Open that fails for lack of space (ErrNoSpace) with growing
// capped backoff (Options.RetryInitial..RetryMax), logging the condition
// once and then every 30 s, and calling Options.OnDiskFull, until it
// succeeds or ctx ends. When ctx ends it returns at once with ctx's error
// (and the last disk error); a Pebble open still in progress then finishes
// in the background and is closed. Any other error ends it at once.
func OpenContext(ctx context.Context, dir string, opts Options) (*Store, error) {
	return open(ctx, dir, opts, true)
}

func open(ctx context.Context, dir string, opts Options, retry bool) (*Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: dir is empty", ErrInvalidOptions)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.withDefaults()
	inst, err := newInstruments(opts.MeterProvider)
	if err != nil {
		return nil, err
	}
	s := &Store{
		opts:          opts,
		dir:           dir,
		failedCh:      make(chan struct{}),
		log:           opts.Logger.With(slog.String("component", "offsetstore")),
		inst:          inst,
		kick:          make(chan struct{}, 1),
		notify:        make(chan struct{}, 1),
		stop:          make(chan struct{}),
		slots:         make(chan struct{}, opts.MaxInFlight),
		committerDone: make(chan struct{}),
		notifierDone:  make(chan struct{}),
		done:          make(chan struct{}),
		applied:       make(map[wmKey]Position),
	}
	s.mu.nextTicket = 1
	s.watch = &diskWatch{
		log:     &errlog.Throttle{Log: s.log, What: "pebble background error"},
		initial: opts.RetryInitial, max: opts.RetryMax, stop: make(chan struct{}),
		report: s.notifyDiskFull,
	}
	s.stallLog = &errlog.Throttle{Log: s.log, What: "offset store cannot write: disk full; holding commits (the pipeline waits), retrying"}
	s.pebLog = &errlog.Throttle{Log: s.log, What: "pebble error"}
	if opts.MustExist {
		if err := checkIsStore(opts.FS, dir); err != nil {
			return nil, err
		}
	}
	wait, waited := opts.RetryInitial, false
	for attempt := 1; ; attempt++ {
		err := s.openAttempt(ctx)
		if err == nil {
			break
		}
		err = fmt.Errorf("offsetstore: open %s: %w", dir, err)
		if !retry || !isNoSpace(err) || ctx.Err() != nil {
			s.watch.close()
			return nil, err
		}
		if attempt == 1 {
			s.notifyDiskFull(err)
		}
		s.stallLog.Fail(err, "dir", dir, "attempt", attempt, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			s.watch.close()
			return nil, fmt.Errorf("offsetstore: open %s: %w while waiting for space (%w)", dir, ctx.Err(), err)
		}
		wait = min(2*wait, opts.RetryMax)
		waited = true
	}
	if waited {
		s.stallLog.Clear("dir", dir)
		s.notifyDiskFull(nil)
	}
	go s.commitLoop()
	go s.notifyLoop()
	return s, nil
}

// openAttempt opens Pebble and loads the durable state into fresh maps.
func (s *Store) openAttempt(ctx context.Context) error {
	s.applied = make(map[wmKey]Position)
	s.mu.durable = map[kind]map[string]map[string]Position{
		kindDelivered: {},
		kindCoverage:  {},
	}
	db, err := s.openDB(ctx)
	if err != nil {
		return err
	}
	s.db = db
	if err := s.load(); err != nil {
		s.db = nil
		if cerr := db.Close(); cerr != nil && !isNoSpace(err) {
			err = errors.Join(err, cerr)
		}
		if isNoSpace(err) && !errors.Is(err, ErrNoSpace) {
			err = fmt.Errorf("%w: %w", ErrNoSpace, err)
		}
		return err
	}
	return nil
}

// load checks the layout version and reads every key into memory. It runs
// before the goroutines start.
func (s *Store) load() error {
	v, closer, err := s.db.Get(versionKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		empty, err := s.isEmpty()
		if err != nil {
			return err
		}
		if !empty {
			return fmt.Errorf("%w: no layout version key in a non-empty store", ErrIncompatibleLayout)
		}
		if s.opts.ReadOnly {
			return fmt.Errorf("%w: %s is an empty Pebble database", ErrNotStore, s.dir)
		}
		if err := s.db.Set(versionKey, binary.AppendUvarint(nil, layoutVersion), pebble.Sync); err != nil {
			return fmt.Errorf("write layout version: %w", err)
		}
		if err := s.fatalErr(); err != nil {
			return fmt.Errorf("write layout version: %w", err)
		}
	case err != nil:
		return fmt.Errorf("read layout version: %w", err)
	default:
		ver, n := binary.Uvarint(v)
		_ = closer.Close()
		switch {
		case n > 0 && ver == layoutVersionV1 && s.opts.migrate:
			if err := s.migrateV1(); err != nil {
				return fmt.Errorf("migrate version 1 store: %w", err)
			}
		case n > 0 && ver == layoutVersionV1:
			return fmt.Errorf("%w (%w): %s is a version 1 offset store, whose partition ids and seqs were "+
				"local to it; run `thalweg offsets migrate --store %s` to rewrite it as an empty version %d store "+
				"(the worker then takes its positions from the raw anchor)", ErrFormat, ErrIncompatibleLayout, s.dir, s.dir, layoutVersion)
		case n <= 0 || ver != layoutVersion:
			return fmt.Errorf("%w: layout version %d, this build reads %d", ErrIncompatibleLayout, ver, layoutVersion)
		}
	}

	it, err := s.db.NewIter(nil)
	if err != nil {
		return err
	}
	for valid := it.First(); valid; valid = it.Next() {
		key := it.Key()
		switch key[0] {
		case prefixVersion:
		case prefixDelivered, prefixCoverage:
			k, err := decodeWatermarkKey(key)
			if err != nil {
				_ = it.Close()
				return err
			}
			pos, err := decodePosition(it.Value())
			if err != nil {
				_ = it.Close()
				return fmt.Errorf("key %q: %w", key, err)
			}
			s.applied[k] = pos
			s.putDurableLocked(k, pos)
		default:
			_ = it.Close()
			return fmt.Errorf("%w %q: unknown prefix", errCorruptKey, key)
		}
	}
	return it.Close()
}

// migrateV1 rewrites a version 1 store as an empty version 2 store, in one
// synced batch: every key goes (the registry and every watermark, whose
// seqs were counters of this store and map to nothing upstream), the
// version key becomes 2. It counts the watermarks dropped in s.migrated.
func (s *Store) migrateV1() error {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	dropped := 0
	for valid := it.First(); valid; valid = it.Next() {
		key := it.Key()
		if len(key) > 0 && (key[0] == prefixDelivered || key[0] == prefixCoverage) {
			dropped++
		}
		if err := b.Delete(key, nil); err != nil {
			_ = it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	if err := b.Set(versionKey, binary.AppendUvarint(nil, layoutVersion), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return err
	}
	if err := s.fatalErr(); err != nil {
		return err
	}
	s.migrated = dropped
	return nil
}

// Migrate rewrites the version 1 offset store in dir as an empty version 2
// store, which Open then accepts, and returns how many watermarks
// (delivered and coverage, every destination and partition) it dropped. A
// version 1 store numbered partitions and seqs itself, so its positions map
// to nothing upstream and cannot be translated; after the migration the
// worker takes its positions from the raw anchor on start and secondaries
// are rebuilt from it (docs/operations.md). A store already at version 2 is
// left as it is (0 dropped). It takes the store's lock like Open (ErrLocked
// while a worker runs on it) and refuses a directory that holds no store
// (ErrNotStore).
func Migrate(dir string) (dropped int, err error) {
	s, err := Open(dir, Options{MustExist: true, migrate: true})
	if err != nil {
		return 0, err
	}
	dropped = s.migrated
	if err := s.Close(); err != nil {
		return dropped, err
	}
	return dropped, nil
}

func (s *Store) isEmpty() (bool, error) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return false, err
	}
	empty := !it.First()
	return empty, it.Close()
}

// fatalErr returns the first error Pebble reported as fatal, or nil.
func (s *Store) fatalErr() error {
	if p := s.fatal.Load(); p != nil {
		return *p
	}
	return nil
}

// CommitDelivered records that the spans were delivered durably to dest:
// for every partition, the delivered watermark becomes max(current, Last)
// together with the LastID of the span that carried that Last.
//
// It only enqueues; onDurable (may be nil) is called exactly once, on the
// store's notifier goroutine, after the synced commit that made the state
// durable, with nil, or with the error that prevented it. Callbacks of all
// Commit* calls of the store run one at a time in the order of the calls
// (FIFO). After Close, onDurable is called synchronously with ErrClosed.
// The store does not keep spans after CommitDelivered returns.
func (s *Store) CommitDelivered(dest string, spans []batch.OffsetSpan, onDurable func(error)) {
	s.commit(kindDelivered, dest, spans, onDurable)
}

// CommitCoverage is CommitDelivered for the coverage watermark, which a
// secondary (coverage) lane advances and recovery never reads.
func (s *Store) CommitCoverage(dest string, spans []batch.OffsetSpan, onDurable func(error)) {
	s.commit(kindCoverage, dest, spans, onDurable)
}

// LowerCoverage moves the coverage of dest down to sp.Last for the
// partition of each span (the lowest Last when a partition has several),
// where it is above that; a coverage at or below it, or none, stays (Last 0
// removes it). It is the one coverage write that goes down: a secondary of
// a source that is not monotone (pipeline) learns of a record below the
// coverage it already committed — a Shared subscription's consumer taking
// over what another dropped — and must make sure the coverage is below it
// before the record can be durably delivered. It enqueues like
// CommitCoverage, in the same FIFO, so a CommitDelivered issued after it
// is durable only with or after it; later CommitCoverage calls raise the
// coverage again from the lowered value.
func (s *Store) LowerCoverage(dest string, spans []batch.OffsetSpan, onDurable func(error)) {
	r := &request{op: opLower, kind: kindCoverage, dest: dest, cb: onDurable}
	err := validateDestination(dest)
	if err == nil {
		r.marks, err = reduceSpans(spans)
	}
	if err == nil {
		for i := range r.marks {
			for _, sp := range spans {
				if sp.Partition == r.marks[i].partition && sp.Last < r.marks[i].pos.Seq {
					r.marks[i].pos = Position{Seq: sp.Last, ID: bytes.Clone(sp.LastID)}
				}
			}
		}
	}
	s.enqueue(r, err)
}

func (s *Store) commit(k kind, dest string, spans []batch.OffsetSpan, cb func(error)) {
	r := &request{op: opWatermark, kind: k, dest: dest, cb: cb}
	err := validateDestination(dest)
	if err == nil {
		r.marks, err = reduceSpans(spans)
	}
	s.enqueue(r, err)
}

// reduceSpans keeps the highest Last per partition, copying its LastID,
// in the order the partitions first appear. A batch carries a span per
// partition it read, hundreds on a topic of many partitions, hence the
// index by name rather than a scan of the marks per span.
func reduceSpans(spans []batch.OffsetSpan) ([]mark, error) {
	marks := make([]mark, 0, len(spans))
	at := make(map[string]int, len(spans))
	for _, sp := range spans {
		if err := validatePartitionName(sp.Partition); err != nil {
			return nil, fmt.Errorf("%w: %v: %w", ErrInvalidSpan, sp, err)
		}
		if sp.Last < sp.First {
			return nil, fmt.Errorf("%w: %v has Last < First", ErrInvalidSpan, sp)
		}
		if len(sp.LastID) > maxUpstreamIDLen {
			return nil, fmt.Errorf("%w: %v has a LastID of %d bytes, limit %d", ErrInvalidSpan, sp, len(sp.LastID), maxUpstreamIDLen)
		}
		if i, ok := at[sp.Partition]; ok {
			if sp.Last > marks[i].pos.Seq {
				marks[i].pos = Position{Seq: sp.Last, ID: bytes.Clone(sp.LastID)}
			}
			continue
		}
		at[sp.Partition] = len(marks)
		marks = append(marks, mark{partition: sp.Partition, pos: Position{Seq: sp.Last, ID: bytes.Clone(sp.LastID)}})
	}
	return marks, nil
}

// enqueue gives r the next FIFO ticket. A request with an error (invalid
// input, store closing or failed) does not go to the committer; it is
// released with that error when it reaches the head of the FIFO, so it
// still keeps its place in the callback order.
func (s *Store) enqueue(r *request, err error) {
	s.mu.Lock()
	if s.mu.closed {
		// The notifier is gone and every earlier callback already ran.
		s.mu.Unlock()
		if r.cb != nil {
			r.cb(ErrClosed)
		}
		return
	}
	s.enqueueLocked(r, err)
	s.mu.Unlock()
}

func (s *Store) enqueueLocked(r *request, err error) {
	r.ticket = s.mu.nextTicket
	s.mu.nextTicket++
	switch {
	case err != nil:
	case s.opts.ReadOnly && r.op != opBarrier:
		err = fmt.Errorf("%w: %s", ErrReadOnly, s.dir)
	case s.mu.closing && r.op != opBarrier:
		err = ErrClosed
	case s.mu.failed != nil:
		err = s.mu.failed
	}
	s.mu.pending = append(s.mu.pending, r)
	if err != nil {
		r.err = err
		s.releaseLocked()
		return
	}
	s.mu.queue = append(s.mu.queue, r)
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Flush forces a synced commit of everything queued so far and returns once
// every callback of an earlier Commit* call has run. It returns the commit
// error (wrapping ErrFailed) if any of that did not become durable, ErrClosed
// after Close, or ctx.Err() if ctx ends first (the commit still happens).
// Do not call Flush from an onDurable callback: it would wait for itself.
func (s *Store) Flush(ctx context.Context) error {
	s.mu.Lock()
	switch {
	case s.mu.closing || s.mu.closed:
		s.mu.Unlock()
		return ErrClosed
	case s.mu.failed != nil:
		err := s.mu.failed
		s.mu.Unlock()
		return err
	case len(s.mu.pending) == 0 && len(s.mu.ready) == 0:
		s.mu.Unlock()
		return nil
	}
	done := make(chan error, 1)
	s.enqueueLocked(&request{op: opBarrier, cb: func(err error) { done <- err }}, nil)
	s.mu.Unlock()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait enqueues r and blocks until its callback ran. Close bounds the wait.
func (s *Store) wait(r *request, err error) error {
	done := make(chan error, 1)
	r.cb = func(err error) { done <- err }
	s.enqueue(r, err)
	return <-done
}

// Delivered returns the durable delivered watermark of every partition of
// dest: exactly the state that synced commits made durable (or that Open
// read back), never a state still in flight. Recovery reads this, and only
// this, as the position to resume from. Unknown destinations yield an empty
// map.
func (s *Store) Delivered(dest string) (map[string]Position, error) {
	return s.read(kindDelivered, dest)
}

// Coverage returns the durable coverage watermarks of dest.
func (s *Store) Coverage(dest string) (map[string]Position, error) {
	return s.read(kindCoverage, dest)
}

func (s *Store) read(k kind, dest string) (map[string]Position, error) {
	if err := validateDestination(dest); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil, ErrClosed
	}
	src := s.mu.durable[k][dest]
	out := make(map[string]Position, len(src))
	for p, pos := range src {
		out[p] = Position{Seq: pos.Seq, ID: bytes.Clone(pos.ID)}
	}
	return out, nil
}

// Destinations returns, sorted, every destination with a durable delivered
// or coverage watermark.
func (s *Store) Destinations() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil, ErrClosed
	}
	seen := make(map[string]struct{})
	for _, byDest := range s.mu.durable {
		for d := range byDest {
			seen[d] = struct{}{}
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// Reset forgets the delivered and coverage watermarks of one partition of
// dest (for `thalweg offsets reset`); the next commit for it starts a new
// monotone sequence. It is ordered with Commit* calls like any commit and
// returns once the deletion is durable.
func (s *Store) Reset(dest, partition string) error {
	if err := validatePartitionName(partition); err != nil {
		return err
	}
	return s.reset(dest, partition, false)
}

// ResetDestination forgets every watermark of dest.
func (s *Store) ResetDestination(dest string) error {
	return s.reset(dest, "", true)
}

// SetPosition sets both the delivered and the coverage watermark of one
// partition of dest to pos, lower or higher than before (for `thalweg
// offsets reset` to a position: moving every destination together keeps a
// secondary's coverage from ending ahead of the anchor). pos.ID is copied.
// Later commits are monotone from pos. It is ordered with Commit* calls like
// any commit and returns once the write is durable.
func (s *Store) SetPosition(dest, partition string, pos Position) error {
	if err := validateDestination(dest); err != nil {
		return err
	}
	if err := validatePartitionName(partition); err != nil {
		return err
	}
	if len(pos.ID) > maxUpstreamIDLen {
		return fmt.Errorf("%w: position id of %d bytes, limit %d", ErrInvalidSpan, len(pos.ID), maxUpstreamIDLen)
	}
	m := mark{partition: partition, pos: Position{Seq: pos.Seq, ID: bytes.Clone(pos.ID)}}
	if err := s.wait(&request{op: opSet, dest: dest, marks: []mark{m}}, nil); err != nil {
		return fmt.Errorf("offsetstore: set position of %q %q: %w", dest, partition, err)
	}
	return nil
}

func (s *Store) reset(dest, partition string, all bool) error {
	err := validateDestination(dest)
	if err != nil {
		return err
	}
	if err := s.wait(&request{op: opReset, dest: dest, partition: partition, allPartitions: all}, nil); err != nil {
		return fmt.Errorf("offsetstore: reset %q: %w", dest, err)
	}
	return nil
}

// Err returns the error that failed the store (wrapping ErrFailed), or nil
// while it is healthy. A failed store stays failed until reopened.
func (s *Store) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.failed
}

// Done is closed once Pebble has been closed. That is normally before Close
// returns; after a Close that timed out on a stuck sync, or that
// interrupted a reopen on a full disk, it happens whenever the file system
// lets go.
func (s *Store) Done() <-chan struct{} { return s.done }

// Close shuts the store down, in this order (the one place it is written):
//
//  1. refuse new requests (their callbacks get ErrClosed);
//  2. force a final synced commit of everything queued and wait for it, at
//     most TeardownTimeout;
//  3. release every callback not made durable with an error wrapping
//     ErrClosed (and ErrTeardownTimeout if the sync was stuck), and wait for
//     the notifier to run all remaining callbacks;
//  4. stop the committer, wait for in-flight syncs, close Pebble — within
//     what is left of TeardownTimeout; if that runs out, Close returns and
//     Pebble finishes closing in the background (see Done).
//
// Close returns nil only if everything ever accepted was made durable and
// Pebble closed cleanly. It is idempotent; every call returns the same
// result. Do not call it from an onDurable callback.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Store) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.TeardownTimeout)
	defer cancel()
	var errs []error

	final := make(chan error, 1)
	s.mu.Lock()
	s.mu.closing = true
	// While waiting for space nothing can become durable: do not wait
	// TeardownTimeout for it.
	stalled := s.mu.stalled
	needFinal := s.mu.failed == nil && stalled == nil && len(s.mu.pending) > 0
	if needFinal {
		s.enqueueLocked(&request{op: opBarrier, cb: func(err error) { final <- err }}, nil)
	}
	s.mu.Unlock()

	releaseErr := ErrClosed
	if stalled != nil {
		releaseErr = fmt.Errorf("%w: not durable: %w", ErrClosed, stalled)
		errs = append(errs, releaseErr)
	}
	if needFinal {
		select {
		case err := <-final:
			if err != nil {
				errs = append(errs, fmt.Errorf("offsetstore: final commit: %w", err))
			}
		case <-ctx.Done():
			releaseErr = fmt.Errorf("%w: %w: final synced commit not durable within %v", ErrClosed, ErrTeardownTimeout, s.opts.TeardownTimeout)
			errs = append(errs, releaseErr)
			s.log.Warn("final synced commit did not finish in time; releasing pending callbacks as not durable",
				slog.Duration("teardown_timeout", s.opts.TeardownTimeout))
		}
	}

	s.mu.Lock()
	s.mu.closed = true
	if s.mu.failed != nil {
		errs = append(errs, s.mu.failed)
	}
	for _, r := range s.mu.pending {
		if r.err == nil {
			r.err = releaseErr
		}
	}
	s.releaseLocked()
	s.mu.queue, s.mu.inflight = nil, nil
	s.endStallLocked()
	s.mu.notifierStop = true
	s.mu.Unlock()
	s.signalNotifier()
	close(s.stop)
	s.watch.close()
	<-s.notifierDone

	dbClosed := make(chan struct{})
	go func() {
		<-s.committerDone
		s.waiters.Wait()
		if s.db != nil { // nil: recover closed the failed instance and did not reopen
			s.dbCloseErr = s.db.Close()
		}
		close(dbClosed)
		// A reopen that Close interrupted (full disk) may still be inside
		// pebble.Open; it closes what it opens, whenever the disk lets it.
		s.abandoned.Wait()
		close(s.done)
	}()
	select {
	case <-dbClosed:
		if s.dbCloseErr != nil {
			errs = append(errs, fmt.Errorf("offsetstore: close pebble: %w", s.dbCloseErr))
		}
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("%w: pebble did not close within %v; it will close in the background", ErrTeardownTimeout, s.opts.TeardownTimeout))
	}
	return errors.Join(errs...)
}

// pebbleLogger routes Pebble's log output to slog. Fatalf must not exit the
// process (the default does): it records the error, which fails the store.
type pebbleLogger struct{ s *Store }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.s.log.Debug(fmt.Sprintf(format, args...), slog.String("source", "pebble"))
}

// Errorf and Fatalf lines go through a Throttle: on a full disk Pebble
// repeats them for every attempt.
func (l pebbleLogger) Errorf(format string, args ...any) {
	l.s.pebLog.Fail(fmt.Errorf(format, args...), "source", "pebble")
}

func (l pebbleLogger) Fatalf(format string, args ...any) {
	fe := &pebbleFatalError{msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if e, ok := a.(error); ok {
			fe.cause = e
			break
		}
	}
	var err error = fe
	l.s.fatal.CompareAndSwap(nil, &err)
	l.s.pebLog.Fail(err, "source", "pebble", "fatal", true)
}

// pebbleFatalError is what Pebble reported through Fatalf; it unwraps to the
// first error among the arguments, so errors.Is sees the I/O cause.
type pebbleFatalError struct {
	msg   string
	cause error
}

func (e *pebbleFatalError) Error() string { return "pebble fatal: " + e.msg }
func (e *pebbleFatalError) Unwrap() error { return e.cause }
