package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"reflect"
	"sync/atomic"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/observability"
	"github.com/thalweg/thalweg/offsetstore"
)

// host is what one `thalweg run` keeps across SIGHUP reloads for as long as
// the part of the config that shaped it is unchanged; the pipeline — source,
// lanes, sinks, the rebuild connection — is built anew by every reload.
//
//   - The metrics listener and its HTTP server (/metrics, /healthz,
//     /readyz, /debug/pprof/), kept while metrics.listen is unchanged: an
//     ephemeral port (127.0.0.1:0) stays where whoever found it looks. What
//     it serves is swapped per pipeline (metrics.pprof may change).
//   - The meter provider, with the Prometheus registry /metrics reads and
//     the OTLP reader, kept while metrics.otlp (and, with an OTLP endpoint,
//     log, whose logger reports its export failures) is unchanged: its
//     counters go on from where they were, so the scrape series is
//     continuous over a reload (the pipeline's instruments are the same
//     instruments on it, and a closed pipeline's callbacks are
//     unregistered). A provider's readers are fixed when it is made, so a
//     changed metrics.otlp makes a new provider: the series restart then.
//   - The offset store, kept while store.dir, its options, the meter
//     provider (its instruments live on it) and log (its logger) are
//     unchanged: a reload does not reopen Pebble. The drained pipeline left
//     every commit synced (its shutdown order); the next reads its
//     positions from the same store.
//
// Only runDaemon's goroutine calls its methods; status and the served
// handler are read by the HTTP server's goroutines.
type host struct {
	status  workerStatus
	handler atomic.Pointer[http.Handler] // the current pipeline's mux

	listen string // metrics.listen the listener was bound for
	lis    net.Listener
	http   *http.Server

	mpKey   mpKey
	mp      *sdkmetric.MeterProvider
	metrics http.Handler // the Prometheus handler of mp

	storeKey storeKey
	store    *offsetstore.Store
}

// mpKey is what the meter provider was made from.
type mpKey struct {
	otlp config.OTLPConfig
	log  config.LogConfig // only with an OTLP endpoint
}

// storeKey is what the offset store was opened with.
type storeKey struct {
	dir  string
	opts offsetstore.Options // the config's part (workerOpts.Store)
	log  config.LogConfig
	mp   *sdkmetric.MeterProvider
}

// prepare makes the host serve and hold what cfg asks for before a
// pipeline is built on it: it keeps what cfg did not change and replaces
// the rest (see host). The previous pipeline, if any, has ended.
func (h *host) prepare(ctx context.Context, wo workerOpts, logCfg config.LogConfig, log *slog.Logger) error {
	h.status.set(h.store, nil) // "starting" until the new pipeline exists
	if err := h.bind(wo.MetricsListen, log); err != nil {
		return err
	}
	if err := h.meterProvider(ctx, wo.OTLP, logCfg, log); err != nil {
		return err
	}
	if h.lis != nil {
		h.serve(wo.Pprof, log)
	}
	return h.openStore(ctx, wo, logCfg, log)
}

// bind keeps the listener while listen is unchanged, else closes it (with
// its server) and binds listen ("" binds nothing).
func (h *host) bind(listen string, log *slog.Logger) error {
	if h.lis != nil && listen == h.listen {
		return nil
	}
	if err := h.closeHTTP(); err != nil {
		log.Warn("metrics endpoint: closing the old listener", "addr", h.listen, "err", err)
	}
	h.listen = listen
	if listen == "" {
		return nil
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("metrics.listen %s: %w", listen, err)
	}
	h.lis = lis
	return nil
}

