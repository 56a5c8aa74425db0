package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/internal/testkit/s3test"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/observability"
)

// commitUntil sends batches of 10 rows of partition 0 to s, one commit
// each, until cond holds after a commit; it fails t after max commits. It
// returns the commits made.
func commitUntil(t *testing.T, ctx context.Context, s *Sink, mem memory.Allocator, off *uint64, max int, what string, cond func() bool) int {
	t.Helper()
	for n := 1; n <= max; n++ {
		*off++
		b := ibatch(mem, 0, 10*(*off-1)+1, 10)
		err := s.Send(ctx, *off, b)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WaitDurable(ctx, *off); err != nil {
			t.Fatal(err)
		}
		if cond() {
			return n
		}
	}
	t.Fatalf("after %d commits: %s does not hold", max, what)
	return max
}

// openDial opens the table of o and dials a sink on it, which t's cleanup
// closes.
func openDial(t *testing.T, ctx context.Context, o Options) (*Table, *Sink) {
	t.Helper()
	tt := mustOpen(t, o)
	s, err := tt.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return tt, s
}

func maintenanceOptions(t *testing.T, mem memory.Allocator) Options {
	o := testOptions(t)
	o.Allocator = mem
	o.CommitTimeout = time.Second
	o.Maintenance = MaintenanceOptions{Interval: 20 * time.Millisecond, SnapshotMaxAge: 300 * time.Millisecond,
		MinSnapshots: 3, OrphanAge: 2 * time.Second, OrphanInterval: 50 * time.Millisecond}
	return o
}

// TestSnapshotExpiry: the sink expires snapshots older than SnapshotMaxAge
// but keeps the MinSnapshots newest; the files only expired snapshots
// referenced (their manifest lists) are deleted; every row stays, and a
// restart with no offset store finds the positions (the table property).
func TestSnapshotExpiry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := maintenanceOptions(t, mem)
	o.Ordered = true
	tt, s := openDial(t, ctx, o)
	var off uint64
	snapshots := func() int {
		tbl, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(tbl.Metadata().Snapshots())
	}
	// Commit for longer than SnapshotMaxAge: snapshots are expired.
	start := time.Now()
	commits := commitUntil(t, ctx, s, mem, &off, 500, "snapshots expired", func() bool {
		return time.Since(start) > time.Second && snapshots() < int(off)
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tbl, _, err := tt.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kept := len(tbl.Metadata().Snapshots())
	if kept < o.Maintenance.MinSnapshots {
		t.Errorf("%d snapshots kept, want at least MinSnapshots %d", kept, o.Maintenance.MinSnapshots)
	}
	lists, _ := filepath.Glob(filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "metadata", "snap-*.avro"))
	if len(lists) > kept+1 {
		t.Errorf("%d manifest lists for %d snapshots after %d commits: the expired ones' are not deleted", len(lists), kept, commits)
	}
	if got := stored(t, ctx, tt); len(got) != 10*int(off) {
		t.Errorf("%d rows stored after %d commits of 10", len(got), off)
	}
	// A worker with an empty offset store reads the positions back.
	fresh := mustOpen(t, o)
	pos, err := fresh.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := 10 * off; pos[ipart(0)] != want {
		t.Errorf("positions after expiry = %v, want %d for %s", pos, want, ipart(0))
	}
	v := icebergpeer.Read(t, ctx, icebergpeer.SQLProps(o.Catalog.URI, o.Warehouse), o.Table)
	if v.Rows != 10*int(off) || len(v.Snapshots) != kept {
		t.Errorf("pyiceberg: %d rows, %d snapshots; want %d and %d", v.Rows, len(v.Snapshots), 10*off, kept)
	}
}

