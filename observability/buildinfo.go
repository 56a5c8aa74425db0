package observability

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Build describes the running binary for thalweg.build_info.
type Build struct {
	Version   string // release version; "" means "dev"
	GoVersion string // toolchain; "" means runtime.Version()
	Revision  string // VCS revision; "" means the vcs.revision the binary was built with, or "unknown"
}

// RecordBuildInfo registers the thalweg.build_info gauge on mp: the value
// is always 1 and b (with its defaults filled) is in the attributes. The
// gauge lives as long as mp; it needs no other cleanup.
func RecordBuildInfo(mp metric.MeterProvider, b Build) error {
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.GoVersion == "" {
		b.GoVersion = runtime.Version()
	}
	if b.Revision == "" {
		b.Revision = vcsRevision()
	}
	attrs := metric.WithAttributeSet(attribute.NewSet(
		attribute.String(AttrVersion, b.Version),
		attribute.String(AttrGoVersion, b.GoVersion),
		attribute.String(AttrRevision, b.Revision),
	))
	_, err := meter(mp).Int64ObservableGauge(BuildInfo, metric.WithDescription(lookup(BuildInfo).Help),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(1, attrs)
			return nil
		}))
	if err != nil {
		return fmt.Errorf("observability: %s: %w", BuildInfo, err)
	}
	return nil
}

// vcsRevision is the vcs.revision the go command stamped into the binary,
// or "unknown" (go run, tests, a build outside a repository).
func vcsRevision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	return "unknown"
}
