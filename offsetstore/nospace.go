package offsetstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/thalweg/thalweg/internal/errlog"
)

// isNoSpace reports whether err is a full disk or an exhausted quota: the
// one I/O failure that heals by itself once space is freed.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// diskWatch paces and throttles what Pebble reports while the disk is
// full. Pebble retries a failed memtable flush at once and forever (its
// own TODO: "count consecutive flush errors and backoff"), calling
// EventListener.BackgroundError each time; at Open, with a WAL to replay,
// that is a busy loop that never returns. backgroundError therefore sleeps
// (Pebble calls it on the flushing goroutine, so the sleep is the backoff)
// and logs through a Throttle.
type diskWatch struct {
	log      *errlog.Throttle
	max      time.Duration
	initial  time.Duration
	n        atomic.Int32  // consecutive background errors
	report   func(error)   // Options.OnDiskFull: a flush failing for lack of space, and its end
	stop     chan struct{} // closed by Store.Close: no more sleeping
	stopOnce sync.Once
}

// backgroundSleepCap bounds one sleep in backgroundError. Pebble calls the
// hook holding its DB mutex, which every commit takes too: a flush failing
// for lack of space while the WAL still has room (it is preallocated) thus
// slows commits to about one per sleep. 250 ms keeps them going and Close
// prompt, at a few cheap flush attempts a second.
const backgroundSleepCap = 250 * time.Millisecond

func (w *diskWatch) backgroundError(err error) {
	w.log.Fail(err, "source", "pebble")
	n := w.n.Add(1)
	if n == 1 && isNoSpace(err) {
		w.report(fmt.Errorf("%w: %w", ErrNoSpace, err))
	}
	d := w.initial
	for i := int32(1); i < n && d < backgroundSleepCap; i++ {
		d *= 2
	}
	d = min(d, w.max, backgroundSleepCap)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.stop:
	}
}

// ok is called when Pebble finished a flush or compaction without error.
func (w *diskWatch) ok() {
	if w.n.Swap(0) > 0 {
		w.log.Clear()
		w.report(nil)
	}
}

func (w *diskWatch) close() { w.stopOnce.Do(func() { close(w.stop) }) }

// pebbleOptions are the Pebble options of every DB instance of s.
func (s *Store) pebbleOptions() *pebble.Options {
	return &pebble.Options{
		FS:               s.opts.FS,
		Logger:           pebbleLogger{s},
		ReadOnly:         s.opts.ReadOnly,
		ErrorIfNotExists: s.opts.MustExist,
		EventListener: &pebble.EventListener{
			BackgroundError: s.watch.backgroundError,
			FlushEnd: func(info pebble.FlushInfo) {
				if info.Err == nil {
					s.watch.ok()
				}
			},
			CompactionEnd: func(info pebble.CompactionInfo) {
				if info.Err == nil {
					s.watch.ok()
				}
			},
			DiskSlow: func(info pebble.DiskSlowInfo) {
				s.log.Warn("pebble disk slow", slog.String("info", info.String()))
			},
		},
	}
}

// openDB opens one Pebble instance on s.dir. pebble.Open can block for as
// long as the disk is full (see diskWatch); ctx ends the wait, and an Open
// that completes later is closed in the background.
func (s *Store) openDB(ctx context.Context) (*pebble.DB, error) {
	s.fatal.Store(nil)
	if ctx.Done() == nil {
		// Nothing can end the wait: open on this goroutine, so that a panic
		// of Pebble's (see doc.go, "Failure rule") stays the caller's.
		db, err := s.openPebble()
		if err != nil {
			return nil, s.openError(err)
		}
		return db, nil
	}
	type result struct {
		db       *pebble.DB
		err      error
		panicked any
	}
	ch := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.panicked = p
			}
			ch <- r
		}()
		r.db, r.err = s.openPebble()
	}()
	select {
	case r := <-ch:
		if r.panicked != nil {
			panic(r.panicked) // on the caller's goroutine, as without ctx
		}
		if r.err != nil {
			return nil, s.openError(r.err)
		}
		return r.db, nil
	case <-ctx.Done():
		s.abandoned.Add(1)
		go func() {
			defer s.abandoned.Done()
			r := <-ch
			if r.panicked != nil {
				panic(r.panicked)
			}
			if r.db != nil {
				_ = r.db.Close()
			}
		}()
		err := ctx.Err()
		if _, _, _, last := s.watch.log.Active(); last != nil {
			err = fmt.Errorf("%w (Pebble was retrying: %w)", err, last)
		}
		return nil, err
	}
}

// openPebble is one pebble.Open, failed if Pebble reported a fatal error.
func (s *Store) openPebble() (*pebble.DB, error) {
	db, err := pebble.Open(s.dir, s.pebbleOptions())
	if err == nil {
		if ferr := s.fatalErr(); ferr != nil {
			_ = db.Close()
			return nil, ferr
		}
	}
	return db, err
}

