package offsetstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"
	"github.com/thalweg/thalweg/batch"
)

func isWALSyncOrWrite(op errorfs.Op) bool {
	if !strings.HasSuffix(op.Path, ".log") {
		return false
	}
	switch op.Kind {
	case errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo, errorfs.OpFileFlush:
		return true
	}
	return false
}

// opIndexInjector fails the operation with index target (counting every
// operation on the file system from 0) and remembers which one it was.
type opIndexInjector struct {
	target int64
	n      atomic.Int64
	mu     sync.Mutex
	hit    *errorfs.Op
}

func (i *opIndexInjector) String() string { return fmt.Sprintf("(OnIndex %d)", i.target) }

func (i *opIndexInjector) MaybeError(op errorfs.Op) error {
	if i.n.Add(1)-1 != i.target {
		return nil
	}
	i.mu.Lock()
	i.hit = &op
	i.mu.Unlock()
	return errorfs.ErrInjected
}

func (i *opIndexInjector) injected() (errorfs.Op, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.hit == nil {
		return errorfs.Op{}, false
	}
	return *i.hit, true
}

// durableModel tracks, per watermark, the highest Last ever committed and
// the highest Last whose callback reported durable.
type durableModel struct {
	mu        sync.Mutex
	committed map[wmKey]uint64
	reported  map[wmKey]uint64
	errs      []error
}

func newDurableModel() *durableModel {
	return &durableModel{committed: map[wmKey]uint64{}, reported: map[wmKey]uint64{}}
}

func (m *durableModel) commit(s *Store, k kind, dest string, p int32, first, last uint64, after func(error)) {
	key := wmKey{k, dest, pn(p)}
	m.mu.Lock()
	m.committed[key] = max(m.committed[key], last)
	m.mu.Unlock()
	cb := func(err error) {
		m.mu.Lock()
		if err == nil {
			m.reported[key] = max(m.reported[key], last)
		} else {
			m.errs = append(m.errs, err)
		}
		m.mu.Unlock()
		if after != nil {
			after(err)
		}
	}
	sp := []batch.OffsetSpan{span(p, first, last)}
	if k == kindDelivered {
		s.CommitDelivered(dest, sp, cb)
	} else {
		s.CommitCoverage(dest, sp, cb)
	}
}

// set calls SetPosition(dest, pn(p), seq) and records it for both kinds.
// Only a seq no higher than every earlier commit keeps the model's max
// bookkeeping exact; the fault test sets 0 before committing.
func (m *durableModel) set(s *Store, dest string, p int32, seq uint64, after func(error)) {
	keys := []wmKey{{kindDelivered, dest, pn(p)}, {kindCoverage, dest, pn(p)}}
	m.mu.Lock()
	for _, k := range keys {
		m.committed[k] = max(m.committed[k], seq)
	}
	m.mu.Unlock()
	err := s.SetPosition(dest, pn(p), Position{Seq: seq, ID: idFor(pn(p), seq)})
	m.mu.Lock()
	if err == nil {
		for _, k := range keys {
			m.reported[k] = max(m.reported[k], seq)
		}
	} else {
		m.errs = append(m.errs, err)
	}
	m.mu.Unlock()
	after(err)
}

// check reopens nothing; it compares a recovered store against the model:
// every watermark reported durable is there (at least that high), nothing
// beyond what was committed, and IDs match their Seq.
func (m *durableModel) check(t *testing.T, s *Store, context string) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	dests, err := s.Destinations()
	require.NoError(t, err)
	recovered := map[wmKey]Position{}
	for _, d := range dests {
		for _, k := range []kind{kindDelivered, kindCoverage} {
			got, err := s.read(k, d)
			require.NoError(t, err)
			for p, pos := range got {
				recovered[wmKey{k, d, p}] = pos
			}
		}
	}
	for key, rep := range m.reported {
		got, ok := recovered[key]
		require.Truef(t, ok && got.Seq >= rep, "%s: %v reported durable at %d, recovered %v (present %v)", context, key, rep, got.Seq, ok)
	}
	for key, pos := range recovered {
		require.LessOrEqualf(t, pos.Seq, m.committed[key], "%s: %v recovered beyond anything committed", context, key)
		require.Equalf(t, idFor(key.partition, pos.Seq), pos.ID, "%s: %v upstream id belongs to its seq", context, key)
	}
}

