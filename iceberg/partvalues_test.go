package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/internal/testkit/icebergrest"
	"github.com/thalweg/thalweg/internal/testkit/s3test"
)

// regions are the values of the region column in regionBatch: what a URL
// path spells otherwise (a separator, a percent sign, a space, '=', '+',
// non-ASCII, a dot, an escape of the first) and the word null beside
// a null (nil).
var regions = []*string{nil, new("a/b"), new("50%"), new("x y"), new("k=v"), new("a+b"), new("zürich"),
	new("."), new("a%2Fb"), new("null")}

// regionEpoch is the first event time of regionBatch.
var regionEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// regionBatch builds n rows (topic, partition 0, seq, region, blob, at)
// from seq first on: region is values[seq % len(values)], blob its bytes
// and at regionEpoch plus seq % 3 hours, both null where region is.
func regionBatch(mem memory.Allocator, first uint64, n int, values []*string) *batch.Batch {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "topic", Type: arrow.BinaryTypes.String},
		{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "blob", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, s)
	defer b.Release()
	for i := range n {
		seq := first + uint64(i)
		b.Field(0).(*array.StringBuilder).Append(itopic)
		b.Field(1).(*array.Int32Builder).Append(0)
		b.Field(2).(*array.Uint64Builder).Append(seq)
		r := values[seq%uint64(len(values))]
		if r == nil {
			b.Field(3).AppendNull()
			b.Field(4).AppendNull()
			b.Field(5).AppendNull()
			continue
		}
		b.Field(3).(*array.StringBuilder).Append(*r)
		b.Field(4).(*array.BinaryBuilder).Append([]byte(*r))
		at := regionEpoch.Add(time.Duration(seq%3) * time.Hour)
		b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(at.UnixMicro()))
	}
	return &batch.Batch{Rec: b.NewRecordBatch(),
		Spans: []batch.OffsetSpan{{Partition: ipart(0), First: first, Last: first + uint64(n) - 1}}}
}

// partitionValueCase is a partition term on regionBatch's columns, the
// partition records pyiceberg prints for its data files (nil: only their
// count is checked) and a filter pruning all but one of them.
type partitionValueCase struct {
	term    string
	records []string
	count   int    // distinct partition values
	filter  string // a pyiceberg row filter
	rows    int    // rows it reads of regionRows
}

const regionRows = 100

func partitionValueCases() []partitionValueCase {
	identity := []string{"[null]"}
	trunc := []string{"[null]"}
	for _, r := range regions[1:] {
		j, _ := json.Marshal([]string{*r})
		identity = append(identity, string(j))
		rs := []rune(*r)
		j, _ = json.Marshal([]string{string(rs[:min(2, len(rs))])})
		trunc = append(trunc, string(j))
	}
	perRegion := regionRows / len(regions)
	return []partitionValueCase{
		{term: "identity(region)", records: identity, count: len(regions), filter: "region == 'a/b'", rows: perRegion},
		{term: "truncate(2, region)", records: trunc, count: len(regions), filter: "region == 'zürich'", rows: perRegion},
		{term: "identity(blob)", count: len(regions), filter: "region == '50%'", rows: perRegion},
		// seq % 3 == 1 with a region: 34 seqs in 1..100 but 10, 40, 70 and 100 (a null
		// region).
		{term: "identity(at)", count: 4, filter: "at == '2024-01-01T01:00:00+00:00'", rows: 30},
	}
}

// TestPartitionValuesEscaped: tables partitioned by identity and truncate
// of a string column, identity of a binary and of a timestamptz column,
// whose values (regions) iceberg-go records URL-escaped in a data file's
// location, on a local warehouse: every data file is stored under the
// location its manifest records (and nothing beside them), an orphan
// cleanup of every file older than now deletes the orphans planted in a
// partition's directory and under the unescaped name and no live file,
// and pyiceberg then reads every row once, sees a file per value with its
// partition record (the null partition included) and prunes a filtered
// scan to one file.
func TestPartitionValuesEscaped(t *testing.T) {
	testPartitionValues(t, testOptions(t), func(o Options) map[string]string {
		return icebergpeer.SQLProps(o.Catalog.URI, strings.TrimPrefix(o.Warehouse, "file://"))
	})
}

// TestPartitionValuesEscapedREST is TestPartitionValuesEscaped through
// the Apache Iceberg REST catalog fixture, whose server writes the
// metadata files and names the table's location.
func TestPartitionValuesEscapedREST(t *testing.T) {
	srv := icebergrest.Start(t)
	testPartitionValues(t, Options{Catalog: CatalogOptions{Type: CatalogREST, URI: srv.URI}, Table: "raw.orders",
		CommitInterval: 20 * time.Millisecond}, func(Options) map[string]string { return srv.PeerProps() })
}

