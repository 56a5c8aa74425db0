package lanes

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrCommitterContract is wrapped (inside ErrCommitFailed) when a Committer
// calls back out of the order of the commits, twice for one commit, or for
// a commit it was never given: the lane can no longer tell which of its
// commits are durable, so it treats the break as a commit failure.
var ErrCommitterContract = errors.New("lanes: Committer broke its callback order")

// releaseQueue holds the lane's commits that await their Committer callback,
// in commit (= offset) order, and turns each callback into its token's
// release. The Committer contract delivers callbacks one at a time in the
// order of the Commit calls, so a callback always belongs to the entry at
// the front: nothing here re-sorts. complete checks it (each callback carries
// its entry's sequence number) and turns a break into ErrCommitterContract.
//
// The first failure is latched: every later entry is released with it, even
// if its own commit succeeded, so an upstream acknowledgement can never jump
// a gap. (offsetstore fails every later callback itself; the contract does
// not require a Committer to.)
//
// Goroutine safety: add is called by the ack task, complete by the
// Committer's callback goroutine (or synchronously inside a Commit call),
// abort by Close, err by anyone. mu is held while a token's callback and
// finish run, so that a late callback and abort cannot interleave releases;
// finish takes the lane's mu, so the lane never takes q.mu while holding its
// own, and err is lock-free.
type releaseQueue struct {
	// finish is called after each release with the number of entries
	// released (1) and how many with a nil error, so the lane can free their
	// capacity slots and advance Flush.
	finish func(n, ok int)

	failed atomic.Pointer[error] // first failure, wrapped in ErrCommitFailed

	mu struct {
		sync.Mutex
		base    uint64            // sequence number of entries.at(0)
		next    uint64            // next sequence number to hand out
		entries fifo[func(error)] // token callbacks; nil for coverage lanes
		aborted bool              // set by abort; later completions are no-ops
	}
}

// add enqueues an entry and returns its sequence number for complete. The
// ack task calls it just before the Commit call it belongs to.
func (q *releaseQueue) add(fn func(error)) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	seq := q.mu.next
	q.mu.next++
	q.mu.entries.push(fn)
	return seq
}

// complete is the Committer's callback for entry seq: it releases the front
// entry with the latched failure, if any, else with err.
func (q *releaseQueue) complete(seq uint64, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.mu.aborted {
		return
	}
	if q.mu.entries.len() == 0 || seq != q.mu.base {
		// Out of order, a second callback, or one for no commit: release
		// the front entry (if any) failed. Every entry still gets exactly
		// one release, because every callback releases one entry.
		q.failLocked(fmt.Errorf("%w: callback of commit %d while commit %d is next (%d pending)",
			ErrCommitterContract, seq, q.mu.base, q.mu.entries.len()))
		if q.mu.entries.len() == 0 {
			return
		}
	} else if err != nil {
		q.failLocked(err)
	}
	fn := q.mu.entries.pop()
	q.mu.base++
	rel := q.err()
	if fn != nil {
		fn(rel)
	}
	ok := 0
	if rel == nil {
		ok = 1
	}
	if q.finish != nil {
		q.finish(1, ok)
	}
}

// failLocked latches the first failure.
func (q *releaseQueue) failLocked(err error) {
	if q.failed.Load() == nil {
		e := fmt.Errorf("%w: %w", ErrCommitFailed, err)
		q.failed.Store(&e)
	}
}

// abort releases every pending entry with err, in order, and makes later
// completions no-ops.
func (q *releaseQueue) abort(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.mu.aborted {
		return
	}
	q.mu.aborted = true
	n := q.mu.entries.len()
	for q.mu.entries.len() > 0 {
		if fn := q.mu.entries.pop(); fn != nil {
			fn(err)
		}
		q.mu.base++
	}
	if n > 0 && q.finish != nil {
		q.finish(n, 0)
	}
}

// err returns the latched commit failure, if any.
func (q *releaseQueue) err() error {
	if p := q.failed.Load(); p != nil {
		return *p
	}
	return nil
}
