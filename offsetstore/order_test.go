package offsetstore

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"github.com/thalweg/thalweg/batch"
)

// heldReports captures sync completions so a test can report them in any
// order.
type heldReports struct {
	mu      sync.Mutex
	reports map[uint64]func(error)
	errs    map[uint64]error
	arrived chan uint64
}

func newHeldReports() *heldReports {
	return &heldReports{reports: map[uint64]func(error){}, errs: map[uint64]error{}, arrived: make(chan uint64, 100)}
}

func (h *heldReports) hook(group uint64, err error, report func(error)) {
	h.mu.Lock()
	h.reports[group], h.errs[group] = report, err
	h.mu.Unlock()
	h.arrived <- group
}

func (h *heldReports) await(t *testing.T, group uint64) {
	t.Helper()
	select {
	case g := <-h.arrived:
		require.Equal(t, group, g)
	case <-time.After(10 * time.Second):
		t.Fatalf("sync of group %d never returned", group)
	}
}

// report delivers group's held completion; override replaces its error.
func (h *heldReports) report(group uint64, override error) {
	h.mu.Lock()
	r, err := h.reports[group], h.errs[group]
	h.mu.Unlock()
	if override != nil {
		err = override
	}
	r(err)
}

// startThree commits A, B, C as three separate groups whose syncs all
// returned but whose completions are held. It runs in a synctest bubble:
// the store is on an in-memory file system, so synctest.Wait returns once
// every goroutine of the store is idle.
func startThree(t *testing.T) (*Store, *heldReports, *recorder) {
	h := newHeldReports()
	s := openT(t, "db", Options{FS: vfs.NewMem(), MaxInFlight: 3, TeardownTimeout: time.Second,
		testing: testingKnobs{syncDone: h.hook}})
	rec := newRecorder(t)
	for i := range uint64(3) {
		s.CommitDelivered("d", []batch.OffsetSpan{span(0, i*10+1, i*10+10)}, rec.cb())
		h.await(t, i)
	}
	synctest.Wait() // every goroutine of the store is idle
	require.Empty(t, rec.results(), "nothing released before a completion is reported")
	return s, h, rec
}

func durableSeq(t *testing.T, s *Store) uint64 {
	t.Helper()
	d, err := s.Delivered("d")
	require.NoError(t, err)
	return d[pn(0)].Seq
}

// Out-of-order sync completions still deliver in order: the highest group
// completes first; all three callbacks fire in order, and the two late
// completions are no-ops.
func TestOutOfOrderCompletionStillDeliversInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h, rec := startThree(t)
		h.report(2, nil)
		got := rec.waitN(t, 3)
		require.Equal(t, []error{nil, nil, nil}, got)
		require.Equal(t, uint64(30), durableSeq(t, s))

		h.report(0, nil)
		h.report(1, nil)
		flushT(t, s)
		require.Len(t, rec.results(), 3, "late completions release nothing twice")
		require.Equal(t, uint64(30), durableSeq(t, s))
		require.NoError(t, s.Err())
	})
}

func TestOutOfOrderCompletionMiddleFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h, rec := startThree(t)
		h.report(1, nil)
		require.Equal(t, []error{nil, nil}, rec.waitN(t, 2))
		synctest.Wait()
		require.Len(t, rec.results(), 2, "C is not durable until group 2 reports")
		require.Equal(t, uint64(20), durableSeq(t, s), "durable view follows the FIFO high-water")
		h.report(2, nil)
		require.Equal(t, []error{nil, nil, nil}, rec.waitN(t, 3))
		h.report(0, nil)
		require.Equal(t, uint64(30), durableSeq(t, s))
	})
}

// A failure reported out of order fails every unreleased callback, and a
// success reported after it does not resurrect them.
func TestOutOfOrderFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h, rec := startThree(t)
		boom := errors.New("sync: input/output error")
		h.report(1, boom)
		got := rec.waitN(t, 3)
		for i, err := range got {
			require.ErrorIs(t, err, ErrFailed, "callback %d", i)
			require.ErrorIs(t, err, boom, "callback %d", i)
		}
		h.report(0, nil)
		h.report(2, nil)
		require.ErrorIs(t, s.Err(), boom)
		require.Zero(t, durableSeq(t, s), "nothing was reported durable, so nothing is in the durable view")

		require.ErrorIs(t, commitWait(t, s, kindDelivered, "d", span(0, 31, 40)), ErrFailed, "a failed store refuses commits")
		require.ErrorIs(t, s.Flush(t.Context()), ErrFailed)
		require.ErrorIs(t, s.SetPosition("d", pn(0), Position{Seq: 1}), ErrFailed)
		require.ErrorIs(t, s.Close(), boom, "Close reports the failure")
		require.Len(t, rec.results(), 3)
	})
}

// A late failure for a group already covered by a later successful sync
// keeps the released successes but fails the store from then on.
func TestLateFailureAfterCoveringSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h, rec := startThree(t)
		h.report(2, nil)
		require.Equal(t, []error{nil, nil, nil}, rec.waitN(t, 3))
		h.report(0, errors.New("late"))
		require.ErrorIs(t, s.Err(), ErrFailed)
		require.Equal(t, uint64(30), durableSeq(t, s))
		require.ErrorIs(t, commitWait(t, s, kindDelivered, "d", span(0, 31, 40)), ErrFailed)
	})
}

// Random completion delays with several groups in flight and several
// committing goroutines: every callback exactly once, FIFO, all successful,
// and the durable view ends at the maximum.
func TestRandomCompletionOrder(t *testing.T) {
	var seed = rand.Uint64()
	t.Logf("seed %d", seed)
	var rngMu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 0))
	var reporters sync.WaitGroup
	s := openT(t, "db", Options{FS: vfs.NewMem(), MaxInFlight: 4, MaxBatch: 8, testing: testingKnobs{
		syncDone: func(_ uint64, err error, report func(error)) {
			rngMu.Lock()
			d := time.Duration(rng.IntN(300)) * time.Microsecond
			rngMu.Unlock()
			reporters.Add(1)
			time.AfterFunc(d, func() { defer reporters.Done(); report(err) })
		},
	}})
	rec := newRecorder(t)
	var mu sync.Mutex // makes the cb() order equal the Commit order
	var wg sync.WaitGroup
	const goroutines, each = 8, 200
	for g := range goroutines {
		wg.Go(func() {
			for i := range uint64(each) {
				mu.Lock()
				s.CommitDelivered("d", []batch.OffsetSpan{span(int32(g), i, i)}, rec.cb())
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	flushT(t, s)
	got := rec.results()
	require.Len(t, got, goroutines*each)
	for _, err := range got {
		require.NoError(t, err)
	}
	d, err := s.Delivered("d")
	require.NoError(t, err)
	for g := range int32(goroutines) {
		require.Equal(t, uint64(each-1), d[pn(g)].Seq)
	}
	require.NoError(t, s.Close())
	reporters.Wait()
}
