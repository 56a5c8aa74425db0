package bench_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// e2eIcebergAnchor is a table of a local SQL catalog that the worker
// writes itself, or the tables of a template, one per topic.
type e2eIcebergAnchor struct {
	catalogDB, warehouse, table string
	partitionBy                 string           // a partition term, or "" (unpartitioned)
	tbls                        []*iceberg.Table // the benchmark's own handles, to count rows
}

// e2eCommitInterval is the iceberg anchor's commit_interval in
// E2EIcebergAnchor (0: its default): the anchor acknowledges a record at
// the commit that covers it, so the interval bounds how fast the records
// the broker lets a consumer hold unacked are cycled.
var e2eCommitInterval = flag.Duration("e2e.iceberg.commit_interval", 0, "E2EIcebergAnchor: the iceberg anchor's commit_interval (0: the default)")

func (a *e2eIcebergAnchor) destination() string {
	pb := ""
	if a.partitionBy != "" {
		pb = fmt.Sprintf(", partition_by: [%q]", a.partitionBy)
	}
	if *e2eCommitInterval > 0 {
		pb += fmt.Sprintf(", commit_interval: %s", *e2eCommitInterval)
	}
	return fmt.Sprintf("{name: raw, kind: iceberg, role: raw_anchor, iceberg: {catalog: {uri: %q}, warehouse: %q, table: %q%s}}",
		a.catalogDB, a.warehouse, a.table, pb)
}

// open opens the benchmark's handles on the tables the worker writes:
// with a template, the one each topic's records route to.
func (a *e2eIcebergAnchor) open(b *testing.B, topics []string) {
	b.Helper()
	names := []string{a.table}
	if iceberg.IsTemplate(a.table) {
		names = names[:0]
		for _, t := range topics {
			// The template is "<namespace>.{topic}"; the topic's local
			// name sanitised is the table's.
			ns, _, _ := strings.Cut(a.table, ".")
			names = append(names, ns+"."+strings.NewReplacer("-", "_").Replace(t[strings.LastIndexByte(t, '/')+1:]))
		}
	}
	a.tbls = a.tbls[:0]
	for _, n := range names {
		tbl, err := iceberg.Open(iceberg.Options{Catalog: iceberg.CatalogOptions{URI: a.catalogDB}, Warehouse: a.warehouse, Table: n})
		if err != nil {
			b.Fatal(err)
		}
		a.tbls = append(a.tbls, tbl)
	}
}

