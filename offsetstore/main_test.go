package offsetstore

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// When pebble.Open panics on an injected directory-fsync error
		// (TestFaultInjectionEveryOp), its cleanup does not unregister the
		// compaction scheduler, whose ticker goroutine then outlives the
		// test. Stores that are not closed still show up through the
		// store's own committer and notifier goroutines.
		goleak.IgnoreTopFunction("github.com/cockroachdb/pebble/v2.(*ConcurrencyLimitScheduler).periodicGranter"),
	)
}

// quietLogger discards everything: goroutines of a store (and Pebble) may log
// after a test returned, which t.Log does not allow.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// openT opens a store and closes it at cleanup (Close is idempotent).
func openT(t testing.TB, dir string, opts Options) *Store {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// fsCase is a file system a test runs on: the real one under t.TempDir()
// and Pebble's in-memory one.
type fsCase struct {
	name string
	fs   func() vfs.FS
	dir  func(t testing.TB) string
}

var fsCases = []fsCase{
	{name: "disk", fs: func() vfs.FS { return vfs.Default }, dir: func(t testing.TB) string { return t.TempDir() }},
	{name: "mem", fs: func() vfs.FS { return vfs.NewMem() }, dir: func(testing.TB) string { return "db" }},
}

// pn names test partition p like a Pulsar topic-partition.
func pn(p int32) string { return fmt.Sprintf("persistent://public/default/t-partition-%d", p) }

// span is shorthand for a one-partition span of partition pn(p) whose
// LastID encodes Last.
func span(p int32, first, last uint64) batch.OffsetSpan {
	return batch.OffsetSpan{Partition: pn(p), First: first, Last: last, LastID: idFor(pn(p), last)}
}

func idFor(p string, seq uint64) []byte { return fmt.Appendf(nil, "id-%s-%d", p, seq) }

// commitWait commits and waits for the callback.
func commitWait(t testing.TB, s *Store, k kind, dest string, spans ...batch.OffsetSpan) error {
	t.Helper()
	done := make(chan error, 1)
	cb := func(err error) { done <- err }
	if k == kindDelivered {
		s.CommitDelivered(dest, spans, cb)
	} else {
		s.CommitCoverage(dest, spans, cb)
	}
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("callback not called within 10s")
		return nil
	}
}

// recorder collects callback outcomes and checks the lanes.Committer
// callback order: FIFO, exactly once, one at a time (never overlapping).
type recorder struct {
	t      testing.TB
	active atomic.Int32 // callbacks running now; more than one is a bug
	mu     sync.Mutex
	next   int // index of the next Commit call
	got    []error
	seen   []bool
}

func newRecorder(t testing.TB) *recorder { return &recorder{t: t} }

// cb returns the callback for the next Commit call; calls must be made in
// the order cb was called.
func (r *recorder) cb() func(error) {
	r.mu.Lock()
	i := r.next
	r.next++
	r.seen = append(r.seen, false)
	r.mu.Unlock()
	return func(err error) {
		if r.active.Add(1) != 1 {
			r.t.Errorf("callback %d overlaps another callback: not serialised", i)
		}
		defer r.active.Add(-1)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.seen[i] {
			r.t.Errorf("callback %d called twice", i)
			return
		}
		if len(r.got) != i {
			r.t.Errorf("callback %d called after %d callbacks: not FIFO", i, len(r.got))
		}
		r.seen[i] = true
		r.got = append(r.got, err)
	}
}

func (r *recorder) results() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.got...)
}

func (r *recorder) waitN(t testing.TB, n int) []error {
	t.Helper()
	testenv.WaitFor(t, 10*time.Second, fmt.Sprintf("%d callbacks", n), func() bool { return len(r.results()) >= n })
	return r.results()
}

func flushT(t testing.TB, s *Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Flush(ctx))
}
