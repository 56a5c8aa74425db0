package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// e2eIcebergAnchor is a table of a local SQL catalog that the worker
// writes itself.
type e2eIcebergAnchor struct {
	catalogDB, warehouse, table string
	tbl                         *iceberg.Table // the benchmark's own handle, to count rows
}

func (a *e2eIcebergAnchor) destination() string {
	return fmt.Sprintf("{name: raw, kind: iceberg, role: raw_anchor, iceberg: {catalog: {uri: %q}, warehouse: %q, table: %q}}",
		a.catalogDB, a.warehouse, a.table)
}

func (a *e2eIcebergAnchor) records() (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return a.tbl.Rows(ctx)
}

func (a *e2eIcebergAnchor) pid() int { return 0 }

// BenchmarkE2EIcebergAnchor measures `thalweg run` end to end on the real
// broker into its two raw anchors, side by side, each reading a fresh
// backlog of its own (e2eIcebergShapes):
//
//	flight:  the raw anchor is a `thalweg receive` process (as in
//	         BenchmarkE2EPulsar); its CPU time counts with the worker's.
//	iceberg: the raw anchor is a table of a local SQL catalog (SQLite and
//	         a warehouse directory) at the defaults (a commit every
//	         second); the worker writes the Parquet files and commits.
//
// Both configs keep every other default of `thalweg run` (metrics on).
// Records are counted at the anchor (GetFlightInfo.TotalRecords; the
// current snapshot's total-records), from the first durable records to the
// last, as in BenchmarkE2EPulsar; an iceberg run must end with exactly the
// records produced (the subscription is ordered: no duplicates). The order
// alternates A B B A. Metrics: flight-rec/s, iceberg-rec/s,
// flight-cpu-ns/rec (worker + receiver), iceberg-cpu-ns/rec and the median
// of the per-iteration CPU ratios iceberg / flight (cpu-ratio-med). Run
// with -benchtime=4x. THALWEG_E2E_PROFILE=DIR writes CPU profiles of the
// worker of every run (see BenchmarkE2EPulsar).
func BenchmarkE2EIcebergAnchor(b *testing.B) {
	url, admin := testenv.PulsarURL(b)
	bins := e2eBuild(b)
	for _, sh := range e2eIcebergShapes {
		b.Run(sh.name, func(b *testing.B) { e2eIcebergBench(b, url, admin, bins, sh) })
	}
}

// e2eIcebergShapes: enough records that a run spans several commits.
var e2eIcebergShapes = []e2eShape{
	{name: "payload=100B", payload: 100, records: 2_000_000, partitions: 4},
}

func e2eIcebergBench(b *testing.B, url, admin string, bins e2eBins, sh e2eShape) {
	dir := b.TempDir()
	recv := e2eReceiver(b, bins, dir)
	profile := os.Getenv("THALWEG_E2E_PROFILE")
	ice := &e2eIcebergAnchor{catalogDB: filepath.Join(dir, "catalog.db"), warehouse: filepath.Join(dir, "warehouse")}
	var fl, ic []e2eRead
	var fCPU, iCPU, ratios []float64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		topics := e2eTopics(b, url, admin, sh)
		ice.table = fmt.Sprintf("bench.e2e_%d", i)
		tbl, err := iceberg.Open(iceberg.Options{Catalog: iceberg.CatalogOptions{URI: ice.catalogDB}, Warehouse: ice.warehouse, Table: ice.table})
		if err != nil {
			b.Fatal(err)
		}
		ice.tbl = tbl

		flightFirst := i%4 == 0 || i%4 == 3
		var fr, ir e2eRead
		runFlight := func(topic string) {
			path := fmt.Sprintf("e2e-%d", i)
			b.StartTimer()
			fr = e2eWorkerRun(b, bins, url, topic, e2eFlightAnchor{recv, path}, path, dir, sh, profileFile(profile, sh, "flight", i))
			b.StopTimer()
		}
		runIceberg := func(topic string) {
			b.StartTimer()
			ir = e2eWorkerRun(b, bins, url, topic, ice, fmt.Sprintf("iceberg-%d", i), dir, sh, profileFile(profile, sh, "iceberg", i))
			b.StopTimer()
			if n, err := ice.records(); err != nil || n != int64(sh.records) {
				b.Fatalf("iceberg: the table holds %d rows (%v), want %d", n, err, sh.records)
			}
		}
		if flightFirst {
			runFlight(topics[0])
			runIceberg(topics[1])
		} else {
			runIceberg(topics[0])
			runFlight(topics[1])
		}
		if err := tbl.Close(); err != nil {
			b.Fatal(err)
		}
		for _, t := range topics {
			e2eDeleteTopic(admin, t)
		}
		fl, ic = append(fl, fr), append(ic, ir)
		f, c := fr.cpuNs()+fr.peerNs(), ir.cpuNs()
		fCPU, iCPU, ratios = append(fCPU, f), append(iCPU, c), append(ratios, c/f)
		order := "flight, iceberg"
		if !flightFirst {
			order = "iceberg, flight"
		}
		b.Logf("run %d (%s): iceberg/flight cpu %.3f; flight %.0f rec/s, worker %.0f + receiver %.0f cpu-ns/rec (start-up %v); iceberg %.0f rec/s, %.0f cpu-ns/rec (start-up %v); load %s",
			i, order, c/f, fr.rate(), fr.cpuNs(), fr.peerNs(), fr.startup(), ir.rate(), ir.cpuNs(), ir.startup(), e2eLoad())
		b.StartTimer()
	}
	if len(fl) == 0 {
		return
	}
	rate := func(rs []e2eRead) float64 {
		var n int
		var span time.Duration
		for _, r := range rs {
			n, span = n+r.records(), span+r.span()
		}
		return float64(n) / span.Seconds()
	}
	b.ReportMetric(rate(fl), "flight-rec/s")
	b.ReportMetric(rate(ic), "iceberg-rec/s")
	b.ReportMetric(median(fCPU), "flight-cpu-ns/rec")
	b.ReportMetric(median(iCPU), "iceberg-cpu-ns/rec")
	b.ReportMetric(median(ratios), "cpu-ratio-med")
}
