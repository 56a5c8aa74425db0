package lanes

import (
	"fmt"
	"sync"
)

// releaseQueue turns commit completions that may arrive in any order into
// callbacks fired in submission (offset) order: the per-lane FIFO of the
// ack-after-durable fix. An entry is released only after its own commit and
// every earlier entry's commit completed; the first failure is latched, and
// every entry from the failed one on is released with the error, even if its
// own commit succeeded, so an upstream acknowledgement can never jump a gap.
//
// Goroutine safety: add is called by the ack task; complete by whatever
// goroutine the committer uses; abort by Close. Callbacks run with deliverMu
// held (so two completing goroutines cannot reorder them) and without mu.
type releaseQueue struct {
	// finish is called after each delivery round with the number of entries
	// released and how many of them (a prefix) with a nil error, so the lane
	// can free their capacity slots and advance Flush.
	finish func(n, ok int)

	deliverMu sync.Mutex
	scratch   []relCall // guarded by deliverMu

	mu struct {
		sync.Mutex
		base    uint64 // sequence number of entries.at(0)
		next    uint64 // next sequence number to hand out
		entries fifo[relEntry]
		failed  error // first commit error, wrapped in ErrCommitFailed
		aborted error // set by abort; later completions are no-ops
	}
}

type relEntry struct {
	fn   func(error) // nil for coverage lanes
	done bool
	err  error
}

type relCall struct {
	fn  func(error)
	err error
}

// add enqueues an entry and returns its sequence number for complete.
func (q *releaseQueue) add(fn func(error)) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	seq := q.mu.next
	q.mu.next++
	q.mu.entries.push(relEntry{fn: fn})
	return seq
}

// complete records the outcome of entry seq and releases every entry at the
// front that is now decided. A second completion of the same entry, or one
// arriving after abort, is a no-op.
func (q *releaseQueue) complete(seq uint64, err error) {
	q.deliverMu.Lock()
	defer q.deliverMu.Unlock()

	q.mu.Lock()
	if q.mu.aborted != nil || seq < q.mu.base || seq >= q.mu.next {
		q.mu.Unlock()
		return
	}
	e := q.mu.entries.at(int(seq - q.mu.base))
	if e.done {
		q.mu.Unlock()
		return
	}
	e.done, e.err = true, err
	calls := q.scratch[:0]
	for q.mu.entries.len() > 0 && q.mu.entries.at(0).done {
		f := q.mu.entries.pop()
		q.mu.base++
		if f.err != nil && q.mu.failed == nil {
			q.mu.failed = fmt.Errorf("%w: %w", ErrCommitFailed, f.err)
		}
		calls = append(calls, relCall{f.fn, q.mu.failed})
	}
	q.mu.Unlock()

	q.deliverLocked(calls)
}

// abort releases every undecided entry with err and makes later completions
// no-ops.
func (q *releaseQueue) abort(err error) {
	q.deliverMu.Lock()
	defer q.deliverMu.Unlock()
	q.mu.Lock()
	if q.mu.aborted != nil {
		q.mu.Unlock()
		return
	}
	q.mu.aborted = err
	calls := q.scratch[:0]
	for q.mu.entries.len() > 0 {
		f := q.mu.entries.pop()
		q.mu.base++
		calls = append(calls, relCall{f.fn, err})
	}
	q.mu.Unlock()
	q.deliverLocked(calls)
}

// deliverLocked fires calls in order and reports them to finish. The caller
// holds deliverMu, which is what keeps rounds from different goroutines in
// order.
func (q *releaseQueue) deliverLocked(calls []relCall) {
	ok := 0
	for _, c := range calls {
		if c.fn != nil {
			c.fn(c.err)
		}
		if c.err == nil {
			ok++
		}
	}
	if len(calls) > 0 && q.finish != nil {
		q.finish(len(calls), ok)
	}
	clear(calls)
	q.scratch = calls[:0]
}

// err returns the latched commit failure, if any.
func (q *releaseQueue) err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mu.failed
}