// TestExpiryWhenWorthIt: an expiry is committed only once it expires at
// least a quarter as many snapshots as it keeps (worthExpiring): on a
// table of 12 snapshots, all older than SnapshotMaxAge, keeping the 10
// newest would expire 2 and commits nothing; keeping 8 expires 4.
func TestExpiryWhenWorthIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := maintenanceOptions(t, mem)
	o.Maintenance.Interval = time.Hour // no run of its own: the test runs the expiry
	tt, s := openDial(t, ctx, o)
	var off uint64
	commitUntil(t, ctx, s, mem, &off, 12, "12 commits", func() bool { return off == 12 })
	snapshots := func() int {
		t.Helper()
		tbl, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(tbl.Metadata().Snapshots())
	}
	if n := snapshots(); n != 12 {
		t.Fatalf("%d snapshots after 12 commits", n)
	}
	mo := &s.opts.Maintenance
	mo.SnapshotMaxAge = time.Millisecond
	for _, c := range []struct{ keep, want int }{{10, 12}, {8, 8}} {
		mo.MinSnapshots = c.keep
		if err := s.expire(ctx, s.table()); err != nil {
			t.Fatal(err)
		}
		if n := snapshots(); n != c.want {
			t.Errorf("keeping the %d newest: %d snapshots after the expiry, want %d", c.keep, n, c.want)
		}
	}
}

