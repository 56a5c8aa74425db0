package main

import (
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// GC defaults of `thalweg run` (docs/operations.md#memory). Without a
// memory limit Go's collector lets the heap grow to (1 + GOGC/100) × the
// live heap: at GOGC=100 a worker whose live batches reach the bound sits
// at twice it. With a limit the collector keeps the heap under it however
// large GOGC is, so the worker sets both:
//
//   - the memory limit is the config's memory bound (membound.go) less
//     its binary term: the binary's code and data pages count in the
//     process's RSS, but the Go limit governs only the memory the runtime
//     allocates. The bound has a term for the collector's room,
//     memLimitHeadroomPct of its batch terms (everything but the runtime
//     base and the binary), so that the heap can pass what its terms hold
//     live and the process still stay within the bound;
//   - GOGC becomes memGCPercent, because the limit, not GOGC, is then what
//     bounds the memory, and collecting less often costs less CPU (about
//     15 % less per record end to end; BENCHMARKS.md, "Pulsar end to end").
//
// A container's memory limit (cgroup v2 memory.max, or v1
// memory.limit_in_bytes) below that caps it at containerLimitPct of the
// container's, with one warning: past it the kernel kills the process, so
// the collector must work harder instead, and the config's bound is not
// guaranteed (lower lane.capacity or batching.max_bytes).
//
// An operator's GOMEMLIMIT wins: the worker then sets neither (GOGC stays
// whatever the environment says, the runtime's own default being 100). An
// operator's GOGC alone is kept, and the limit is still set.
const (
	memLimitHeadroomPct = 10
	memGCPercent        = 400
	containerLimitPct   = 90
)

// cgroupMemoryFiles are where a container's memory limit is read, cgroup
// v2 first. A variable so that tests can point at their own files.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// containerMemoryLimit is the container's memory limit in bytes, 0 when
// none is set or none can be read ("max", or v1's huge "unlimited" value).
func containerMemoryLimit() int64 {
	for _, f := range cgroupMemoryFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 {
			return 0
		}
		return n
	}
	return 0
}

// gcDefaults is false in this package's tests (TestMain), whose in-process
// runs must not retune the test binary's collector; TestRunSetsMemoryLimit
// turns it on.
var gcDefaults = true

// memoryLimit is the limit derived from a bound (see above).
func memoryLimit(bound int64) int64 { return bound - memBinary }

// applyGCDefaults sets the collector's limit (and GOGC) from the bound,
// unless the environment's GOMEMLIMIT is set, and logs the choice once.
func applyGCDefaults(bound memBound, env *cliEnv, log *slog.Logger) {
	if !gcDefaults {
		return
	}
	if v := env.getenv("GOMEMLIMIT"); v != "" {
		log.Info("memory: GOMEMLIMIT is set; the worker leaves the collector as the environment configures it",
			"gomemlimit", v, "gogc", env.getenv("GOGC"), "bound", mib(bound.Total))
		return
	}
	limit := memoryLimit(bound.Total)
	if c := containerMemoryLimit(); c > 0 && limit > c/100*containerLimitPct {
		limit = c / 100 * containerLimitPct
		log.Warn("memory: the container's memory limit is below the config's memory bound; the GC limit is capped under it, and a stalled destination may still need more: lower lane.capacity or batching.max_bytes",
			"container_limit", mib(c), "bound", mib(bound.Total), "limit", mib(limit))
	}
	debug.SetMemoryLimit(limit)
	gogc := env.getenv("GOGC")
	if gogc == "" {
		debug.SetGCPercent(memGCPercent)
		gogc = "400 (set by the worker)"
	}
	log.Info("memory: GC limit set from the config's memory bound", "limit", mib(limit), "limit_bytes", limit,
		"bound", mib(bound.Total), "gogc", gogc)
}
