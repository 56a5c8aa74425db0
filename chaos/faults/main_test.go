package faults_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/goleak"

	"github.com/thalweg/thalweg/observability"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// meters is a meter provider whose instruments tests read back.
type meters struct {
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newMeters(t *testing.T) *meters {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return &meters{reader: r, mp: mp}
}

// counter sums the int64 counter name over the data points whose attributes
// include every key/value of want.
func (m *meters) counter(t *testing.T, name string, want ...attribute.KeyValue) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			if md.Name != name {
				continue
			}
			data, ok := md.Data.(metricdata.Sum[int64])
			if !ok {
				t.Fatalf("%s is %T, want an int64 sum", name, md.Data)
			}
		dp:
			for _, p := range data.DataPoints {
				for _, kv := range want {
					if v, ok := p.Attributes.Value(kv.Key); !ok || v != kv.Value {
						continue dp
					}
				}
				sum += p.Value
			}
		}
	}
	return sum
}

func poisoned(t *testing.T, m *meters, dest, cause string) int64 {
	return m.counter(t, observability.LanePoisoned,
		attribute.String(observability.AttrDestination, dest), attribute.String(observability.AttrCause, cause))
}
