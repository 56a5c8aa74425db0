package lanes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/instruments"
)

// State is the lifecycle state of a lane, for readiness probes and logs.
type State int32

const (
	// StateConnecting: the supervisor is dialling the first transport.
	StateConnecting State = iota
	// StateOpen: a transport is up and the ack task is running.
	StateOpen
	// StatePoisoned: the ack task or a Send hit a permanent error (or ran
	// out of retries); the supervisor is about to tear the stream down.
	StatePoisoned
	// StateRebuilding: the supervisor is closing the old transport, dialling
	// a new one and replaying the unconfirmed batches.
	StateRebuilding
	// StateClosing: Close was called; intake is stopped, pending batches
	// are still being confirmed.
	StateClosing
	// StateClosed: Close returned.
	StateClosed
	// StateFailed: permanent failures outlasted Options.PermanentBudget; the
	// lane no longer dials and Failure returns why. Terminal but for Close,
	// which still moves it to closing and closed.
	StateFailed
)

func (s State) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateOpen:
		return "open"
	case StatePoisoned:
		return "poisoned"
	case StateRebuilding:
		return "rebuilding"
	case StateClosing:
		return "closing"
	case StateClosed:
		return "closed"
	case StateFailed:
		return "failed"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// pendingAck is one batch the lane owns until it is confirmed: the item of
// the lane's channel (docs/design.md#ack-lanes), with the batch for replay.
type pendingAck[T Token] struct {
	offset      uint64
	tok         T
	submittedAt time.Time
	b           *batch.Batch // the lane's own reference
}

// incarnation is one transport and the ack task that serves it. A poisoned
// incarnation is never revived; the supervisor builds the next one.
type incarnation[T Token] struct {
	tr       Transport
	ch       chan pendingAck[T] // capacity Options.Capacity
	poisoned chan struct{}      // closed by poison, once
	ackDone  chan struct{}      // closed when the ack task returned

	poisonOnce sync.Once
	cause      failure // why it was poisoned; written before poisoned is closed
	closeOnce  sync.Once
	closeErr   error
}

func newIncarnation[T Token](tr Transport, capacity int) *incarnation[T] {
	return &incarnation[T]{
		tr:       tr,
		ch:       make(chan pendingAck[T], capacity),
		poisoned: make(chan struct{}),
		ackDone:  make(chan struct{}),
	}
}

func (inc *incarnation[T]) isPoisoned() bool {
	select {
	case <-inc.poisoned:
		return true
	default:
		return false
	}
}

func (inc *incarnation[T]) closeTransport() error {
	inc.closeOnce.Do(func() { inc.closeErr = inc.tr.Close() })
	return inc.closeErr
}