func (a *e2eIcebergAnchor) close(b *testing.B) {
	for _, t := range a.tbls {
		if err := t.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func (a *e2eIcebergAnchor) records() (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var sum int64
	for _, t := range a.tbls {
		n, err := t.Rows(ctx)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

func (a *e2eIcebergAnchor) pid() int { return 0 }

// BenchmarkE2EIcebergAnchor measures `thalweg run` end to end on the real
// broker into its two raw anchors, side by side, each reading a fresh
// backlog of its own (e2eIcebergCases):
//
//	flight:  the raw anchor is a `thalweg receive` process (as in
//	         BenchmarkE2EPulsar); its CPU time counts with the worker's.
//	iceberg: the raw anchor is a table of a local SQL catalog (SQLite and
//	         a warehouse directory) at the defaults (a commit every
//	         second); the worker writes the Parquet files and commits.
//
// The cases: one unpartitioned table; one table partitioned by
// day(publish_time); and topics=3, where the worker reads three topics and
// the iceberg anchor is the template "bench.{topic}" (a Router, a table
// and a writer per topic; the flight anchor reads the same three).
// Both configs keep every other default of `thalweg run` (metrics on).
// Records are counted at the anchor (GetFlightInfo.TotalRecords; the
// current snapshots' total-records), from the first durable records to the
// last, as in BenchmarkE2EPulsar; an iceberg run must end with exactly the
// records produced (the subscription is ordered: no duplicates). The order
// alternates A B B A. Metrics: flight-rec/s, iceberg-rec/s,
// flight-cpu-ns/rec (worker + receiver), iceberg-cpu-ns/rec, the median
// of the per-iteration ratios iceberg / flight of CPU (cpu-ratio-med) and
// of records/s (rate-ratio-med). Run with -benchtime=4x (2x is one A B B
// A). THALWEG_E2E_PROFILE=DIR writes CPU profiles of the worker of every
// run (see BenchmarkE2EPulsar).
func BenchmarkE2EIcebergAnchor(b *testing.B) {
	url, admin := testenv.PulsarURL(b)
	bins := e2eBuild(b)
	for _, c := range e2eIcebergCases {
		b.Run(c.name, func(b *testing.B) { e2eIcebergBench(b, url, admin, bins, c) })
	}
}

// e2eIcebergCase is a shape (its records in all, over its topics) and the
// iceberg anchor's table.
type e2eIcebergCase struct {
	e2eShape
	partitionBy string // a partition term of the table, or ""
	topics      int    // > 1: a table template, a table per topic
}

// e2eIcebergCases: enough records that a run spans several commits.
var e2eIcebergCases = []e2eIcebergCase{
	{e2eShape: e2eShape{name: "payload=100B", payload: 100, records: 2_000_000, partitions: 4}, topics: 1},
	{e2eShape: e2eShape{name: "payload=100B,partition_by=day", payload: 100, records: 2_000_000, partitions: 4},
		partitionBy: "day(publish_time)", topics: 1},
	{e2eShape: e2eShape{name: "payload=100B,topics=3", payload: 100, records: 2_100_000, partitions: 4}, topics: 3},
}

// e2eIcebergTopics makes c.topics fresh topics for each reader and
// produces c's backlog, split evenly, to all of them at once.
func e2eIcebergTopics(b *testing.B, url, admin string, c e2eIcebergCase) (flight, ice []string) {
	b.Helper()
	per := c.e2eShape
	per.records = c.records / c.topics
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for k := range 2 * c.topics {
		t := e2eTopic(b, admin, per)
		if k%2 == 0 {
			flight = append(flight, t)
		} else {
			ice = append(ice, t)
		}
		wg.Go(func() {
			if err := e2eProduce(url, t, per); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	return flight, ice
}

func e2eIcebergBench(b *testing.B, url, admin string, bins e2eBins, c e2eIcebergCase) {
	sh := c.e2eShape
	sh.records = c.records / c.topics * c.topics
	dir := b.TempDir()
	recv := e2eReceiver(b, bins, dir)
	profile := os.Getenv("THALWEG_E2E_PROFILE")
	ice := &e2eIcebergAnchor{catalogDB: filepath.Join(dir, "catalog.db"), warehouse: filepath.Join(dir, "warehouse"),
		partitionBy: c.partitionBy}
	var fl, ic []e2eRead
	var fCPU, iCPU, ratios, rateRatios []float64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		flightTopics, iceTopics := e2eIcebergTopics(b, url, admin, c)
		ice.table = fmt.Sprintf("bench.e2e_%d", i)
		if c.topics > 1 {
			ice.table = "bench.{topic}"
		}
		ice.open(b, iceTopics)

		flightFirst := i%4 == 0 || i%4 == 3
		var fr, ir e2eRead
		runFlight := func() {
			path := fmt.Sprintf("e2e-%d", i)
			b.StartTimer()
			fr = e2eWorkerRun(b, bins, url, flightTopics, e2eFlightAnchor{recv, path}, path, dir, sh, profileFile(profile, sh, "flight", i))
			b.StopTimer()
		}
		runIceberg := func() {
			b.StartTimer()
			ir = e2eWorkerRun(b, bins, url, iceTopics, ice, fmt.Sprintf("iceberg-%d", i), dir, sh, profileFile(profile, sh, "iceberg", i))
			b.StopTimer()
			if n, err := ice.records(); err != nil || n != int64(sh.records) {
				b.Fatalf("iceberg: the tables hold %d rows (%v), want %d", n, err, sh.records)
			}
		}
		if flightFirst {
			runFlight()
			runIceberg()
		} else {
			runIceberg()
			runFlight()
		}
		ice.close(b)
		for _, t := range append(flightTopics, iceTopics...) {
			e2eDeleteTopic(admin, t)
		}
		fl, ic = append(fl, fr), append(ic, ir)
		f, cpu := fr.cpuNs()+fr.peerNs(), ir.cpuNs()
		fCPU, iCPU, ratios = append(fCPU, f), append(iCPU, cpu), append(ratios, cpu/f)
		rateRatios = append(rateRatios, ir.rate()/fr.rate())
		order := "flight, iceberg"
		if !flightFirst {
			order = "iceberg, flight"
		}
		b.Logf("run %d (%s): iceberg/flight cpu %.3f, rate %.3f; flight %.0f rec/s, worker %.0f + receiver %.0f cpu-ns/rec (start-up %v); iceberg %.0f rec/s, %.0f cpu-ns/rec (start-up %v); load %s",
			i, order, cpu/f, ir.rate()/fr.rate(), fr.rate(), fr.cpuNs(), fr.peerNs(), fr.startup(), ir.rate(), ir.cpuNs(), ir.startup(), e2eLoad())
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
	b.ReportMetric(median(rateRatios), "rate-ratio-med")
}