// openError names the two errors an operator meets most: a store held by
// a running worker and a directory that is not a store.
func (s *Store) openError(err error) error {
	switch {
	case strings.Contains(err.Error(), "lock held by current process"):
		return fmt.Errorf("%w: store %s is already open in this process; close it first", ErrLocked, s.dir)
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EACCES):
		// Only for another process's lock: lockHolder opens and closes the
		// LOCK file, which would drop a lock this process holds.
		holder := "pid unknown"
		if pid := lockHolder(s.opts.FS, s.opts.FS.PathJoin(s.dir, "LOCK")); pid > 0 {
			holder = fmt.Sprintf("pid %d", pid)
		}
		return fmt.Errorf("%w: store %s is locked by a running worker (%s); stop it first", ErrLocked, s.dir, holder)
	case errors.Is(err, pebble.ErrDBDoesNotExist):
		return fmt.Errorf("%w: %s holds no offset store", ErrNotStore, s.dir)
	case isNoSpace(err):
		return fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	return err
}

// checkIsStore is the MustExist check, made before Pebble touches dir (even
// a read-only Pebble open creates a LOCK file).
func checkIsStore(fsys vfs.FS, dir string) error {
	fi, err := fsys.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s does not exist", ErrNotStore, dir)
	case err != nil:
		return fmt.Errorf("%w: %s: %w", ErrNotStore, dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory", ErrNotStore, dir)
	}
	names, err := fsys.List(dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNotStore, dir, err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "marker.manifest.") || n == "CURRENT" {
			return nil
		}
	}
	return fmt.Errorf("%w: %s holds no offset store (no Pebble manifest; a typo?)", ErrNotStore, dir)
}

// notifyDiskFull calls Options.OnDiskFull; never under s.mu.
func (s *Store) notifyDiskFull(err error) {
	if f := s.opts.OnDiskFull; f != nil {
		f(err)
	}
}

// Stalled returns, while the store waits for space, a channel closed when the wait ends (recovered, failed or
// closed) and the cause (wrapping ErrNoSpace); otherwise nil, nil. Commits made meanwhile are queued, not
// failed: their callbacks fire once they are durable after the recovery.
func (s *Store) Stalled() (<-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.stalled == nil {
		return nil, nil
	}
	return s.mu.recovered, s.mu.stalled
}

// Failed is closed when the store failed for good (Err is then non-nil).
func (s *Store) Failed() <-chan struct{} { return s.failedCh }

// stallLocked starts waiting for space: no callback is released, the
// committer takes no group until recover has reopened Pebble. Pebble's WAL
// error is sticky — the failed DB instance never writes again, even once
// space is back — so only a new instance can.
func (s *Store) stallLocked(cause error) {
	if s.mu.stalled != nil {
		return
	}
	s.mu.stalled = fmt.Errorf("%w: %w", ErrNoSpace, cause)
	s.mu.recovered = make(chan struct{})
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// endStallLocked closes the current stall's channel, if any.
func (s *Store) endStallLocked() {
	if s.mu.stalled != nil {
		s.mu.stalled = nil
		close(s.mu.recovered)
	}
}

// recover runs on the committer goroutine while the store is stalled: it
// waits for every group in flight to report, then closes the failed Pebble
// instance and opens a new one, with growing capped backoff, until that
// works (or Close, or an error that is not a full disk, which fails the
// store). It then re-queues every request not yet released, in ticket
// order, against the durable view: they are committed again, and their
// callbacks fire after that synced commit, never before. It returns false
// if the committer must exit.
func (s *Store) recover() bool {
	s.waiters.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	s.mu.Lock()
	cause := s.mu.stalled
	s.mu.Unlock()
	s.notifyDiskFull(cause)
	wait := s.opts.RetryInitial
	for attempt := 1; ; attempt++ {
		s.stallLog.Fail(cause, "dir", s.dir, "attempt", attempt, "retry_in", wait)
		if s.db != nil {
			if err := s.db.Close(); err != nil {
				s.log.Debug("closing the failed pebble instance", slog.Any("error", err))
			}
			s.db = nil
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.stop:
			t.Stop()
			return false
		}
		wait = min(2*wait, s.opts.RetryMax)
		db, err := s.openDB(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			if isNoSpace(err) {
				cause = err
				continue
			}
			s.mu.Lock()
			s.failLocked(fmt.Errorf("%w: reopening after a full disk: %w", ErrFailed, err))
			s.mu.Unlock()
			return true
		}
		s.db = db
		s.mu.Lock()
		s.applied = make(map[wmKey]Position)
		for k, byDest := range s.mu.durable {
			for dest, byPart := range byDest {
				for p, pos := range byPart {
					s.applied[wmKey{kind: k, dest: dest, partition: p}] = pos
				}
			}
		}
		s.mu.queue = s.mu.queue[:0]
		for _, r := range s.mu.pending {
			if r.err == nil {
				s.mu.queue = append(s.mu.queue, r)
			}
		}
		s.mu.inflight = nil
		s.mu.epoch++
		n := len(s.mu.queue)
		s.endStallLocked()
		s.mu.Unlock()
		s.stallLog.Clear("dir", s.dir, "recommitting", n)
		s.notifyDiskFull(nil)
		return true
	}
}
