package offsetstore

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/diskfull"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// lineLog counts and keeps the lines a store logs.
type lineLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *lineLog) lines() int { return strings.Count(l.String(), "\n") }

func (l *lineLog) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// diskEvents records Options.OnDiskFull calls.
type diskEvents struct {
	mu  sync.Mutex
	evs []error
}

func (d *diskEvents) on(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.evs = append(d.evs, err)
}

func (d *diskEvents) get() []error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]error(nil), d.evs...)
}

// A full disk while streaming stalls the store — no callback fires, none
// with an error either — logs the condition a bounded number of times
// whatever the number of retries, and recovers by itself once space is
// back: every held callback then reports durable, and only after the
// state is really durable (a reopen reads it back).
func TestFullDiskStallsAndRecovers(t *testing.T) {
	var disk diskfull.Disk
	dir := t.TempDir()
	fs := disk.Wrap(vfs.Default)
	var logs lineLog
	var evs diskEvents
	s := openT(t, dir, Options{FS: fs, Logger: logs.logger(), RetryInitial: time.Millisecond, RetryMax: 10 * time.Millisecond, OnDiskFull: evs.on})
	require.NoError(t, commitWait(t, s, kindDelivered, "raw", span(0, 1, 10)))

	disk.SetFull(true)
	rec := newRecorder(t)
	for i := range uint64(50) {
		s.CommitDelivered("raw", []batch.OffsetSpan{span(0, 11+i*10, 20+i*10)}, rec.cb())
	}
	testenv.WaitFor(t, 5*time.Second, "the store to stall", func() bool { _, err := s.Stalled(); return err != nil })
	recovered, err := s.Stalled()
	require.ErrorIs(t, err, ErrNoSpace)
	require.Contains(t, err.Error(), "no space left on device")
	require.NoError(t, s.Err(), "a full disk stalls the store, it does not fail it")

	// Hundreds of refused writes: the store keeps retrying, every retry
	// fails, and none of them releases a callback or floods the log.
	testenv.WaitFor(t, 20*time.Second, "200 refused writes while stalled", func() bool { return disk.Refused() >= 200 })
	require.Empty(t, rec.results(), "no callback may fire while nothing can be made durable")
	d, err := s.Delivered("raw")
	require.NoError(t, err)
	require.Equal(t, uint64(10), d[pn(0)].Seq, "the durable view does not move while stalled")
	if n := logs.lines(); n > 6 {
		t.Fatalf("%d log lines for %d refused writes, want a handful:\n%s", n, disk.Refused(), logs.String())
	}

	disk.SetFull(false)
	select {
	case <-recovered:
	case <-time.After(10 * time.Second):
		t.Fatal("the store did not recover within 10 s of space coming back")
	}
	for i, err := range rec.waitN(t, 50) {
		require.NoError(t, err, "callback %d", i)
	}
	d, err = s.Delivered("raw")
	require.NoError(t, err)
	require.Equal(t, uint64(510), d[pn(0)].Seq)
	require.Contains(t, logs.String(), "recovered")
	ev := evs.get()
	require.GreaterOrEqual(t, len(ev), 2)
	require.ErrorIs(t, ev[0], ErrNoSpace)
	require.NoError(t, ev[len(ev)-1])

	// What was reported durable is on disk.
	require.NoError(t, s.Close())
	s2 := openT(t, dir, Options{})
	d, err = s2.Delivered("raw")
	require.NoError(t, err)
	require.Equal(t, uint64(510), d[pn(0)].Seq)
}

// storeWithWAL leaves a store whose last commits are only in the WAL, so
// that the next Open must replay and flush it — the write Pebble retries
// in a busy loop on a full disk.
// It returns the disk, already full, its file system and the directory.
func storeWithWAL(t *testing.T) (*diskfull.Disk, vfs.FS, string) {
	disk := new(diskfull.Disk)
	dir := t.TempDir()
	fs := disk.Wrap(vfs.Default)
	s := openT(t, dir, Options{FS: fs})
	require.NoError(t, commitWait(t, s, kindDelivered, "raw", span(0, 1, 42)))
	require.NoError(t, s.Close())
	disk.SetFull(true)
	return disk, fs, dir
}

// At start-up on a full disk OpenContext neither spins nor floods the log,
// and returns promptly when its context ends.
func TestOpenContextOnFullDiskIsBoundedAndCancellable(t *testing.T) {
	disk, fs, dir := storeWithWAL(t)
	var logs lineLog
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	s, err := OpenContext(ctx, dir, Options{FS: fs, Logger: logs.logger(), RetryInitial: time.Millisecond, RetryMax: 50 * time.Millisecond})
	elapsed := time.Since(start)
	require.Nil(t, s)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "no space left on device")
	require.Less(t, elapsed, 4*time.Second, "OpenContext must return when its context ends")
	refused := disk.Refused()
	// Pebble retries a few times a second (the paced background error);
	// unpaced it made ~200 000 attempts in 3 s.
	require.Less(t, refused, int64(100), "Pebble's flush retries are paced")
	if n := logs.lines(); n > 5 {
		t.Fatalf("%d log lines in 3 s on a full disk:\n%s", n, logs.String())
	}
	disk.SetFull(false) // the abandoned Pebble open finishes and is closed (goleak)
	testenv.WaitFor(t, 10*time.Second, "the abandoned open to finish and the store to reopen", func() bool {
		s, err := Open(dir, Options{FS: fs, Logger: quietLogger()})
		if err != nil {
			return false
		}
		return s.Close() == nil
	})
}

