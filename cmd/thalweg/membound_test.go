package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// memKeyCases, in the style of keyCases: each configuration key the memory
// bound depends on, a non-default value for it, and the terms that must
// change with it (every other term must stay as it is).
var memKeyCases = []struct {
	key   string
	yaml  string
	terms []string
}{
	// At the default lane bounds the lanes' bytes bind, not their
	// capacity: the batch size moves only what holds one batch each.
	{"batching.max_bytes", "batching: {max_bytes: 1MiB}", []string{"assembler", "catch-up zb", "send zb"}},
	{"batching.max_bytes (capacity binds)", "batching: {max_bytes: 1MiB}\ndestinations: [{lane: {capacity: 8}}, {lane: {capacity: 8}}]",
		[]string{"assembler", "lane raw", "lane zb", "queue zb", "catch-up zb", "zerobus frames zb", "send zb"}},
	{"destinations[].lane.capacity (anchor)", "destinations: [{lane: {capacity: 8}}]", []string{"lane raw"}},
	{"destinations[].lane.capacity (secondary)", "destinations: [{}, {lane: {capacity: 8}}]",
		[]string{"lane zb", "queue zb", "zerobus frames zb"}},
	{"destinations[].lane.max_bytes (anchor)", "destinations: [{lane: {max_bytes: 64MiB}}]", []string{"lane raw"}},
	{"destinations[].lane.max_bytes (secondary)", "destinations: [{}, {lane: {max_bytes: 64MiB}}]",
		[]string{"lane zb", "queue zb", "zerobus frames zb"}},
	// In mode flight the Zerobus sink sends like a Flight one: no frames
	// kept, and only the gRPC write buffer on the way to the socket.
	{"destinations[].mode", "destinations: [{}, {mode: flight}]", []string{"zerobus frames zb", "send zb"}},
	{"destinations[].max_message_size", "destinations: [{}, {max_message_size: 1MiB}]", []string{"send zb"}},
	{"destinations[].compression", "destinations: [{compression: lz4}]", []string{"send raw"}},
	{"source.receiver_queue_size", "source: {receiver_queue_size: 4000}", []string{"pulsar receiver queue"}},
	{"batching.max_rows", "batching: {max_rows: 100}", []string{"pulsar channel"}},
	{"source.topics", "source: {topics: [a, b, c]}", []string{"pulsar receiver queue"}},
}

func termBytes(m memBound) map[string]int64 {
	out := map[string]int64{}
	for _, t := range m.Terms {
		out[t.Name] = t.Bytes
	}
	return out
}

// TestMemoryBoundTerms: each key moves exactly the terms that name it, the
// total is their sum, and validate prints one line per term and the total.
func TestMemoryBoundTerms(t *testing.T) {
	base := memoryBound(buildKeys(t, "pulsar", "").cfg)
	baseTerms := termBytes(base)
	for _, tc := range memKeyCases {
		t.Run(tc.key, func(t *testing.T) {
			got := memoryBound(buildKeys(t, "pulsar", tc.yaml).cfg)
			var sum int64
			for _, term := range got.Terms {
				sum += term.Bytes
			}
			require.Equal(t, sum, got.Total)
			gotTerms := termBytes(got)
			// The collector's room is a share of every batch term.
			require.Equal(t, (got.Total-gotTerms[memHeadroomTerm]-memRuntimeBase-memBinary)*memLimitHeadroomPct/100,
				gotTerms[memHeadroomTerm])
			delete(gotTerms, memHeadroomTerm)
			changed := map[string]bool{}
			for name, b := range gotTerms {
				if baseTerms[name] != b {
					changed[name] = true
				}
			}
			for name := range baseTerms {
				if _, ok := gotTerms[name]; !ok && name != memHeadroomTerm {
					changed[name] = true
				}
			}
			want := map[string]bool{}
			for _, n := range tc.terms {
				want[n] = true
			}
			require.Equal(t, want, changed, "terms changed by %s", tc.yaml)
			for _, term := range got.Terms {
				if changed[term.Name] && term.Name != "pulsar receiver queue" {
					key, _, _ := strings.Cut(tc.key, " (")
					require.Contains(t, term.Keys, key, "term %q names its key", term.Name)
				}
			}
		})
	}

	// The formula on the base document, by hand: 8.5 MiB batches (8 MiB
	// plus the size-class slack); lane capacity 4096 and max_bytes 512 MiB
	// for both destinations, so the bytes bind.
	b := int64(8<<20) * 17 / 16
	want := map[string]int64{
		"runtime base": memRuntimeBase, "binary": memBinary, "assembler": 3 * b, "pulsar receiver queue": 1000 << 10, "pulsar channel": 8192 << 10,
		"lane raw": 512 << 20, "send raw": flightwire.WriteBufferSize,
		"lane zb": 512 << 20, "queue zb": 1024 << 20, "catch-up zb": b, "zerobus frames zb": 2 * 512 << 20, "send zb": 3 * b,
	}
	var batches int64
	for _, v := range want {
		batches += v
	}
	batches -= memRuntimeBase + memBinary
	want[memHeadroomTerm] = batches * memLimitHeadroomPct / 100
	require.Equal(t, want, baseTerms)
	// Capacity 8: 8 batches; max_bytes below one batch: one batch.
	few := termBytes(memoryBound(buildKeys(t, "pulsar", "destinations: [{lane: {capacity: 8}}, {lane: {max_bytes: 1MiB}}]").cfg))
	require.Equal(t, 8*b, few["lane raw"])
	require.Equal(t, b, few["lane zb"])
	require.Equal(t, b, few["queue zb"])
	require.Equal(t, 2*b, few["zerobus frames zb"])

	// A generator source has no receiver queue.
	require.NotContains(t, termBytes(memoryBound(buildKeys(t, "generator", "").cfg)), "pulsar receiver queue")

	// validate prints every term and the total.
	code, stdout, stderr := runCLI(t, "validate", "--config", writeConfig(t, keyBases["pulsar"]+"batching: {max_bytes: 1MiB}\n"))
	require.Equal(t, exitOK, code, stderr)
	small := memoryBound(buildKeys(t, "pulsar", "batching: {max_bytes: 1MiB}").cfg)
	for _, term := range small.Terms {
		require.Regexp(t, `(?m)^  `+term.Name+` +`+mib(term.Bytes)+`  `, stdout)
	}
	require.Regexp(t, `(?m)^  total +`+mib(small.Total)+`  GC memory limit at run: `+mib(memoryLimit(small.Total)), stdout)
	require.NotEqual(t, mib(base.Total), mib(small.Total))
}

