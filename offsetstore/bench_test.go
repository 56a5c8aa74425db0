package offsetstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
	"github.com/thalweg/thalweg/batch"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// BenchmarkOffsetStoreCommit measures durable confirmations on the real file
// system (b.TempDir()), one op = one confirmation made durable:
//
//   - store/committers=N: N goroutines, each committing one confirmation and
//     waiting for its callback before the next (a closed loop, the worst case
//     for grouping); group commit shows up as confirmations/sync ≈ N.
//   - store/pipelined: one producer that never waits, as an ack lane does.
//   - baseline/pebble-sync/committers=N: the same closed loop with one
//     synced pebble.DB.Set per confirmation (Pebble's own WAL sync batching
//     is all there is), side by side in the same run.
//
// Reported: syncs/s (synced commits per second), conf/sync (confirmations
// per sync) for the store; ns/op is per confirmation.
func BenchmarkOffsetStoreCommit(b *testing.B) {
	for _, n := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("store/committers=%d", n), func(b *testing.B) { benchStore(b, n, false) })
	}
	b.Run("store/pipelined", func(b *testing.B) { benchStore(b, 1, true) })
	for _, n := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("baseline/pebble-sync/committers=%d", n), func(b *testing.B) { benchPebble(b, n) })
	}
}

func benchStore(b *testing.B, committers int, pipelined bool) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	s, err := Open(b.TempDir(), Options{MeterProvider: mp, Logger: quietLogger()})
	require.NoError(b, err)
	defer func() { require.NoError(b, s.Close()) }()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	if pipelined {
		var wg sync.WaitGroup
		wg.Add(b.N)
		for i := range b.N {
			s.CommitDelivered("bench", []batch.OffsetSpan{span(int32(i%16), uint64(i), uint64(i))}, func(err error) {
				if err != nil {
					b.Error(err)
				}
				wg.Done()
			})
		}
		wg.Wait()
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for g := range committers {
			wg.Go(func() {
				done := make(chan error, 1)
				cb := func(err error) { done <- err }
				for {
					i := next.Add(1) - 1
					if i >= int64(b.N) {
						return
					}
					s.CommitDelivered("bench", []batch.OffsetSpan{span(int32(g), uint64(i), uint64(i))}, cb)
					if err := <-done; err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	elapsed := time.Since(start)
	b.StopTimer()

	var rm metricdata.ResourceMetrics
	require.NoError(b, reader.Collect(context.Background(), &rm))
	var syncs int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "thalweg.offsetstore.syncs" {
				syncs = m.Data.(metricdata.Sum[int64]).DataPoints[0].Value
			}
		}
	}
	b.ReportMetric(float64(syncs)/elapsed.Seconds(), "syncs/s")
	if syncs > 0 {
		b.ReportMetric(float64(b.N)/float64(syncs), "conf/sync")
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "conf/s")
}

func benchPebble(b *testing.B, committers int) {
	db, err := pebble.Open(b.TempDir(), &pebble.Options{Logger: pebbleLogger{&Store{log: quietLogger()}}}) // quiet, same logger as the store
	require.NoError(b, err)
	defer func() { require.NoError(b, db.Close()) }()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := range committers {
		wg.Go(func() {
			key := watermarkKey(wmKey{kindDelivered, "bench", pn(int32(g))})
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				if err := db.Set(key, encodePosition(Position{Seq: uint64(i), ID: idFor(pn(int32(g)), uint64(i))}), pebble.Sync); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "conf/s")
}

// BenchmarkOffsetStoreCommitSpans measures one batch's confirmation as the
// raw anchor's lane commits it: a span per partition the batch read, at 4,
// 64 and 256 partitions, committed and waited for one at a time on the real
// file system. Reported: cpu-us/commit, the process's CPU time (user and
// system, every goroutine: the caller's reduction of the spans, the
// committer's Pebble batch and sync) per confirmation; ns/op is its wall
// time. The spans are built before the timer starts.
func BenchmarkOffsetStoreCommitSpans(b *testing.B) {
	for _, p := range []int{4, 64, 256} {
		b.Run(fmt.Sprintf("partitions=%d", p), func(b *testing.B) {
			s, err := Open(b.TempDir(), Options{Logger: quietLogger()})
			require.NoError(b, err)
			defer func() { require.NoError(b, s.Close()) }()
			const rounds = 64 // distinct positions, reused in turn
			spans := make([][]batch.OffsetSpan, rounds)
			for r := range spans {
				for k := range p {
					spans[r] = append(spans[r], span(int32(k), uint64(r)*100, uint64(r)*100+99))
				}
			}
			done := make(chan error, 1)
			cb := func(err error) { done <- err }
			c0 := processCPU(b)
			i := 0
			for b.Loop() {
				s.CommitDelivered("bench", spans[i%rounds], cb)
				require.NoError(b, <-done)
				i++
			}
			b.ReportMetric(float64(processCPU(b)-c0)/float64(b.N)/1e3, "cpu-us/commit")
		})
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
