package iceberg

import (
	"context"
	"encoding/xml"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/s3test"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/observability"
)

// pbatch is n rows of partition 0 from first, each published at pub.
func pbatch(mem memory.Allocator, first uint64, n int, pub time.Time) *batch.Batch {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "topic", Type: arrow.BinaryTypes.String},
		{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "publish_time", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, s)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.StringBuilder).Append(itopic)
		b.Field(1).(*array.Int32Builder).Append(0)
		b.Field(2).(*array.Uint64Builder).Append(first + uint64(i))
		// The last row is the newest; one row has no publish time.
		if i == 0 {
			b.Field(3).AppendNull()
			continue
		}
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(pub.Add(time.Duration(i-n+1) * time.Second).UnixMicro()))
	}
	return &batch.Batch{Rec: b.NewRecordBatch(),
		Spans: []batch.OffsetSpan{{Partition: ipart(0), First: first, Last: first + uint64(n) - 1}}}
}

// localPath is the file path of a local warehouse location.
func localPath(loc string) string { return strings.TrimPrefix(loc, "file://") }

// dirBytes sums the sizes of the files under dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		n += info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTableMetrics: every instrument carries the table; each commit
// observes the freshness of its newest publish_time; the maintenance runs
// are counted by kind; and the metadata gauges hold the sizes of the
// current metadata.json and of its directory, as the file system has them.
func TestTableMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := maintenanceOptions(t, mem)
	o.Destination = "lake"
	o.Maintenance.Interval = time.Nanosecond // a run after every commit
	reader := sdkmetric.NewManualReader()
	o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tt, s := openDial(t, ctx, o)
	pub := time.Now().Add(-time.Hour)
	var off uint64
	runs := func() map[string]int64 {
		out := map[string]int64{}
		for _, p := range sums(t, reader, observability.IcebergMaintenanceRuns) {
			k, _ := p.Attributes.Value(observability.AttrKind)
			out[k.AsString()] += p.Value
		}
		return out
	}
	for off < 200 && runs()[observability.MaintenanceOrphans] == 0 {
		off++
		b := pbatch(mem, 10*(off-1)+1, 10, pub)
		err := s.Send(ctx, off, b)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WaitDurable(ctx, off); err != nil {
			t.Fatal(err)
		}
	}
	r := runs()
	if r[observability.MaintenanceExpire] < 1 || r[observability.MaintenanceCompact] < 1 || r[observability.MaintenanceOrphans] < 1 ||
		r[observability.MaintenanceManifests] < 1 {
		t.Errorf("maintenance runs by kind %v after %d commits; want expire, manifests, compact and orphans", r, off)
	}

	// The sink is idle: the run after its last commit records the table as
	// it stays.
	var file, dir, wantFile, wantDir int64
	testenv.WaitFor(t, 30*time.Second, "the metadata gauges to match the file system", func() bool {
		tbl, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(localPath(tbl.MetadataLocation()))
		if err != nil {
			t.Fatal(err)
		}
		wantFile, wantDir = st.Size(), dirBytes(t, filepath.Dir(localPath(tbl.MetadataLocation())))
		ms := metricValues(t, reader)
		file, dir = ms[observability.IcebergMetadataBytes], ms[observability.IcebergMetadataDirBytes]
		return file == wantFile && dir == wantDir
	})
	if dir <= file {
		t.Errorf("metadata gauges %d B, directory %d B; the file system has %d B and %d B", file, dir, wantFile, wantDir)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		for _, set := range attributeSets(m.Data) {
			if v, ok := set.Value(observability.AttrTable); !ok || v.AsString() != o.Table {
				t.Errorf("%s: attributes %v lack table=%s", m.Name, set.ToSlice(), o.Table)
			}
		}
		h, ok := m.Data.(metricdata.Histogram[float64])
		if m.Name != observability.IcebergFreshness {
			continue
		}
		if !ok || len(h.DataPoints) != 1 {
			t.Fatalf("freshness: %#v", m.Data)
		}
		p := h.DataPoints[0]
		lo, _ := p.Min.Value()
		hi, _ := p.Max.Value()
		// Every commit holds one batch, whose newest row was published
		// an hour before the test started.
		if p.Count != off || lo < 3600 || hi > 3600+time.Since(pub.Add(time.Hour)).Seconds() {
			t.Errorf("freshness: %d observations in [%.1f s, %.1f s]; want %d in [3600 s, an hour and the test's duration]", p.Count, lo, hi, off)
		}
	}
}

// sums are the data points of the int64 counter name.
func sums(t *testing.T, reader *sdkmetric.ManualReader, name string) []metricdata.DataPoint[int64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				return d.DataPoints
			}
		}
	}
	return nil
}

