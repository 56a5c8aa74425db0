package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/observability"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
)

// worker is one configured pipeline with everything it owns: the offset
// store, the meter provider and the HTTP endpoints.
type worker struct {
	opts    workerOpts // what the config sets for the worker itself (configmap.go)
	log     *slog.Logger
	store   *offsetstore.Store
	mp      *sdkmetric.MeterProvider
	http    *http.Server
	lis     net.Listener
	pipe    *pipeline.Pipeline
	src     pipeline.Source // for inspection; the pipeline owns it once built
	owned   bool            // the worker (not yet a pipeline) must close src
	closers []io.Closer     // closed after the store, e.g. the rebuild client

	// status is what /healthz and /readyz read: the endpoints are served
	// from before the offset store opens (which waits on a full disk) and
	// so see the store and pipeline appear.
	status workerStatus
}

// workerStatus is the worker's state as the HTTP endpoints see it; safe
// for concurrent use.
type workerStatus struct {
	mu struct {
		sync.Mutex
		store *offsetstore.Store
		pipe  *pipeline.Pipeline
		disk  error // the offset store's latest full-disk report (nil: can write)
	}
}

// reason is err's message without the package prefix the worker's own
// "offset store: " already says.
func reason(err error) string { return strings.TrimPrefix(err.Error(), "offsetstore: ") }

func (st *workerStatus) setDisk(err error) {
	st.mu.Lock()
	st.mu.disk = err
	st.mu.Unlock()
}

func (st *workerStatus) set(store *offsetstore.Store, pipe *pipeline.Pipeline) {
	st.mu.Lock()
	st.mu.store, st.mu.pipe = store, pipe
	st.mu.Unlock()
}

// health is /healthz: failing only when a restart is needed (the offset
// store failed for good). A full disk is not that — the worker recovers by
// itself — so it stays 200 and says so.
func (st *workerStatus) health() (ok bool, msg string) {
	st.mu.Lock()
	store, disk := st.mu.store, st.mu.disk
	st.mu.Unlock()
	if store != nil {
		if err := store.Err(); err != nil {
			return false, "offset store: " + reason(err) + " (restart needed)"
		}
		if _, err := store.Stalled(); err != nil {
			disk = err
		}
	}
	if disk != nil {
		return true, "ok (offset store: " + reason(disk) + "; waiting for space)"
	}
	return true, "ok"
}

// ready is /readyz: the pipeline's own readiness once it exists, and before
// that why it does not.
func (st *workerStatus) ready() (ok bool, msg string) {
	st.mu.Lock()
	pipe, disk := st.mu.pipe, st.mu.disk
	st.mu.Unlock()
	switch {
	case pipe != nil:
		return pipe.Ready()
	case disk != nil:
		return false, "starting: offset store: " + reason(disk) + " (waiting for space)"
	}
	return false, "starting"
}

// testStoreFS, when set by a test, is the offset store's file system
// (fault injection); nil, the default, is the OS.
var testStoreFS vfs.FS

// newLogger builds the process logger from the config's log section.
func newLogger(cfg config.LogConfig, env *cliEnv) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.SlogLevel()}
	var out io.Writer = env.stderr
	if isTerminal(out) {
		out = clearLineWriter{out}
	}
	if cfg.Format == config.FormatJSON {
		return slog.New(slog.NewJSONHandler(out, opts))
	}
	return slog.New(slog.NewTextHandler(out, opts))
}

// clearLineWriter erases the terminal line before each log line, so that a
// log line does not continue the live progress line (see progress), which
// is redrawn below it on the next tick.
type clearLineWriter struct{ w io.Writer }

