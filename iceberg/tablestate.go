package iceberg

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	iceberg "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// publishTimeColumn is the column of batch.RawSchema that holds a
// record's publish time; the freshness metric reads it.
const publishTimeColumn = "publish_time"

// newestPublishTime is the newest publish_time among rec's rows; zero when
// rec has no such timestamp column or every value is null.
func newestPublishTime(rec arrow.RecordBatch) time.Time {
	idx := rec.Schema().FieldIndices(publishTimeColumn)
	if len(idx) != 1 {
		return time.Time{}
	}
	col, ok := rec.Column(idx[0]).(*array.Timestamp)
	if !ok {
		return time.Time{}
	}
	var newest arrow.Timestamp
	found := false
	for i := range col.Len() {
		if col.IsValid(i) && (!found || col.Value(i) > newest) {
			newest, found = col.Value(i), true
		}
	}
	if !found {
		return time.Time{}
	}
	toTime, err := col.DataType().(*arrow.TimestampType).GetToTimeFunc()
	if err != nil {
		return time.Time{}
	}
	return toTime(newest)
}

// newest is the newest publish_time among the rows tk's batches wrote.
func (tk taken) newest() time.Time {
	var t time.Time
	for _, p := range tk.batches {
		if p.newest.After(t) {
			t = p.newest
		}
	}
	return t
}

// metadataSizes returns the size of tbl's current metadata.json and the
// bytes of every file in its directory (metadata files, manifest lists and
// manifests): one stat and one listing of the warehouse.
func metadataSizes(ctx context.Context, tbl *table.Table) (file, dir int64, err error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return 0, 0, err
	}
	loc := tbl.MetadataLocation()
	f, err := fsys.Open(loc)
	if err != nil {
		return 0, 0, fmt.Errorf("open %s: %w", loc, err)
	}
	st, err := f.Stat()
	f.Close()
	if err != nil {
		return 0, 0, fmt.Errorf("stat %s: %w", loc, err)
	}
	file = st.Size()
	lfs, ok := fsys.(iceio.ListableIO)
	i := strings.LastIndex(loc, "/")
	if !ok || i < 0 {
		return file, 0, fmt.Errorf("list the directory of %s: the warehouse's file system %T cannot list", loc, fsys)
	}
	err = lfs.WalkDir(loc[:i], func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		dir += info.Size()
		return nil
	})
	if err != nil {
		return file, 0, fmt.Errorf("list the directory of %s: %w", loc, err)
	}
	return file, dir, nil
}

// recordTable records the gauges of the table as the sink last saw it:
// its snapshots, its current snapshot's data files (the summary's
// total-data-files) and manifests (one read of the manifest list), and the
// sizes of its metadata (metadataSizes). Best effort: what the store fails
// to answer leaves its gauges as they were.
func (s *Sink) recordTable(ctx context.Context) {
	tbl := s.table()
	if tbl == nil {
		return
	}
	if file, dir, err := metadataSizes(ctx, tbl); err == nil {
		s.m.metadata(file, dir)
	}
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return
	}
	var files int64
	if cur.Summary != nil {
		files, _ = strconv.ParseInt(cur.Summary.Properties["total-data-files"], 10, 64)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return
	}
	ms, err := cur.Manifests(fs)
	if err != nil {
		return
	}
	s.m.tableState(int64(len(tbl.Metadata().Snapshots())), files, int64(len(ms)))
}

// State is what Table.State reads of a table: its current snapshot, its
// files, its metadata and what thalweg keeps in it.
type State struct {
	Identifier       string // "namespace.table"
	Exists           bool   // false: nothing else is set
	MetadataLocation string
	// PartitionBy is the table's partition spec in Options.PartitionBy's
	// spelling, e.g. ["day(publish_time)", "bucket(16, key)"]; empty when
	// the table is unpartitioned.
	PartitionBy []string
	// SnapshotID is the current snapshot's id, 0 when there is none;
	// LastCommit its timestamp (the last commit's time).
	SnapshotID int64
	LastCommit time.Time
	Snapshots  int // snapshots the metadata retains
	// DataFiles, DataBytes and Records are the current snapshot's
	// summary's total-data-files, total-files-size and total-records.
	DataFiles, DataBytes, Records int64
	Manifests                     int   // in the current snapshot's manifest list
	MetadataBytes                 int64 // the current metadata.json
	MetadataDirBytes              int64 // every file in its directory
	// Positions is the highest seq per partition (Table.Positions).
	Positions map[string]uint64
	// Lease is the maintenance lease (PropMaintenanceLease), nil when the
	// table has none; LeaseValue is its raw value when it does not parse.
	Lease      *Lease
	LeaseValue string
	// BoundedMetadata are the table's values of the properties that bound
	// its metadata (boundedMetadataProps), "" for one it lacks.
	BoundedMetadata map[string]string
}

