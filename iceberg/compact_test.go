package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/observability"
)

// metricValues is the value of every int64 counter and gauge reader
// collects (one destination).
func metricValues(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[m.Name] += p.Value
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out[m.Name] = p.Value
				}
			}
		}
	}
	return out
}

// rebuiltRows counts the rows Rebuild returns for partition.
func rebuiltRows(t *testing.T, ctx context.Context, tt *Table, partition string) int64 {
	t.Helper()
	bs, err := tt.Rebuild(ctx, partition, 1, math.MaxUint64)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, b := range bs {
		rows += b.NumRows()
		b.Release()
	}
	return rows
}

// compactionOptions are maintenanceOptions of an ordered sink that keeps
// every snapshot (the tests read their summaries).
func compactionOptions(t *testing.T, mem memory.Allocator) Options {
	o := maintenanceOptions(t, mem)
	o.Ordered = true
	o.TargetFileSize = 1 << 20
	o.Maintenance.SnapshotMaxAge = time.Hour
	o.Maintenance.OrphanAge = 2 * time.Hour
	return o
}

// TestCompaction: the sink bin-packs the small files its commits leave
// into fewer files, in rewrite snapshots that carry the positions; every
// row stays once, Rebuild and pyiceberg read them all, and a worker with
// an empty offset store finds the positions.
func TestCompaction(t *testing.T) { testCompaction(t, nil) }

// TestCompactionPartitioned is TestCompaction on a table partitioned by
// bucket(4, seq): iceberg-go's planner groups the files per partition, so
// every file it writes holds one bucket, as pyiceberg reads them.
func TestCompactionPartitioned(t *testing.T) {
	testCompaction(t, []string{"bucket(4, seq)"}, `["0"]`, `["1"]`, `["2"]`, `["3"]`)
}

// TestCompactionPartitionedString is TestCompaction on a table
// partitioned by identity(topic), whose value (a topic name) iceberg-go
// records escaped in the data files' locations: compaction reads and
// writes them where the manifests say.
func TestCompactionPartitionedString(t *testing.T) {
	testCompaction(t, []string{"identity(topic)"}, `["`+itopic+`"]`)
}

