package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/config"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/observability"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
	"github.com/thalweg/thalweg/zerobus"
)

// worker is one configured pipeline with everything it owns: the offset
// store, the meter provider and the HTTP endpoints.
type worker struct {
	cfg     *config.Config
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
	if cfg.Format == config.FormatJSON {
		return slog.New(slog.NewJSONHandler(env.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(env.stderr, opts))
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
	w := &worker{cfg: cfg, log: log}
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
	if cfg.Metrics.Listen != "" {
		if w.lis, err = net.Listen("tcp", cfg.Metrics.Listen); err != nil {
			return nil, fmt.Errorf("metrics.listen %s: %w", cfg.Metrics.Listen, err)
		}
	}

	var handler http.Handler
	w.mp, handler, err = observability.NewMeterProvider(observability.ProviderOptions{GoCollectors: true})
	if err != nil {
		return nil, err
	}
	// Serve the endpoints before opening the store: on a full disk the
	// open waits (OpenContext) and the worker must still answer, saying why.
	if w.lis != nil {
		w.serveHTTP(handler)
	}
	w.store, err = offsetstore.OpenContext(ctx, cfg.Store.Dir, offsetstore.Options{
		MeterProvider: w.mp, Logger: log, TeardownTimeout: cfg.Store.TeardownTimeout, // the store adds component=offsetstore
		OnDiskFull: w.status.setDisk, FS: testStoreFS,
	})
	if err != nil {
		return nil, fmt.Errorf("offset store %s: %w", cfg.Store.Dir, err)
	}

	asm, err := assemblerOptions(cfg)
	if err != nil {
		return nil, err
	}
	w.src, err = openSource(ctx, cfg, w.store, env, log)
	if err != nil {
		return nil, err
	}
	w.owned = true
	opts := pipeline.Options{
		Source:        w.src,
		Assembler:     asm,
		Store:         w.store,
		MeterProvider: w.mp,
		DrainTimeout:  cfg.Shutdown.DrainTimeout,
		MaxUnacked:    cfg.Source.MaxUnacked,
		Logger:        log,
	}
	var rebuildConn io.Closer
	opts.Rebuild, rebuildConn, err = anchorRebuild(cfg.RawAnchor(), env)
	if err != nil {
		return nil, err
	}
	if rebuildConn != nil {
		w.closers = append(w.closers, rebuildConn)
	}
	for i := range cfg.Destinations {
		d := &cfg.Destinations[i]
		dest, err := destination(d, env, log)
		if err != nil {
			return nil, err
		}
		if d.Role == config.RoleRawAnchor {
			opts.Anchor = dest
		} else {
			opts.Secondaries = append(opts.Secondaries, dest)
		}
	}
	w.pipe, err = pipeline.New(opts)
	if err != nil {
		return nil, err
	}
	w.owned = false // Run closes it from here on
	w.status.set(w.store, w.pipe)
	return w, nil
}

// assemblerOptions maps the batching and schema sections.
func assemblerOptions(cfg *config.Config) (batch.AssemblerOptions, error) {
	o := batch.AssemblerOptions{
		MaxRows:  cfg.Batching.MaxRows,
		MaxBytes: int(cfg.Batching.MaxBytes),
		Linger:   cfg.Batching.Linger,
	}
	if cfg.Schema.Mode == config.SchemaJSON {
		sc, err := cfg.Schema.ArrowSchema()
		if err != nil {
			return o, err
		}
		o.Mode, o.Schema, o.IncludeMeta = batch.ModeJSON, sc, true
	}
	return o, nil
}

// openSource opens the configured source.
func openSource(ctx context.Context, cfg *config.Config, store *offsetstore.Store, env *cliEnv, log *slog.Logger) (pipeline.Source, error) {
	switch cfg.Source.Kind {
	case config.SourceGenerator:
		g := cfg.Source.Generator
		mode := gen.ModeRaw
		if g.Mode == config.GenJSON {
			mode = gen.ModeJSON
		}
		return gen.NewSource(gen.Options{
			Seed: uint64(g.Seed), Partitions: g.Partitions, Records: uint64(g.Records), Rate: g.Rate,
			PayloadSize: int(g.PayloadSize), Mode: mode, MalformedFraction: g.MalformedFraction,
		})
	case config.SourcePulsar:
		return openPulsar(ctx, cfg, store, env, log)
	}
	return nil, fmt.Errorf("source.kind %q is not supported", cfg.Source.Kind)
}

// destination builds the lane settings and transport dialer of one destination.
func destination(d *config.DestinationConfig, env *cliEnv, log *slog.Logger) (pipeline.Destination, error) {
	tok, err := d.Token(lookupEnv(env))
	if err != nil {
		return pipeline.Destination{}, err
	}
	lane := lanes.Options{Capacity: d.Lane.Capacity, MaxRetries: d.Lane.MaxRetries}
	out := pipeline.Destination{Name: d.Name, Lane: lane}
	dlog := log.With("destination", d.Name)
	switch d.Kind {
	case config.KindFlight:
		comp, err := flight.ParseCompression(string(d.Compression))
		if err != nil {
			return out, fmt.Errorf("destinations.%s.compression: %w", d.Name, err)
		}
		fo := flight.Options{
			Endpoint: d.Endpoint, Path: d.Path, Token: tok.Reveal(), Compression: comp,
			MaxMessageSize: int(d.MaxMessageSize), AckTimeout: d.Lane.AckTimeout, Logger: dlog,
		}
		if d.TLS.Enabled {
			fo.TLS = &flight.TLSOptions{CAFile: d.TLS.CAFile, CertFile: d.TLS.CertFile, KeyFile: d.TLS.KeyFile,
				ServerName: d.TLS.ServerName, InsecureSkipVerify: d.TLS.InsecureSkipVerify}
		}
		out.Dial = func(ctx context.Context) (lanes.Transport, error) { return flight.Dial(ctx, fo) }
	case config.KindZerobus:
		mode, err := zerobus.ParseMode(string(d.Mode))
		if err != nil {
			return out, fmt.Errorf("destinations.%s.mode: %w", d.Name, err)
		}
		zo := zerobus.Options{
			Endpoint: d.Endpoint, Table: d.Table, Token: tok.Reveal(), Mode: mode,
			AckTimeout: d.Lane.AckTimeout, Logger: dlog,
		}
		if d.TLS.Enabled {
			zo.TLS = zerobus.TLSOptions{CAFile: d.TLS.CAFile, ServerName: d.TLS.ServerName}
		} else {
			zo.TLS = zerobus.TLSOptions{Insecure: true}
		}
		out.Dial = func(ctx context.Context) (lanes.Transport, error) { return zerobus.Dial(ctx, zo) }
	default:
		return out, fmt.Errorf("destinations.%s.kind %q is not supported", d.Name, d.Kind)
	}
	return out, nil
}

// serveHTTP serves /metrics, /healthz and /readyz on w.lis.
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
	w.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := w.http.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.log.Error("metrics endpoint", "err", err)
		}
	}()
	w.log.Info("serving /metrics, /healthz, /readyz", "addr", lis.Addr().String())
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
		errs = append(errs, w.mp.Shutdown(context.Background()))
	}
	return errors.Join(errs...)
}