// Lane is the ack lane of one destination (docs/design.md#ack-lanes): Submit hands batches to
// the transport without waiting for acknowledgements, a background ack task
// confirms them in coalesced bursts, and a supervisor rebuilds the transport
// after poisoning and replays what was never confirmed. See the package
// documentation for the invariants and the shutdown order.
//
// All methods are safe for concurrent use. The token type T fixes what a
// confirmation commits.
type Lane[T Token] struct {
	opts    Options
	kind    confirmKind
	metrics *instruments.LaneMetrics
	log     *slog.Logger

	submitted atomic.Uint64 // highest offset a transport accepted
	delivered atomic.Uint64 // highest offset confirmed durable: the watermark
	state     atomic.Int32
	rebuilds  atomic.Uint64
	confirmed atomic.Uint64 // batches confirmed durable
	bursts    atomic.Uint64 // durable waits that confirmed a burst
	rows      atomic.Uint64 // rows of the confirmed batches
	retries   atomic.Uint64 // failed attempts retried with backoff: a send or wait on the stream, a redial
	drainsCut atomic.Uint64 // Closes whose drain ctx cut short with batches unconfirmed
	replayed  atomic.Uint64 // rows sent again on a rebuilt transport

	// slots holds one element per unfinished batch; its capacity is the
	// lane's bound. Submit fills it, finish drains it.
	slots chan struct{}
	// held is the memory of the unfinished batches (AllocatedBytes),
	// bounded by Options.MaxBytes: Submit reserves, finish frees.
	// bytesFreed carries one wake-up to a Submit waiting for bytes.
	held       atomic.Int64
	bytesFreed chan struct{}
	// sendSem serialises offset assignment with Send and with replay, so
	// that a transport sees strictly increasing offsets.
	sendSem chan struct{}

	ctx     context.Context // lane lifetime; cancelled by Close after the drain
	cancel  context.CancelFunc
	closing chan struct{} // closed when Close starts: intake stops
	done    chan struct{} // closed when Close returns
	wg      sync.WaitGroup

	releases releaseQueue

	mu struct {
		sync.Mutex
		inc      *incarnation[T] // the published incarnation (may be poisoned)
		rebuilt  chan struct{}   // closed when the next incarnation is published
		next     uint64          // last assigned offset
		retained fifo[pendingAck[T]]
		// unfinished holds the bytes (AllocatedBytes) of each batch that
		// holds a slot — retained + awaiting commit — in offset order.
		unfinished fifo[int64]
		closing    bool
		idle       chan struct{} // closed once closing && unfinished is empty

		// Offsets are assigned 1, 2, 3, ... and finished in that order
		// (confirmation and the release FIFO keep it), so counts are
		// offsets: every offset <= finished is done (durable or failed),
		// every offset <= durable was released with a nil error.
		finished uint64
		durable  uint64
		flushers []flusher // Flush calls waiting for finished >= target
	}

	// stateMu serialises state transitions with their OnStateChange calls,
	// so that the callback sees them in order. state is written only under
	// it; reads are lock-free.
	stateMu sync.Mutex

	// failing is the lane's current failure streak: the supervisor records
	// failures, the ack task resets it on progress. failingNow mirrors
	// streak.n > 0 so that confirm costs one atomic load when healthy.
	failing struct {
		sync.Mutex
		streak streak
	}
	failingNow atomic.Bool
	// failed is closed, once, when the lane fails for good; failure is set
	// before.
	failed   chan struct{}
	failure  atomic.Pointer[failedError]
	failOnce sync.Once
	// draining is closed by Drain (or Close): from then on a permanent
	// failure ends the lane at once.
	draining  chan struct{}
	drainOnce sync.Once

	replayBuf []pendingAck[T] // supervisor only

	closeOnce sync.Once
	closeErr  error
	trErr     error // final transport Close error, written by the supervisor

	burstHook func(n int) // tests and benchmarks: called per burst by the ack task
}

// New validates opts, creates the lane and starts its supervisor, which dials
// the first transport in the background; Submit waits for it. The caller
// must Close the lane.
func New[T Token](opts Options) (*Lane[T], error) {
	kind := kindOf[T]()
	if err := opts.validate(kind); err != nil {
		return nil, err
	}
	opts.withDefaults()
	l := &Lane[T]{
		opts:       opts,
		kind:       kind,
		log:        opts.Logger.With("destination", opts.Destination, "lane", kind.String()),
		slots:      make(chan struct{}, opts.Capacity),
		bytesFreed: make(chan struct{}, 1),
		sendSem:    make(chan struct{}, 1),
		closing:    make(chan struct{}),
		done:       make(chan struct{}),
		failed:     make(chan struct{}),
		draining:   make(chan struct{}),
	}
	m, err := instruments.NewLaneMetrics(opts.MeterProvider, opts.Destination, opts.Capacity, l)
	if err != nil {
		return nil, fmt.Errorf("lanes: Options.MeterProvider: %w", err)
	}
	l.metrics = m
	l.releases.finish = l.finish
	l.mu.rebuilt = make(chan struct{})
	l.state.Store(int32(StateConnecting)) // the initial state: no transition
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.wg.Add(1)
	go l.supervise()
	return l, nil
}

// Destination returns Options.Destination.
func (l *Lane[T]) Destination() string { return l.opts.Destination }

// Capacity returns the effective Options.Capacity.
func (l *Lane[T]) Capacity() int { return l.opts.Capacity }

// MaxBytes returns the effective Options.MaxBytes.
func (l *Lane[T]) MaxBytes() int64 { return l.opts.MaxBytes }

// HeldBytes is the memory of the batches the lane holds unfinished
// (batch.(*Batch).AllocatedBytes), at most max(MaxBytes, the largest
// batch).
func (l *Lane[T]) HeldBytes() int64 { return l.held.Load() }