// BoundedMetadataKeys are the table properties that bound a table's
// metadata, which State reports, in key order.
func BoundedMetadataKeys() []string {
	return slices.Sorted(maps.Keys(boundedMetadataProps()))
}

// State reads the table's state from the catalog and the warehouse: the
// metadata, the current snapshot's manifest list, a stat of the
// metadata.json and a listing of its directory. A table that does not
// exist is a State with Exists false.
func (t *Table) State(ctx context.Context) (State, error) {
	st := State{Identifier: t.opts.Table}
	tbl, found, err := t.load(ctx)
	if err != nil || !found {
		if err != nil {
			err = newError("state", err, false)
		}
		return st, err
	}
	st.Exists, st.MetadataLocation = true, tbl.MetadataLocation()
	st.Snapshots = len(tbl.Metadata().Snapshots())
	st.PartitionBy = partitionTerms(tbl.Spec(), tbl.Schema())
	if st.Positions, err = tablePositions(tbl); err != nil {
		return st, newError("state", err, false)
	}
	props := tbl.Properties()
	st.BoundedMetadata = map[string]string{}
	for _, k := range BoundedMetadataKeys() {
		st.BoundedMetadata[k] = props[k]
	}
	if v, ok := props[PropMaintenanceLease]; ok {
		if l, err := ParseLease(v); err == nil {
			st.Lease = &l
		} else {
			st.LeaseValue = v
		}
	}
	if st.MetadataBytes, st.MetadataDirBytes, err = metadataSizes(ctx, tbl); err != nil {
		return st, newError("state", err, false)
	}
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return st, nil
	}
	st.SnapshotID, st.LastCommit = cur.SnapshotID, time.UnixMilli(cur.TimestampMs)
	if cur.Summary != nil {
		for key, v := range map[string]*int64{"total-data-files": &st.DataFiles, "total-files-size": &st.DataBytes, "total-records": &st.Records} {
			if s, ok := cur.Summary.Properties[key]; ok {
				if *v, err = strconv.ParseInt(s, 10, 64); err != nil {
					return st, newError("state", fmt.Errorf("snapshot %d: %s %q: %w", cur.SnapshotID, key, s, err), false)
				}
			}
		}
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return st, newError("state", err, false)
	}
	ms, err := cur.Manifests(fsys)
	if err != nil {
		return st, newError("state", fmt.Errorf("snapshot %d: read the manifest list: %w", cur.SnapshotID, err), false)
	}
	st.Manifests = len(ms)
	return st, nil
}

// partitionTerms spells spec's fields as Options.PartitionBy's terms
// (ParsePartitionTerm reads them back): "transform(column)", or
// "bucket(N, column)" and "truncate(W, column)" for the transforms with a
// width, which iceberg-go spells "bucket[N]".
func partitionTerms(spec iceberg.PartitionSpec, sc *iceberg.Schema) []string {
	var out []string
	for _, f := range spec.Fields() {
		col, ok := sc.FindColumnName(f.SourceID())
		if !ok {
			col = fmt.Sprintf("field %d", f.SourceID())
		}
		name, width, hasWidth := strings.Cut(strings.TrimSuffix(f.Transform.String(), "]"), "[")
		if hasWidth {
			out = append(out, fmt.Sprintf("%s(%s, %s)", name, width, col))
		} else {
			out = append(out, fmt.Sprintf("%s(%s)", name, col))
		}
	}
	return out
}
