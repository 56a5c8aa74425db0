package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/observability"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
)

// pausingSource hands over left records, then blocks until ctx ends: a
// source that went idle mid-run.
type pausingSource struct {
	*gen.Source
	left int
}

func (s *pausingSource) Next(ctx context.Context, rec *batch.Record) error {
	if s.left == 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	s.left--
	return s.Source.Next(ctx, rec)
}

// sumValue is the value of the int64 sum name without attributes (-1 when
// it has no point).
func sumValue(t *testing.T, r *sdkmetric.ManualReader, name string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name && len(d.DataPoints) == 1 {
				return d.DataPoints[0].Value
			}
		}
	}
	return -1
}

// TestSourceRecordsMetric: thalweg.source.records is added per batch, not
// per record, and loses nothing: records taken before the source goes idle
// reach the instrument when the linger timer emits their batch (a count
// that only moved every 1,024 records would stay at 2,048 of 2,500), and
// after Run it equals Stats().SourceRecords.
func TestSourceRecordsMetric(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()

	const records = 2500
	g, err := gen.NewSource(gen.Options{Seed: 3, Partitions: 2, Records: 10 * records, Mode: gen.ModeRaw})
	require.NoError(t, err)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	p, err := pipeline.New(pipeline.Options{
		Source: &pausingSource{Source: g, left: records},
		// No batch fills: only the linger timer emits.
		Assembler:     batch.AssemblerOptions{Allocator: mem, MaxRows: 100 * records, Linger: 20 * time.Millisecond},
		Store:         store,
		Anchor:        flightDest("raw", addr, mem),
		MeterProvider: mp,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(flighttest.Ctx(t, 60*time.Second))
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }()

	testenv.WaitFor(t, 10*time.Second, "thalweg.source.records to reach the records taken", func() bool {
		return sumValue(t, reader, observability.SourceRecords) == records
	})
	cancel()
	require.NoError(t, <-ran)
	require.EqualValues(t, records, p.Stats().SourceRecords)
	require.EqualValues(t, records, sumValue(t, reader, observability.SourceRecords))
}