func (h *host) meterProvider(ctx context.Context, o config.OTLPConfig, logCfg config.LogConfig, log *slog.Logger) error {
	key := mpKey{otlp: o}
	if o.Endpoint != "" {
		key.log = logCfg
	}
	if h.mp != nil && reflect.DeepEqual(key, h.mpKey) {
		return nil
	}
	// The store's instruments live on the provider: it goes first.
	if err := h.closeStore(); err != nil {
		return err
	}
	h.shutdownMP(log)
	popts := observability.ProviderOptions{GoCollectors: true}
	if r, err := otlpReader(ctx, o, log); err != nil {
		return err
	} else if r != nil {
		popts.Readers = append(popts.Readers, r)
	}
	mp, handler, err := observability.NewMeterProvider(popts)
	if err != nil {
		return err
	}
	if err := observability.RecordBuildInfo(mp, observability.Build{Version: version}); err != nil {
		_ = mp.Shutdown(context.Background())
		return err
	}
	h.mp, h.metrics, h.mpKey = mp, handler, key
	return nil
}

// serve points the listener's server at the endpoints of the current
// meter provider and status, with /debug/pprof/ when pprof is set,
// starting the server on the first call for a listener.
func (h *host) serve(pprof bool, log *slog.Logger) {
	mux := h.mux(pprof)
	h.handler.Store(&mux)
	served := "/metrics, /healthz, /readyz"
	if pprof {
		served += ", /debug/pprof/"
	}
	if h.http != nil {
		return
	}
	// WriteTimeout stays unset: /debug/pprof/profile and /trace stream for
	// as long as their ?seconds= asks.
	h.http = &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		(*h.handler.Load()).ServeHTTP(rw, r)
	}), ReadHeaderTimeout: 5 * time.Second}
	srv, lis := h.http, h.lis
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics endpoint", "err", err)
		}
	}()
	log.Info("serving "+served, "addr", lis.Addr().String())
}

func (h *host) mux(withPprof bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", h.metrics)
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, _ *http.Request) {
		ok, msg := h.status.health()
		if !ok {
			http.Error(rw, msg, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(rw, msg)
	})
	mux.HandleFunc("/readyz", func(rw http.ResponseWriter, _ *http.Request) {
		if ok, why := h.status.ready(); !ok {
			http.Error(rw, why, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(rw, "ready")
	})
	if withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// openStore keeps the store while its key is unchanged, else closes it and
// opens store.dir. The endpoints are served already: on a full disk the
// open waits (OpenContext), and /readyz says why.
func (h *host) openStore(ctx context.Context, wo workerOpts, logCfg config.LogConfig, log *slog.Logger) error {
	key := storeKey{dir: wo.StoreDir, opts: wo.Store, log: logCfg, mp: h.mp}
	if h.store != nil && reflect.DeepEqual(key, h.storeKey) {
		return nil
	}
	if err := h.closeStore(); err != nil {
		return err
	}
	so := wo.Store
	so.MeterProvider, so.Logger = h.mp, log // the store names itself (component=offsetstore)
	so.OnDiskFull, so.FS = h.status.setDisk, testStoreFS
	store, err := offsetstore.OpenContext(ctx, wo.StoreDir, so)
	if err != nil {
		return fmt.Errorf("offset store %s: %w", wo.StoreDir, err)
	}
	h.store, h.storeKey = store, key
	h.status.set(store, nil)
	return nil
}

func (h *host) closeStore() error {
	if h.store == nil {
		return nil
	}
	err := h.store.Close()
	h.store = nil
	h.status.set(nil, nil)
	return err
}

func (h *host) closeHTTP() error {
	var err error
	if h.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = h.http.Shutdown(ctx)
		cancel()
	} else if h.lis != nil {
		err = h.lis.Close() // bound, never served
	}
	h.http, h.lis = nil, nil
	return err
}

// shutdownMP shuts the meter provider down, bounded: the shutdown makes a
// last OTLP export, and a collector that does not answer must not hold the
// exit — nor fail a run whose records are all delivered: it is only logged.
func (h *host) shutdownMP(log *slog.Logger) {
	if h.mp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	if err := h.mp.Shutdown(ctx); err != nil {
		log.Warn("metrics: the last export at shutdown did not complete", "err", err)
	}
	cancel()
	h.mp, h.metrics = nil, nil
}

// close releases, in order: the HTTP endpoints (or the bound listener), the
// offset store (final synced commit), the meter provider.
func (h *host) close(log *slog.Logger) error {
	err := errors.Join(h.closeHTTP(), h.closeStore())
	h.shutdownMP(log)
	return err
}
