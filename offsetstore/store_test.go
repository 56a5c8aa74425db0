package offsetstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/thalweg/thalweg/batch"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func TestStoreMethods(t *testing.T) {
	for _, fc := range fsCases {
		t.Run(fc.name, func(t *testing.T) {
			fs, dir := fc.fs(), fc.dir(t)
			s := openT(t, dir, Options{FS: fs})

			// Empty store.
			d, err := s.Delivered("flight")
			require.NoError(t, err)
			require.Empty(t, d)
			dests, err := s.Destinations()
			require.NoError(t, err)
			require.Empty(t, dests)
			require.NoError(t, s.Flush(context.Background()), "flush of an idle store")

			// Delivered: max per partition, LastID of the max span; a lower
			// Last is a no-op; several spans in one call.
			require.NoError(t, commitWait(t, s, kindDelivered, "flight", span(0, 1, 10), span(1, 1, 5)))
			require.NoError(t, commitWait(t, s, kindDelivered, "flight", span(0, 11, 20), span(0, 3, 4)))
			require.NoError(t, commitWait(t, s, kindDelivered, "flight", span(1, 1, 3))) // regression: no-op
			require.NoError(t, commitWait(t, s, kindCoverage, "zerobus", span(2, 1, 7)))
			require.NoError(t, commitWait(t, s, kindCoverage, "flight", span(0, 1, 2)))
			require.NoError(t, commitWait(t, s, kindDelivered, "flight", span(-1, 4, 4)), "any name is stored")

			want := map[string]Position{pn(0): {20, idFor(pn(0), 20)}, pn(1): {5, idFor(pn(1), 5)}, pn(-1): {4, idFor(pn(-1), 4)}}
			d, err = s.Delivered("flight")
			require.NoError(t, err)
			require.Equal(t, want, d)
			c, err := s.Coverage("zerobus")
			require.NoError(t, err)
			require.Equal(t, map[string]Position{pn(2): {7, idFor(pn(2), 7)}}, c)
			d, err = s.Delivered("zerobus")
			require.NoError(t, err)
			require.Empty(t, d, "coverage never shows up as delivered")
			dests, err = s.Destinations()
			require.NoError(t, err)
			require.Equal(t, []string{"flight", "zerobus"}, dests)

			// Returned positions are copies.
			d, err = s.Delivered("flight")
			require.NoError(t, err)
			d[pn(0)].ID[0] = 'X'
			d2, err := s.Delivered("flight")
			require.NoError(t, err)
			require.Equal(t, want, d2)

			// Reset one partition, then the watermark may start lower.
			require.NoError(t, s.Reset("flight", pn(0)))
			d, err = s.Delivered("flight")
			require.NoError(t, err)
			require.NotContains(t, d, pn(0))
			c, err = s.Coverage("flight")
			require.NoError(t, err)
			require.Empty(t, c, "Reset clears coverage too")
			require.NoError(t, commitWait(t, s, kindDelivered, "flight", span(0, 1, 3)))

			// SetPosition moves both watermarks of a partition, down as
			// well as up, and later commits are monotone from there.
			require.NoError(t, commitWait(t, s, kindCoverage, "zerobus", span(5, 1, 50)))
			require.NoError(t, commitWait(t, s, kindDelivered, "zerobus", span(5, 1, 40)))
			require.NoError(t, s.SetPosition("zerobus", pn(5), Position{Seq: 9, ID: []byte("nine")}))
			c, err = s.Coverage("zerobus")
			require.NoError(t, err)
			require.Equal(t, Position{9, []byte("nine")}, c[pn(5)], "coverage lowered")
			d, err = s.Delivered("zerobus")
			require.NoError(t, err)
			require.Equal(t, map[string]Position{pn(5): {9, []byte("nine")}}, d, "delivered lowered")
			require.NoError(t, commitWait(t, s, kindCoverage, "zerobus", span(5, 1, 8)))
			require.NoError(t, s.SetPosition("flight", pn(7), Position{Seq: 70}), "up, for a partition never seen")
			require.NoError(t, commitWait(t, s, kindDelivered, "flight", span(7, 1, 60)))
			require.NoError(t, s.Err())
			require.NoError(t, s.Close())
			require.NoError(t, s.Close(), "Close is idempotent")

			// Reopen recovers everything.
			s = openT(t, dir, Options{FS: fs})
			d, err = s.Delivered("flight")
			require.NoError(t, err)
			require.Equal(t, map[string]Position{pn(0): {3, idFor(pn(0), 3)}, pn(1): {5, idFor(pn(1), 5)}, pn(-1): {4, idFor(pn(-1), 4)},
				pn(7): {70, nil}}, d, "a commit below SetPosition's is a no-op")
			c, err = s.Coverage("zerobus")
			require.NoError(t, err)
			require.Equal(t, map[string]Position{pn(2): {7, idFor(pn(2), 7)}, pn(5): {9, []byte("nine")}}, c)
			d, err = s.Delivered("zerobus")
			require.NoError(t, err)
			require.Equal(t, map[string]Position{pn(5): {9, []byte("nine")}}, d)

			require.NoError(t, s.ResetDestination("flight"))
			dests, err = s.Destinations()
			require.NoError(t, err)
			require.Equal(t, []string{"zerobus"}, dests)
			require.NoError(t, s.Close())

			s = openT(t, dir, Options{FS: fs})
			d, err = s.Delivered("flight")
			require.NoError(t, err)
			require.Empty(t, d, "ResetDestination is durable")
		})
	}
}

