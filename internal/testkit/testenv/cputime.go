//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// ProcessCPU is the process's user + system CPU time (every goroutine, the
// kernel's work on its behalf included), 0 if unknown: what the
// benchmarks report per record or batch, as it is far less disturbed by
// the neighbours of a shared machine than wall time.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