// Submitted is the highest offset a transport has accepted. It is an
// ingest-side high-water only: nothing durable may be derived from it.
func (l *Lane[T]) Submitted() uint64 { return l.submitted.Load() }

// Confirmed is the number of batches the transport confirmed durable.
func (l *Lane[T]) Confirmed() uint64 { return l.confirmed.Load() }

// Bursts is the number of bursts the ack task confirmed, each with one
// durable wait. Confirmed/Bursts is the lane's mean coalesce ratio: about
// 1 means the sink is not being pipelined.
func (l *Lane[T]) Bursts() uint64 { return l.bursts.Load() }

// Delivered is the highest offset the transport confirmed durable; every
// lower offset is confirmed too. It is the lane's watermark.
func (l *Lane[T]) Delivered() uint64 { return l.delivered.Load() }

// Pending is Submitted − Delivered.
func (l *Lane[T]) Pending() uint64 {
	d := l.delivered.Load() // first: delivered never passes submitted
	return l.submitted.Load() - d
}

// State returns the lane's lifecycle state.
func (l *Lane[T]) State() State { return State(l.state.Load()) }

// Rebuilds counts transports the supervisor tore down after a poisoning.
func (l *Lane[T]) Rebuilds() uint64 { return l.rebuilds.Load() }

// Rows is the number of rows in the batches confirmed durable so far.
func (l *Lane[T]) Rows() uint64 { return l.rows.Load() }

// Retries is the number of failed attempts retried so far, of either class:
// a send or durable wait retried on the same stream, and every redial after
// a failure (the thalweg.lane.retries counter of this lane).
func (l *Lane[T]) Retries() uint64 { return l.retries.Load() }

// DrainTimeouts is the number of Close calls whose drain ctx cut short with
// batches still unconfirmed (the thalweg.lane.drain_timeouts counter of this
// lane): at most 1 for one lane, which closes once.
func (l *Lane[T]) DrainTimeouts() uint64 { return l.drainsCut.Load() }

// Replayed is the number of rows sent again on a rebuilt transport because
// their batch had not been confirmed: the most the sink may hold twice
// because of this lane's rebuilds.
func (l *Lane[T]) Replayed() uint64 { return l.replayed.Load() }

// Err returns the first offset-store failure the lane saw (wrapping
// ErrCommitFailed), or nil. After such a failure the lane keeps delivering
// but releases no RawAnchor token with a nil error: the pipeline should shut
// down and restart from the durable watermark.
func (l *Lane[T]) Err() error { return l.releases.err() }

// Failure returns the error of a lane that failed for good (wrapping
// ErrFailed and the last transport error, whose gRPC status it names), or
// nil while the lane lives. See Options.PermanentBudget.
func (l *Lane[T]) Failure() error {
	if f := l.failure.Load(); f != nil {
		return f
	}
	return nil
}

// Failed is closed when the lane fails for good; Failure then returns why.
func (l *Lane[T]) Failed() <-chan struct{} { return l.failed }

// Drain tells the lane that its owner is stopping: from now on a permanent
// failure (one already under way included) fails the lane for good at
// once instead of after Options.PermanentBudget, because a drain cannot
// wait for an operator's fix. It does not stop intake; Close calls it
// itself, but an owner that first finishes submitting — as package
// pipeline does, whose dispatcher may be blocked in Submit on a lane that
// is being refused — calls it when the stop begins. Idempotent.
func (l *Lane[T]) Drain() {
	l.drainOnce.Do(func() { close(l.draining) })
}

// Done is closed when Close has finished.
func (l *Lane[T]) Done() <-chan struct{} { return l.done }