func TestInvalidInput(t *testing.T) {
	_, err := Open("", Options{})
	require.ErrorIs(t, err, ErrInvalidOptions)
	_, err = Open("db", Options{FS: vfs.NewMem(), MaxBatch: -1})
	require.ErrorIs(t, err, ErrInvalidOptions)
	require.ErrorContains(t, err, "Options.MaxBatch")
	_, err = Open("db", Options{FS: vfs.NewMem(), TeardownTimeout: -time.Second})
	require.ErrorContains(t, err, "Options.TeardownTimeout")
	_, err = Open("db", Options{FS: vfs.NewMem(), MaxInFlight: -1})
	require.ErrorContains(t, err, "Options.MaxInFlight")
	// Every invalid field at once, in one error that wraps the sentinel.
	_, err = Open("db", Options{FS: vfs.NewMem(), MaxBatch: -1, MaxInFlight: -1, RetryMax: -1})
	require.ErrorIs(t, err, ErrInvalidOptions)
	for _, f := range []string{"Options.MaxBatch", "Options.MaxInFlight", "RetryMax"} {
		require.ErrorContains(t, err, f)
	}

	s := openT(t, "db", Options{FS: vfs.NewMem()})
	rec := newRecorder(t)
	s.CommitDelivered("ok", []batch.OffsetSpan{span(0, 1, 1)}, rec.cb())
	s.CommitDelivered("", []batch.OffsetSpan{span(0, 1, 2)}, rec.cb())
	s.CommitDelivered("a\x00b", []batch.OffsetSpan{span(0, 1, 2)}, rec.cb())
	s.CommitCoverage("ok", []batch.OffsetSpan{{Partition: pn(0), First: 5, Last: 4}}, rec.cb())
	s.CommitDelivered("ok", []batch.OffsetSpan{span(0, 2, 2)}, rec.cb())
	s.CommitDelivered("ok", []batch.OffsetSpan{{Partition: pn(0), First: 3, Last: 3, LastID: make([]byte, 5000)}}, rec.cb())
	s.CommitDelivered("ok", []batch.OffsetSpan{{First: 3, Last: 3}}, rec.cb())
	got := rec.waitN(t, 7)
	require.NoError(t, got[0])
	require.ErrorIs(t, got[1], ErrInvalidName)
	require.ErrorIs(t, got[2], ErrInvalidName)
	require.ErrorIs(t, got[3], ErrInvalidSpan)
	require.NoError(t, got[4])
	require.ErrorIs(t, got[5], ErrInvalidSpan)
	require.ErrorIs(t, got[6], ErrInvalidName, "a span without a partition name")
	require.NoError(t, s.Err(), "bad input does not fail the store")

	_, err = s.Delivered("")
	require.ErrorIs(t, err, ErrInvalidName)
	require.ErrorIs(t, s.Reset("x\x00", pn(0)), ErrInvalidName)
	require.ErrorIs(t, s.Reset("ok", ""), ErrInvalidName)
	require.ErrorIs(t, s.SetPosition("ok", "", Position{}), ErrInvalidName)
	require.ErrorIs(t, s.SetPosition("", pn(0), Position{}), ErrInvalidName)
	require.ErrorIs(t, s.SetPosition("ok", pn(0), Position{ID: make([]byte, 5000)}), ErrInvalidSpan)

	d, err := s.Delivered("ok")
	require.NoError(t, err)
	require.Equal(t, uint64(2), d[pn(0)].Seq)
}

func TestIncompatibleLayout(t *testing.T) {
	fs := vfs.NewMem()
	db, err := pebble.Open("db", &pebble.Options{FS: fs, Logger: pebbleLogger{&Store{log: quietLogger()}}})
	require.NoError(t, err)
	require.NoError(t, db.Set([]byte("zzz"), []byte("foreign"), pebble.Sync))
	require.NoError(t, db.Close())
	_, err = Open("db", Options{FS: fs, Logger: quietLogger()})
	require.ErrorIs(t, err, ErrIncompatibleLayout)

	fs = vfs.NewMem()
	db, err = pebble.Open("db", &pebble.Options{FS: fs, Logger: pebbleLogger{&Store{log: quietLogger()}}})
	require.NoError(t, err)
	require.NoError(t, db.Set(versionKey, []byte{9}, pebble.Sync))
	require.NoError(t, db.Close())
	_, err = Open("db", Options{FS: fs, Logger: quietLogger()})
	require.ErrorIs(t, err, ErrIncompatibleLayout)
}