// TestFaultInjectionEveryOp injects one error at file-system operation i,
// for i = 0, 1, 2, ... until a run completes without reaching i. For each run
// it asserts: no callback reported success for a state that is not on disk
// after a crash (a crash clone keeps only synced data), an error injected
// into a WAL write or sync surfaces to the caller, and if no error surfaced
// the run's state is complete.
func TestFaultInjectionEveryOp(t *testing.T) {
	var surfacedRuns, walRuns, panics int
	for i := int64(0); ; i++ {
		require.Less(t, i, int64(20000), "runs never finished without an injection")
		inj := &opIndexInjector{target: i}
		mem := vfs.NewCrashableMem()
		m := newDurableModel()
		surfaced, panicked := runFaultWorkload(t, errorfs.Wrap(mem, inj), m)
		op, hit := inj.injected()
		if panicked != nil {
			panics++
			t.Logf("run %d: pebble panicked on %v %s: %v", i, op.Kind, op.Path, panicked)
		}
		if !hit {
			t.Logf("run %d completed without injection: %d runs surfaced an error (%d as a Pebble panic during Open), %d runs injected into the WAL", i, surfacedRuns, panics, walRuns)
			require.Greater(t, i, int64(40), "the workload performs a realistic number of operations")
			require.Empty(t, m.errs, "clean run")
			break
		}
		if surfaced {
			surfacedRuns++
		}
		if isWALSyncOrWrite(op) {
			walRuns++
			require.Truef(t, surfaced, "run %d: error injected into %v %s did not surface", i, op.Kind, op.Path)
		}

		crashed := mem.CrashClone(vfs.CrashCloneCfg{})
		s, err := Open("db", Options{FS: crashed, Logger: quietLogger()})
		if err != nil {
			// The injection hit Open before anything was committed.
			require.Emptyf(t, m.reported, "run %d (%v %s): reopen failed (%v) although offsets were reported durable", i, op.Kind, op.Path, err)
			continue
		}
		context := fmt.Sprintf("run %d (%v %s)", i, op.Kind, op.Path)
		m.check(t, s, context)
		if !surfaced {
			// The injected error was absorbed by Pebble: then everything
			// must have been reported durable.
			require.Equalf(t, m.committed, m.reported, "%s: no error surfaced yet not everything was reported durable", context)
		}
		require.NoError(t, s.Close())
	}
	require.Positive(t, walRuns)
}

// runFaultWorkload opens a store on fs, registers partitions, commits
// delivered and coverage watermarks across two destinations with flushes
// in between, closes it, and reports whether any error surfaced.
//
// Pebble panics on fsync errors it deems unrecoverable (directory syncs,
// "fsyncgate"); offsetstore lets that crash the process, which is safe since
// nothing undurable was reported. The test treats such a panic like a crash:
// it counts as surfaced, and the durability check still applies.
func runFaultWorkload(t *testing.T, fs vfs.FS, m *durableModel) (surfaced bool, panicked any) {
	var s *Store
	defer func() {
		if panicked = recover(); panicked != nil {
			surfaced = true
			if s != nil {
				t.Fatalf("pebble panicked after Open returned: %v", panicked)
			}
		}
	}()
	s, err := Open("db", Options{FS: fs, Logger: quietLogger(), TeardownTimeout: 5 * time.Second, MaxInFlight: 2})
	if err != nil {
		return true, nil
	}
	var anyErr atomic.Bool
	note := func(err error) {
		if err != nil {
			anyErr.Store(true)
		}
	}
	// SetPosition (the one write that is not monotone) under the same
	// faults: to seq 0, which every later commit exceeds.
	for _, dest := range []string{"a", "b"} {
		for p := range int32(2) {
			m.set(s, dest, p, 0, note)
		}
	}
	ctx := context.Background()
	for round := range uint64(8) {
		for _, dest := range []string{"a", "b"} {
			for p := range int32(2) {
				m.commit(s, kindDelivered, dest, p, round*10+1, round*10+10, note)
				m.commit(s, kindCoverage, dest, p, round*10+1, round*10+5, note)
			}
		}
		note(s.Flush(ctx))
	}
	note(s.Err())
	note(s.Close())
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the store's goroutines did not end within 10 s of Close")
	}
	return anyErr.Load(), nil
}

