package iceberg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// maxSchemaAttempts bounds the commits one schema change tries before Send
// reports the failure (retryable: the lane retries the Send).
const maxSchemaAttempts = 5

// tableProps are the properties of a table the sink creates: its format,
// its Parquet compression, PropArrowSchema and the bounded-metadata
// properties (boundedMetadataProps).
func tableProps(src *arrow.Schema) iceberg.Properties {
	p := boundedMetadataProps()
	p[table.PropertyFormatVersion] = "2"
	p[table.ParquetCompressionKey] = "zstd"
	p[PropArrowSchema] = encodeArrowSchema(src)
	return p
}

// planLocked returns the plan of the batches of schema src: on the first
// batch of a schema it creates the table when missing, or evolves its
// schema when src adds to it (a compatible change; an incompatible one is
// a *schemaevo.Error naming the field).
func (s *Sink) planLocked(ctx context.Context, src *arrow.Schema) (*plan, error) {
	if p, ok := s.mu.plans[src]; ok {
		return p, nil
	}
	next, err := icebergSchemaOf(src)
	if err != nil {
		return nil, err
	}
	if s.mu.tbl == nil {
		spec, err := partitionSpec(s.opts.partitionBy, next)
		if err != nil {
			return nil, err
		}
		tbl, err := createTable(ctx, s.cat, s.t.ident, next, spec, tableProps(src), s.opts.Warehouse, s.opts.hooks)
		if err != nil {
			return nil, err
		}
		s.mu.tbl, s.mu.fs = tbl, tbl.FS
		pos, err := tablePositions(tbl)
		if err != nil {
			return nil, err
		}
		s.mu.pos.merge(pos)
	}
	for attempt := 1; ; attempt++ {
		tbl := s.mu.tbl
		change, err := evolve(tbl.Schema(), next)
		if err != nil {
			return nil, err
		}
		if !change {
			break
		}
		evolved, err := s.evolveTableLocked(ctx, tbl, next, src)
		if err == nil {
			s.opts.Logger.Info("iceberg table schema evolved", "table", s.opts.Table,
				"schema_id", evolved.Schema().ID)
			s.mu.tbl = evolved
			break
		}
		if attempt >= maxSchemaAttempts {
			return nil, fmt.Errorf("evolve the table schema: %w", err)
		}
		// Another writer may have changed the table: evolve its latest.
		latest, found, lerr := loadTable(ctx, s.cat, s.t.ident, s.opts.hooks)
		if lerr != nil {
			return nil, errors.Join(err, lerr)
		}
		if !found {
			return nil, fmt.Errorf("table %s no longer exists", s.opts.Table)
		}
		s.mu.tbl = latest
	}
	if !s.specChecked {
		s.specChecked = true
		s.reportOtherSpec(s.mu.tbl)
	}
	if err := checkSpecColumns(s.mu.tbl, src); err != nil {
		return nil, err
	}
	p, err := newPlan(src, s.mu.tbl.Schema())
	if err != nil {
		return nil, err
	}
	s.mu.plans[src] = p
	return p, nil
}

// reportOtherSpec logs, once per Sink, that tbl's partition spec is not
// the one Options.PartitionBy asks for: the table is written with its own.
func (s *Sink) reportOtherSpec(tbl *table.Table) {
	want, err := partitionSpec(s.opts.partitionBy, tbl.Schema())
	have := tbl.Spec()
	if err == nil && sameTransforms(have, want) {
		return
	}
	s.opts.Logger.Warn("iceberg table exists with another partition spec; it is written with its own, not changed",
		"table", s.opts.Table, "spec", have.String(), "partition_by", strings.Join(s.opts.PartitionBy, ", "))
}