func TestKeyEncoding(t *testing.T) {
	for _, k := range []wmKey{
		{kindDelivered, "flight", "persistent://public/default/t-partition-0"},
		{kindCoverage, "a/b:c", "gen-1"},
		{kindDelivered, "x", "a\x00b"},
		{kindCoverage, "x", "x"},
	} {
		got, err := decodeWatermarkKey(watermarkKey(k))
		require.NoError(t, err)
		require.Equal(t, k, got)
	}
	// A destination that is a prefix of another does not share its key prefix.
	require.NotContains(t, string(watermarkKey(wmKey{kindDelivered, "ab", "p"})), "da\x00")

	for _, bad := range [][]byte{nil, []byte("d"), []byte("dx\x00"), []byte("zx\x00p"), []byte("d\x00p")} {
		_, err := decodeWatermarkKey(bad)
		require.Error(t, err, "%q", bad)
	}
	pos, err := decodePosition(encodePosition(Position{Seq: 1 << 40, ID: []byte("mid")}))
	require.NoError(t, err)
	require.Equal(t, Position{Seq: 1 << 40, ID: []byte("mid")}, pos)
	pos, err = decodePosition(encodePosition(Position{Seq: 7}))
	require.NoError(t, err)
	require.Equal(t, Position{Seq: 7}, pos)
	_, err = decodePosition([]byte{0x80})
	require.Error(t, err)
}

// A callback may call back into the store without deadlocking: Commit*
// from inside a callback is ordered after it.
func TestCallbackReentry(t *testing.T) {
	s := openT(t, "db", Options{FS: vfs.NewMem()})
	done := make(chan Position, 1)
	s.CommitDelivered("d", []batch.OffsetSpan{span(0, 1, 1)}, func(err error) {
		require.NoError(t, err)
		d, err := s.Delivered("d")
		require.NoError(t, err)
		s.CommitDelivered("d", []batch.OffsetSpan{span(0, 2, 2)}, func(err error) {
			require.NoError(t, err)
			d, err := s.Delivered("d")
			require.NoError(t, err)
			done <- d[pn(0)]
		})
		require.Equal(t, uint64(1), d[pn(0)].Seq, "durable view at callback time")
	})
	select {
	case pos := <-done:
		require.Equal(t, uint64(2), pos.Seq)
	case <-time.After(10 * time.Second):
		t.Fatal("nested callback never ran")
	}
}

func TestClosedStore(t *testing.T) {
	s := openT(t, "db", Options{FS: vfs.NewMem()})
	rec := newRecorder(t)
	for i := range 100 {
		s.CommitDelivered("d", []batch.OffsetSpan{span(0, uint64(i), uint64(i))}, rec.cb())
	}
	require.NoError(t, s.Close(), "final commit makes everything durable")
	got := rec.results()
	require.Len(t, got, 100, "Close returns after every callback ran")
	for _, err := range got {
		require.NoError(t, err)
	}
	<-s.Done()

	var called error
	s.CommitCoverage("d", []batch.OffsetSpan{span(0, 1, 1)}, func(err error) { called = err })
	require.ErrorIs(t, called, ErrClosed, "commit after Close is refused synchronously")
	require.ErrorIs(t, s.Flush(context.Background()), ErrClosed)
	_, err := s.Delivered("d")
	require.ErrorIs(t, err, ErrClosed)
	_, err = s.Destinations()
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, s.SetPosition("d", pn(0), Position{}), ErrClosed)
	require.ErrorIs(t, s.Reset("d", pn(0)), ErrClosed)
}

func TestFlushContext(t *testing.T) {
	block := make(chan struct{})
	s := openT(t, "db", Options{FS: vfs.NewMem(), testing: testingKnobs{
		syncDone: func(_ uint64, err error, report func(error)) {
			go func() { <-block; report(err) }()
		},
	}})
	s.CommitDelivered("d", []batch.OffsetSpan{span(0, 1, 1)}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.Flush(ctx), context.DeadlineExceeded)
	close(block)
	flushT(t, s)
	d, err := s.Delivered("d")
	require.NoError(t, err)
	require.Equal(t, uint64(1), d[pn(0)].Seq)
}

