package harness

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// errorsTB records the failures Worker.Stop reports instead of failing the
// test.
type errorsTB struct {
	testing.TB
	errs []string
}

func (e *errorsTB) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// A worker stopped before its pipeline started may die of SIGTERM itself
// (its handler is not installed yet); once it logged that the pipeline
// started, only exit status 0 is a graceful stop.
func TestWorkerStopBySignal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		ready  bool
	}{
		{"before the pipeline started", "exec sleep 30", false},
		{"after the pipeline started", "echo " + readyLine + "; exec sleep 30", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &Worker{name: "w", log: filepath.Join(t.TempDir(), "w.log")}
			p, err := StartProcess(w.name, w.log, "sh", "-c", tc.script)
			if err != nil {
				t.Fatal(err)
			}
			w.proc = p
			t.Cleanup(p.Kill)
			if tc.ready {
				testenv.WaitFor(t, 10*time.Second, "the ready line", func() bool { return w.logged(readyLine) })
			}
			rec := &errorsTB{TB: t}
			w.Stop(rec, 10*time.Second)
			if !p.signalled(syscall.SIGTERM) {
				t.Fatalf("the process ended with %v, want SIGTERM", p.State())
			}
			if failed := len(rec.errs) > 0; failed != tc.ready {
				t.Fatalf("Stop reported %q; want a failure: %v", rec.errs, tc.ready)
			}
		})
	}
}