// attributeSets are the attribute sets of the data points of d.
func attributeSets(d metricdata.Aggregation) []attribute.Set {
	var out []attribute.Set
	switch d := d.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	}
	return out
}

// TestTableState: a table that does not exist is a State that says so;
// one with a maintenance lease names its holder and until, one whose lease
// does not parse gives its value; the figures are the table's own.
func TestTableState(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := testOptions(t)
	o.Allocator = mem
	tt := mustOpen(t, o)
	st, err := tt.State(ctx)
	if err != nil || st.Exists || st.Identifier != o.Table {
		t.Fatalf("State of no table = %+v, %v; want it not to exist", st, err)
	}
	_, s := openDial(t, ctx, o)
	var off uint64
	commitUntil(t, ctx, s, mem, &off, 3, "three commits", func() bool { return off == 3 })
	until := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	setProp := func(v string) {
		tbl, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tx := tbl.NewTransaction()
		if err := tx.SetProperties(map[string]string{PropMaintenanceLease: v}); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	setProp(`{"holder":"worker-a","until":"` + until.Format(time.RFC3339Nano) + `"}`)
	st, err = tt.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Lease == nil || st.Lease.Holder != "worker-a" || !st.Lease.Until.Equal(until) || st.LeaseValue != "" {
		t.Errorf("lease %+v (%q), want worker-a until %v", st.Lease, st.LeaseValue, until)
	}
	tbl, _, err := tt.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cur := tbl.CurrentSnapshot()
	if !st.Exists || st.SnapshotID != cur.SnapshotID || st.Snapshots != 3 || st.Records != 30 || st.DataFiles != 3 ||
		st.DataBytes <= 0 || st.Manifests < 1 || st.Positions[ipart(0)] != 30 || st.MetadataLocation != tbl.MetadataLocation() ||
		!st.LastCommit.Equal(time.UnixMilli(cur.TimestampMs)) {
		t.Errorf("state %+v; want the table's three commits of 10 rows", st)
	}
	if st.BoundedMetadata["write.metadata.previous-versions-max"] != "10" || len(st.BoundedMetadata) != 5 {
		t.Errorf("bounded metadata properties %v, want the five with their defaults", st.BoundedMetadata)
	}
	setProp("not json")
	if st, err = tt.State(ctx); err != nil || st.Lease != nil || st.LeaseValue != "not json" {
		t.Errorf("unreadable lease: %+v, %q, %v", st.Lease, st.LeaseValue, err)
	}
}

// s3Sizes lists the objects under prefix of bucket with a plain
// ListObjectsV2 request to the S3 server at endpoint: their sizes by key.
func s3Sizes(t *testing.T, endpoint, bucket, prefix string) map[string]int64 {
	t.Helper()
	resp, err := http.Get(endpoint + "/" + bucket + "?list-type=2&prefix=" + url.QueryEscape(prefix))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Contents []struct {
			Key  string
			Size int64
		}
		IsTruncated bool
	}
	if err := xml.NewDecoder(resp.Body).Decode(&out); err != nil || out.IsTruncated {
		t.Fatalf("list %s/%s: %v (truncated %v)", bucket, prefix, err, out.IsTruncated)
	}
	sizes := map[string]int64{}
	for _, c := range out.Contents {
		sizes[c.Key] = c.Size
	}
	return sizes
}

// TestTableStateS3: on an S3 warehouse (moto), State's metadata.json size
// and metadata directory bytes are what the bucket lists.
func TestTableStateS3(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := s3test.Start(t)
	srv.CreateBucket(t, "lake")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := testOptions(t)
	o.Allocator = mem
	o.Warehouse = "s3://lake/warehouse"
	o.S3 = S3Options{Endpoint: srv.Endpoint, Region: "us-east-1", AccessKeyID: "thalweg", SecretAccessKey: "secret"}
	tt, s := openDial(t, ctx, o)
	var off uint64
	commitUntil(t, ctx, s, mem, &off, 3, "three commits", func() bool { return off == 3 })
	st, err := tt.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimPrefix(st.MetadataLocation, "s3://lake/")
	dir := key[:strings.LastIndex(key, "/")+1]
	sizes := s3Sizes(t, srv.Endpoint, "lake", dir)
	var dirBytes int64
	for _, n := range sizes {
		dirBytes += n
	}
	if st.MetadataBytes != sizes[key] || st.MetadataDirBytes != dirBytes || st.MetadataBytes == 0 {
		t.Errorf("State: metadata.json %d B, directory %d B; the bucket lists %d B and %d B under %s (%d objects)",
			st.MetadataBytes, st.MetadataDirBytes, sizes[key], dirBytes, dir, len(sizes))
	}
	if st.Records != 30 || st.Snapshots != 3 || st.Positions[ipart(0)] != 30 {
		t.Errorf("State %+v; want three commits of 10 rows", st)
	}
}