// testCompaction runs TestCompaction on a table partitioned by
// partitionBy, whose data files pyiceberg must see with one of records
// as their partition record.
func testCompaction(t *testing.T, partitionBy []string, records ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute) // a deadline for the condition below, not a bound on the time it takes
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := compactionOptions(t, mem)
	o.PartitionBy = partitionBy
	reader := sdkmetric.NewManualReader()
	o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tt, s := openDial(t, ctx, o)
	var off uint64
	dataFiles := func() int {
		tbl, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(tasks)
	}
	commits := commitUntil(t, ctx, s, mem, &off, 500, "data files compacted", func() bool {
		return off >= 20 && dataFiles() < int(off)/2
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The counters and the gauges of the last maintenance run.
	ms := metricValues(t, reader)
	if ms[observability.IcebergCompactedFiles] < 5 || ms[observability.IcebergCompactedBytes] <= 0 {
		t.Errorf("compacted files %d, bytes %d; want at least 5 files and some bytes",
			ms[observability.IcebergCompactedFiles], ms[observability.IcebergCompactedBytes])
	}
	if ms[observability.IcebergSnapshots] < 2 || ms[observability.IcebergTableFiles] < 1 || ms[observability.IcebergManifests] < 1 {
		t.Errorf("gauges snapshots %d, data files %d, manifests %d; want the table's",
			ms[observability.IcebergSnapshots], ms[observability.IcebergTableFiles], ms[observability.IcebergManifests])
	}
	tbl, _, err := tt.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rewrites := 0
	for _, sn := range tbl.Metadata().Snapshots() {
		if sn.Summary == nil {
			t.Fatalf("snapshot %d has no summary", sn.SnapshotID)
		}
		if sn.Summary.Operation != table.OpReplace || isManifestRewrite(sn) {
			continue
		}
		rewrites++
		var p map[string]uint64
		if err := json.Unmarshal([]byte(sn.Summary.Properties[PropPositions]), &p); err != nil || p[ipart(0)] == 0 {
			t.Errorf("rewrite snapshot %d: positions %q (%v), want the table's", sn.SnapshotID, sn.Summary.Properties[PropPositions], err)
		}
		if sn.Summary.Properties[PropCommitID] == "" || sn.Summary.Properties[PropFormat] != propFormatVersion {
			t.Errorf("rewrite snapshot %d lacks the commit id or the format: %v", sn.SnapshotID, sn.Summary.Properties)
		}
	}
	if rewrites == 0 {
		t.Fatalf("no rewrite snapshot after %d commits", commits)
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
	fresh := mustOpen(t, o)
	pos, err := fresh.Positions(ctx)
	if err != nil || pos[ipart(0)] != 10*off {
		t.Fatalf("positions after compaction = %v, %v; want %d", pos, err, 10*off)
	}
	if rows := rebuiltRows(t, ctx, fresh, ipart(0)); rows != int64(10*off) {
		t.Errorf("Rebuild returns %d rows, want %d", rows, 10*off)
	}
	v := icebergpeer.Read(t, ctx, icebergpeer.SQLProps(o.Catalog.URI, o.Warehouse), o.Table)
	if v.Rows != 10*int(off) {
		t.Errorf("pyiceberg reads %d rows, want %d", v.Rows, 10*off)
	}
	if partitionBy != nil {
		for _, fp := range v.FilePartitions {
			if !slices.Contains(records, fp) {
				t.Errorf("a data file's partition record is %s, want one of %v", fp, records)
			}
		}
	}
}

// raceCatalog lets another worker commit right before the first
// compaction commit reaches the catalog, which then refuses it.
type raceCatalog struct {
	catalogIO
	once    sync.Once
	before  func()
	refused atomic.Int64
}

// isManifestRewrite reports whether sn is a manifest rewrite
// (Transaction.RewriteManifests), whose summary carries iceberg-go's
// properties only: the table property and the snapshots before it carry
// the positions.
func isManifestRewrite(sn table.Snapshot) bool {
	_, ok := sn.Summary.Properties["manifests-replaced"]
	return ok
}

func isRewrite(updates []table.Update) bool {
	for _, u := range updates {
		if b, err := json.Marshal(u); err == nil && strings.Contains(string(b), `"operation":"replace"`) && strings.Contains(string(b), PropCommitID) {
			return true
		}
	}
	return false
}

func (r *raceCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	rewrite := isRewrite(updates)
	if rewrite {
		r.once.Do(r.before)
	}
	m, loc, err := r.catalogIO.CommitTable(ctx, ident, reqs, updates)
	if rewrite && err != nil {
		r.refused.Add(1)
	}
	return m, loc, err
}

// TestCompactionReplannedAfterConflict: another worker appends between
// the compaction's plan and its commit; the catalog refuses the rewrite,
// and the sink plans it again on the table with the other worker's
// append: its rewrite snapshot carries both workers' positions, and every
// row of both is there once.
func TestCompactionReplannedAfterConflict(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := compactionOptions(t, mem)
	other := o
	other.Maintenance = MaintenanceOptions{Disabled: true}
	var otherErr error
	rc := &raceCatalog{before: func() {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		ot, err := Open(other)
		if err != nil {
			otherErr = err
			return
		}
		defer ot.Close()
		os, err := ot.Dial(ctx)
		if err != nil {
			otherErr = err
			return
		}
		defer os.Close()
		b := ibatch(mem, 1, 1, 10)
		err = os.Send(ctx, 1, b)
		b.Release()
		if err == nil {
			err = os.WaitDurable(ctx, 1)
		}
		otherErr = err
	}}
	o.hooks.catalog = func(c catalogIO) catalogIO { rc.catalogIO = c; return rc }
	reader := sdkmetric.NewManualReader()
	o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tt, s := openDial(t, ctx, o)
	var off uint64
	commitUntil(t, ctx, s, mem, &off, 500, "a compaction after a refused one", func() bool {
		tbl, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rc.refused.Load() > 0 && tbl.CurrentSnapshot() != nil && slices.ContainsFunc(tbl.Metadata().Snapshots(),
			func(sn table.Snapshot) bool {
				return sn.Summary != nil && sn.Summary.Operation == table.OpReplace && !isManifestRewrite(sn)
			})
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if otherErr != nil {
		t.Fatalf("the other worker: %v", otherErr)
	}
	if n := metricValues(t, reader)[observability.IcebergMaintenanceFailures]; n != 0 {
		t.Errorf("%d failed maintenance runs: the refused compaction was not planned again in its run", n)
	}
	tbl, _, err := tt.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sn := range tbl.Metadata().Snapshots() {
		if sn.Summary == nil || sn.Summary.Operation != table.OpReplace || isManifestRewrite(sn) {
			continue
		}
		p, err := decodePositions(sn.Summary.Properties[PropPositions])
		if err != nil || p[ipart(1)] != 10 || p[ipart(0)] == 0 {
			t.Errorf("the rewrite snapshot's positions %v (%v): want both workers'", p, err)
		}
	}
	if got := stored(t, ctx, tt); len(got) != 10*int(off)+10 {
		t.Errorf("%d rows stored, want %d (ours) + 10 (the other worker's)", len(got), 10*off)
	}
	for p, want := range map[int32]uint64{0: 10 * off, 1: 10} {
		if rows := rebuiltRows(t, ctx, tt, ipart(p)); rows != int64(want) {
			t.Errorf("partition %d: %d rows, want %d", p, rows, want)
		}
	}
}

// TestCompactionAbandonedWhenReplacedGone: another engine compacts the
// table (iceberg-go's RewriteDataFiles, through its own catalog handle)
// between the sink's compaction rewrite and its commit, so files the
// sink's compaction replaces are gone: the sink abandons it (the files it
// wrote are deleted, no failure counted), never commits it, and every row
// stays once.
func TestCompactionAbandonedWhenReplacedGone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := compactionOptions(t, mem)
	other := o
	other.Maintenance = MaintenanceOptions{Disabled: true}
	var (
		s        *Sink
		written  []string
		otherErr error
	)
	rc := &raceCatalog{before: func() {
		// On the committer goroutine, in the swap's commit.
		for _, df := range s.mt.staged.gr.NewDataFiles {
			written = append(written, df.FilePath())
		}
		ot, err := Open(other)
		if err != nil {
			otherErr = err
			return
		}
		defer ot.Close()
		tbl, _, err := ot.load(ctx)
		if err != nil {
			otherErr = err
			return
		}
		cfg := compaction.DefaultConfig()
		cfg.MinInputFiles = 2
		p, err := compaction.Analyze(ctx, tbl, cfg)
		if err != nil || len(p.Groups) == 0 {
			otherErr = fmt.Errorf("the other engine's plan: %d groups, %v", len(p.Groups), err)
			return
		}
		groups := make([]table.CompactionTaskGroup, len(p.Groups))
		for i, g := range p.Groups {
			groups[i] = table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes}
		}
		_, otherErr = tbl.RewriteDataFiles(ctx, groups, table.RewriteDataFilesOptions{})
	}}
	o.hooks.catalog = func(c catalogIO) catalogIO { rc.catalogIO = c; return rc }
	reader := sdkmetric.NewManualReader()
	o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tt, sink := openDial(t, ctx, o)
	s = sink
	var off uint64
	gone := func() bool {
		tbl, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := tbl.FS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range written {
			if _, err := fs.Open(p); err == nil {
				return false
			}
		}
		return true
	}
	commitUntil(t, ctx, s, mem, &off, 500, "the refused compaction's files deleted", func() bool {
		return rc.refused.Load() > 0 && len(written) > 0 && gone()
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if otherErr != nil {
		t.Fatalf("the other engine's compaction: %v", otherErr)
	}
	if n := metricValues(t, reader)[observability.IcebergMaintenanceFailures]; n != 0 {
		t.Errorf("%d failed maintenance runs: an abandoned compaction is not a failure", n)
	}
	tbl, _, err := tt.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	live, err := liveFiles(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range written {
		if live[p] {
			t.Errorf("the abandoned compaction's file %s is in the table", p)
		}
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
	if pos, err := tablePositions(tbl); err != nil || pos[ipart(0)] != 10*off {
		t.Errorf("positions %v, %v; want %d", pos, err, 10*off)
	}
}

// TestPyicebergAppendsNotInPositions: pyiceberg appends rows of another
// topic to a table an ordered sink writes, between the sink's commits,
// and the sink's compaction then rewrites files of both engines: every
// row of both stays once (pyiceberg reads them), and the positions are
// thalweg's alone (the other engine's rows raise none).
func TestPyicebergAppendsNotInPositions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := compactionOptions(t, mem)
	props := icebergpeer.SQLProps(o.Catalog.URI, o.Warehouse)
	tt, s := openDial(t, ctx, o)
	var off uint64
	commitUntil(t, ctx, s, mem, &off, 1, "a table", func() bool { return true })
	const other = "persistent://public/default/other"
	for i := range 3 {
		icebergpeer.Append(t, ctx, props, o.Table, other, 0, uint64(10*i+1), 10)
	}
	appended := func() int {
		tbl, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(tbl.Metadata().Snapshots())
	}()
	commitUntil(t, ctx, s, mem, &off, 500, "a compaction after the other engine's appends", func() bool {
		tbl, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		snaps := tbl.Metadata().Snapshots()
		for _, sn := range snaps[min(appended, len(snaps)):] {
			if sn.Summary != nil && sn.Summary.Operation == table.OpReplace && !isManifestRewrite(sn) {
				return true
			}
		}
		return false
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	v := icebergpeer.Read(t, ctx, props, o.Table)
	if v.Rows != 10*int(off)+30 {
		t.Errorf("pyiceberg reads %d rows, want %d of thalweg's and 30 of the other engine's", v.Rows, 10*off)
	}
	if got := v.Seqs[other+"/0"]; len(got) != 30 || got[0] != 1 || got[29] != 30 {
		t.Errorf("the other engine's seqs %v, want 1..30 once each", got)
	}
	tbl, _, err := tt.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := tablePositions(tbl)
	if err != nil || len(pos) != 1 || pos[ipart(0)] != 10*off {
		t.Errorf("positions %v (%v), want only %s: %d", pos, err, ipart(0), 10*off)
	}
	if rows := rebuiltRows(t, ctx, tt, ipart(0)); rows != int64(10*off) {
		t.Errorf("Rebuild returns %d rows of %s, want %d", rows, ipart(0), 10*off)
	}
}

// holdCompactionFS holds the creation of the compaction's output files
// (data files not named thalweg-*, which the sink writes) until release
// is closed: a slow store under a compaction's rewrite.
type holdCompactionFS struct {
	iceio.WriteFileIO
	entered chan struct{}
	once    *sync.Once
	release chan struct{}
}

func (h holdCompactionFS) Create(name string) (iceio.FileWriter, error) {
	if strings.Contains(name, "/data/") && !strings.HasPrefix(path.Base(name), "thalweg-") {
		h.once.Do(func() { close(h.entered) })
		<-h.release
	}
	return h.WriteFileIO.Create(name)
}

// TestCompactionWriteOffTheCommitter: while a compaction's rewrite is
// held writing its files, the sink keeps committing its batches (each
// within seconds); once the write goes on, the compaction lands and every
// row stays once.
func TestCompactionWriteOffTheCommitter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := compactionOptions(t, mem)
	o.Maintenance.OrphanInterval = time.Hour
	h := holdCompactionFS{entered: make(chan struct{}), once: &sync.Once{}, release: make(chan struct{})}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(h.release) }) }
	defer release()
	o.hooks.fs = func(fs iceio.IO) iceio.IO {
		w, ok := fs.(iceio.WriteFileIO)
		if !ok {
			return fs
		}
		held := h
		held.WriteFileIO = w
		return held
	}
	tt, s := openDial(t, ctx, o)
	var off uint64
	commitUntil(t, ctx, s, mem, &off, 500, "a compaction writing its files", func() bool {
		select {
		case <-h.entered:
			return true
		default:
			return false
		}
	})
	held := off
	for range 20 {
		off++
		b := ibatch(mem, 0, 10*(off-1)+1, 10)
		err := s.Send(ctx, off, b)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		err = s.WaitDurable(wctx, off)
		wcancel()
		if err != nil {
			t.Fatalf("batch %d (the %dth since the compaction's write was held) not durable: %v", off, off-held, err)
		}
	}
	release()
	commitUntil(t, ctx, s, mem, &off, 500, "the held compaction committed", func() bool {
		tbl, _, err := tt.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(tbl.Metadata().Snapshots(), func(sn table.Snapshot) bool {
			return sn.Summary != nil && sn.Summary.Operation == table.OpReplace && !isManifestRewrite(sn)
		})
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