// blockingSyncs blocks WAL syncs while on.
type blockingSyncs struct {
	on      atomic.Bool
	release chan struct{}
	blocked chan struct{} // receives once per blocked sync
}

func (b *blockingSyncs) String() string { return "blockingSyncs" }

func (b *blockingSyncs) MaybeError(op errorfs.Op) error {
	if b.on.Load() && strings.HasSuffix(op.Path, ".log") &&
		(op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData || op.Kind == errorfs.OpFileSyncTo) {
		select {
		case b.blocked <- struct{}{}:
		default:
		}
		<-b.release
	}
	return nil
}

// TestCloseBoundedOnStuckSync: with the WAL sync stuck, Close returns
// within TeardownTimeout, the pending callback is released as not durable,
// and Pebble finishes closing once the file system lets go.
func TestCloseBoundedOnStuckSync(t *testing.T) {
	mem := vfs.NewCrashableMem()
	blk := &blockingSyncs{release: make(chan struct{}), blocked: make(chan struct{}, 1)}
	const timeout = 300 * time.Millisecond
	s, err := Open("db", Options{FS: errorfs.Wrap(mem, blk), Logger: quietLogger(), TeardownTimeout: timeout})
	require.NoError(t, err)

	require.NoError(t, commitWait(t, s, kindDelivered, "d", span(0, 1, 10)), "healthy sync")

	blk.on.Store(true)
	stuck := make(chan error, 1)
	s.CommitDelivered("d", []batch.OffsetSpan{span(0, 11, 20)}, func(err error) { stuck <- err })
	select {
	case <-blk.blocked:
	case <-time.After(10 * time.Second):
		t.Fatal("the WAL sync never started")
	}
	rec := newRecorder(t)
	s.CommitDelivered("d", []batch.OffsetSpan{span(0, 21, 30)}, rec.cb())

	start := time.Now()
	err = s.Close()
	elapsed := time.Since(start)
	require.ErrorIs(t, err, ErrTeardownTimeout)
	require.Less(t, elapsed, timeout+time.Second, "Close is bounded by TeardownTimeout")
	require.GreaterOrEqual(t, elapsed, timeout, "Close waited for the final commit")

	select {
	case err := <-stuck:
		require.ErrorIs(t, err, ErrClosed)
		require.ErrorIs(t, err, ErrTeardownTimeout)
	default:
		t.Fatal("Close returned before releasing the stuck callback")
	}
	got := rec.results()
	require.Len(t, got, 1)
	require.ErrorIs(t, got[0], ErrClosed)
	require.ErrorIs(t, s.Close(), ErrTeardownTimeout, "idempotent")

	select {
	case <-s.Done():
		t.Fatal("Pebble cannot have closed while its WAL sync is stuck")
	default:
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	close(blk.release)
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Pebble never finished closing after the sync was released")
	}

	// Only the first commit was reported durable; it survives the crash.
	r, err := Open("db", Options{FS: crashed, Logger: quietLogger()})
	require.NoError(t, err)
	d, err := r.Delivered("d")
	require.NoError(t, err)
	require.GreaterOrEqual(t, d[pn(0)].Seq, uint64(10))
	require.NoError(t, r.Close())
}

