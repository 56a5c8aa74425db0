package iceberg_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/internal/testkit/icebergrest"
)

func TestParsePartitionTerm(t *testing.T) {
	for _, s := range []string{"identity(topic)", "day(publish_time)", "Hour( event_time )", "bucket(16, key)",
		"truncate(4,key)", "year(publish_time)", "month(publish_time)", "void(key)"} {
		if _, err := iceberg.ParsePartitionTerm(s); err != nil {
			t.Errorf("ParsePartitionTerm(%q): %v", s, err)
		}
	}
	for s, want := range map[string]string{
		"week(publish_time)": `unknown transform "week"`,
		"bucket(0, key)":     "must be a whole number >= 1",
		"bucket(-3, key)":    "must be a whole number >= 1",
		"truncate(x, key)":   "must be a whole number >= 1",
		"bucket(key)":        "takes a width and a column",
		"day(a, b)":          "takes one column",
		"day":                "want",
		"identity()":         "no column",
	} {
		_, err := iceberg.ParsePartitionTerm(s)
		if !errors.Is(err, iceberg.ErrPartitionBy) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePartitionTerm(%q) = %v, want ErrPartitionBy saying %q", s, err, want)
		}
	}
	_, err := iceberg.ParsePartitionBy([]string{"day(publish_time)", "day( publish_time)"})
	if !errors.Is(err, iceberg.ErrPartitionBy) {
		t.Errorf("a term named twice: %v", err)
	}
	o := sqlOptions(t)
	o.PartitionBy = []string{"bucket(0, key)"}
	if _, err := iceberg.Open(o); !errors.Is(err, iceberg.ErrInvalidOptions) || !errors.Is(err, iceberg.ErrPartitionBy) {
		t.Errorf("Open with a bucket count of 0: %v", err)
	}
}

func TestCheckPartitionColumns(t *testing.T) {
	check := func(terms ...string) error {
		ts, err := iceberg.ParsePartitionBy(terms)
		if err != nil {
			t.Fatal(err)
		}
		return iceberg.CheckPartitionColumns(ts, batch.RawSchema())
	}
	if err := check("day(publish_time)", "bucket(16, key)", "bucket(4, topic)", "truncate(4, seq)", "hour(event_time)", "identity(partition)"); err != nil {
		t.Errorf("the raw columns: %v", err)
	}
	for terms, want := range map[string]string{
		"day(nope)":               `no column "nope"`,
		"day(key)":                `column "key" is a binary, which day does not apply to`,
		"truncate(4, seq)":        "", // seq is a long: truncate applies
		"identity(properties)":    `column "properties" is a map`,
		"identity(topic)":         "", // strings, binaries and timestamps take identity and truncate
		"truncate(4, key)":        "",
		"identity(event_time)":    "",
		"truncate(4, event_time)": `column "event_time" is a timestamptz, which truncate[4] does not apply to`,
	} {
		err := check(terms)
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", terms, err)
			}
			continue
		}
		if !errors.Is(err, iceberg.ErrPartitionBy) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want ErrPartitionBy saying %q", terms, err, want)
		}
	}
}

// TestPartitionedTable writes raw batches into a table partitioned by
// identity(partition) and hour(event_time) (null in every row: Iceberg's
// null partition), from two ordered sinks one after the other as a
// restarted worker would (the second gets the last batch again, and finds
// the spec it asks for, so it logs nothing about it): every row is stored
// once, each data file holds one partition value, and pyiceberg
// sees the spec and plans only the files of partition 1 for a scan
// filtered on it.
func TestPartitionedTable(t *testing.T) {
	o := sqlOptions(t)
	o.PartitionBy = []string{"identity(partition)", "hour(event_time)"}
	testPartitionedTable(t, o, sqlPeerProps(o))
}

// TestPartitionedTableREST is TestPartitionedTable through the Apache
// Iceberg REST catalog fixture.
func TestPartitionedTableREST(t *testing.T) {
	srv := icebergrest.Start(t)
	o := restOptions(srv)
	o.PartitionBy = []string{"identity(partition)", "hour(event_time)"}
	testPartitionedTable(t, o, srv.PeerProps())
}

