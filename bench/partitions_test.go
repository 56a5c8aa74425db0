package bench_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// BenchmarkE2EPartitions measures how the worker's cost grows with the
// number of partitions it reads, as a new user would meet it: the same
// backlog of 200,000 records of 100 B in fresh topics of 4, 64 and 256
// partitions, each drained by `thalweg run` (every default but the
// addresses, metrics on) into a `thalweg receive` process, until the
// receiver holds every record durably (e2eWorkerRun, which also reads the
// dataset back: nothing missing, nothing stored twice).
//
// Every iteration produces the three topics, and as many again for the
// bare consumer (bench/internal/bareconsumer, acking cumulatively per
// partition every batch.DefaultMaxRows/partitions messages, and reading
// every message's payload, key, index, times and properties as the
// worker does: -read, so that the client's cost of handing over messages
// from 256 queues counts on both sides), before any
// reader runs; then it drains them in increasing order of partitions in
// even iterations and in decreasing order in odd ones, the bare consumer
// before or after the worker at each count, taking turns every two
// iterations. Before each reader starts, a helper process writes to every
// page of 1 GiB and exits (e2eWarmMemory): on a virtual machine whose
// host takes back the memory its guest leaves free, the first process to
// touch memory after a quiet spell, such as the iteration's production,
// pays several times as much for every page it touches for the first time
// (1.2 against 5–7 µs per page of a 256 MiB touch on the machine of
// BENCHMARKS.md), which made whichever count an iteration read first cost
// up to 3× the others, in the kernel; THALWEG_E2E_COLD_MEMORY=1 leaves the
// memory as it is. Per partition count it reports the
// worker's CPU time per record over the whole run (start-up and
// subscription included: what the process costs; cpu-ns/rec), the part
// of it spent in the kernel (sys-ns/rec), and from the
// first batch at the sink to the last (after start-up; run-cpu-ns/rec),
// the peak RSS (VmHWM, rss-MiB), its share of the memory bound that
// `thalweg validate` prints for the config (rss/bound), and the bare
// consumer's whole-run CPU per record (bare-cpu-ns/rec). The steady state
// runs from the moment a tenth of the records is durable at the sink (the
// bare consumer: handled) to the end, so that neither start-up nor the
// first burst of prefetch is in it: steady-cpu-ns/rec and
// bare-steady-cpu-ns/rec per count, steady-cpu-256/4 and
// bare-steady-cpu-256/4 their growth from the first count to the last, and
// steady-growth-worker/bare the median over iterations of the worker's
// growth over the bare consumer's (the goal: at most 1.05). The headline is
// cpu-256/4: the median over iterations of the ratio of the worker's
// whole-run CPU per record at 256 partitions to that at 4 (run-cpu-256/4
// after start-up; bare-cpu-256/4 the same ratio for the Pulsar client
// alone). cpu-256/4-first and -last compare the counts at the same place
// in their iterations: the medians at 256 and at 4 partitions over the
// iterations where each was read first (last) after the production
// (bare-cpu-256/4-first and -last the same for the bare consumer). Run
// with -benchtime=8x: both orders of the counts with both orders of the
// readers, twice.
// THALWEG_E2E_BARE_WORK=N makes the bare consumer hash each message's
// payload and key N times (bareconsumer -work): a consumer with work of its
// own per message, which shows how the client's cost grows with partitions
// once its consumer, like the worker, is slower than the broker's delivery.
// THALWEG_E2E_PROFILE=DIR writes a CPU profile of every worker run to DIR,
// as BenchmarkE2EPulsar does; THALWEG_E2E_PARTITION_RECORDS sets the
// backlog (a bigger one gives a profile more samples).
func BenchmarkE2EPartitions(b *testing.B) {
	url, admin := testenv.PulsarURL(b)
	bins := e2eBuild(b)
	dir := b.TempDir()
	recv := e2eReceiver(b, bins, dir)
	counts := []int{4, 64, 256}
	if v := os.Getenv("THALWEG_E2E_PARTITION_COUNTS"); v != "" {
		counts = counts[:0]
		for f := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("THALWEG_E2E_PARTITION_COUNTS=%q: not a list of positive counts", v)
			}
			counts = append(counts, n)
		}
	}
	profile := os.Getenv("THALWEG_E2E_PROFILE")
	records := 200_000
	if v := os.Getenv("THALWEG_E2E_PARTITION_RECORDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("THALWEG_E2E_PARTITION_RECORDS=%q: not a positive count", v)
		}
		records = n
	}

	type perCount struct {
		whole, run, sys, rss, bound, bare, steady, bareSteady []float64
	}
	got := make(map[int]*perCount, len(counts))
	for _, p := range counts {
		got[p] = &perCount{}
	}
	var wholeRatio, runRatio, bareRatio, steadyRatio, bareSteadyRatio []float64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		topics := make(map[int][2]string, len(counts))
		for _, p := range counts {
			sh := e2eShape{name: fmt.Sprintf("partitions=%d", p), payload: 100, records: records, partitions: p}
			topics[p] = e2eTopics(b, url, admin, sh)
		}
		order := append([]int(nil), counts...)
		if i%2 == 1 {
			for l, r := 0, len(order)-1; l < r; l, r = l+1, r-1 {
				order[l], order[r] = order[r], order[l]
			}
		}
		// On cold memory the reader that goes first at a count pays more
		// (see above): the readers take turns going first, independently
		// of the counts' order (iterations 0 and 1 the worker, 2 and 3 the
		// bare consumer).
		bareFirst := (i/2)%2 == 1
		var line []string // one log line per iteration: Go keeps a benchmark's first 10
		reads := make(map[int]e2eRead, len(counts))
		bares := make(map[int]e2eRead, len(counts))
		for _, p := range order {
			sh := e2eShape{name: fmt.Sprintf("partitions=%d", p), payload: 100, records: records, partitions: p}
			path := fmt.Sprintf("p%d-%d", p, i)
			bare := func() e2eRead {
				e2eWarmMemory(b, bins)
				return e2eBareRun(b, bins, url, topics[p][1], sh, batch.DefaultMaxRows/p, true, profileFile(profile, sh, "bare", i))
			}
			var br e2eRead
			if bareFirst {
				br = bare()
			}
			e2eWarmMemory(b, bins)
			b.StartTimer()
			r := e2eWorkerRun(b, bins, url, []string{topics[p][0]}, e2eFlightAnchor{recv, path}, path, dir, sh, profileFile(profile, sh, "worker", i))
			b.StopTimer()
			if !bareFirst {
				br = bare()
			}
			if dups := recv.verify(b, path, sh.records); dups > 0 {
				b.Logf("producer: %d payloads written twice to the topic", dups)
			}
			bound := e2eMemoryBound(b, bins, filepath.Join(dir, path+".yaml"))
			reads[p], bares[p] = r, br
			pc := got[p]
			pc.whole = append(pc.whole, r.wholeCPUNs())
			pc.run = append(pc.run, r.cpuNs())
			pc.sys = append(pc.sys, float64(r.last.sys.Nanoseconds())/float64(r.last.n))
			pc.rss = append(pc.rss, float64(r.peakRSS)/(1<<20))
			pc.bound = append(pc.bound, float64(r.peakRSS)/float64(bound))
			pc.bare = append(pc.bare, br.wholeCPUNs())
			pc.steady = append(pc.steady, r.steadyCPUNs())
			pc.bareSteady = append(pc.bareSteady, br.steadyCPUNs())
			line = append(line, fmt.Sprintf("%d partitions: worker %.0f cpu-ns/rec whole run (start-up %v), %.0f after start-up, %.0f steady, peak RSS %.0f MiB = %.2f of the bound %.0f MiB, %s, %.3f minor faults/rec, %v in the kernel; bare %.0f cpu-ns/rec whole run, %.0f after start-up, %.0f steady, %.3f minor faults/rec",
				p, r.wholeCPUNs(), r.startup(), r.cpuNs(), r.steadyCPUNs(), float64(r.peakRSS)/(1<<20), float64(r.peakRSS)/float64(bound), float64(bound)/(1<<20), r.flushes, r.wholeFaults(), r.last.sys, br.wholeCPUNs(), br.cpuNs(), br.steadyCPUNs(), br.wholeFaults()))
		}
		first := "worker"
		if bareFirst {
			first = "bare consumer"
		}
		b.Logf("run %d (%s first at each count): %s; load %s", i, first, strings.Join(line, "; "), e2eLoad())
		for _, ts := range topics {
			for _, t := range ts {
				e2eDeleteTopic(admin, t)
			}
		}
		lo, hi := reads[counts[0]], reads[counts[len(counts)-1]]
		wholeRatio = append(wholeRatio, hi.wholeCPUNs()/lo.wholeCPUNs())
		runRatio = append(runRatio, hi.cpuNs()/lo.cpuNs())
		bLo, bHi := bares[counts[0]], bares[counts[len(counts)-1]]
		bareRatio = append(bareRatio, bHi.wholeCPUNs()/bLo.wholeCPUNs())
		steadyRatio = append(steadyRatio, hi.steadyCPUNs()/lo.steadyCPUNs())
		bareSteadyRatio = append(bareSteadyRatio, bHi.steadyCPUNs()/bLo.steadyCPUNs())
		b.StartTimer()
	}
	if len(wholeRatio) == 0 {
		return
	}
	for _, p := range counts {
		pc := got[p]
		b.ReportMetric(median(pc.whole), fmt.Sprintf("cpu-ns/rec@%d", p))
		b.ReportMetric(median(pc.run), fmt.Sprintf("run-cpu-ns/rec@%d", p))
		b.ReportMetric(median(pc.sys), fmt.Sprintf("sys-ns/rec@%d", p))
		b.ReportMetric(median(pc.rss), fmt.Sprintf("rss-MiB@%d", p))
		b.ReportMetric(median(pc.bound), fmt.Sprintf("rss/bound@%d", p))
		b.ReportMetric(median(pc.bare), fmt.Sprintf("bare-cpu-ns/rec@%d", p))
		b.ReportMetric(median(pc.steady), fmt.Sprintf("steady-cpu-ns/rec@%d", p))
		b.ReportMetric(median(pc.bareSteady), fmt.Sprintf("bare-steady-cpu-ns/rec@%d", p))
	}
	// The steady state's growth from the first count to the last, for the
	// worker and the bare consumer, and the worker's against the bare
	// consumer's, iteration by iteration (the goal: at most 1.05).
	growth := make([]float64, len(steadyRatio))
	for i := range steadyRatio {
		growth[i] = steadyRatio[i] / bareSteadyRatio[i]
	}
	cLo, cHi := counts[0], counts[len(counts)-1]
	b.ReportMetric(median(steadyRatio), fmt.Sprintf("steady-cpu-%d/%d", cHi, cLo))
	b.ReportMetric(median(bareSteadyRatio), fmt.Sprintf("bare-steady-cpu-%d/%d", cHi, cLo))
	b.ReportMetric(median(growth), "steady-growth-worker/bare")
	b.Logf("steady %d/%d per iteration: worker %.3f, bare consumer %.3f, worker/bare %.3f", cHi, cLo, steadyRatio, bareSteadyRatio, growth)
	b.ReportMetric(median(wholeRatio), "cpu-256/4")
	b.ReportMetric(median(runRatio), "run-cpu-256/4")
	b.ReportMetric(median(bareRatio), "bare-cpu-256/4")
	b.Logf("cpu-256/4 per iteration: %.3f; after start-up: %.3f; the bare consumer's: %.3f", wholeRatio, runRatio, bareRatio)
	if len(wholeRatio) < 2 {
		return
	}
	// An iteration's ratio sets a count read first after the production
	// against one read last. The same ratio between counts at the same
	// place: 256 partitions go first in odd iterations, 4 in even ones.
	lo, hi := got[counts[0]], got[counts[len(counts)-1]]
	b.ReportMetric(median(iterations(hi.whole, 1))/median(iterations(lo.whole, 0)), "cpu-256/4-first")
	b.ReportMetric(median(iterations(hi.whole, 0))/median(iterations(lo.whole, 1)), "cpu-256/4-last")
	b.ReportMetric(median(iterations(hi.bare, 1))/median(iterations(lo.bare, 0)), "bare-cpu-256/4-first")
	b.ReportMetric(median(iterations(hi.bare, 0))/median(iterations(lo.bare, 1)), "bare-cpu-256/4-last")
}