// Concurrent committers share syncs: with 32 goroutines each waiting for its
// own confirmation, the store issues far fewer syncs than confirmations.
// The metrics come from the SDK's ManualReader.
func TestGroupCommitMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	s := openT(t, t.TempDir(), Options{MeterProvider: mp, MaxInFlight: 1})

	const goroutines, each = 32, 20
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				assert.NoError(t, commitWait(t, s, kindDelivered, "d", span(int32(g), uint64(i), uint64(i))))
			}
		})
	}
	wg.Wait()

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	byName := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, meterName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			byName[m.Name] = m.Data
		}
	}
	syncs := byName["thalweg.offsetstore.syncs"].(metricdata.Sum[int64]).DataPoints[0].Value
	lat := byName["thalweg.offsetstore.commit_latency"].(metricdata.Histogram[float64]).DataPoints[0]
	per := byName["thalweg.offsetstore.confirmations_per_sync"].(metricdata.Histogram[int64]).DataPoints[0]
	require.Equal(t, uint64(syncs), lat.Count, "one latency sample per sync")
	require.Equal(t, int64(goroutines*each), per.Sum, "every confirmation counted once")
	require.Less(t, syncs, int64(goroutines*each)/2, "group commit: fewer syncs than confirmations")
	require.Greater(t, lat.Sum, 0.0)
	t.Logf("%d confirmations in %d syncs (%.1f per sync)", per.Sum, syncs, float64(per.Sum)/float64(syncs))
	failures := byName["thalweg.offsetstore.commit_failures"].(metricdata.Sum[int64]).DataPoints
	require.Len(t, failures, 1, "the failures series exists from the start")
	require.Zero(t, failures[0].Value, "no failures recorded")
}

// writeV1Store writes a version 1 store in dir, as an older thalweg did: a
// registry of store-local partition ids and watermarks keyed by them.
// It returns the number of watermarks it wrote.
func writeV1Store(t *testing.T, dir string) int {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{Logger: pebbleLogger{&Store{log: quietLogger()}}})
	require.NoError(t, err)
	set := func(k, v []byte) { require.NoError(t, db.Set(k, v, pebble.Sync)) }
	set([]byte{'v'}, binary.AppendUvarint(nil, 1))
	n := 0
	for id, name := range []string{"persistent://public/default/t-partition-3", "persistent://public/default/t-partition-0"} {
		set(append([]byte{'p'}, name...), binary.BigEndian.AppendUint32(nil, uint32(id)))
		for _, k := range []byte{'d', 'c'} {
			key := binary.BigEndian.AppendUint32(append(append([]byte{k}, "raw"...), 0), uint32(id)^1<<31)
			set(key, append(binary.AppendUvarint(nil, 100), fmt.Sprintf("id-%d", id)...))
			n++
		}
	}
	require.NoError(t, db.Close())
	return n
}

// TestV1StoreRefusedThenMigrated: a version 1 store (store-local partition
// ids and seqs) is refused with ErrFormat and a message naming the command
// that migrates it; Migrate drops its watermarks and the store then opens,
// empty, as version 2 and works; a second Migrate changes nothing.
func TestV1StoreRefusedThenMigrated(t *testing.T) {
	dir := t.TempDir()
	wrote := writeV1Store(t, dir)

	_, err := Open(dir, Options{Logger: quietLogger()})
	require.ErrorIs(t, err, ErrFormat)
	require.ErrorIs(t, err, ErrIncompatibleLayout)
	require.ErrorContains(t, err, "thalweg offsets migrate --store "+dir)
	_, err = Open(dir, Options{Logger: quietLogger(), ReadOnly: true})
	require.ErrorIs(t, err, ErrFormat, "read-only too: its positions mean nothing")

	held := openT(t, t.TempDir(), Options{})
	_, err = Migrate(held.dir)
	require.ErrorIs(t, err, ErrLocked, "Migrate takes the store's lock")
	require.NoError(t, held.Close())
	_, err = Migrate(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, ErrNotStore)

	dropped, err := Migrate(dir)
	require.NoError(t, err)
	require.Equal(t, wrote, dropped)

	s := openT(t, dir, Options{})
	dests, err := s.Destinations()
	require.NoError(t, err)
	require.Empty(t, dests, "nothing of the v1 positions is kept")
	require.NoError(t, commitWait(t, s, kindDelivered, "raw", span(3, 1, 7)))
	require.NoError(t, s.Close())

	dropped, err = Migrate(dir)
	require.NoError(t, err)
	require.Zero(t, dropped, "a version 2 store is left as it is")
	s = openT(t, dir, Options{})
	d, err := s.Delivered("raw")
	require.NoError(t, err)
	require.Equal(t, map[string]Position{pn(3): {7, idFor(pn(3), 7)}}, d)
	require.NoError(t, s.Close())
}
