package iceberg

import (
	"context"
	"slices"
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
	metadataBytes       metric.Int64Gauge
	metadataDirBytes    metric.Int64Gauge
	freshness           metric.Float64Histogram
	runs                map[string]counter // by observability.MaintenanceKinds
	attrs               metric.MeasurementOption
}

// counter is a counter with its attributes bound.
type counter struct {
	c     metric.Int64Counter
	attrs metric.MeasurementOption
}

func (c counter) Add(n int64) { c.c.Add(context.Background(), n, c.attrs) }

var commitBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// freshnessBuckets reach from a commit interval below a second to an
// hour's backlog.
var freshnessBuckets = []float64{0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 30, 60, 300, 900, 3600}

func newMetrics(mp metric.MeterProvider, destination, tableName string) *metrics {
	m := mp.Meter("github.com/thalweg/thalweg/iceberg")
	base := []attribute.KeyValue{attribute.String(observability.AttrDestination, destination),
		attribute.String(observability.AttrTable, tableName)}
	attrs := metric.WithAttributeSet(attribute.NewSet(base...))
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
	fresh, _ := m.Float64Histogram(observability.IcebergFreshness, metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(freshnessBuckets...))
	runs := map[string]counter{}
	runCounter, _ := m.Int64Counter(observability.IcebergMaintenanceRuns, metric.WithUnit("{run}"))
	for _, k := range observability.MaintenanceKinds() {
		kv := append(slices.Clone(base), attribute.String(observability.AttrKind, k))
		runs[k] = counter{runCounter, metric.WithAttributeSet(attribute.NewSet(kv...))}
	}
	return &metrics{latency: lat, freshness: fresh, runs: runs,
		metadataBytes:    gauge(observability.IcebergMetadataBytes, "By"),
		metadataDirBytes: gauge(observability.IcebergMetadataDirBytes, "By"),
		snapshots:        gauge(observability.IcebergSnapshots, "{snapshot}"),
		tableFiles:       gauge(observability.IcebergTableFiles, "{file}"),
		manifests:        gauge(observability.IcebergManifests, "{manifest}"), commitFiles: files, commitBytes: bytes, attrs: attrs,
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

// commit records one successful commit; newest is the newest
// publish_time among the rows it added (zero: none had one).
func (m *metrics) commit(d time.Duration, files []*dataFile, newest time.Time) {
	var n int64
	for _, f := range files {
		n += f.size
	}
	ctx := context.Background()
	m.latency.Record(ctx, d.Seconds(), m.attrs)
	m.commitFiles.Record(ctx, int64(len(files)), m.attrs)
	m.commitBytes.Record(ctx, n, m.attrs)
	if !newest.IsZero() && len(files) > 0 {
		m.freshness.Record(ctx, max(0, time.Since(newest).Seconds()), m.attrs)
	}
}

// ran records a maintenance step of kind (observability.MaintenanceKinds)
// that ended with err; only one that completed (err nil) counts.
func (m *metrics) ran(kind string, err error) {
	if err == nil {
		m.runs[kind].Add(1)
	}
}

// metadata records the size of the current metadata.json and of every
// file in its directory.
func (m *metrics) metadata(file, dir int64) {
	ctx := context.Background()
	m.metadataBytes.Record(ctx, file, m.attrs)
	m.metadataDirBytes.Record(ctx, dir, m.attrs)
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
