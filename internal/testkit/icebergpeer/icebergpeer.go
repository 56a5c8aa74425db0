// Package icebergpeer reads an Iceberg table with pyiceberg, an Iceberg
// implementation independent of the one thalweg writes with, so that tests
// assert what any engine would see rather than what thalweg's own reader
// reports. The reader is testdata/iceberg/read_table.py, run by the project
// virtualenv's Python (testenv.Python); Append writes as another engine
// would, with testdata/iceberg/append_rows.py.
//
// It stays: the reading and appending are pyiceberg's; this package only runs
// them.
package icebergpeer

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// View is what read_table.py prints about a table.
type View struct {
	Rows             int                 `json:"rows"`
	Schema           map[string]string   `json:"schema"` // Iceberg field name: type
	Arrow            map[string]string   `json:"arrow"`  // the scan's Arrow field name: type
	FormatVersion    int                 `json:"format_version"`
	Seqs             map[string][]uint64 `json:"seqs"`              // "topic/partition": every stored seq, sorted, duplicates kept
	Snapshots        []map[string]string `json:"snapshots"`         // each snapshot's thalweg.* summary properties
	Properties       map[string]string   `json:"properties"`        // the table's thalweg.positions property, if set
	TableProps       map[string]string   `json:"table_properties"`  // every property of the table
	Manifests        int                 `json:"manifests"`         // manifests in the current snapshot
	MetadataLog      int                 `json:"metadata_log"`      // entries of the metadata log (earlier metadata.json files)
	MetadataLocation string              `json:"metadata_location"` // the current metadata.json
	SnapshotID       int64               `json:"snapshot_id"`       // the current snapshot's, 0 when none
	DataFiles        int                 `json:"data_files"`        // data files a scan of the current snapshot plans
	DataBytes        int64               `json:"data_bytes"`        // their file_size_in_bytes, summed
	DuckDBCount      *int                `json:"duckdb_count"`
	Spec             string              `json:"spec"`            // the table's partition spec, as pyiceberg prints it
	FilePartitions   []string            `json:"file_partitions"` // each planned data file's partition record (JSON list of strings and nulls)
	FilteredFiles    int                 `json:"filtered_files"`  // data files a scan with the filter plans (ReadFiltered)
	FilteredRows     int                 `json:"filtered_rows"`   // rows it reads
	RawRows          []Row               `json:"row_list"`        // every row, with ReadRows only
}

// Row is one row of a raw table: its identity columns and payload, and the
// other raw columns when the table has them (nil when the value is null).
type Row struct {
	Topic       string            `json:"topic"`
	Partition   int32             `json:"partition"`
	Seq         uint64            `json:"seq"`
	MessageID   []byte            `json:"message_id"`
	Payload     []byte            `json:"payload"`
	Key         *[]byte           `json:"key"`
	PublishTime *int64            `json:"publish_time"` // microseconds since the epoch
	EventTime   *int64            `json:"event_time"`   // microseconds since the epoch
	Properties  map[string]string `json:"properties"`
}

// Read reads table through the catalog that props describes (pyiceberg
// catalog properties: {"type": "sql", "uri": "sqlite:///…", "warehouse":
// "file:///…"} or a REST catalog's). It fails t when the reader does.
func Read(t testing.TB, ctx context.Context, props map[string]string, table string) View {
	t.Helper()
	return read(t, ctx, props, table)
}

// ReadRows is Read that also lists every row of a raw table (RawRows),
// duplicates included.
func ReadRows(t testing.TB, ctx context.Context, props map[string]string, table string) View {
	t.Helper()
	return read(t, ctx, props, table, "--rows")
}

// ReadFiltered is Read that also plans and reads a scan with the
// pyiceberg row filter expr (FilteredFiles, FilteredRows): the pruning an
// engine gets from the table's partition spec.
func ReadFiltered(t testing.TB, ctx context.Context, props map[string]string, table, expr string) View {
	t.Helper()
	return read(t, ctx, props, table, "--filter", expr)
}

func read(t testing.TB, ctx context.Context, props map[string]string, table string, flags ...string) View {
	t.Helper()
	out, err := command(t, ctx, "read_table.py", props, append([]string{table}, flags...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		var stderr []byte
		if errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("read_table.py: %v\n%s", err, stderr)
	}
	var v View
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("read_table.py output %q: %v", out, err)
	}
	return v
}

// SQLProps are pyiceberg's properties for a SQL catalog in the SQLite file
// catalogDB over a warehouse in the local directory warehouse (both
// absolute paths).
func SQLProps(catalogDB, warehouse string) map[string]string {
	return map[string]string{"type": "sql", "uri": "sqlite:///" + catalogDB, "warehouse": "file://" + warehouse}
}

// Append appends n rows of topic and partition, seqs first.., to table
// with pyiceberg, in one commit (testdata/iceberg/append_rows.py).
func Append(t testing.TB, ctx context.Context, props map[string]string, table, topic string, partition int32, first uint64, n int) {
	t.Helper()
	cmd := command(t, ctx, "append_rows.py", props, table, topic,
		strconv.Itoa(int(partition)), strconv.FormatUint(first, 10), strconv.Itoa(n))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("append_rows.py: %v\n%s", err, out)
	}
}

// command runs testdata/iceberg/<script> with the catalog props (JSON)
// and args.
func command(t testing.TB, ctx context.Context, script string, props map[string]string, args ...string) *exec.Cmd {
	t.Helper()
	pj, err := json.Marshal(props)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(testenv.RepoRoot(), "testdata", "iceberg", script)
	return exec.CommandContext(ctx, testenv.Python(t), append([]string{path, string(pj)}, args...)...)
}
