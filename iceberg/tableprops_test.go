package iceberg

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/internal/testkit/icebergrest"
)

// commitEach dials a sink on tt and sends it n batches of 10 rows of
// partition 0 from seq first on, waiting for each to be durable (n
// commits), then closes it.
func commitEach(t *testing.T, ctx context.Context, tt *Table, mem memory.Allocator, first uint64, n int) {
	t.Helper()
	s, err := tt.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range n {
		off := uint64(i + 1)
		b := ibatch(mem, 0, first+uint64(10*i), 10)
		err := s.Send(ctx, off, b)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WaitDurable(ctx, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// metadataFiles counts the metadata.json files in the directory of the
// local table tbl.
func metadataFiles(t *testing.T, tbl *table.Table) int {
	t.Helper()
	dir := filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "metadata")
	m, err := filepath.Glob(filepath.Join(dir, "*.metadata.json"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no metadata.json in %s: %v", dir, err)
	}
	return len(m)
}

// currentManifests counts the manifests of tbl's current snapshot.
func currentManifests(t *testing.T, ctx context.Context, tbl *table.Table) int {
	t.Helper()
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	return len(ms)
}

// checkBounded checks, after commits commits, that the table keeps at most
// DefaultMetadataVersionsMax+1 metadata.json files and its current
// snapshot fewer than DefaultManifestMinMergeCount manifests, and that
// every row is there.
func checkBounded(t *testing.T, ctx context.Context, tt *Table, commits int, local bool) {
	t.Helper()
	tbl, _, err := tt.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Metadata().Snapshots()); n < commits {
		t.Fatalf("%d snapshots after %d commits: not one per commit", n, commits)
	}
	if local {
		if n := metadataFiles(t, tbl); n > DefaultMetadataVersionsMax+1 {
			t.Errorf("%d metadata.json files after %d commits, want at most %d", n, commits, DefaultMetadataVersionsMax+1)
		}
	}
	if n := currentManifests(t, ctx, tbl); n >= DefaultManifestMinMergeCount {
		t.Errorf("%d manifests in the current snapshot after %d commits, want fewer than %d", n, commits, DefaultManifestMinMergeCount)
	}
	if got := stored(t, ctx, tt); len(got) != 10*commits {
		t.Errorf("%d rows stored after %d commits of 10, want %d", len(got), commits, 10*commits)
	}
}

// TestMetadataBoundedByConstruction: a table the sink creates keeps a
// bounded number of metadata.json files and of manifests in its current
// snapshot, whatever the number of commits: the metadata.json files and
// the manifests after 25 commits and after 75 are within the same bound.
// pyiceberg reads the properties, the manifests and every row.
func TestMetadataBoundedByConstruction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := testOptions(t)
	o.Allocator = mem
	tt := mustOpen(t, o)
	commitEach(t, ctx, tt, mem, 1, 25)
	checkBounded(t, ctx, tt, 25, true)
	commitEach(t, ctx, tt, mem, 251, 50) // a restarted worker
	checkBounded(t, ctx, tt, 75, true)

	v := icebergpeer.Read(t, ctx, icebergpeer.SQLProps(o.Catalog.URI, o.Warehouse), o.Table)
	for k, want := range boundedMetadataProps() {
		if v.TableProps[k] != want {
			t.Errorf("pyiceberg: table property %s = %q, want %q", k, v.TableProps[k], want)
		}
	}
	if v.Manifests == 0 || v.Manifests >= DefaultManifestMinMergeCount {
		t.Errorf("pyiceberg: %d manifests in the current snapshot, want 1 to %d", v.Manifests, DefaultManifestMinMergeCount-1)
	}
	if v.MetadataLog > DefaultMetadataVersionsMax {
		t.Errorf("pyiceberg: %d metadata-log entries, want at most %d", v.MetadataLog, DefaultMetadataVersionsMax)
	}
	if v.Rows != 750 {
		t.Errorf("pyiceberg reads %d rows, want 750", v.Rows)
	}
}

// TestMetadataBoundsOnExistingTable: a table another engine created
// without the bounded-metadata properties gets them from the sink's first
// commit, with one log line naming what was set, except a value the user
// set on the table, which is kept (and bounds the manifests instead).
func TestMetadataBoundsOnExistingTable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var logs crashtest.LogBuffer
	o := testOptions(t)
	o.Allocator = mem
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	tt := mustOpen(t, o)

	// The table as another engine makes it: none of thalweg's
	// properties, and the user's own min-count-to-merge.
	const userMinCount = 4
	cat, err := tt.catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := ibatch(mem, 0, 1, 1)
	sc, err := icebergSchemaOf(b.Rec.Schema())
	b.Release()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := createTable(ctx, cat, tt.ident, sc, *iceberg.UnpartitionedSpec, iceberg.Properties{
		table.ManifestMinMergeCountKey: strconv.Itoa(userMinCount),
	}, o.Warehouse, o.hooks); err != nil {
		t.Fatal(err)
	}

	commitEach(t, ctx, tt, mem, 1, 30)

	tbl, _, err := tt.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	props := tbl.Properties()
	for k, want := range boundedMetadataProps() {
		if k == table.ManifestMinMergeCountKey {
			want = strconv.Itoa(userMinCount)
		}
		if props[k] != want {
			t.Errorf("table property %s = %q, want %q", k, props[k], want)
		}
	}
	if n := currentManifests(t, ctx, tbl); n >= userMinCount {
		t.Errorf("%d manifests in the current snapshot, want fewer than the user's min-count-to-merge %d", n, userMinCount)
	}
	if n := metadataFiles(t, tbl); n > DefaultMetadataVersionsMax+1 {
		t.Errorf("%d metadata.json files after 30 commits, want at most %d", n, DefaultMetadataVersionsMax+1)
	}
	lines := strings.Count(logs.String(), "iceberg table properties set")
	if lines != 1 {
		t.Fatalf("%d log lines saying what was set, want 1:\n%s", lines, logs.String())
	}
	for _, want := range []string{table.MetadataDeleteAfterCommitEnabledKey + "=true", table.ManifestMergeEnabledKey + "=true"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log line does not name %s:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), table.ManifestMinMergeCountKey) {
		t.Errorf("the log line names %s, which the user set:\n%s", table.ManifestMinMergeCountKey, logs.String())
	}
}

// TestMetadataBoundedREST: the bounds hold through the Iceberg REST
// catalog fixture, whose server writes the metadata.json files and deletes
// those that fall out of the metadata log.
func TestMetadataBoundedREST(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := icebergrest.Start(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := Options{Catalog: CatalogOptions{Type: CatalogREST, URI: srv.URI}, Table: "ns.events",
		CommitInterval: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, Allocator: mem}
	tt := mustOpen(t, o)
	commitEach(t, ctx, tt, mem, 1, 40)
	checkBounded(t, ctx, tt, 40, true)
	v := icebergpeer.Read(t, ctx, srv.PeerProps(), o.Table)
	if v.Rows != 400 || v.Manifests >= DefaultManifestMinMergeCount {
		t.Errorf("pyiceberg: %d rows, %d manifests; want 400 and fewer than %d", v.Rows, v.Manifests, DefaultManifestMinMergeCount)
	}
}