// warmMemoryMiB is how much memory e2eWarmMemory touches: more than any
// reader of these benchmarks touches (the worker on 800 000 records of
// 1 KB: about 560 MiB, 0.18 page faults a record).
const warmMemoryMiB = 1024

// e2eWarmMemory has a helper process write to every page of warmMemoryMiB
// of memory and exit, so that the next process starts on memory the machine
// has just backed (see BenchmarkE2EPartitions); with
// THALWEG_E2E_COLD_MEMORY set it does nothing.
func e2eWarmMemory(b *testing.B, bins e2eBins) {
	b.Helper()
	if os.Getenv("THALWEG_E2E_COLD_MEMORY") != "" {
		return
	}
	if out, err := exec.Command(bins.bare, "-touch", strconv.Itoa(warmMemoryMiB)).CombinedOutput(); err != nil {
		b.Fatalf("bareconsumer -touch: %v\n%s", err, out)
	}
}

// iterations is v's values of the even (parity 0) or odd (1) iterations.
func iterations(v []float64, parity int) []float64 {
	var out []float64
	for i := parity; i < len(v); i += 2 {
		out = append(out, v[i])
	}
	return out
}

// e2eMemoryBound is the memory bound `thalweg validate` prints for the
// config at path (its "total" line), in bytes.
func e2eMemoryBound(b *testing.B, bins e2eBins, path string) int64 {
	b.Helper()
	out, err := exec.Command(bins.thalweg, "validate", "--config", path).CombinedOutput()
	if err != nil {
		b.Fatalf("thalweg validate: %v\n%s", err, out)
	}
	for l := range strings.Lines(string(out)) {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "total" {
			v, err := strconv.ParseFloat(strings.TrimSuffix(f[1], "MiB"), 64)
			if err != nil {
				break
			}
			return int64(v * (1 << 20))
		}
	}
	b.Fatalf("thalweg validate printed no total bound:\n%s", out)
	return 0
}