// Submit hands b to the lane under the next logical offset and returns as
// soon as the transport accepted it; it never waits for an acknowledgement.
//
// Submit blocks, honouring ctx, while the lane is full (Capacity unfinished
// batches, or b does not fit in what MaxBytes leaves), while the first
// transport is being dialled and while the lane is rebuilding after a
// poisoning. Calls are serialised; offsets follow the
// order in which calls acquire the lane. The time it blocks is counted in
// thalweg.lane.intake_blocked by reason (lane_full, connecting, rebuilding);
// a Submit that does not block records no metric.
// Once the lane failed for good, Submit returns its Failure (wrapping
// ErrFailed) and takes nothing.
//
// On a nil return the lane has taken custody: it took its own reference to b
// (the caller still owns, and must Release, its own), and tok's callback
// will be called exactly once. Custody is also taken when the transport
// rejects the batch after the offset was assigned — the stream is then
// poisoned and the batch replayed on the rebuilt one — so the caller never
// has to resubmit. On an error (ctx done, ErrClosed) the lane took nothing
// and tok is never called. ctx governs only the waiting before the offset is
// assigned: the hand-off after it (Send, with at most MaxRetries backoffs on
// transient errors) ends on acceptance, poisoning or Close.
func (l *Lane[T]) Submit(ctx context.Context, b *batch.Batch, tok T) error {
	if b == nil || b.Rec == nil {
		return errors.New("lanes: Submit: nil batch")
	}
	select {
	case <-l.failed:
		return l.Failure()
	default:
	}
	select {
	case l.slots <- struct{}{}:
	default:
		// The lane holds Capacity unfinished batches.
		if err := l.block(ctx, l.slots, nil, autoReason); err != nil {
			return err
		}
	}
	size := b.AllocatedBytes()
	if err := l.reserve(ctx, size); err != nil {
		<-l.slots
		return err
	}
	inc, err := l.acquire(ctx)
	if err != nil {
		l.free(size)
		<-l.slots
		return err
	}
	// Holding sendSem and mu: assign the offset and take custody.
	l.mu.unfinished.push(size)
	l.mu.next++
	pa := pendingAck[T]{offset: l.mu.next, tok: tok, submittedAt: time.Now(), b: b}
	b.Retain()
	l.mu.retained.push(pa)
	l.mu.Unlock()

	if err := l.send(inc, pa); err == nil {
		l.submitted.Store(pa.offset)
		inc.ch <- pa // never blocks: the channel holds at most the slots held
	}
	// On error send poisoned inc (or the lane is closing): pa stays retained
	// and the next incarnation replays it (or Close discards it).
	<-l.sendSem
	return nil
}

// reserve takes n bytes of Options.MaxBytes for a batch about to be
// submitted, waiting (as on a full lane) while the lane holds batches and n
// does not fit beside them. A batch larger than MaxBytes is taken once the
// lane holds nothing: it must not wait forever.
func (l *Lane[T]) reserve(ctx context.Context, n int64) error {
	woken := false
	for {
		h := l.held.Load()
		if h != 0 && h+n > l.opts.MaxBytes {
			if err := l.block(ctx, nil, l.bytesFreed, autoReason); err != nil {
				return err
			}
			woken = true
			continue
		}
		if l.held.CompareAndSwap(h, h+n) {
			if woken {
				// The bytes freed may fit another waiting Submit too: pass
				// the one wake-up on.
				l.wakeBytes()
			}
			return nil
		}
	}
}

// free gives back n reserved bytes and wakes a Submit waiting for them.
func (l *Lane[T]) free(n int64) {
	l.held.Add(-n)
	l.wakeBytes()
}

