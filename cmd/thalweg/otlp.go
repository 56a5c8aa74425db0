package main

import (
	"context"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/thalweg/thalweg/internal/config"
)

// routeOTelErrors sends the OpenTelemetry SDK's errors (a failed OTLP
// export, after the exporter's own retries) to log, one line each, instead
// of the standard logger's unstructured lines. The handler is process-wide;
// `thalweg run` sets it for each pipeline it starts.
func routeOTelErrors(log *slog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("metrics export failed; retrying on the next interval", "err", err)
	}))
}

// otlpReader returns the periodic reader that pushes every metric to the
// collector metrics.otlp names, or nil when no endpoint is set. The meter
// provider owns the reader: its Shutdown makes a last export and closes the
// exporter. Neither exporter connects here — gRPC connects on the first
// export, HTTP per request — so an unreachable collector never stops the
// worker from starting; failed exports are retried by the exporter and
// reported through the OpenTelemetry error handler (see routeOTelErrors).
func otlpReader(ctx context.Context, o config.OTLPConfig) (sdkmetric.Reader, error) {
	if o.Endpoint == "" {
		return nil, nil
	}
	var (
		exp sdkmetric.Exporter
		err error
	)
	switch o.Protocol {
	case config.OTLPHTTP:
		opts := []otlpmetrichttp.Option{otlpmetrichttp.WithEndpoint(o.Endpoint)}
		if o.Insecure {
			opts = append(opts, otlpmetrichttp.WithInsecure())
		}
		if len(o.Headers) > 0 {
			opts = append(opts, otlpmetrichttp.WithHeaders(o.Headers))
		}
		exp, err = otlpmetrichttp.New(ctx, opts...)
	default:
		opts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithEndpoint(o.Endpoint)}
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
	return sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(o.Interval)), nil
}
