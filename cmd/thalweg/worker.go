package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
)

// worker is one configured pipeline with what it owns for its run: the
// source until the pipeline takes it, and the connections closed after it
// (the rebuild client). The endpoints, the meter provider and the offset
// store belong to the host, which outlives a reload.
type worker struct {
	opts    workerOpts // what the config sets for the worker itself (configmap.go)
	log     *slog.Logger
	host    *host
	store   *offsetstore.Store // the host's
	mp      *sdkmetric.MeterProvider
	pipe    *pipeline.Pipeline
	src     pipeline.Source // for inspection; the pipeline owns it once built
	owned   bool            // the worker (not yet a pipeline) must close src
	closers []io.Closer     // closed after the pipeline, e.g. the rebuild client
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

// newWorker builds (but does not start) the pipeline a config describes,
// on h, which it prepares for cfg first (host.prepare: what a reload did
// not change is kept). On error what the worker opened is closed again;
// h stays with its owner.
func newWorker(ctx context.Context, cfg *config.Config, env *cliEnv, log *slog.Logger, h *host) (_ *worker, err error) {
	// w is not the named result: every error return sets the result to nil
	// before this deferred cleanup runs, and the cleanup needs w.
	wo := workerOptions(cfg)
	w := &worker{opts: wo, log: log, host: h}
	defer func() {
		if err != nil {
			_ = w.close()
		}
	}()
	if err := cfg.CheckSecrets(lookupEnv(env)); err != nil {
		return nil, err
	}
	// The endpoint is bound and served, and the store open, before
	// pipeline.New: it starts the lanes (they dial at once), and a pipeline
	// that never runs cannot be stopped again, so nothing that can fail may
	// come after it.
	if err := h.prepare(ctx, wo, cfg.Log, log); err != nil {
		return nil, err
	}
	w.store, w.mp = h.store, h.mp

	asm, err := assemblerOptions(cfg)
	if err != nil {
		return nil, err
	}
	anchor, secondaries, tables, err := destinations(cfg, env, log, w.mp)
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		w.closers = append(w.closers, t)
	}
	rebuild, reconcile, anchorConn, err := anchorReads(cfg, cfg.RawAnchor(), tables[cfg.RawAnchor().Name], env, log)
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
		Source:         w.src,
		Assembler:      asm,
		Store:          w.store,
		MeterProvider:  w.mp,
		DrainTimeout:   wo.DrainTimeout,
		MaxUnacked:     wo.MaxUnacked,
		LingerWhenIdle: wo.LingerWhenIdle,
		Logger:         log,
	}
	opts.Rebuild = rebuild
	opts.Anchor, opts.Secondaries = anchor, secondaries
	opts.Unordered = unorderedSource(cfg)
	w.pipe, err = pipeline.New(opts)
	if err != nil {
		return nil, err
	}
	w.owned = false // Run closes it from here on
	h.status.set(w.store, w.pipe)
	return w, nil
}

// run runs the pipeline to its end and then closes what the worker owns.
func (w *worker) run(ctx context.Context) error {
	err := w.pipe.Run(ctx)
	return errors.Join(err, w.close())
}

// close releases what the worker owns: an unowned source, then the
// connections closed after the pipeline. Safe on a partly built worker.
func (w *worker) close() error {
	var errs []error
	if w.owned && w.src != nil {
		errs = append(errs, w.src.Close())
	}
	for _, c := range w.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
