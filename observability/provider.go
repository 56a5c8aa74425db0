package observability

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
)

// ScopeName is the instrumentation scope of every thalweg instrument.
const ScopeName = "github.com/thalweg/thalweg"

// ProviderOptions configures [NewMeterProvider].
type ProviderOptions struct {
	// ServiceName becomes the service.name resource attribute. Default "thalweg".
	ServiceName string
	// ServiceInstance, when set, becomes service.instance.id (e.g. the pod name).
	ServiceInstance string
	// Registry receives the exporter's collector. Default: a new registry
	// owned by the provider, so two providers in one process (tests, an
	// embedding application) never collide on the global registry.
	Registry *prometheus.Registry
	// GoCollectors also registers the Go runtime and process collectors on
	// the registry. Default false.
	GoCollectors bool
	// Readers are extra readers (e.g. an OTLP periodic reader built by the
	// embedding application; `thalweg run` adds one for metrics.otlp).
	Readers []sdkmetric.Reader
}

func (o *ProviderOptions) withDefaults() {
	if o.ServiceName == "" {
		o.ServiceName = "thalweg"
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
}

// NewMeterProvider builds an SDK meter provider that exports through
// Prometheus, and the http.Handler that serves /metrics from its registry.
//
// The caller owns the provider and must Shutdown it; the handler stays valid
// until then (after Shutdown it serves an empty exposition).
func NewMeterProvider(opts ProviderOptions) (*sdkmetric.MeterProvider, http.Handler, error) {
	opts.withDefaults()
	exp, err := otelprom.New(otelprom.WithRegisterer(opts.Registry))
	if err != nil {
		return nil, nil, fmt.Errorf("observability: prometheus exporter: %w", err)
	}
	if opts.GoCollectors {
		err := errors.Join(
			opts.Registry.Register(collectors.NewGoCollector()),
			opts.Registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})),
		)
		if err != nil {
			return nil, nil, fmt.Errorf("observability: ProviderOptions.GoCollectors: %w", err)
		}
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", opts.ServiceName)}
	if opts.ServiceInstance != "" {
		attrs = append(attrs, attribute.String("service.instance.id", opts.ServiceInstance))
	}
	popts := []sdkmetric.Option{
		sdkmetric.WithResource(resource.NewSchemaless(attrs...)),
		sdkmetric.WithReader(exp),
	}
	for _, r := range opts.Readers {
		popts = append(popts, sdkmetric.WithReader(r))
	}
	mp := sdkmetric.NewMeterProvider(popts...)
	h := promhttp.HandlerFor(opts.Registry, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
	})
	return mp, h, nil
}

// meter returns thalweg's meter from mp.
func meter(mp metric.MeterProvider) metric.Meter {
	return mp.Meter(ScopeName)
}
