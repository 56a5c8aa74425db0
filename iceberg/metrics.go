package iceberg

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/thalweg/thalweg/observability"
)

// metrics is the instrument set of one Table (one destination); safe for
// concurrent use.
type metrics struct {
	latency     metric.Float64Histogram
	commitFiles metric.Int64Histogram
	commitBytes metric.Int64Histogram
	conflicts   counter
	failures    counter
	files       counter
	droppedRows counter

	snapshotsExpired    counter
	orphansRemoved      counter
	maintenanceFailures counter
	compactedFiles      counter
	compactedBytes      counter
	snapshots           metric.Int64Gauge
	tableFiles          metric.Int64Gauge
	manifests           metric.Int64Gauge
	attrs               metric.MeasurementOption
}

// counter is a counter with its attributes bound.
type counter struct {
	c     metric.Int64Counter
	attrs metric.MeasurementOption
}

func (c counter) Add(n int64) { c.c.Add(context.Background(), n, c.attrs) }

var commitBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

func newMetrics(mp metric.MeterProvider, destination string) *metrics {
	m := mp.Meter("github.com/thalweg/thalweg/iceberg")
	attrs := metric.WithAttributeSet(attribute.NewSet(attribute.String(observability.AttrDestination, destination)))
	// Instrument creation fails only for invalid names or units, which are
	// constants here; the SDK then returns a working no-op instrument.
	lat, _ := m.Float64Histogram(observability.IcebergCommitLatency, metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(commitBuckets...))
	files, _ := m.Int64Histogram(observability.IcebergCommitFiles, metric.WithUnit("{file}"))
	bytes, _ := m.Int64Histogram(observability.IcebergCommitBytes, metric.WithUnit("By"))
	cnt := func(name, unit string) counter {
		c, _ := m.Int64Counter(name, metric.WithUnit(unit))
		return counter{c, attrs}
	}
	gauge := func(name, unit string) metric.Int64Gauge {
		g, _ := m.Int64Gauge(name, metric.WithUnit(unit))
		return g
	}
	return &metrics{latency: lat,
		snapshots:  gauge(observability.IcebergSnapshots, "{snapshot}"),
		tableFiles: gauge(observability.IcebergTableFiles, "{file}"),
		manifests:  gauge(observability.IcebergManifests, "{manifest}"), commitFiles: files, commitBytes: bytes, attrs: attrs,
		conflicts:   cnt(observability.IcebergCommitConflicts, "{conflict}"),
		failures:    cnt(observability.IcebergCommitFailures, "{attempt}"),
		files:       cnt(observability.IcebergDataFiles, "{file}"),
		droppedRows: cnt(observability.IcebergDroppedRows, "{row}"),

		snapshotsExpired:    cnt(observability.IcebergSnapshotsExpired, "{snapshot}"),
		orphansRemoved:      cnt(observability.IcebergOrphansRemoved, "{file}"),
		maintenanceFailures: cnt(observability.IcebergMaintenanceFailures, "{run}"),
		compactedFiles:      cnt(observability.IcebergCompactedFiles, "{file}"),
		compactedBytes:      cnt(observability.IcebergCompactedBytes, "By"),
	}
}

// commit records one successful commit.
func (m *metrics) commit(d time.Duration, files []*dataFile) {
	var n int64
	for _, f := range files {
		n += f.size
	}
	ctx := context.Background()
	m.latency.Record(ctx, d.Seconds(), m.attrs)
	m.commitFiles.Record(ctx, int64(len(files)), m.attrs)
	m.commitBytes.Record(ctx, n, m.attrs)
}

func (m *metrics) dropped(n int64) {
	if n > 0 {
		m.droppedRows.Add(n)
	}
}

// compacted records a compaction that replaced files data files of bytes.
func (m *metrics) compacted(files int, bytes int64) {
	m.compactedFiles.Add(int64(files))
	m.compactedBytes.Add(bytes)
}

// tableState records the table's snapshots, and the data files and
// manifests of its current snapshot.
func (m *metrics) tableState(snapshots, files, manifests int64) {
	ctx := context.Background()
	m.snapshots.Record(ctx, snapshots, m.attrs)
	m.tableFiles.Record(ctx, files, m.attrs)
	m.manifests.Record(ctx, manifests, m.attrs)
}
