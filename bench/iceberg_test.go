package bench_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/lanes"
)

var icebergRounds = flag.Int("iceberg.rounds", 2, "IcebergAnchor: ABBA rounds (each runs both anchors once)")

var icebergEncoders = flag.Int("iceberg.encoders", 0, "IcebergAnchor: the Sink's encoders (iceberg.Options.Encoders; 0: iceberg.DefaultEncoders)")

// BenchmarkIcebergAnchor compares the two raw anchors side by side, behind
// the same lanes.Lane at its defaults, each b.N iteration one raw batch of
// 1000 records of 100 B:
//
//	iceberg: iceberg.Sink into a local table (SQL catalog on SQLite, a
//	         warehouse directory), commits at the default interval (1 s).
//	flight:  flight.Sink over loopback to the durable receiver in the
//	         process (what `thalweg receive` runs).
//
// Both end when the last batch is durable (a commit / the receiver's
// sync). The modes alternate ABBA; compare records/s and cpu-us/record
// (both ends are in the process) within one run.
func BenchmarkIcebergAnchor(b *testing.B) {
	for round := range *icebergRounds {
		modes := []string{"iceberg", "flight"}
		if round%2 == 1 {
			slices.Reverse(modes)
		}
		for _, mode := range modes {
			b.Run(fmt.Sprintf("record=100B/%s", mode), func(b *testing.B) { benchAnchor(b, mode) })
		}
	}
}

func benchAnchor(b *testing.B, mode string) {
	const rows, payload = 1000, 100
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	// Not b.TempDir(): the sub-benchmark's name ends up in the path, and a
	// warehouse location is a URL.
	dir, err := os.MkdirTemp("", "thalweg-iceberg-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var dial func(context.Context) (lanes.Transport, error)
	switch mode {
	case "iceberg":
		tbl, err := iceberg.Open(iceberg.Options{
			Catalog:   iceberg.CatalogOptions{URI: filepath.Join(dir, "catalog.db")},
			Warehouse: filepath.Join(dir, "warehouse"),
			Table:     "bench.raw",
			Allocator: mem,
			Encoders:  *icebergEncoders,
		})
		if err != nil {
			b.Fatal(err)
		}
		defer tbl.Close()
		dial = func(ctx context.Context) (lanes.Transport, error) { return tbl.Dial(ctx) }
	case "flight":
		_, addr := flighttest.Receiver(b, receiver.Options{Dir: dir})
		o := flight.Options{Endpoint: addr, Path: []string{"bench"}, Allocator: mem}
		dial = func(ctx context.Context) (lanes.Transport, error) { return flight.Dial(ctx, o) }
	}
	batches := make([]*batch.Batch, benchDistinct)
	for i := range batches {
		batches[i] = flighttest.MakeBatch(mem, int32(i%4), uint64(i*rows), rows, payload)
	}
	defer func() {
		for _, bt := range batches {
			bt.Release()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var l *lanes.Lane[lanes.NoCommit]
	l, err = lanes.New[lanes.NoCommit](lanes.Options{Destination: "bench", Dial: dial})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(rows * payload)
	b.ResetTimer()
	start, cpu0 := time.Now(), testenv.ProcessCPU().Seconds()
	for i := 0; i < b.N; i++ {
		if err := l.Submit(ctx, batches[i%benchDistinct], lanes.NoCommit{}); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if l.Delivered() != uint64(b.N) {
		b.Fatalf("delivered %d of %d", l.Delivered(), b.N)
	}
	wall := time.Since(start)
	recs := float64(b.N) * rows
	b.ReportMetric(recs/wall.Seconds(), "records/s")
	if cpu := testenv.ProcessCPU().Seconds() - cpu0; cpu > 0 {
		b.ReportMetric(cpu*1e6/recs, "cpu-us/record")
	}
}