func testPartitionedTable(t *testing.T, o iceberg.Options, peer map[string]string) {
	ctx := ctxFor(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o.Allocator = mem
	o.Ordered = true
	var logs crashtest.LogBuffer
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	off := uint64(0)
	for run := range 2 {
		tbl := openTable(t, o)
		s := dial(t, ctx, tbl)
		firsts := []uint64{1, 101, 201}
		if run == 1 {
			firsts = []uint64{201, 301}
		}
		writeRounds(t, ctx, s, mem, &off, firsts...)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if run == 1 {
			got := seqs(t, ctx, tbl)
			for p := range int32(2) {
				if !slices.Equal(got[part(p)], span(1, 400)) {
					t.Errorf("Rebuild(%s) = %v, want 1..400 once each", part(p), got[part(p)])
				}
			}
		}
	}
	if strings.Contains(logs.String(), "another partition spec") {
		t.Errorf("the restarted sink finds the spec it created another:\n%s", logs.String())
	}
	v := icebergpeer.ReadFiltered(t, ctx, peer, o.Table, "partition == 1")
	if v.Rows != 800 {
		t.Errorf("pyiceberg reads %d rows, want 800", v.Rows)
	}
	for p := range 2 {
		key := topic + "/" + fmt.Sprint(p)
		if !slices.Equal(v.Seqs[key], span(1, 400)) {
			t.Errorf("pyiceberg: seqs of %s = %v, want 1..400 once each", key, v.Seqs[key])
		}
	}
	if !strings.Contains(v.Spec, "partition: identity(") || !strings.Contains(v.Spec, "event_time_hour: hour(") {
		t.Errorf("pyiceberg sees the spec %q, want identity(partition) and hour(event_time)", v.Spec)
	}
	ones := 0
	for _, fp := range v.FilePartitions {
		switch fp {
		case `["1", null]`:
			ones++
		case `["0", null]`:
		default:
			t.Errorf("a data file's partition record is %s, want [\"0\" or \"1\", null]", fp)
		}
	}
	if ones == 0 || v.FilteredFiles != ones || v.DataFiles != len(v.FilePartitions) || v.FilteredFiles >= v.DataFiles {
		t.Errorf("a scan filtered on partition == 1 plans %d of %d files, want the %d of partition 1", v.FilteredFiles, v.DataFiles, ones)
	}
	if v.FilteredRows != 400 {
		t.Errorf("the filtered scan reads %d rows, want 400", v.FilteredRows)
	}
}

// keyedBatch is rawBatch with key "k<seq % distinct>", null for every
// tenth seq.
func keyedBatch(mem memory.Allocator, p int32, first uint64, n, distinct int) *batch.Batch {
	b := rawBatch(mem, p, first, n)
	defer b.Release()
	kb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	defer kb.Release()
	for i := range n {
		seq := first + uint64(i)
		if seq%10 == 0 {
			kb.AppendNull()
			continue
		}
		kb.Append([]byte(fmt.Sprintf("k%d", seq%uint64(distinct))))
	}
	keys := kb.NewArray()
	defer keys.Release()
	cols := slices.Clone(b.Rec.Columns())
	cols[4] = keys
	return &batch.Batch{Rec: array.NewRecordBatch(b.Rec.Schema(), cols, b.Rec.NumRows()), Spans: b.Spans}
}

// TestPartitionHighCardinality writes a batch of 1000 rows into a table
// partitioned by identity(seq) and bucket(8, key), with a null key in
// every tenth row: the batch is split into a data file per seq (a
// thousand distinct values), one open at a time, the null keys into
// bucket's null partition; pyiceberg reads every row once and a scan
// filtered on one seq plans its file only.
func TestPartitionHighCardinality(t *testing.T) {
	o := sqlOptions(t)
	o.PartitionBy = []string{"identity(seq)", "bucket(8, key)"}
	o.Ordered = true
	_, mem, _, s := newSink(t, o)
	// A thousand files, each synced: slow under the race detector on a
	// loaded machine. A deadline of its own: newSink's minute would cap a
	// context derived from it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	send(t, ctx, s, 1, keyedBatch(mem, 0, 1, 1000, 1000))
	if err := s.WaitDurable(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	v := icebergpeer.ReadFiltered(t, ctx, sqlPeerProps(o), o.Table, "seq == 7")
	if !slices.Equal(v.Seqs[topic+"/0"], span(1, 1000)) {
		t.Errorf("pyiceberg reads %d rows, want 1..1000 once each", v.Rows)
	}
	nulls := 0
	for _, fp := range v.FilePartitions {
		if strings.HasSuffix(fp, ", null]") {
			nulls++
		}
	}
	if v.DataFiles != 1000 || nulls != 100 {
		t.Errorf("%d data files (%d in the null bucket), want 1000 (100)", v.DataFiles, nulls)
	}
	if v.FilteredFiles != 1 || v.FilteredRows != 1 {
		t.Errorf("a scan filtered on seq 7 plans %d files and reads %d rows, want 1 and 1", v.FilteredFiles, v.FilteredRows)
	}
}

// TestPartitionByOnExistingTable: a table that exists with another spec
// (here: unpartitioned) is written as it is, and the Sink says so once.
func TestPartitionByOnExistingTable(t *testing.T) {
	o := sqlOptions(t)
	o.Ordered = true
	ctx, mem, tbl, s := newSink(t, o)
	off := uint64(0)
	writeRounds(t, ctx, s, mem, &off, 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	var logs crashtest.LogBuffer
	o.PartitionBy = []string{"identity(partition)"}
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	o.Allocator = mem
	tbl = openTable(t, o)
	s = dial(t, ctx, tbl)
	writeRounds(t, ctx, s, mem, &off, 101, 201)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "iceberg table exists with another partition spec"); n != 1 {
		t.Errorf("%d log lines about the spec, want 1:\n%s", n, logs.String())
	}
	v := icebergpeer.Read(t, ctx, sqlPeerProps(o), o.Table)
	if v.Rows != 600 || v.Spec != "[]" {
		t.Errorf("pyiceberg reads %d rows under spec %q, want 600 under the unpartitioned spec", v.Rows, v.Spec)
	}
}

// TestPartitionColumnMissing: a batch without a source column of the
// table's spec fails the Sink for good, naming the column.
func TestPartitionColumnMissing(t *testing.T) {
	o := sqlOptions(t)
	o.PartitionBy = []string{"bucket(4, key)"}
	ctx, mem, _, s := newSink(t, o)
	send(t, ctx, s, 1, rawBatch(mem, 0, 1, 10))
	b := rawBatch(mem, 0, 11, 10)
	defer b.Release()
	rec := b.Rec
	idx := rec.Schema().FieldIndices("key")[0]
	fields := slices.Delete(slices.Clone(rec.Schema().Fields()), idx, idx+1)
	cols := slices.Delete(slices.Clone(rec.Columns()), idx, idx+1)
	cut := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	defer cut.Release()
	err := s.Send(ctx, 2, &batch.Batch{Rec: cut, Spans: b.Spans})
	var e *iceberg.Error
	if !errors.As(err, &e) || e.Retryable() || !strings.Contains(err.Error(), `no column "key"`) {
		t.Errorf("Send of a batch without the partition column: %v, want a permanent error naming key", err)
	}
}

// TestPartitionByUnknownColumn: a term naming a column the first batch
// lacks (a json or pulsar schema's columns are known only then) fails the
// Sink for good when it would create the table, naming the column and
// the columns the batch has; no table is created.
func TestPartitionByUnknownColumn(t *testing.T) {
	o := sqlOptions(t)
	o.PartitionBy = []string{"day(ts)"}
	ctx, mem, tbl, s := newSink(t, o)
	b := rawBatch(mem, 0, 1, 10)
	defer b.Release()
	err := s.Send(ctx, 1, b)
	var e *iceberg.Error
	if !errors.As(err, &e) || e.Retryable() || !errors.Is(err, iceberg.ErrPartitionBy) ||
		!strings.Contains(err.Error(), `no column "ts" (the columns: topic, partition, seq,`) {
		t.Errorf("Send: %v, want a permanent ErrPartitionBy naming ts and the batch's columns", err)
	}
	if pos, err := tbl.Positions(ctx); err != nil || len(pos) != 0 {
		t.Errorf("Positions = %v, %v; want no table", pos, err)
	}
}
