package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

var (
	longRunAt       = flag.String("longrun.at", "500,5000,20000", "IcebergLongRun: the commit counts to report at (the last ends the run)")
	longRunInterval = flag.Duration("longrun.interval", 20*time.Millisecond, "IcebergLongRun: the worker's commit_interval")
	longRunRate     = flag.Int("longrun.rate", 5000, "IcebergLongRun: the generator's records/s")
	longRunLimit    = flag.Duration("longrun.limit", 20*time.Minute, "IcebergLongRun: the wall time after which a run stops where it is")
)

// BenchmarkIcebergLongRun runs `thalweg run` for thousands of commits into
// an Iceberg raw anchor, a table of a local SQL catalog (SQLite and a
// warehouse directory), with the generator at a steady rate
// (-longrun.rate, 5,000 records/s of the default 256 B) and every default
// but commit_interval (-longrun.interval, 20 ms, 50 times the default 1 s,
// to simulate hours in minutes). It reports at each commit count of
// -longrun.at (500, 5,000, 20,000; the worker's own commit count, from its
// thalweg_iceberg_commit_latency_seconds histogram):
//
//	files@N, manifests@N, snapshots@N  the current snapshot's data files
//	                                   and manifests, and the snapshots the
//	                                   metadata lists (pyiceberg)
//	plan-ms@N                          pyiceberg's scan().plan_files() on
//	                                   the current snapshot, fastest of 3
//	metadata-json-KB@N                 the current metadata.json (the
//	                                   newest, when a commit replaced it
//	                                   before it was measured)
//	metadata-dir-MB@N, data-MB@N       the bytes under the table's metadata/
//	                                   and data/ directories
//	commit-p50-ms@N, commit-p99-ms@N   commit latency over the last fifth
//	                                   of the commits before N (the
//	                                   worker's histogram, interpolated
//	                                   within its buckets)
//	commits/s@N                        commits a second over that window
//	rss-peak-MiB@N, rss/bound@N        the worker's peak RSS (VmHWM) so
//	                                   far, and over the bound `thalweg
//	                                   validate` prints
//	maint-cpu-%@N                      the CPU time of maintenance
//	                                   (iceberg.(*Sink).maintain and what it
//	                                   calls) over all the other CPU time of
//	                                   the worker, from the consecutive 10 s
//	                                   CPU profiles that began since the
//	                                   previous report
//
// Two sub-benchmarks. "keys=default" keeps every other key at its
// default, and maintenance's cadences are times (an expiry and a compaction
// a minute, snapshots kept 10 minutes): a shortened commit_interval
// multiplies the snapshots a table keeps (10 minutes of 20 ms commits are
// 30,000), and at the same records/s it makes each commit's data 50 times
// smaller. "keys=scaled" scales the maintenance times (interval,
// snapshot_max_age, orphan_interval, orphan_age) and target_file_size by
// commit_interval / 1 s, which keeps each default's measure in commits
// and, against the data of a commit, in bytes: per commit, the table the
// defaults leave at 1 s and the same records/s, in 1/50 of the time. Data files then follow the
// data volume in files of target_file_size, as at the defaults. A run that
// reaches -longrun.limit (20 minutes), or whose worker's RSS passes 4 times
// the bound, stops and reports what it reached, and its figures at the
// commit count where it stopped (files@<count> …), with commits and wall-s.
// Run with -benchtime=1x.
func BenchmarkIcebergLongRun(b *testing.B) {
	bins := e2eBuild(b)
	var at []int
	for f := range strings.SplitSeq(*longRunAt, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("-longrun.at %q: want positive commit counts", *longRunAt)
		}
		at = append(at, n)
	}
	slices.Sort(at)
	for _, scaled := range []bool{false, true} {
		name := "keys=default"
		if scaled {
			name = "keys=scaled"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				longRun(b, bins, at, scaled)
			}
		})
	}
}