// TestRunSetsMemoryLimit runs `thalweg run` in-process and reads the limit
// back from the runtime: it is the config's bound less the binary, GOGC
// is memGCPercent, and the start log says so; with GOMEMLIMIT in the
// environment the worker leaves both alone.
func TestRunSetsMemoryLimit(t *testing.T) {
	prevLimit, prevGC := debug.SetMemoryLimit(-1), debug.SetGCPercent(-1)
	debug.SetGCPercent(prevGC) // SetGCPercent(-1) turned the collector off: put it back at once
	gcDefaults = true
	t.Cleanup(func() {
		gcDefaults = false
		debug.SetMemoryLimit(prevLimit)
		debug.SetGCPercent(prevGC)
	})

	flightAt := startFlight(t, receiver.Options{})
	run := func(env map[string]string) (int64, int, string) {
		debug.SetMemoryLimit(prevLimit)
		debug.SetGCPercent(prevGC)
		cfgPath := pipelineYAML{Records: 500, Partitions: 1, FlightAt: flightAt,
			StoreDir: t.TempDir(), LaneCapacity: 7}.write(t)
		c := cli{env: env}
		if code := c.run(flighttest.Ctx(t, time.Minute), "run", "--config", cfgPath); code != exitOK {
			t.Fatalf("run: exit %d: %s", code, c.stderr.String())
		}
		gc := debug.SetGCPercent(prevGC)
		return debug.SetMemoryLimit(-1), gc, c.stderr.String()
	}

	limit, gc, logs := run(nil)
	cfg, err := config.Load(pipelineYAML{Records: 500, Partitions: 1, FlightAt: flightAt,
		StoreDir: t.TempDir(), LaneCapacity: 7}.write(t))
	require.NoError(t, err)
	bound := memoryBound(cfg)
	require.Equal(t, memoryLimit(bound.Total), limit, "the runtime's memory limit")
	require.Equal(t, memGCPercent, gc, "GOGC")
	require.Equal(t, mib(memoryLimit(bound.Total)), logAttr(logs, "memory: GC limit set from the config's memory bound", "limit"), logs)
	require.Equal(t, 1, strings.Count(logs, "memory: GC limit set"), "logged once")

	// An operator's GOGC is kept; the limit is still set.
	limit, gc, _ = run(map[string]string{"GOGC": "150"})
	require.Equal(t, memoryLimit(bound.Total), limit)
	require.Equal(t, prevGC, gc, "the environment's GOGC (the runtime read it at start)")

	// A container whose memory limit is below the bound caps it, with a warning.
	cg := filepath.Join(t.TempDir(), "memory.max")
	require.NoError(t, os.WriteFile(cg, []byte("104857600\n"), 0o644)) // 100 MiB
	prevFiles := cgroupMemoryFiles
	cgroupMemoryFiles = []string{cg}
	limit, _, logs = run(nil)
	cgroupMemoryFiles = prevFiles
	require.Equal(t, int64(104857600/100*containerLimitPct), limit, "capped under the container's limit")
	require.Contains(t, logs, "memory: the container's memory limit is below the config's memory bound")
	require.NoError(t, os.WriteFile(cg, []byte("max\n"), 0o644))
	cgroupMemoryFiles = []string{cg}
	limit, _, _ = run(nil)
	cgroupMemoryFiles = prevFiles
	require.Equal(t, memoryLimit(bound.Total), limit, "no container limit: the bound's")

	// GOMEMLIMIT wins: neither is touched.
	limit, gc, logs = run(map[string]string{"GOMEMLIMIT": "3GiB"})
	require.Equal(t, prevLimit, limit)
	require.Equal(t, prevGC, gc)
	require.Equal(t, "3GiB", logAttr(logs, "memory: GOMEMLIMIT is set; the worker leaves the collector as the environment configures it", "gomemlimit"), logs)
}

