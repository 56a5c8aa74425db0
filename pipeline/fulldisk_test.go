package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/diskfull"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
)

// logLines collects every line the pipeline and the store log.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logLines) count() int { return strings.Count(l.String(), "\n") }

// ackWatch records the highest acknowledged seq per partition, to compare
// with what was durable.
type ackWatch struct {
	*gen.Source
	mu  sync.Mutex
	max map[string]uint64
}

func (a *ackWatch) Ack(spans []batch.OffsetSpan) error {
	a.mu.Lock()
	for _, s := range spans {
		a.max[s.Partition] = max(a.max[s.Partition], s.Last)
	}
	a.mu.Unlock()
	return a.Source.Ack(spans)
}

func (a *ackWatch) acked() map[string]uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]uint64, len(a.max))
	for p, s := range a.max {
		out[p] = s
	}
	return out
}

// TestFullDiskPausesThePipelineAndRecovers fills the offset store's disk
// while the pipeline streams: the pipeline stops taking records from the
// source and stops sending, /readyz's reason names the full disk, the log
// says so a bounded number of times, and when space comes back the
// pipeline goes on by itself. Nothing is acknowledged upstream before it is
// durable, and the sink holds everything acknowledged.
func TestFullDiskPausesThePipelineAndRecovers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	var disk diskfull.Disk
	fs := disk.Wrap(vfs.Default)
	dir := t.TempDir()
	var logs logLines
	log := slog.New(slog.NewTextHandler(&logs, nil))
	store, err := offsetstore.Open(dir, offsetstore.Options{FS: fs, Logger: log, RetryInitial: time.Millisecond, RetryMax: 20 * time.Millisecond})
	require.NoError(t, err)
	defer func() { _ = store.Close() }()

	g, err := gen.NewSource(gen.Options{Seed: 3, Partitions: 2, Records: 0, Rate: 20000, Mode: gen.ModeRaw})
	require.NoError(t, err)
	src := &ackWatch{Source: g, max: map[string]uint64{}}
	p, err := pipeline.New(pipeline.Options{
		Source:       src,
		Assembler:    batch.AssemblerOptions{Allocator: mem, MaxRows: 200, Linger: 10 * time.Millisecond},
		Store:        store,
		Anchor:       flightDest("raw", addr, mem),
		DrainTimeout: 5 * time.Second,
		Logger:       log,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	require.Eventually(t, func() bool { return p.Stats().Acked > 2000 }, 20*time.Second, 5*time.Millisecond)
	disk.SetFull(true)
	require.Eventually(t, func() bool { ok, _ := p.Ready(); return !ok }, 10*time.Second, time.Millisecond)
	_, why := p.Ready()
	require.Contains(t, why, "offset store: no space left on device")
	// Once what was in flight settled, nothing more is taken from the
	// source or sent, nothing acknowledged, while the store's retries
	// are refused 100 times in a row. A record taken, a batch sent or an
	// ack starts the count again, so a pipeline that does not pause never
	// gets there.
	const refusals = 100
	before, from := p.Stats(), disk.Refused()
	linesBefore := logs.count()
	testenv.WaitFor(t, 20*time.Second, fmt.Sprintf("the pipeline to stand still across %d refused writes", refusals), func() bool {
		st := p.Stats()
		if st.SourceRecords != before.SourceRecords || st.Anchor.Submitted != before.Anchor.Submitted || st.Acked != before.Acked {
			before, from, linesBefore = st, disk.Refused(), logs.count()
			return false
		}
		return disk.Refused() >= from+refusals
	})
	after := p.Stats()
	require.Equal(t, before.SourceRecords, after.SourceRecords, "records taken from the source while the store cannot commit")
	require.Equal(t, before.Anchor.Submitted, after.Anchor.Submitted, "batches sent while the store cannot commit")
	require.Equal(t, before.Acked, after.Acked)
	if n := logs.count(); n > 12 {
		t.Fatalf("%d log lines during the full disk (%d before the %d refusals in a row):\n%s", n, linesBefore, refusals, logs.String())
	}

	disk.SetFull(false)
	require.Eventually(t, func() bool { return p.Stats().Acked > after.Acked+2000 }, 20*time.Second, 5*time.Millisecond,
		"the pipeline did not resume after space came back")
	ok, why := p.Ready()
	require.True(t, ok, why)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	require.Contains(t, logs.String(), "recovered")

	// Acknowledged upstream ⇒ durable ⇒ at the sink.
	acked := src.acked()
	require.NoError(t, store.Close())
	reopened, err := offsetstore.Open(dir, offsetstore.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer func() { require.NoError(t, reopened.Close()) }()
	delivered, err := reopened.Delivered("raw")
	require.NoError(t, err)
	for part, seq := range acked {
		require.GreaterOrEqual(t, delivered[part].Seq, seq, "partition %s acknowledged beyond its durable watermark", part)
	}
	rep := readStored(t, addr, []string{"raw"}).Check(acked, nil)
	require.Zero(t, rep.Missing, rep.String())
}

// TestCancelWhileTheDiskIsFull: a stop request while the store cannot
// commit ends Run within the drain timeout, without acknowledging what was
// not durable.
func TestCancelWhileTheDiskIsFull(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	var disk diskfull.Disk
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{FS: disk.Wrap(vfs.Default), Logger: slog.New(slog.DiscardHandler),
		RetryInitial: time.Millisecond, RetryMax: 20 * time.Millisecond})
	require.NoError(t, err)
	g, err := gen.NewSource(gen.Options{Seed: 4, Partitions: 2, Records: 0, Rate: 20000, Mode: gen.ModeRaw})
	require.NoError(t, err)
	src := &ackWatch{Source: g, max: map[string]uint64{}}
	p, err := pipeline.New(pipeline.Options{
		Source: src, Store: store, Anchor: flightDest("raw", addr, mem), DrainTimeout: 2 * time.Second,
		Assembler: batch.AssemblerOptions{Allocator: mem, MaxRows: 200, Linger: 10 * time.Millisecond},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	require.Eventually(t, func() bool { return p.Stats().Acked > 1000 }, 20*time.Second, 5*time.Millisecond)
	disk.SetFull(true)
	require.Eventually(t, func() bool { _, err := store.Stalled(); return err != nil }, 10*time.Second, time.Millisecond)
	ackedAtStall := src.acked()
	start := time.Now()
	cancel()
	select {
	case <-done: // an unclean drain is expected: the held commits never became durable
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10 s of cancel while the disk was full")
	}
	require.Less(t, time.Since(start), 6*time.Second)
	require.Equal(t, ackedAtStall, src.acked(), "acknowledged upstream while nothing could be made durable")
	disk.SetFull(false)
	_ = store.Close() // may or may not have recovered meanwhile; bounded either way
	<-store.Done()
}

// TestStoreFailureStopsThePipeline: an I/O error that is not a full disk
// fails the store for good; the pipeline then stops (bounded) with an error
// wrapping offsetstore.ErrFailed instead of streaming data it can never
// commit.
func TestStoreFailureStopsThePipeline(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	var broken atomicBool
	fs := errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if broken.get() && strings.HasSuffix(op.Path, ".log") && op.Kind == errorfs.OpFileWrite {
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.EIO}
		}
		return nil
	}))
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{FS: fs, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer func() { _ = store.Close() }()
	g, err := gen.NewSource(gen.Options{Seed: 5, Partitions: 2, Records: 0, Rate: 20000, Mode: gen.ModeRaw})
	require.NoError(t, err)
	p, err := pipeline.New(pipeline.Options{
		Source: g, Store: store, Anchor: flightDest("raw", addr, mem), DrainTimeout: 2 * time.Second,
		Assembler: batch.AssemblerOptions{Allocator: mem, MaxRows: 200, Linger: 10 * time.Millisecond},
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- p.Run(context.Background()) }()
	require.Eventually(t, func() bool { return p.Stats().Acked > 1000 }, 20*time.Second, 5*time.Millisecond)
	broken.set(true)
	select {
	case err := <-done:
		require.ErrorIs(t, err, offsetstore.ErrFailed)
		require.True(t, errors.Is(err, syscall.EIO), "the cause is named: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("the pipeline kept running on a failed store")
	}
}

type atomicBool struct {
	mu sync.Mutex
	v  bool
}

func (b *atomicBool) get() bool  { b.mu.Lock(); defer b.mu.Unlock(); return b.v }
func (b *atomicBool) set(v bool) { b.mu.Lock(); b.v = v; b.mu.Unlock() }

// slowAck blocks every upstream Ack until released: acks lag far behind
// what the sinks confirmed, the situation in which only MaxUnacked bounds
// how far the source reads ahead.
type slowAck struct {
	*gen.Source
	gate chan struct{}
}

func (s *slowAck) Ack(spans []batch.OffsetSpan) error {
	<-s.gate
	return s.Source.Ack(spans)
}

// TestMaxUnackedBoundsTheGenerator: the generator, like any source, is not
// read more than MaxUnacked records ahead of the upstream acks. Without
// the bound the source loop read every record while the acks were held.
func TestMaxUnackedBoundsTheGenerator(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	const records, bound = 50000, 1000
	g, err := gen.NewSource(gen.Options{Seed: 9, Partitions: 2, Records: records, Mode: gen.ModeRaw})
	require.NoError(t, err)
	src := &slowAck{Source: g, gate: make(chan struct{})}
	p, err := pipeline.New(pipeline.Options{
		Source: src, Store: store, Anchor: flightDest("raw", addr, mem), MaxUnacked: bound,
		// MaxRows above the bound: the pipeline flushes the partial batch
		// itself when it waits, or it would wait for the linger.
		Assembler: batch.AssemblerOptions{Allocator: mem, MaxRows: 4096, Linger: time.Hour},
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- p.Run(context.Background()) }()
	// The first batch's Ack is held: everything confirmed piles up.
	// Once every batch read so far is confirmed and still unacknowledged,
	// the source loop either waits at the bound or has read past it.
	testenv.WaitFor(t, 20*time.Second, "the records read reaching max_unacked, all confirmed", func() bool {
		st := p.Stats()
		return st.SourceRecords >= bound && st.Anchor.Confirmed == st.Anchor.Submitted
	})
	st := p.Stats()
	require.LessOrEqual(t, st.SourceRecords, uint64(bound), "read %d records with %d acknowledged, max_unacked %d", st.SourceRecords, st.Acked, bound)
	close(src.gate)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not finish once acks flowed")
	}
	require.EqualValues(t, records, p.Stats().Acked)
}