// longRunPoint is what a long run measured at a commit count.
type longRunPoint struct {
	at                         int   // the report's commit count
	commits                    int64 // the worker's commits when the table was read
	stats                      longRunStats
	metaJSON, metaDir, dataDir int64
	p50, p99, rate             float64 // ms, ms, commits/s
	peakRSS                    int64
	wall                       time.Duration
}

// longRunStats is what table_stats.py prints.
type longRunStats struct {
	Snapshots        int     `json:"snapshots"`
	Manifests        int     `json:"manifests"`
	DataFiles        int     `json:"data_files"`
	Records          int64   `json:"records"`
	MetadataLocation string  `json:"metadata_location"`
	PlanSeconds      float64 `json:"plan_seconds"`
}

// longRunScrape is the worker's commit latency histogram at one moment.
type longRunScrape struct {
	at      time.Time
	count   int64
	buckets []longRunBucket // cumulative, by upper bound
}

type longRunBucket struct {
	le float64
	n  int64
}

// longRunProfile is one CPU profile of the worker, and its commit count at
// the profile's start.
type longRunProfile struct {
	file    string
	commits int64
}

func longRun(b *testing.B, bins e2eBins, at []int, scaled bool) {
	// Not b.TempDir(): the sub-benchmark's name ends up in the path, and a
	// warehouse location is a URL.
	dir, err := os.MkdirTemp("", "thalweg-longrun-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	catalogDB, warehouse := filepath.Join(dir, "catalog.db"), filepath.Join(dir, "warehouse")
	const table = "bench.longrun"
	tableDir := filepath.Join(warehouse, "bench.db", "longrun")
	maintenance := ""
	if scaled {
		f := float64(*longRunInterval) / float64(time.Second)
		scale := func(d time.Duration) string { return time.Duration(float64(d) * f).String() }
		maintenance = fmt.Sprintf(", target_file_size: %dKiB, maintenance: {interval: %s, snapshot_max_age: %s, orphan_interval: %s, orphan_age: %s}",
			int64(128<<10*f), scale(time.Minute), scale(10*time.Minute), scale(time.Hour), scale(24*time.Hour))
	}
	metricsAt := testenv.FreeAddr(b)
	cfg := fmt.Sprintf(`source:
  kind: generator
  generator: {records: 0, rate: %d}
destinations:
  - {name: raw, kind: iceberg, role: raw_anchor, iceberg: {catalog: {uri: %q}, warehouse: %q, table: %q, commit_interval: %s%s}}
store: {dir: %q}
metrics: {listen: %q, pprof: true}
`, *longRunRate, catalogDB, warehouse, table, *longRunInterval, maintenance, filepath.Join(dir, "offsets"), metricsAt)
	cfgPath := filepath.Join(dir, "longrun.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	bound := longRunBound(b, bins, cfgPath)
	b.Logf("config:\n%s", cfg)

	cmd := exec.Command(bins.thalweg, "run", "--config", cfgPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	testenv.WaitFor(b, 60*time.Second, "thalweg run to be ready", func() bool {
		resp, err := e2eHTTP.Get("http://" + metricsAt + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	// Consecutive CPU profiles of the worker, until the run ends.
	ctx, cancel := context.WithCancel(context.Background())
	profiles := make(chan longRunProfile, 1024)
	profiled := make(chan struct{})
	go func() {
		defer close(profiled)
		for i := 0; ctx.Err() == nil; i++ {
			s, err := longRunScrapeOf(metricsAt)
			if err != nil {
				return
			}
			file := filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", i))
			if longRunFetch(ctx, metricsAt, file) == nil {
				profiles <- longRunProfile{file: file, commits: s.count}
			}
		}
	}()

	var scrapes []longRunScrape
	var points []longRunPoint
	props := icebergpeer.SQLProps(catalogDB, warehouse)
	measure := func(at int, s longRunScrape) longRunPoint {
		p := longRunPoint{at: at, peakRSS: procPeakRSS(b, cmd.Process.Pid), wall: time.Since(start)}
		p.p50, p.p99, p.rate = longRunLatency(scrapes, int64(at)*4/5)
		p.stats = longRunRead(b, props, table)
		p.commits = s.count
		if st, err := os.Stat(strings.TrimPrefix(p.stats.MetadataLocation, "file://")); err == nil {
			p.metaJSON = st.Size()
		} else { // already replaced and pruned: the newest one
			var newest time.Time
			files, _ := filepath.Glob(filepath.Join(tableDir, "metadata", "*.metadata.json"))
			for _, f := range files {
				if st, err := os.Stat(f); err == nil && st.ModTime().After(newest) {
					newest, p.metaJSON = st.ModTime(), st.Size()
				}
			}
		}
		p.metaDir, p.dataDir = dirBytes(filepath.Join(tableDir, "metadata")), dirBytes(filepath.Join(tableDir, "data"))
		b.Logf("at %d commits (%d when read, %v): %+v; RSS peak %.1f MiB of the bound %.1f MiB; load %s", p.at, p.commits,
			p.wall.Round(time.Second), p.stats, float64(p.peakRSS)/(1<<20), float64(bound)/(1<<20), e2eLoad())
		return p
	}
	stopped := ""
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for next := 0; next < len(at); <-tick.C {
		s, err := longRunScrapeOf(metricsAt)
		if err != nil {
			b.Fatalf("worker metrics: %v\n%s", err, stderr.String())
		}
		scrapes = append(scrapes, s)
		if s.count >= int64(at[next]) {
			points = append(points, measure(at[next], s))
			next++
			continue
		}
		select {
		case err := <-done:
			exited = true
			b.Fatalf("thalweg run exited with %v after %d commits\n%s", err, s.count, stderr.String())
		default:
		}
		if time.Since(start) > *longRunLimit {
			stopped = fmt.Sprintf("stopped at the -longrun.limit %v after %d commits", *longRunLimit, s.count)
		}
		if rss := procPeakRSS(b, cmd.Process.Pid); rss > 4*bound { // the machine is shared
			stopped = fmt.Sprintf("stopped after %d commits: the worker's RSS %.1f MiB passed 4 × the bound", s.count, float64(rss)/(1<<20))
		}
		if stopped != "" { // a last report where the run stopped
			points = append(points, measure(int(s.count), s))
			break
		}
	}
	wall := time.Since(start)
	last := scrapes[len(scrapes)-1]
	cancel()
	<-profiled
	close(profiles)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		exited = true
		if err != nil {
			b.Fatalf("thalweg run: %v\n%s", err, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		b.Fatalf("thalweg run did not stop within 2 minutes of SIGTERM\n%s", stderr.String())
	}
	for l := range strings.Lines(stderr.String()) {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			b.Logf("worker: %s", strings.TrimSpace(l))
		}
	}

	var profs []longRunProfile
	for p := range profiles {
		profs = append(profs, p)
	}
	var prev int64
	for _, p := range points {
		var files []string
		for _, pr := range profs {
			if pr.commits >= prev && pr.commits < p.commits {
				files = append(files, pr.file)
			}
		}
		prev = p.commits
		n := strconv.Itoa(p.at)
		b.ReportMetric(float64(p.stats.DataFiles), "files@"+n)
		b.ReportMetric(float64(p.stats.Manifests), "manifests@"+n)
		b.ReportMetric(float64(p.stats.Snapshots), "snapshots@"+n)
		b.ReportMetric(p.stats.PlanSeconds*1000, "plan-ms@"+n)
		b.ReportMetric(float64(p.metaJSON)/1e3, "metadata-json-KB@"+n)
		b.ReportMetric(float64(p.metaDir)/1e6, "metadata-dir-MB@"+n)
		b.ReportMetric(float64(p.dataDir)/1e6, "data-MB@"+n)
		b.ReportMetric(p.p50, "commit-p50-ms@"+n)
		b.ReportMetric(p.p99, "commit-p99-ms@"+n)
		b.ReportMetric(p.rate, "commits/s@"+n)
		b.ReportMetric(float64(p.peakRSS)/(1<<20), "rss-peak-MiB@"+n)
		b.ReportMetric(float64(p.peakRSS)/float64(bound), "rss/bound@"+n)
		if m, ok := longRunMaintenanceCPU(b, files); ok {
			b.ReportMetric(m, "maint-cpu-%@"+n)
		}
	}
	b.ReportMetric(float64(last.count), "commits")
	b.ReportMetric(wall.Seconds(), "wall-s")
	if stopped != "" {
		b.Logf("%s", stopped)
	}
	if len(points) >= 2 {
		a, z := points[len(points)-2], points[len(points)-1]
		ratio := func(x, y float64) string {
			if x == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f×", y/x)
		}
		b.Logf("@%d / @%d: files %s, manifests %s, snapshots %s, metadata.json %s, metadata dir %s, commit p50 %s, p99 %s, plan %s, peak RSS %s; metadata dir / data %.2f",
			z.at, a.at, ratio(float64(a.stats.DataFiles), float64(z.stats.DataFiles)), ratio(float64(a.stats.Manifests), float64(z.stats.Manifests)),
			ratio(float64(a.stats.Snapshots), float64(z.stats.Snapshots)), ratio(float64(a.metaJSON), float64(z.metaJSON)),
			ratio(float64(a.metaDir), float64(z.metaDir)), ratio(a.p50, z.p50), ratio(a.p99, z.p99),
			ratio(a.stats.PlanSeconds, z.stats.PlanSeconds), ratio(float64(a.peakRSS), float64(z.peakRSS)), float64(z.metaDir)/float64(z.dataDir))
	}
}

// longRunBound is the memory bound `thalweg validate` prints for config,
// in bytes.
func longRunBound(b *testing.B, bins e2eBins, config string) int64 {
	b.Helper()
	out, err := exec.Command(bins.thalweg, "validate", "--config", config).CombinedOutput()
	if err != nil {
		b.Fatalf("thalweg validate: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^\s*total\s+([0-9.]+)(KiB|MiB|GiB)`).FindSubmatch(out)
	if m == nil {
		b.Fatalf("thalweg validate printed no total bound:\n%s", out)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	shift := map[string]int{"KiB": 10, "MiB": 20, "GiB": 30}[string(m[2])]
	return int64(v * float64(int64(1)<<shift))
}

// longRunScrapeOf reads the worker's commit latency histogram.
func longRunScrapeOf(metricsAt string) (longRunScrape, error) {
	resp, err := e2eHTTP.Get("http://" + metricsAt + "/metrics")
	if err != nil {
		return longRunScrape{}, err
	}
	defer resp.Body.Close()
	s := longRunScrape{at: time.Now()}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		switch {
		case err != nil:
		case strings.HasPrefix(l, "thalweg_iceberg_commit_latency_seconds_count{"):
			s.count = int64(v)
		case strings.HasPrefix(l, "thalweg_iceberg_commit_latency_seconds_bucket{"):
			// The last label: `table="…"` ends in `le="` too.
			le := l[strings.LastIndex(l, `le="`)+len(`le="`):]
			le, _, _ = strings.Cut(le, `"`)
			bound, err := strconv.ParseFloat(le, 64) // "+Inf" parses
			if err == nil {
				s.buckets = append(s.buckets, longRunBucket{bound, int64(v)})
			}
		}
	}
	slices.SortFunc(s.buckets, func(x, y longRunBucket) int {
		switch {
		case x.le < y.le:
			return -1
		case x.le > y.le:
			return 1
		}
		return 0
	})
	return s, sc.Err()
}

// longRunLatency is the commit latency p50 and p99 (ms) and the commits a
// second between the last scrape with at most from commits and the last
// scrape, interpolated linearly within the histogram's buckets (the +Inf
// bucket counts at the largest finite bound).
func longRunLatency(scrapes []longRunScrape, from int64) (p50, p99, rate float64) {
	z := scrapes[len(scrapes)-1]
	a := longRunScrape{at: scrapes[0].at}
	for _, s := range scrapes {
		if s.count <= from {
			a = s
		}
	}
	n := z.count - a.count
	if n <= 0 {
		return 0, 0, 0
	}
	delta := func(i int) int64 {
		var before int64
		if i < len(a.buckets) {
			before = a.buckets[i].n
		}
		return z.buckets[i].n - before
	}
	q := func(f float64) float64 {
		rank := f * float64(n)
		lo := 0.0
		for i, bk := range z.buckets {
			c := float64(delta(i))
			if c >= rank {
				hi := bk.le
				if math.IsInf(hi, 1) {
					return lo * 1000
				}
				var below float64
				if i > 0 {
					below = float64(delta(i - 1))
				}
				return (lo + (hi-lo)*(rank-below)/math.Max(c-below, 1)) * 1000
			}
			lo = bk.le
		}
		return lo * 1000
	}
	return q(0.5), q(0.99), float64(n) / z.at.Sub(a.at).Seconds()
}

// longRunRead runs table_stats.py on the table. The worker commits while
// it reads: a metadata.json the catalog named may be pruned (the table
// keeps its last few) before pyiceberg opens it, and the read is tried
// again on the table as the catalog then names it.
func longRunRead(b *testing.B, props map[string]string, table string) longRunStats {
	b.Helper()
	pj, err := json.Marshal(props)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	script := filepath.Join(testenv.RepoRoot(), "testdata", "iceberg", "table_stats.py")
	var out []byte
	for try := 1; ; try++ {
		out, err = exec.CommandContext(ctx, testenv.Python(b), script, string(pj), table).Output()
		if err == nil {
			break
		}
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		if try < 5 && bytes.Contains(stderr, []byte("FileNotFoundError")) {
			continue
		}
		b.Fatalf("table_stats.py: %v\n%s", err, stderr)
	}
	var s longRunStats
	if err := json.Unmarshal(out, &s); err != nil {
		b.Fatalf("table_stats.py output %q: %v", out, err)
	}
	return s
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// longRunFetch writes a 10 s CPU profile of the worker to file.
func longRunFetch(ctx context.Context, metricsAt, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+metricsAt+"/debug/pprof/profile?seconds=10", nil)
	if err != nil {
		return err
	}
	resp, err := e2eHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: %s", resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(file, body, 0o600)
}

// longRunMaintenanceCPU is the CPU time of iceberg.(*Sink).maintain (and
// what it calls) in the merged profiles, in percent of the rest of their
// CPU time, from `go tool pprof -top` with every node shown: its
// "Showing nodes accounting for X, P% of T total" line gives the focused
// samples (X) and every sample (T).
func longRunMaintenanceCPU(b *testing.B, files []string) (float64, bool) {
	if len(files) == 0 {
		return 0, false
	}
	args := []string{"tool", "pprof", "-top", "-nodefraction=0", "-nodecount=1000000", `-focus=thalweg/iceberg\.\(\*Sink\)\.maintain$`}
	out, err := exec.Command("go", append(args, files...)...).CombinedOutput()
	if err != nil {
		b.Logf("go tool pprof: %v\n%s", err, out)
		return 0, false
	}
	m := regexp.MustCompile(`(?m)^Showing nodes accounting for ([0-9.]+)(ms|s|mins|hrs)?, [0-9.]+% of ([0-9.]+)(ms|s|mins|hrs) total`).FindSubmatch(out)
	if m == nil {
		if strings.Contains(string(out), "No nodes to print") || !bytes.Contains(out, []byte("Showing nodes")) {
			return 0, true // no sample under maintain
		}
		b.Logf("go tool pprof: no totals in\n%s", out)
		return 0, false
	}
	secs := func(v, unit []byte) float64 {
		f, _ := strconv.ParseFloat(string(v), 64)
		return f * map[string]float64{"ms": 1e-3, "s": 1, "mins": 60, "hrs": 3600}[string(unit)]
	}
	maint, total := secs(m[1], m[2]), secs(m[3], m[4])
	if total <= maint {
		return 0, false
	}
	return 100 * maint / (total - maint), true
}
