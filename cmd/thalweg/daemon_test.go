package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/flighttest"
)

// inProcessRun is a `thalweg run` started in-process on a config file.
type inProcessRun struct {
	c      cli
	cancel context.CancelFunc
	done   chan int
}

// startInProcess starts `thalweg run --config path` in-process and waits
// for its metrics endpoint (the config must set metrics.listen).
func startInProcess(t *testing.T, path string) (*inProcessRun, string) {
	t.Helper()
	r := &inProcessRun{done: make(chan int, 1)}
	ctx, cancel := context.WithCancel(flighttest.Ctx(t, 2*time.Minute))
	r.cancel = cancel
	go func() { r.done <- r.c.run(ctx, "run", "--config", path) }()
	t.Cleanup(func() { _ = r.stop(t) })
	var addr string
	waitFor(t, 15*time.Second, "the metrics address in the log", func() bool {
		select {
		case code := <-r.done:
			r.done <- code
			t.Fatalf("run exited %d early:\n%s", code, r.c.stderr.String())
		default:
		}
		addr = logAttr(r.c.stderr.String(), "serving /metrics", "addr")
		return addr != ""
	})
	return r, "http://" + addr
}

// stop cancels the run (a SIGINT) and returns its exit code.
func (r *inProcessRun) stop(t *testing.T) int {
	t.Helper()
	r.cancel()
	select {
	case code := <-r.done:
		r.done <- code
		return code
	case <-time.After(20 * time.Second):
		t.Fatalf("run did not stop after cancel\n%s", stacks())
		return -1
	}
}

// metrics.pprof: true serves the runtime profiles on the metrics listener;
// by default (false) they are not there.
func TestRunPprof(t *testing.T) {
	flightAt := startFlight(t, receiver.Options{})
	for _, on := range []bool{false, true} {
		cfg := pipelineYAML{Partitions: 1, Rate: 200, FlightAt: flightAt, StoreDir: filepath.Join(t.TempDir(), "offsets"),
			Metrics: "127.0.0.1:0"}.write(t)
		if on {
			cfg = writeConfig(t, strings.Replace(readFile(t, cfg), "metrics:\n", "metrics:\n  pprof: true\n", 1))
		}
		r, base := startInProcess(t, cfg)
		idx, idxBody := httpGet(t, base+"/debug/pprof/")
		gor, gorBody := httpGet(t, base+"/debug/pprof/goroutine?debug=1")
		if on {
			if idx != http.StatusOK || !strings.Contains(idxBody, "goroutine") {
				t.Errorf("pprof on: /debug/pprof/ = %d %.200q", idx, idxBody)
			}
			if gor != http.StatusOK || !strings.Contains(gorBody, "goroutine profile:") {
				t.Errorf("pprof on: /debug/pprof/goroutine = %d %.200q", gor, gorBody)
			}
			if logAttr(r.c.stderr.String(), "/debug/pprof/", "addr") == "" {
				t.Errorf("the serving line does not list /debug/pprof/:\n%s", r.c.stderr.String())
			}
		} else if idx != http.StatusNotFound || gor != http.StatusNotFound {
			t.Errorf("pprof off (default): /debug/pprof/ = %d, goroutine = %d, want 404", idx, gor)
		}
		if s := httpStatus(t, base+"/metrics"); s != http.StatusOK {
			t.Errorf("/metrics: %d", s)
		}
		if code := r.stop(t); code != exitOK {
			t.Fatalf("exit %d:\n%s", code, r.c.stderr.String())
		}
	}
}