// TestIcebergMetadataTerm: the term of a table's metadata is its copies of
// the snapshots the table retains: at the defaults, 4 × (the commits of
// 10m + 2m30s + 1m + 30s at 1 s, plus a compaction a minute: 840 + 14) ×
// 2 KiB;
// each key it names moves it; with maintenance off, it counts a day of
// commits.
func TestIcebergMetadataTerm(t *testing.T) {
	term := func(iceberg string) memTerm {
		t.Helper()
		cfg, err := config.Parse([]byte(`
source: {url: pulsar://127.0.0.1:6650, topics: [events], subscription: {name: s}}
destinations:
  - {name: lake, kind: iceberg, role: raw_anchor, iceberg: {warehouse: /tmp/wh, table: raw.events`+iceberg+`}}
store: {dir: /tmp/offsets}
`), func(string) (string, bool) { return "", false })
		require.NoError(t, err)
		for _, tm := range memoryBound(cfg).Terms {
			if tm.Name == "iceberg metadata lake" {
				return tm
			}
		}
		t.Fatalf("no iceberg metadata term for %q", iceberg)
		return memTerm{}
	}
	base := term("")
	require.Equal(t, int64(4*(840+14)*2<<10), base.Bytes)
	for key, yaml := range map[string]string{
		"destinations[].iceberg.commit_interval":              ", commit_interval: 100ms",
		"destinations[].iceberg.maintenance.snapshot_max_age": ", maintenance: {snapshot_max_age: 1h}",
		"destinations[].iceberg.maintenance.interval":         ", maintenance: {interval: 5m}",
		"destinations[].iceberg.maintenance.timeout":          ", maintenance: {timeout: 5m}",
		"destinations[].iceberg.maintenance.min_snapshots":    ", maintenance: {min_snapshots: 5000}",
		"destinations[].iceberg.maintenance.enabled":          ", maintenance: {enabled: false}",
	} {
		got := term(yaml)
		require.NotEqual(t, base.Bytes, got.Bytes, key)
		require.Contains(t, got.Keys, key)
	}
	require.Equal(t, int64(4*86400*2<<10), term(", maintenance: {enabled: false}").Bytes)
	require.Equal(t, int64(4*5000*2<<10), term(", maintenance: {min_snapshots: 5000}").Bytes)
}

// With a table template the write term holds the batch's copy split by
// table once more, and the metadata term says it is of one table of the
// template, T tables open taking T times it.
func TestIcebergTemplateTerms(t *testing.T) {
	terms := func(table string) map[string]memTerm {
		t.Helper()
		cfg, err := config.Parse([]byte(`
source: {url: pulsar://127.0.0.1:6650, topics: [events], subscription: {name: s}}
destinations:
  - {name: lake, kind: iceberg, role: raw_anchor, iceberg: {warehouse: /tmp/wh, table: "`+table+`"}}
store: {dir: /tmp/offsets}
`), func(string) (string, bool) { return "", false })
		require.NoError(t, err)
		out := map[string]memTerm{}
		for _, tm := range memoryBound(cfg).Terms {
			out[tm.Name] = tm
		}
		return out
	}
	one, per := terms("raw.events"), terms("raw.{topic}")
	// The tables' writers encode in parallel: the lane's batches, split.
	held := one["lane lake"].Bytes
	require.Equal(t, iceberg.RoutedWriteMemory(held, false), per["iceberg write lake"].Bytes)
	require.Equal(t, 3*held, per["iceberg write lake"].Bytes)
	require.Greater(t, per["iceberg write lake"].Bytes, one["iceberg write lake"].Bytes)
	require.Contains(t, per["iceberg write lake"].Keys, "destinations[].iceberg.table")
	require.Equal(t, one["iceberg metadata lake"].Bytes, per["iceberg metadata lake"].Bytes)
	require.Contains(t, per["iceberg metadata lake"].Formula, "one table of the template raw.{topic}")
	require.Contains(t, per["iceberg metadata lake"].Formula, "T tables open")
}

// TestBinaryWithinMemoryTerm: the binary term of the bound covers what
// the kernel can keep resident of the thalweg binary, its file-backed
// loadable segments (code, read-only data, the data section's initial
// contents), built as a release for linux/amd64 is, without the race
// detector (on any host: the term is the worker's on Linux).
func TestBinaryWithinMemoryTerm(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "thalweg")
	cmd := exec.CommandContext(flighttest.Ctx(t, 5*time.Minute), testenv.GoTool(), "build", "-o", bin, "./cmd/thalweg")
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	f, err := elf.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	var mapped uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			mapped += p.Filesz
		}
	}
	require.NotZero(t, mapped)
	require.LessOrEqual(t, mapped, uint64(memBinary), "the binary maps %s from its file: raise memBinary", mib(int64(mapped)))
	t.Logf("the binary maps %s from its file; the term is %s", mib(int64(mapped)), mib(memBinary))
}