// OpenContext waits for space and then opens, with the data intact.
func TestOpenContextWaitsForSpace(t *testing.T) {
	disk, fs, dir := storeWithWAL(t)
	var evs diskEvents
	time.AfterFunc(1500*time.Millisecond, func() { disk.SetFull(false) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := OpenContext(ctx, dir, Options{FS: fs, Logger: quietLogger(), RetryInitial: time.Millisecond, RetryMax: 20 * time.Millisecond, OnDiskFull: evs.on})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	d, err := s.Delivered("raw")
	require.NoError(t, err)
	require.Equal(t, uint64(42), d[pn(0)].Seq)
	require.NoError(t, commitWait(t, s, kindDelivered, "raw", span(0, 43, 50)))
}

// A fresh store on a full disk: OpenContext waits too (Pebble fails fast
// here, writing its first MANIFEST).
func TestOpenContextFreshStoreOnFullDisk(t *testing.T) {
	var disk diskfull.Disk
	dir := t.TempDir() + "/offsets"
	fs := disk.Wrap(vfs.Default)
	disk.SetFull(true)
	time.AfterFunc(time.Second, func() { disk.SetFull(false) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := OpenContext(ctx, dir, Options{FS: fs, Logger: quietLogger(), RetryInitial: time.Millisecond, RetryMax: 20 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, commitWait(t, s, kindDelivered, "raw", span(0, 1, 5)))
}

// Close while stalled is bounded and reports the stall; nothing held is
// reported durable.
func TestCloseWhileStalled(t *testing.T) {
	var disk diskfull.Disk
	fs := disk.Wrap(vfs.Default)
	s := openT(t, t.TempDir(), Options{FS: fs, RetryInitial: time.Millisecond, RetryMax: 5 * time.Millisecond, TeardownTimeout: 30 * time.Second})
	disk.SetFull(true)
	rec := newRecorder(t)
	s.CommitDelivered("raw", []batch.OffsetSpan{span(0, 1, 5)}, rec.cb())
	testenv.WaitFor(t, 5*time.Second, "the store to stall", func() bool { _, err := s.Stalled(); return err != nil })
	start := time.Now()
	err := s.Close()
	require.Less(t, time.Since(start), 5*time.Second, "Close must not wait TeardownTimeout for a commit that cannot happen")
	require.ErrorIs(t, err, ErrNoSpace)
	errs := rec.waitN(t, 1)
	require.ErrorIs(t, errs[0], ErrClosed)
	disk.SetFull(false)
	<-s.Done() // an interrupted reopen finishes once there is space
}

// A store directory that does not exist or holds no store is refused with
// MustExist and ReadOnly, and nothing is created.
func TestMustExistAndReadOnly(t *testing.T) {
	root := t.TempDir()
	for _, opts := range []Options{{MustExist: true}, {ReadOnly: true}} {
		_, err := Open(root+"/typo", opts)
		require.ErrorIs(t, err, ErrNotStore)
		require.Contains(t, err.Error(), "does not exist")
		_, err = Open(root, opts)
		require.ErrorIs(t, err, ErrNotStore)
		require.Contains(t, err.Error(), "holds no offset store")
	}
	names, err := vfs.Default.List(root)
	require.NoError(t, err)
	require.Empty(t, names, "nothing may be created in a directory that is not a store")

	dir := root + "/store"
	s := openT(t, dir, Options{})
	require.NoError(t, commitWait(t, s, kindDelivered, "raw", span(0, 1, 7)))
	require.NoError(t, s.Close())
	ro := openT(t, dir, Options{ReadOnly: true})
	d, err := ro.Delivered("raw")
	require.NoError(t, err)
	require.Equal(t, uint64(7), d[pn(0)].Seq)
	require.ErrorIs(t, ro.ResetDestination("raw"), ErrReadOnly)
	require.ErrorIs(t, ro.SetPosition("raw", pn(0), Position{Seq: 1}), ErrReadOnly)
	require.NoError(t, ro.Close())
}

// A store open elsewhere is named as locked, not "resource temporarily
// unavailable".
func TestLockedStoreIsNamed(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	_, err := Open(dir, Options{ReadOnly: true})
	require.ErrorIs(t, err, ErrLocked)
	require.Contains(t, err.Error(), "already open in this process")
	require.NoError(t, s.Close())
	require.False(t, errors.Is(err, ErrNotStore))
}