func (l *Lane[T]) wakeBytes() {
	select {
	case l.bytesFreed <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// acquire takes sendSem and mu and returns the open incarnation, waiting
// (ctx-aware) through connecting and rebuilding. On success mu and sendSem
// are held; on error neither is.
func (l *Lane[T]) acquire(ctx context.Context) (*incarnation[T], error) {
	// After a wait for the next incarnation, the supervisor still holds
	// sendSem for a moment after publishing it: that is still the wait for
	// the transport, not a full lane.
	reason := autoReason
	for {
		select {
		case l.sendSem <- struct{}{}:
		default:
			// The supervisor is replaying, or another Submit is in Send.
			if err := l.block(ctx, l.sendSem, nil, reason); err != nil {
				return nil, err
			}
		}
		l.mu.Lock()
		if l.mu.closing {
			l.mu.Unlock()
			<-l.sendSem
			return nil, ErrClosed
		}
		inc, rebuilt := l.mu.inc, l.mu.rebuilt
		if inc != nil && !inc.isPoisoned() {
			return inc, nil
		}
		l.mu.Unlock()
		<-l.sendSem
		reason = instruments.BlockRebuilding
		if inc == nil {
			reason = instruments.BlockConnecting
		}
		if err := l.block(ctx, nil, rebuilt, reason); err != nil {
			return nil, err
		}
	}
}

// autoReason makes block take the reason from the lane's transport.
const autoReason = instruments.BlockReason(255)

// block is the slow path of Submit: it waits until it can send into sem (a
// free slot, or the send semaphore) or until ready yields (closed when the
// next incarnation is published, or bytesFreed's wake-up) — exactly one of
// the two is non-nil — honouring ctx and Close. It is taken only when Submit cannot go on at once, so a
// Submit that does not wait never touches the clock.
//
// The time it blocks counts in thalweg.lane.intake_blocked under reason, or
// with autoReason under the reason the lane's transport gives at each
// moment, not what is waited for: a full lane whose stream is poisoned waits
// for slots that only the rebuilt stream can free, and that is the broken
// lane's time (rebuilding), not a slow sink's (lane_full). When the
// transport's condition changes mid-wait, the wait goes on under the new
// reason.
func (l *Lane[T]) block(ctx context.Context, sem chan<- struct{}, ready <-chan struct{}, reason instruments.BlockReason) error {
	for {
		r, change := reason, (<-chan struct{})(nil)
		if reason == autoReason {
			r, change = l.blockReason()
		}
		w := l.metrics.IntakeBlocked(r)
		select {
		case sem <- struct{}{}:
			w.End()
			return nil
		case <-ready:
			w.End()
			return nil
		case <-change:
			w.End()
		case <-ctx.Done():
			w.End()
			return ctx.Err()
		case <-l.closing:
			w.End()
			return ErrClosed
		case <-l.failed:
			w.End()
			return l.Failure()
		}
	}
}

// blockReason says why intake is blocked now — lane_full while a transport
// is open, connecting before the first one is published, rebuilding while
// the published one is poisoned — and returns a channel closed when that
// changes: the open incarnation's poisoned, or the rebuilt channel.
func (l *Lane[T]) blockReason() (instruments.BlockReason, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch inc := l.mu.inc; {
	case inc == nil:
		return instruments.BlockConnecting, l.mu.rebuilt
	case inc.isPoisoned():
		return instruments.BlockRebuilding, l.mu.rebuilt
	default:
		return instruments.BlockLaneFull, inc.poisoned
	}
}

// send hands pa to inc's transport, retrying transient errors. It returns nil
// once the transport accepted the batch; otherwise inc is poisoned (by send,
// or already) or the lane is shutting down.
func (l *Lane[T]) send(inc *incarnation[T], pa pendingAck[T]) error {
	for attempt := 1; ; attempt++ {
		err := inc.tr.Send(l.ctx, pa.offset, pa.b)
		if err == nil {
			return nil
		}
		if l.ctx.Err() != nil || inc.isPoisoned() {
			return err
		}
		if IsPermanent(err) || attempt > l.opts.MaxRetries {
			l.poison(inc, stepSend, err)
			return err
		}
		l.retry()
		l.log.Debug("transient send error, retrying", "offset", pa.offset, "attempt", attempt, "err", err)
		select {
		case <-time.After(l.opts.Backoff.delay(attempt)):
		case <-inc.poisoned:
			return err
		case <-l.ctx.Done():
			return err
		}
	}
}

// retry counts one transient error that is retried.
func (l *Lane[T]) retry() {
	l.retries.Add(1)
	l.metrics.Retry(l.ctx)
}

// poison marks inc dead, once, because step failed with err. The ack task
// of inc returns, Submit stops using inc, and the supervisor records the
// failure (metric, log, backoff, budget) and rebuilds.
func (l *Lane[T]) poison(inc *incarnation[T], step string, err error) {
	inc.poisonOnce.Do(func() {
		inc.cause = newFailure(step, err)
		l.transition(StatePoisoned, err, StateOpen)
		l.log.Debug("lane poisoned", "step", step, "class", inc.cause.class, "code", inc.cause.code, "err", brief(err))
		close(inc.poisoned)
	})
}

// finish frees the slots of the next n batches in offset order, which are
// completely done (confirmed and, for committing lanes, committed or
// failed); the first ok of them were released with a nil error. It wakes the
// Flush calls whose target is now reached.
func (l *Lane[T]) finish(n, ok int) {
	l.mu.Lock()
	var size int64
	for range n {
		size += l.mu.unfinished.pop()
	}
	if l.mu.unfinished.len() == 0 && l.mu.idle != nil {
		close(l.mu.idle)
		l.mu.idle = nil
	}
	// Nil releases are a prefix of the lane's offsets (after the first
	// failure every later token fails too), so durable only grows while it
	// keeps up with finished.
	if l.mu.durable == l.mu.finished {
		l.mu.durable += uint64(ok)
	}
	l.mu.finished += uint64(n)
	if len(l.mu.flushers) > 0 {
		kept := l.mu.flushers[:0]
		for _, f := range l.mu.flushers {
			if f.target <= l.mu.finished {
				close(f.done)
			} else {
				kept = append(kept, f)
			}
		}
		clear(l.mu.flushers[len(kept):])
		l.mu.flushers = kept
	}
	l.mu.Unlock()
	l.free(size)
	for range n {
		<-l.slots
	}
}

// flusher is one waiting Flush call.
type flusher struct {
	target uint64
	done   chan struct{} // closed by finish once finished >= target
}

// Flush waits until every batch whose Submit returned before Flush was
// called is done: confirmed durable by the transport and, for a committing
// lane, its commit synced by the Committer — for a Lane[RawAnchor] that is
// after the OnDurable callbacks of all those batches have fired. It does not
// stop intake: batches submitted concurrently may or may not be included,
// and they do not delay Flush beyond the offsets assigned when it was
// called. Through a poisoning Flush keeps waiting while the supervisor
// rebuilds the transport and replays the unconfirmed batches.
//
// It returns nil when all of them were released with a nil error; an error
// wrapping ErrCommitFailed (see Err) when a commit failed, so that some of
// them are not known durable; an error wrapping ctx's error when ctx ended
// first (the batches stay in the lane's custody; nothing is lost); or an
// error wrapping ErrClosed when Close discarded some of them. Safe for
// concurrent use; must not be called from an OnDurable callback (which runs
// before the batch counts as done).
func (l *Lane[T]) Flush(ctx context.Context) error {
	l.mu.Lock()
	target := l.mu.next
	if l.mu.finished >= target {
		err := l.flushResultLocked(target)
		l.mu.Unlock()
		return err
	}
	f := flusher{target: target, done: make(chan struct{})}
	l.mu.flushers = append(l.mu.flushers, f)
	l.mu.Unlock()

	var ctxErr error
	select {
	case <-f.done:
	case <-l.done:
	case <-l.failed:
	case <-ctx.Done():
		ctxErr = ctx.Err()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.IndexFunc(l.mu.flushers, func(g flusher) bool { return g.done == f.done }); i >= 0 {
		l.mu.flushers = slices.Delete(l.mu.flushers, i, i+1)
	}
	if l.mu.finished >= target {
		return l.flushResultLocked(target) // done after all, whatever woke us
	}
	if ctxErr != nil {
		return fmt.Errorf("lanes: %s: flush: %d of %d batches not done: %w",
			l.opts.Destination, target-l.mu.finished, target, ctxErr)
	}
	if f := l.Failure(); f != nil {
		return fmt.Errorf("flush: %d of %d batches not done: %w", target-l.mu.finished, target, f)
	}
	return fmt.Errorf("lanes: %s: flush: %w with %d batches not done", l.opts.Destination, ErrClosed, target-l.mu.finished)
}

// flushResultLocked is Flush's result once every offset <= target is done.
func (l *Lane[T]) flushResultLocked(target uint64) error {
	if l.mu.durable >= target {
		return nil
	}
	if err := l.releases.err(); err != nil {
		return fmt.Errorf("lanes: %s: flush: %w", l.opts.Destination, err)
	}
	return fmt.Errorf("lanes: %s: flush: %w before offset %d was durable", l.opts.Destination, ErrClosed, l.mu.durable+1)
}

// transition moves the lane to state to and reports it to OnStateChange.
// With froms given it moves only from one of them (a compare-and-swap), and
// it reports whether the state changed.
func (l *Lane[T]) transition(to State, cause error, froms ...State) bool {
	l.stateMu.Lock()
	defer l.stateMu.Unlock()
	from := State(l.state.Load())
	if from == to || (len(froms) > 0 && !slices.Contains(froms, from)) {
		return false
	}
	l.state.Store(int32(to))
	if l.opts.OnStateChange != nil {
		class, _ := Classify(cause)
		l.opts.OnStateChange(StateChange{From: from, To: to, Err: cause, Class: class})
	}
	return true
}

// Close shuts the lane down, once; later calls wait for the first and
// return its result. The order is load-bearing:
//
//  1. Stop intake: Submit returns ErrClosed from now on, blocked Submits wake.
//  2. Drain: wait, bounded by ctx, until every retained batch is confirmed
//     by the transport and its commit callback fired (so RawAnchor tokens
//     release upstream acks before Close returns). The supervisor keeps
//     rebuilding if needed — a poisoned lane can still drain. A drain that
//     ctx cuts short counts once in thalweg.lane.drain_timeouts.
//  3. Stop: cancel the lane context and close the transport, which ends the
//     ack task, any Send and any Dial; wait for the goroutines.
//  4. Discard what is left (only if ctx expired): pending commit callbacks
//     become no-ops and their tokens, then those of the unconfirmed batches
//     in offset order, get ErrClosed; the batches are released. A forced
//     stop loses nothing: the records are redelivered after a restart.
//  5. Unregister the metrics.
//
// The error wraps ctx's error when the drain was cut short, and the
// transport's Close error.
func (l *Lane[T]) Close(ctx context.Context) error {
	l.closeOnce.Do(func() {
		l.closeErr = l.shutdown(ctx)
		l.transition(StateClosed, nil)
		close(l.done)
	})
	<-l.done
	return l.closeErr
}

func (l *Lane[T]) shutdown(ctx context.Context) error {
	// 1. Stop intake.
	l.mu.Lock()
	l.mu.closing = true
	idle := make(chan struct{})
	if l.mu.unfinished.len() == 0 {
		close(idle)
	} else {
		l.mu.idle = idle
	}
	close(l.closing)
	l.mu.Unlock()
	l.Drain()
	l.transition(StateClosing, nil)

	// 2. Drain. An idle lane is drained even when ctx has already ended
	// (a select would pick either at random). A drain that ctx cuts short
	// with batches still unfinished is counted in
	// thalweg.lane.drain_timeouts, once per Close. A lane that failed for
	// good (or fails now: a permanent failure while closing ends the lane at
	// once) cannot drain; waiting out ctx would only delay the exit.
	var drainErr error
	select {
	case <-idle:
	default:
		select {
		case <-idle:
		case <-ctx.Done():
			l.mu.Lock()
			n := l.mu.unfinished.len()
			l.mu.Unlock()
			if n > 0 { // else the last one finished just in time
				l.drainsCut.Add(1)
				l.metrics.DrainTimedOut(context.Background())
				drainErr = fmt.Errorf("lanes: %s: close: %d batches unconfirmed: %w", l.opts.Destination, n, ctx.Err())
			}
		case <-l.failed:
			l.mu.Lock()
			n := l.mu.unfinished.len()
			l.mu.Unlock()
			drainErr = fmt.Errorf("close: %d batches unconfirmed: %w", n, l.Failure())
		}
	}

	// 3. Stop. Cancelling the lane context ends Dial and Send; the
	// supervisor closes the transport, which ends the ack task's wait.
	// Taking sendSem last waits out a Submit still inside Send, so that no
	// batch is released below while a transport may be reading it; it is
	// never given back (every later Submit sees closing).
	l.cancel()
	l.wg.Wait()
	l.sendSem <- struct{}{}

	// 4. Discard. Commit-pending entries have lower offsets than retained
	// ones, so aborting them first keeps tokens in offset order.
	l.releases.abort(ErrClosed)
	l.mu.Lock()
	rest := l.mu.retained.appendTo(nil)
	for l.mu.retained.len() > 0 {
		l.mu.retained.pop()
	}
	l.mu.Unlock()
	for _, pa := range rest {
		if fn := onDurable(pa.tok); fn != nil {
			fn(ErrClosed)
		}
		pa.b.Release()
	}
	if len(rest) > 0 {
		l.log.Warn("lane closed with unconfirmed batches", "count", len(rest),
			"first_offset", rest[0].offset, "last_offset", rest[len(rest)-1].offset)
	}

	// 5. Metrics.
	return errors.Join(drainErr, l.trErr, l.metrics.Close())
}