// TestOrphanCleanup: the sink deletes a file under the table's location
// that nothing references once it is older than OrphanAge, and leaves a
// younger one (a data file another worker may be about to commit).
func TestOrphanCleanup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := maintenanceOptions(t, mem)
	tt, s := openDial(t, ctx, o)
	var off uint64
	commitUntil(t, ctx, s, mem, &off, 1, "a table", func() bool { return true })
	tbl, _, err := tt.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data")
	old, young := filepath.Join(data, "lost-old.parquet"), filepath.Join(data, "lost-young.parquet")
	for _, p := range []string{old, young} {
		if err := os.WriteFile(p, []byte("PAR1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	commitUntil(t, ctx, s, mem, &off, 500, "the old orphan deleted", func() bool {
		_, err := os.Stat(old)
		return errors.Is(err, os.ErrNotExist)
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("the orphan younger than OrphanAge: %v", err)
	}
	if got := stored(t, ctx, tt); len(got) != 10*int(off) {
		t.Errorf("%d rows stored after %d commits of 10", len(got), off)
	}
}

// TestIdleSinkMaintains: a sink nobody sends to, on a table another
// sink (maintenance off) appended to, takes the lease with a commit that
// makes no snapshot, expires the snapshots past SnapshotMaxAge and deletes
// an old orphan file; every row stays. So does one started before the
// table existed, which the other sink then created.
func TestIdleSinkMaintains(t *testing.T) {
	for _, started := range []string{"on the table", "before the table"} {
		t.Run(started, func(t *testing.T) { testIdleSinkMaintains(t, started == "before the table") })
	}
}

func testIdleSinkMaintains(t *testing.T, early bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := maintenanceOptions(t, mem)
	o.Maintenance.CompactMinFiles = -1
	o.Maintenance.Holder = "idle"
	if early {
		_, _ = openDial(t, ctx, o) // sends nothing
	}
	writer := o
	writer.Maintenance = MaintenanceOptions{Disabled: true}
	tt, w := openDial(t, ctx, writer)
	var off uint64
	appends := uint64(3 * o.Maintenance.MinSnapshots)
	commitUntil(t, ctx, w, mem, &off, int(appends), "the appends", func() bool { return off == appends })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tbl, _, err := tt.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lastAppend, lastAppendMs := tbl.CurrentSnapshot().SnapshotID, tbl.CurrentSnapshot().TimestampMs
	orphan := filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data", "lost-old.parquet")
	if err := os.WriteFile(orphan, []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(orphan, past, past); err != nil {
		t.Fatal(err)
	}

	if !early {
		_, _ = openDial(t, ctx, o) // sends nothing
	}
	testenv.WaitFor(t, time.Minute, "the idle sink's expiry and orphan cleanup", func() bool {
		tbl, _, err = tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(orphan)
		return len(tbl.Metadata().Snapshots()) == o.Maintenance.MinSnapshots && errors.Is(err, os.ErrNotExist)
	})
	if l, _ := tableLease(tbl); l.Holder != "idle" {
		t.Errorf("lease %+v, want the idle sink's", l)
	}
	// The lease commits made no snapshot: the only ones after the last
	// append are the manifest rewrites of the maintenance runs.
	for _, sn := range tbl.Metadata().Snapshots() {
		if sn.SnapshotID != lastAppend && sn.TimestampMs >= lastAppendMs && !isManifestRewrite(sn) {
			t.Errorf("snapshot %d (%v) after the last append is not a manifest rewrite", sn.SnapshotID, sn.Summary)
		}
	}
	if got := stored(t, ctx, tt); len(got) != 10*int(off) {
		t.Errorf("%d rows stored after %d commits of 10", len(got), off)
	}
}

// TestMaintenanceOptionsContradict: an expiry age no longer than the
// commit interval, or an orphan age no longer than the commit timeout, is
// refused.
func TestMaintenanceOptionsContradict(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"expiry within the commit interval", func(o *Options) {
			o.CommitInterval, o.Maintenance.SnapshotMaxAge = time.Minute, 30*time.Second
		}, "SnapshotMaxAge 30s must exceed the commit interval 1m0s"},
		{"orphans within the commit timeout", func(o *Options) { o.Maintenance.OrphanAge = 10 * time.Second },
			"OrphanAge 10s must exceed the commit timeout 1m0s"},
		{"negative retained count", func(o *Options) { o.Maintenance.MinSnapshots = -1 }, "MinSnapshots must be >= 1"},
		{"lease within two commit intervals", func(o *Options) {
			o.CommitInterval, o.Maintenance.LeaseTTL = time.Second, 1500*time.Millisecond
		}, "LeaseTTL 1.5s must exceed twice the commit interval 1s"},
		{"negative lease", func(o *Options) { o.Maintenance.LeaseTTL = -time.Second }, "LeaseTTL must be >= 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t)
			tc.edit(&o)
			_, err := Open(o)
			if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestMaintenanceS3: on an S3 warehouse (moto) the sink expires
// snapshots, compacts data files and deletes an orphan object (the
// listing goes through the bucket), and every row stays once.
func TestMaintenanceS3(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := s3test.Start(t)
	srv.CreateBucket(t, "lake")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := maintenanceOptions(t, mem)
	o.Ordered = true
	o.Warehouse = "s3://lake/warehouse"
	o.S3 = S3Options{Endpoint: srv.Endpoint, Region: "us-east-1", AccessKeyID: "thalweg", SecretAccessKey: "secret"}
	tt, s := openDial(t, ctx, o)
	var off uint64
	commitUntil(t, ctx, s, mem, &off, 1, "a table", func() bool { return true })
	tbl, _, err := tt.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lost := tbl.Location() + "/data/lost.parquet"
	if err := fs.(iceio.WriteFileIO).WriteFile(lost, []byte("PAR1")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	commitUntil(t, ctx, s, mem, &off, 1000, "expired, compacted and the orphan deleted", func() bool {
		cur, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := cur.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, gone := fs.Open(lost)
		return time.Since(start) > time.Second && len(cur.Metadata().Snapshots()) < int(off) &&
			len(tasks) < int(off)/2 && gone != nil
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got := stored(t, ctx, tt)
	if len(got) != 10*int(off) {
		t.Fatalf("%d rows stored after %d commits of 10, want %d", len(got), off, 10*off)
	}
	for i, q := range got {
		if q != uint64(i+1) {
			t.Fatalf("stored seq %d at %d: a row lost or stored twice", q, i)
		}
	}
}

// TestManifestRewriting: the sink rewrites the current snapshot's
// manifests (Transaction.RewriteManifests) between its appends, so their
// count stays below what merging on append alone leaves
// (DefaultManifestMinMergeCount) however many commits come.
func TestManifestRewriting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := maintenanceOptions(t, mem)
	o.Maintenance.CompactMinFiles = -1
	tt, s := openDial(t, ctx, o)
	manifests := func() (int, bool) {
		tbl, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := tbl.FS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := tbl.CurrentSnapshot().Manifests(fs)
		if err != nil {
			t.Fatal(err)
		}
		rewritten := false
		for _, sn := range tbl.Metadata().Snapshots() {
			rewritten = rewritten || (sn.Summary != nil && isManifestRewrite(sn))
		}
		return len(ms), rewritten
	}
	var off uint64
	most := 0
	commitUntil(t, ctx, s, mem, &off, 200, "100 commits", func() bool {
		n, _ := manifests()
		if off > 3*DefaultManifestMinMergeCount {
			most = max(most, n)
		}
		return off >= 100
	})
	n, rewritten := manifests()
	t.Logf("after %d commits: %d manifests, at most %d after the first %d commits", off, n, most, 3*DefaultManifestMinMergeCount)
	if !rewritten {
		t.Errorf("no manifest rewrite snapshot after %d commits", off)
	}
	if most >= DefaultManifestMinMergeCount/2 {
		t.Errorf("up to %d manifests in the current snapshot, want fewer than %d", most, DefaultManifestMinMergeCount/2)
	}
	if rows := rebuiltRows(t, ctx, tt, ipart(0)); rows != int64(10*off) {
		t.Errorf("Rebuild returns %d rows, want %d", rows, 10*off)
	}
}

// downCatalog refuses every maintenance commit (an expiry's, a manifest
// rewrite's, a compaction's) while down holds, as a catalog that cannot
// be reached for them would; appends go through.
type downCatalog struct {
	catalogIO
	down    atomic.Bool
	refused atomic.Int64
}

func (d *downCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	b, _ := json.Marshal(updates)
	maint := strings.Contains(string(b), `"remove-snapshots"`) || strings.Contains(string(b), `"operation":"replace"`)
	if maint && d.down.Load() {
		d.refused.Add(1)
		return nil, "", errors.New("catalog unreachable")
	}
	return d.catalogIO.CommitTable(ctx, ident, reqs, updates)
}

// TestMaintenanceFailingNeverHoldsIngest: while every maintenance commit
// fails, the sink keeps committing its batches (none waits for
// maintenance), counts the failed runs and tries again after a growing
// backoff (fewer tries than rounds); once the catalog answers, maintenance
// expires and compacts.
func TestMaintenanceFailingNeverHoldsIngest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := compactionOptions(t, mem)
	o.Maintenance.SnapshotMaxAge = 300 * time.Millisecond
	o.Maintenance.OrphanAge = time.Hour
	o.Maintenance.Interval = time.Second // the backoff's bound
	dc := &downCatalog{}
	dc.down.Store(true)
	o.hooks.catalog = func(c catalogIO) catalogIO { dc.catalogIO = c; return dc }
	reader := sdkmetric.NewManualReader()
	o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tt, s := openDial(t, ctx, o)
	var off uint64
	commitUntil(t, ctx, s, mem, &off, 1000, "three failed maintenance runs", func() bool {
		return metricValues(t, reader)[observability.IcebergMaintenanceFailures] >= 3
	})
	failedAt := off
	refused := dc.refused.Load()
	dc.down.Store(false)
	commitUntil(t, ctx, s, mem, &off, 1000, "snapshots expired and files compacted", func() bool {
		ms := metricValues(t, reader)
		return ms[observability.IcebergSnapshotsExpired] > 0 && ms[observability.IcebergCompactedFiles] > 0
	})
	t.Logf("%d commits while maintenance failed, %d maintenance commits refused", failedAt, refused)
	if refused >= int64(failedAt) {
		t.Errorf("%d maintenance commits refused in %d commit rounds: failures are not backed off", refused, failedAt)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got := stored(t, ctx, tt)
	if len(got) != 10*int(off) {
		t.Fatalf("%d rows stored after %d commits of 10, want %d", len(got), off, 10*off)
	}
}

// TestMaintenanceOptionsDefaults: the lease's defaults are three
// intervals, at least DefaultMinLeaseTTL and three commit intervals, and a
// holder unique per process.
func TestMaintenanceOptionsDefaults(t *testing.T) {
	for _, tc := range []struct {
		interval, commit, want time.Duration
	}{
		{0, 0, 3 * DefaultMaintenanceInterval},
		{time.Second, 0, DefaultMinLeaseTTL},
		{time.Second, time.Minute, 3 * time.Minute},
	} {
		m := MaintenanceOptions{Interval: tc.interval}
		m.withDefaults(orDefault(tc.commit, DefaultCommitInterval))
		if m.LeaseTTL != tc.want {
			t.Errorf("interval %v, commit interval %v: LeaseTTL %v, want %v", tc.interval, tc.commit, m.LeaseTTL, tc.want)
		}
		if m.Holder == "" {
			t.Errorf("no default holder")
		}
	}
	if a, b := DefaultHolder(), DefaultHolder(); a == b {
		t.Errorf("DefaultHolder twice: %q, %q; want them distinct", a, b)
	}
}