// TestCloseFastPathWithinTimeout is the complement: a healthy final commit
// completes well inside a short TeardownTimeout and delivers every callback
// as durable.
func TestCloseFastPathWithinTimeout(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Logger: quietLogger(), TeardownTimeout: 2 * time.Second})
	require.NoError(t, err)
	rec := newRecorder(t)
	for i := range uint64(50) {
		s.CommitDelivered("d", []batch.OffsetSpan{span(0, i, i)}, rec.cb())
	}
	require.NoError(t, s.Close())
	got := rec.results()
	require.Len(t, got, 50)
	for _, err := range got {
		require.NoError(t, err)
	}
}

// TestWALFailureFailsStore injects a WAL sync error into a live store: the
// callback of the failed commit reports the error, the store stays failed,
// and a reopen recovers everything reported durable.
func TestWALFailureFailsStore(t *testing.T) {
	mem := vfs.NewCrashableMem()
	toggle := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if isWALSyncOrWrite(op) {
			return errorfs.ErrInjected
		}
		return nil
	})}
	s, err := Open("db", Options{FS: errorfs.Wrap(mem, toggle), Logger: quietLogger(), TeardownTimeout: 2 * time.Second})
	require.NoError(t, err)
	require.NoError(t, commitWait(t, s, kindDelivered, "d", span(0, 1, 10)))
	toggle.On()
	err = commitWait(t, s, kindDelivered, "d", span(0, 11, 20))
	require.ErrorIs(t, err, ErrFailed)
	require.True(t, errors.Is(err, errorfs.ErrInjected), "the cause is in the chain: %v", err)
	require.ErrorIs(t, s.Err(), ErrFailed)
	toggle.Off()
	require.ErrorIs(t, commitWait(t, s, kindDelivered, "d", span(0, 21, 30)), ErrFailed, "failed is sticky")
	d, err := s.Delivered("d")
	require.NoError(t, err)
	require.Equal(t, uint64(10), d[pn(0)].Seq, "durable view unchanged by the failed commit")
	require.ErrorIs(t, s.Close(), ErrFailed)
	<-s.Done()

	r, err := Open("db", Options{FS: mem.CrashClone(vfs.CrashCloneCfg{}), Logger: quietLogger()})
	require.NoError(t, err)
	d, err = r.Delivered("d")
	require.NoError(t, err)
	require.GreaterOrEqual(t, d[pn(0)].Seq, uint64(10))
	require.NoError(t, r.Close())
}

// TestCommitBehindFailedSync: a second group is handed to Pebble while the
// first one's failed sync has not been reported yet (its report is held).
// Pebble's WAL error is sticky, so the second group fails too, and no
// callback reports success, even after a (bogus) late success for the
// first group.
//
// (With a batch big enough to rotate the memtable, Pebble panics in
// rotateWAL instead: it treats a failed WAL close as unrecoverable. That is
// a crash, which loses nothing reported durable; it is not exercised here.)
func TestCommitBehindFailedSync(t *testing.T) {
	mem := vfs.NewMem()
	toggle := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if isWALSyncOrWrite(op) {
			return errorfs.ErrInjected
		}
		return nil
	})}
	h := newHeldReports()
	s := openT(t, "db", Options{FS: errorfs.Wrap(mem, toggle), MaxInFlight: 2, TeardownTimeout: 2 * time.Second,
		testing: testingKnobs{syncDone: func(g uint64, err error, report func(error)) {
			if g == 0 {
				h.hook(g, err, report)
				return
			}
			report(err)
		}}})
	rec := newRecorder(t)
	toggle.On()
	s.CommitDelivered("d", []batch.OffsetSpan{span(0, 1, 1)}, rec.cb())
	h.await(t, 0)
	s.CommitDelivered("d", []batch.OffsetSpan{span(1, 1, 1)}, rec.cb())
	got := rec.waitN(t, 2)
	h.report(0, nil)
	require.ErrorIs(t, got[0], ErrFailed)
	require.ErrorIs(t, got[1], ErrFailed)
	require.ErrorIs(t, s.Err(), errorfs.ErrInjected)
	d, err := s.Delivered("d")
	require.NoError(t, err)
	require.Empty(t, d)
	require.Len(t, rec.results(), 2)
}