// sameTransforms reports whether a and b apply the same transforms to the
// same columns in the same order, whatever their fields are named (engines
// name them differently).
func sameTransforms(a, b iceberg.PartitionSpec) bool {
	var af, bf []iceberg.PartitionField
	for _, f := range a.Fields() {
		af = append(af, f)
	}
	for _, f := range b.Fields() {
		bf = append(bf, f)
	}
	return slices.EqualFunc(af, bf, func(x, y iceberg.PartitionField) bool {
		return x.SourceID() == y.SourceID() && x.Transform.Equals(y.Transform)
	})
}

// evolveTableLocked commits the union of tbl's schema and next, and src's
// fields into PropArrowSchema.
func (s *Sink) evolveTableLocked(ctx context.Context, tbl *table.Table, next *iceberg.Schema, src *arrow.Schema) (*table.Table, error) {
	tx := tbl.NewTransaction()
	if err := tx.UpdateSchema(true, false).UnionByNameWith(next).Commit(); err != nil {
		return nil, err
	}
	merged, err := mergeArrowSchema(tbl.Properties()[PropArrowSchema], src)
	if err != nil {
		return nil, err
	}
	if err := tx.SetProperties(iceberg.Properties{PropArrowSchema: merged}); err != nil {
		return nil, err
	}
	out, err := tx.Commit(ctx)
	if err != nil {
		return nil, err
	}
	return rebind(out, s.mu.fs, s.cat), nil
}

// mergeArrowSchema adds src's fields that cur (a PropArrowSchema value,
// "" for none) lacks, by name, and makes nullable a field either has
// nullable: the Arrow schema Rebuild returns every row in.
func mergeArrowSchema(cur string, src *arrow.Schema) (string, error) {
	if cur == "" {
		return encodeArrowSchema(src), nil
	}
	old, err := decodeArrowSchema(cur)
	if err != nil {
		return "", err
	}
	fields := old.Fields()
	for _, f := range src.Fields() {
		idx := old.FieldIndices(f.Name)
		if len(idx) == 0 {
			f.Nullable = true
			fields = append(fields, f)
			continue
		}
		if f.Nullable {
			fields[idx[0]].Nullable = true
		}
	}
	for i := range fields {
		if len(src.FieldIndices(fields[i].Name)) == 0 {
			fields[i].Nullable = true
		}
	}
	return encodeArrowSchema(arrow.NewSchema(fields, nil)), nil
}

// arrowSchemaChange is the PropArrowSchema a commit of files sets: "" when
// the table's already names every field of their batches.
func (s *Sink) arrowSchemaChange(base *table.Table, files []*dataFile) string {
	cur := base.Properties()[PropArrowSchema]
	out := cur
	seen := map[*arrow.Schema]bool{}
	for _, f := range files {
		src := f.plan.src
		if seen[src] || s.arrowDone[cur] == src {
			continue
		}
		seen[src] = true
		merged, err := mergeArrowSchema(out, src)
		if err != nil {
			continue // a property another engine wrote badly: leave it
		}
		out = merged
	}
	if out == cur {
		for src := range seen {
			s.arrowDone[cur] = src
		}
		return ""
	}
	return out
}

// retriesConfigured reports whether the table asks iceberg-go to retry a
// refused commit by itself (commit.retry.num-retries > 0): a replay on a
// newer base would carry this commit's positions, merged on the old base,
// over another writer's, so such a table's commits go through a catalog
// that makes every refusal final (noReplay).
func retriesConfigured(t *table.Table) bool {
	n, err := strconv.Atoi(t.Properties()[table.CommitNumRetriesKey])
	return err == nil && n > 0
}

// noReplay makes a refused commit an error iceberg-go does not retry; the
// sink then merges again itself.
type noReplay struct{ catalogIO }

var errRefused = errors.New("the catalog refused the commit: the table changed")

func (n noReplay) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	m, loc, err := n.catalogIO.CommitTable(ctx, ident, reqs, updates)
	if errors.Is(err, table.ErrCommitFailed) {
		return nil, "", fmt.Errorf("%w: %s", errRefused, err.Error())
	}
	return m, loc, err
}