// TestPartitionValuesEscapedS3 is TestPartitionValuesEscaped on an S3
// warehouse (moto), whose keys are the recorded locations as written.
func TestPartitionValuesEscapedS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.CreateBucket(t, "lake")
	o := testOptions(t)
	o.Warehouse = "s3://lake/warehouse"
	o.S3 = S3Options{Endpoint: srv.Endpoint, Region: "us-east-1", AccessKeyID: "thalweg", SecretAccessKey: "secret"}
	testPartitionValues(t, o, func(o Options) map[string]string {
		return map[string]string{"type": "sql", "uri": "sqlite:///" + o.Catalog.URI, "s3.endpoint": srv.Endpoint,
			"s3.region": "us-east-1", "s3.access-key-id": "thalweg", "s3.secret-access-key": "secret"}
	})
}

func testPartitionValues(t *testing.T, base Options, peer func(Options) map[string]string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	base.Allocator = mem
	base.Ordered = true
	base.Maintenance.Disabled = true // the test runs the orphan cleanup itself
	for i, c := range partitionValueCases() {
		o := base
		o.Table = "raw.t" + string(rune('0'+i))
		o.PartitionBy = []string{c.term}
		tt, s := openDial(t, ctx, o)
		b := regionBatch(mem, 1, regionRows, regions)
		err := s.Send(ctx, 1, b)
		b.Release()
		if err == nil {
			err = s.WaitDurable(ctx, 1)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.term, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		tbl, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		live := checkDataFiles(t, ctx, tbl, c)
		checkOrphanCleanup(t, ctx, tbl, live, c)
		v := icebergpeer.ReadFiltered(t, ctx, peer(o), o.Table, c.filter)
		if !slices.Equal(v.Seqs[itopic+"/0"], seqRangeOf(1, regionRows)) {
			t.Errorf("%s: pyiceberg reads %d rows, want 1..%d once each", c.term, v.Rows, regionRows)
		}
		distinct := partitionRecords(t, v.FilePartitions)
		if v.DataFiles != c.count || len(distinct) != c.count {
			t.Errorf("%s: %d data files with partition records %v, want %d distinct", c.term, v.DataFiles, distinct, c.count)
		}
		if c.records != nil && !slices.Equal(distinct, slices.Sorted(slices.Values(c.records))) {
			t.Errorf("%s: partition records %v, want %v", c.term, distinct, slices.Sorted(slices.Values(c.records)))
		}
		if v.FilteredFiles != 1 || v.FilteredRows != c.rows {
			t.Errorf("%s: a scan filtered on %s plans %d files and reads %d rows, want 1 and %d",
				c.term, c.filter, v.FilteredFiles, v.FilteredRows, c.rows)
		}
	}
}

// partitionRecords are the distinct partition records of recs (as
// read_table.py prints them), sorted, in Go's JSON (which leaves
// non-ASCII as it is).
func partitionRecords(t *testing.T, recs []string) []string {
	t.Helper()
	var out []string
	for _, r := range recs {
		var v []*string
		if err := json.Unmarshal([]byte(r), &v); err != nil {
			t.Fatalf("partition record %s: %v", r, err)
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(j))
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// checkDataFiles checks that every data file of tbl opens at the location
// its manifest records and, on a local warehouse, that its file is the
// recorded path as written and the data directory holds nothing else. It
// returns the recorded locations.
func checkDataFiles(t *testing.T, ctx context.Context, tbl *table.Table, c partitionValueCase) []string {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, task := range tasks {
		loc := task.File.FilePath()
		live = append(live, loc)
		f, err := fsys.Open(loc)
		if err != nil {
			t.Errorf("%s: the data file %s: %v", c.term, loc, err)
			continue
		}
		f.Close()
	}
	if c.term == "identity(region)" && !slices.ContainsFunc(live, func(l string) bool { return strings.Contains(l, "region=a%2Fb/") }) {
		t.Errorf("%s: no data file is recorded under region=a%%2Fb: %v", c.term, live)
	}
	if !strings.HasPrefix(tbl.Location(), "file:") {
		return live
	}
	var want, got []string
	for _, l := range live {
		p, err := literalPath(l)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	root, err := literalPath(tbl.Location())
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(filepath.Join(root, "data"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			got = append(got, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%s: the data directory holds\n%v\nwant the recorded locations\n%v", c.term, got, want)
	}
	return live
}

// checkOrphanCleanup plants two orphan files, one in the directory of the
// partition a/b and one under the unescaped name of that directory, runs
// the orphan cleanup on every file older than now and checks that it
// deleted both and no live data file.
func checkOrphanCleanup(t *testing.T, ctx context.Context, tbl *table.Table, live []string, c partitionValueCase) {
	t.Helper()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	loc := strings.TrimSuffix(tbl.Location(), "/")
	orphans := []string{loc + "/data/region=a%2Fb/lost.parquet", loc + "/data/region=a/b/lost.parquet"}
	for _, o := range orphans {
		if err := fsys.(iceio.WriteFileIO).WriteFile(o, []byte("PAR1")); err != nil {
			t.Fatal(err)
		}
	}
	// An age of 0 makes every file written before the call a candidate: a
	// file's modification time (the kernel's coarse clock, or S3's in whole
	// seconds) is not after the time the write returned.
	res, err := tbl.DeleteOrphanFiles(ctx, table.WithFilesOlderThan(0))
	if err != nil {
		t.Fatalf("%s: orphan cleanup: %v", c.term, err)
	}
	for _, l := range live {
		if f, err := fsys.Open(l); err != nil {
			t.Errorf("%s: the orphan cleanup (deleted %v) removed the live data file %s: %v", c.term, res.DeletedFiles, l, err)
		} else {
			f.Close()
		}
	}
	for _, o := range orphans {
		if f, err := fsys.Open(o); err == nil {
			f.Close()
			t.Errorf("%s: the orphan %s is left (deleted %v)", c.term, o, res.DeletedFiles)
		}
	}
}

// TestPartitionValueRefused: a batch holding an identity or truncate
// value that is the empty string, or one whose partition directory ends
// in ".." or holds "__0x", fails the Sink for good, naming the column or
// the data file, and leaves no data file behind.
func TestPartitionValueRefused(t *testing.T) {
	for _, c := range []struct{ term, value, want string }{
		{"identity(region)", "", "identity(region) of a row is the empty string"},
		{"truncate(4, region)", "", "truncate[4](region) of a row is the empty string"},
		{"identity(region)", "v1..", `data/region=v1../`},
		{"truncate(4, region)", "v1..b", `data/region_trunc=v1../`},
		{"identity(region)", "__0x41__", `data/region=__0x41__/`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		o := testOptions(t)
		o.Allocator = mem
		o.Maintenance.Disabled = true
		o.PartitionBy = []string{c.term}
		_, s := openDial(t, ctx, o)
		values := slices.Clone(regions)
		values[3] = &c.value
		b := regionBatch(mem, 1, regionRows, values)
		err := s.Send(ctx, 1, b)
		b.Release()
		if err == nil {
			err = s.WaitDurable(ctx, 1)
		}
		var e *Error
		if !errors.As(err, &e) || e.Retryable() || !errors.Is(err, ErrPartitionValue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s of %q: %v, want a permanent ErrPartitionValue saying %q", c.term, c.value, err, c.want)
		}
		s.Close()
		root, _ := literalPath(o.Warehouse)
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".parquet") {
				t.Errorf("%s of %q: a data file is left: %s", c.term, c.value, p)
			}
			return err
		})
		cancel()
		mem.AssertSize(t, 0)
	}
}

// TestLocalNamesRefused: a local warehouse path or a table name on a
// local warehouse that a URL spells otherwise is refused when the table
// is opened, naming the characters.
func TestLocalNamesRefused(t *testing.T) {
	for _, c := range []struct{ warehouse, table, want string }{
		{"/data/my lake", "ns.events", `Options.Warehouse "/data/my lake": the path has characters a URL escapes (" ")`},
		{"file:///data/50%25", "ns.events", `the path has characters a URL escapes ("%")`},
		{"file://host/data", "ns.events", "want file:///absolute/path"},
		{"/data/lake", "ns.zürich", `Options.Table "ns.zürich": the name has characters a URL escapes ("ü")`},
	} {
		o := testOptions(t)
		o.Warehouse, o.Table = c.warehouse, c.table
		if _, err := Open(o); !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%s, %s): %v, want ErrInvalidOptions saying %q", c.warehouse, c.table, err, c.want)
		}
	}
}

func TestLiteralPath(t *testing.T) {
	for name, want := range map[string]string{
		"file:///w/t/data/k=a%2Fb/x.parquet": "/w/t/data/k=a%2Fb/x.parquet",
		"file:/w/k=50%25/x":                  "/w/k=50%25/x",
		"FILE://localhost/w/x+y":             "/w/x+y",
		"/w/k=a%2Fb":                         "/w/k=a%2Fb",
		"file://other/w":                     "",
		"file:w":                             "",
	} {
		got, err := literalPath(name)
		if want == "" {
			if err == nil {
				t.Errorf("literalPath(%q) = %q, want an error", name, got)
			}
		} else if err != nil || got != want {
			t.Errorf("literalPath(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}
