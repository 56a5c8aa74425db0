package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

// routeOTelErrors sends the OpenTelemetry SDK's own errors to log instead
// of the standard logger's unstructured lines (export failures are
// reported by loggedExporter). The handler is process-wide;
// `thalweg run` sets it for each pipeline it starts.
func routeOTelErrors(log *slog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("OpenTelemetry SDK error", "err", err)
	}))
}

// otlpReader returns the periodic reader that pushes every metric to the
// collector metrics.otlp names, or nil when no endpoint is set. The meter
// provider owns the reader: its Shutdown makes a last export and closes the
// exporter. Neither exporter connects here — gRPC connects on the first
// export, HTTP per request — so an unreachable collector never stops the
// worker from starting; failed exports are retried by the exporter within
// the interval and reported once per outage (see loggedExporter).
func otlpReader(ctx context.Context, o config.OTLPConfig, log *slog.Logger) (sdkmetric.Reader, error) {
	if o.Endpoint == "" {
		return nil, nil
	}
	var (
		exp sdkmetric.Exporter
		err error
	)
	// An export gives up within its interval (the next one sends the
	// cumulative values again) instead of the exporters' default minute.
	within := min(o.Interval, 30*time.Second)
	switch o.Protocol {
	case config.OTLPHTTP:
		opts := []otlpmetrichttp.Option{otlpmetrichttp.WithEndpoint(o.Endpoint), otlpmetrichttp.WithTimeout(within),
			otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: true, InitialInterval: within / 10, MaxInterval: within / 2, MaxElapsedTime: within})}
		if o.Insecure {
			opts = append(opts, otlpmetrichttp.WithInsecure())
		}
		if len(o.Headers) > 0 {
			opts = append(opts, otlpmetrichttp.WithHeaders(o.Headers))
		}
		exp, err = otlpmetrichttp.New(ctx, opts...)
	default:
		opts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithEndpoint(o.Endpoint), otlpmetricgrpc.WithTimeout(within),
			otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: true, InitialInterval: within / 10, MaxInterval: within / 2, MaxElapsedTime: within})}
		if o.Insecure {
			opts = append(opts, otlpmetricgrpc.WithInsecure())
		}
		if len(o.Headers) > 0 {
			opts = append(opts, otlpmetricgrpc.WithHeaders(o.Headers))
		}
		exp, err = otlpmetricgrpc.New(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("metrics.otlp (%s %s): %w", o.Protocol, o.Endpoint, err)
	}
	le := &loggedExporter{Exporter: exp, log: log.With("otlp_endpoint", o.Endpoint, "otlp_protocol", string(o.Protocol))}
	return sdkmetric.NewPeriodicReader(le, sdkmetric.WithInterval(o.Interval)), nil
}

// loggedExporter reports export failures itself, once per outage: the
// first failure after a success is logged with its cause, the recovery with
// the number of exports lost, and nothing in between — a collector that is
// down for an hour costs two log lines, not one per interval. It returns
// nil to the reader, so neither the reader nor the shutdown of the meter
// provider treats a missing collector as the worker's failure: the metrics
// of a failed export are not resent (the next export carries the
// cumulative values again).
type loggedExporter struct {
	sdkmetric.Exporter
	log      *slog.Logger
	failures atomic.Uint64 // consecutive failed exports
}

// testOTLPExported, when set (by tests), is called with the result of
// every export.
var testOTLPExported atomic.Pointer[func(error)]

func (e *loggedExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	err := e.Exporter.Export(ctx, rm)
	if f := testOTLPExported.Load(); f != nil {
		(*f)(err)
	}
	if err != nil {
		if e.failures.Add(1) == 1 {
			e.log.Warn("OTLP metric export failing; retried every interval, not logged again until it recovers", "err", err)
		}
		return nil
	}
	if n := e.failures.Swap(0); n > 0 {
		e.log.Info("OTLP metric export recovered", "failed_exports", n)
	}
	return nil
}