func (c clearLineWriter) Write(p []byte) (int, error) {
	// One write, so that the erase and the line are not split by a redraw.
	if _, err := c.w.Write(append([]byte("\r\033[K"), p...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func lookupEnv(env *cliEnv) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v := env.getenv(k)
		return v, v != ""
	}
}

// newWorker builds (but does not start) the pipeline a config describes.
// On error everything already opened is closed again.
func newWorker(ctx context.Context, cfg *config.Config, env *cliEnv, log *slog.Logger) (_ *worker, err error) {
	// w is not the named result: every error return sets the result to nil
	// before this deferred cleanup runs, and the cleanup needs w.
	wo := workerOptions(cfg)
	w := &worker{opts: wo, log: log}
	defer func() {
		if err != nil {
			_ = w.close()
		}
	}()
	if err := cfg.CheckSecrets(lookupEnv(env)); err != nil {
		return nil, err
	}
	// Bind the endpoint first: pipeline.New starts the lanes (they dial at
	// once), and a pipeline that never runs cannot be stopped again, so
	// nothing that can fail may come after it.
	if wo.MetricsListen != "" {
		if w.lis, err = net.Listen("tcp", wo.MetricsListen); err != nil {
			return nil, fmt.Errorf("metrics.listen %s: %w", wo.MetricsListen, err)
		}
	}

	var handler http.Handler
	popts := observability.ProviderOptions{GoCollectors: true}
	if r, err := otlpReader(ctx, wo.OTLP, log); err != nil {
		return nil, err
	} else if r != nil {
		popts.Readers = append(popts.Readers, r)
	}
	w.mp, handler, err = observability.NewMeterProvider(popts)
	if err != nil {
		return nil, err
	}
	if err := observability.RecordBuildInfo(w.mp, observability.Build{Version: version}); err != nil {
		return nil, err
	}
	// Serve the endpoints before opening the store: on a full disk the
	// open waits (OpenContext) and the worker must still answer, saying why.
	if w.lis != nil {
		w.serveHTTP(handler)
	}
	so := wo.Store
	so.MeterProvider, so.Logger = w.mp, log // the store names itself (component=offsetstore)
	so.OnDiskFull, so.FS = w.status.setDisk, testStoreFS
	w.store, err = offsetstore.OpenContext(ctx, wo.StoreDir, so)
	if err != nil {
		return nil, fmt.Errorf("offset store %s: %w", wo.StoreDir, err)
	}

	asm, err := assemblerOptions(cfg)
	if err != nil {
		return nil, err
	}
	rebuild, reconcile, anchorConn, err := anchorReads(cfg.RawAnchor(), env)
	if err != nil {
		return nil, err
	}
	if anchorConn != nil {
		w.closers = append(w.closers, anchorConn)
	}
	w.src, err = openSource(ctx, cfg, w.store, reconcile, env, log, w.mp)
	if err != nil {
		return nil, err
	}
	w.owned = true
	opts := pipeline.Options{
		Source:        w.src,
		Assembler:     asm,
		Store:         w.store,
		MeterProvider: w.mp,
		DrainTimeout:  wo.DrainTimeout,
		MaxUnacked:    wo.MaxUnacked,
		Logger:        log,
	}
	opts.Rebuild = rebuild
	if opts.Anchor, opts.Secondaries, err = destinations(cfg, env, log); err != nil {
		return nil, err
	}
	opts.Unordered = unorderedSource(cfg)
	w.pipe, err = pipeline.New(opts)
	if err != nil {
		return nil, err
	}
	w.owned = false // Run closes it from here on
	w.status.set(w.store, w.pipe)
	return w, nil
}

// serveHTTP serves /metrics, /healthz and /readyz on w.lis, and
// /debug/pprof/ with metrics.pprof.
func (w *worker) serveHTTP(metrics http.Handler) {
	lis := w.lis
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics)
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, _ *http.Request) {
		ok, msg := w.status.health()
		if !ok {
			http.Error(rw, msg, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(rw, msg)
	})
	mux.HandleFunc("/readyz", func(rw http.ResponseWriter, _ *http.Request) {
		if ok, why := w.status.ready(); !ok {
			http.Error(rw, why, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(rw, "ready")
	})
	served := "/metrics, /healthz, /readyz"
	if w.opts.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		served += ", /debug/pprof/"
	}
	// WriteTimeout stays unset: /debug/pprof/profile and /trace stream for
	// as long as their ?seconds= asks.
	w.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := w.http.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.log.Error("metrics endpoint", "err", err)
		}
	}()
	w.log.Info("serving "+served, "addr", lis.Addr().String())
}

// run runs the pipeline to its end and then closes everything the worker owns.
func (w *worker) run(ctx context.Context) error {
	err := w.pipe.Run(ctx)
	return errors.Join(err, w.close())
}

// close releases, in order: HTTP endpoints (or the bound listener), an unowned source, the offset
// store (final synced commit), the meter provider. Safe on a partly built worker.
func (w *worker) close() error {
	var errs []error
	if w.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		errs = append(errs, w.http.Shutdown(ctx))
		cancel()
	} else if w.lis != nil {
		errs = append(errs, w.lis.Close()) // bound, never served
	}
	if w.owned && w.src != nil {
		errs = append(errs, w.src.Close())
	}
	if w.store != nil {
		errs = append(errs, w.store.Close())
	}
	for _, c := range w.closers {
		errs = append(errs, c.Close())
	}
	if w.mp != nil {
		// Bounded: the shutdown makes a last OTLP export, and a collector
		// that does not answer must not hold the exit — nor fail a run
		// whose records are all delivered: it is only logged.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		if err := w.mp.Shutdown(ctx); err != nil {
			w.log.Warn("metrics: the last export at shutdown did not complete", "err", err)
		}
		cancel()
	}
	return errors.Join(errs...)
}
