package iceberg

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	iceberg "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// ErrPartitionBy wraps every error of an Options.PartitionBy term: one
// that does not parse, names an unknown transform, a bucket count or a
// truncate width below 1, a column the table does not have or a column
// the transform does not apply to.
var ErrPartitionBy = errors.New("iceberg: bad partition_by term")

// PartitionTerm is one parsed term of Options.PartitionBy: an Iceberg
// transform (iceberg.ParseTransform) applied to a named column.
type PartitionTerm struct {
	Transform iceberg.Transform
	Column    string
}

// ParsePartitionTerm parses "transform(column)" (identity, year, month,
// day, hour, void) or "bucket(N, column)" / "truncate(W, column)" with N
// and W at least 1.
func ParsePartitionTerm(s string) (PartitionTerm, error) {
	bad := func(format string, a ...any) (PartitionTerm, error) {
		return PartitionTerm{}, fmt.Errorf("%w %q: %s", ErrPartitionBy, s, fmt.Sprintf(format, a...))
	}
	name, rest, ok := strings.Cut(strings.TrimSpace(s), "(")
	if !ok || !strings.HasSuffix(rest, ")") {
		return bad(`want "transform(column)", "bucket(N, column)" or "truncate(W, column)"`)
	}
	name = strings.ToLower(strings.TrimSpace(name))
	args := strings.Split(strings.TrimSuffix(rest, ")"), ",")
	for i := range args {
		args[i] = strings.TrimSpace(args[i])
	}
	spelled := name
	switch name {
	case "bucket", "truncate":
		if len(args) != 2 {
			return bad("%s takes a width and a column: %s(N, column)", name, name)
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 {
			return bad("the %s width must be a whole number >= 1, got %q", name, args[0])
		}
		spelled = name + "[" + args[0] + "]"
		args = args[1:]
	case "identity", "year", "month", "day", "hour", "void":
		if len(args) != 1 {
			return bad("%s takes one column: %s(column)", name, name)
		}
	default:
		return bad("unknown transform %q (want identity, year, month, day, hour, bucket, truncate or void)", name)
	}
	if args[0] == "" {
		return bad("no column")
	}
	tr, err := iceberg.ParseTransform(spelled)
	if err != nil {
		return bad("%v", err)
	}
	return PartitionTerm{Transform: tr, Column: args[0]}, nil
}

// ParsePartitionBy parses every term of terms (ParsePartitionTerm) and
// refuses a column partitioned twice by the same transform.
func ParsePartitionBy(terms []string) ([]PartitionTerm, error) {
	out := make([]PartitionTerm, 0, len(terms))
	seen := map[string]bool{}
	for _, s := range terms {
		t, err := ParsePartitionTerm(s)
		if err != nil {
			return nil, err
		}
		if seen[t.fieldName()] {
			return nil, fmt.Errorf("%w %q: %s(%s) is named twice", ErrPartitionBy, s, t.Transform, t.Column)
		}
		seen[t.fieldName()] = true
		out = append(out, t)
	}
	return out, nil
}

// fieldName is the partition field's name: the column's for identity,
// column_<transform> otherwise (column_bucket, column_trunc, column_day).
func (t PartitionTerm) fieldName() string {
	switch t.Transform.(type) {
	case iceberg.IdentityTransform:
		return t.Column
	case iceberg.BucketTransform:
		return t.Column + "_bucket"
	case iceberg.TruncateTransform:
		return t.Column + "_trunc"
	}
	return t.Column + "_" + t.Transform.String()
}

// CheckPartitionColumns checks terms against the columns of an Arrow
// schema (a batch's): every column exists and its Iceberg type takes the
// transform.
func CheckPartitionColumns(terms []PartitionTerm, s *arrow.Schema) error {
	sc, err := icebergSchemaOf(s)
	if err != nil {
		return err
	}
	_, err = partitionSpec(terms, sc)
	return err
}

// partitionSpec is the partition spec of terms on schema sc.
func partitionSpec(terms []PartitionTerm, sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	opts := make([]iceberg.PartitionOption, 0, len(terms))
	for _, t := range terms {
		f, ok := sc.FindFieldByName(t.Column)
		if !ok {
			names := make([]string, 0, sc.NumFields())
			for _, g := range sc.Fields() {
				names = append(names, g.Name)
			}
			return iceberg.PartitionSpec{}, fmt.Errorf("%w %s(%s): no column %q (the columns: %s)",
				ErrPartitionBy, t.Transform, t.Column, t.Column, strings.Join(names, ", "))
		}
		if !t.Transform.CanTransform(f.Type) {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w %s(%s): column %q is a %s, which %s does not apply to",
				ErrPartitionBy, t.Transform, t.Column, t.Column, f.Type, t.Transform)
		}
		opts = append(opts, iceberg.AddPartitionFieldBySourceID(f.ID, t.fieldName(), t.Transform, sc, nil))
	}
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		return iceberg.PartitionSpec{}, fmt.Errorf("%w: %w", ErrPartitionBy, err)
	}
	return spec, nil
}

// checkSpecColumns reports a batch schema that lacks a source column of
// the table's partition spec: its rows have no partition value.
func checkSpecColumns(tbl *table.Table, src *arrow.Schema) error {
	spec := tbl.Spec()
	for _, f := range spec.Fields() {
		col, ok := tbl.Schema().FindColumnName(f.SourceID())
		if !ok {
			continue
		}
		if len(src.FieldIndices(col)) == 0 {
			return fmt.Errorf("%w: the batch has no column %q, the source of partition field %q (%s)",
				errMissingPartitionColumn, col, f.Name, f.Transform)
		}
	}
	return nil
}

var errMissingPartitionColumn = errors.New("a partition column is missing")

// writePartitioned writes rec (in the plan's file schema; consumed) into
// data files of tbl split by the table's partition spec, with iceberg-go's
// clustered writer: the rows of one partition value after another, one
// data file open at a time, rolled at TargetFileSize. Each data file
// carries its partition record; a null source value is Iceberg's null
// partition.
func (s *Sink) writePartitioned(ctx context.Context, tbl *table.Table, pl *plan, p *pendingOne, rec arrow.RecordBatch) ([]*dataFile, error) {
	synced := table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(),
		func(ctx context.Context) (iceio.IO, error) {
			fs, err := tbl.FS(ctx)
			if err != nil {
				return nil, err
			}
			w, ok := fs.(iceio.WriteFileIO)
			if !ok {
				return nil, fmt.Errorf("the warehouse's file system %T cannot write", fs)
			}
			return syncingFS{w}, nil
		}, nil)
	one := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	var out []*dataFile
	var errs []error
	for df, err := range table.WriteRecords(ctx, synced, pl.file, iter.Seq2[arrow.RecordBatch, error](one),
		table.WithClusteredWrite(), table.WithTargetFileSize(s.opts.TargetFileSize)) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.m.files.Add(1)
		out = append(out, &dataFile{location: df.FilePath(), plan: pl, rows: df.Count(),
			size: df.FileSizeBytes(), batches: []*pendingOne{p}, df: df, split: true})
		if err := checkPartitionValue(tbl, df); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		for _, f := range out {
			removeFile(s.ctx, tbl, f.location)
		}
		return nil, fmt.Errorf("write partitioned data files: %w", err)
	}
	return out, nil
}

// ErrPartitionValue wraps the refusal of a batch holding a partition
// value that engines other than iceberg-go would miss (checkPartitionValue).
var ErrPartitionValue = errors.New("iceberg: a partition value other engines would miss")

// checkPartitionValue refuses the data file df of tbl when another engine
// would miss its rows:
//
//   - an identity or truncate value that is the empty string: iceberg-go
//     v0.7.0 writes the manifest summary of such a value without a lower
//     bound, which the Iceberg spec reads as "every value is null", so
//     pyiceberg, Spark and Trino skip the whole manifest (every file in it)
//     in a scan filtered on the column;
//   - a location whose partition directories hold "../" (a value ending in
//     "..") or "__0x": the S3 file system (gocloud) stores such a key
//     escaped, not as recorded. Refused on every warehouse, so that a
//     table's values do not depend on where it lives.
func checkPartitionValue(tbl *table.Table, df iceberg.DataFile) error {
	spec := tbl.Spec()
	for _, f := range spec.Fields() {
		switch f.Transform.(type) {
		case iceberg.IdentityTransform, iceberg.TruncateTransform:
			if v, ok := df.Partition()[f.FieldID].(string); ok && v == "" {
				col, _ := tbl.Schema().FindColumnName(f.SourceID())
				return fmt.Errorf("%w: %s(%s) of a row is the empty string, which iceberg-go summarises in the manifest "+
					"as if %s held only nulls, so that engines filtering on %s skip every file of it; "+
					"write null instead, or partition by bucket(N, %s)",
					ErrPartitionValue, f.Transform, col, col, col, col)
			}
		}
	}
	rel := strings.TrimPrefix(df.FilePath(), tbl.Location())
	if strings.Contains(rel, "../") || strings.Contains(rel, "__0x") {
		return fmt.Errorf("%w: the data file %s: a partition directory ending in \"..\" or holding \"__0x\" is "+
			"stored under another name on S3", ErrPartitionValue, rel)
	}
	return nil
}

// syncingFS syncs every file it creates before closing it (see
// countingWriter.Close).
type syncingFS struct{ iceio.WriteFileIO }

func (f syncingFS) Create(name string) (iceio.FileWriter, error) {
	w, err := f.WriteFileIO.Create(name)
	if err != nil {
		return nil, err
	}
	return syncingWriter{w}, nil
}

type syncingWriter struct{ iceio.FileWriter }

func (w syncingWriter) Close() error { return (&countingWriter{w: w.FileWriter}).Close() }
