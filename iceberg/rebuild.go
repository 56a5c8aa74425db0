package iceberg

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/thalweg/thalweg/batch"
)

// rebuildBatchRows bounds the rows of one batch Rebuild returns.
const rebuildBatchRows = 1 << 16

// Rebuild reads back the rows of partition (a topic-partition name, as
// batch.OffsetSpan names it) with a seq in [from, to], in seq order, each
// seq once (an at-least-once table may hold a record twice), as batches
// in the Arrow schema they were written in (PropArrowSchema: unsigned
// types restored, columns added later null in older rows). Consecutive
// batches carry consecutive spans: the first starts at from, each next
// one where the previous ended, the last ends at the highest seq
// returned, or at the table's position for partition when that is higher
// and within [from, to] (the records in between were dead-lettered, not
// stored). It has the shape of pipeline.RebuildFunc.
//
// Rows are matched on the identity columns (topic, partition, seq, or
// _topic, _partition, _seq); a table without them cannot be rebuilt from.
// The caller owns the returned batches and must Release each; on error
// none is returned. Batches are allocated from Options.Allocator.
func (t *Table) Rebuild(ctx context.Context, partition string, from, to uint64) ([]*batch.Batch, error) {
	out, err := t.rebuild(ctx, partition, from, to)
	if err != nil {
		return nil, newError("rebuild", fmt.Errorf("partition %q seq %d..%d: %w", partition, from, to, err), false)
	}
	return out, nil
}

func (t *Table) rebuild(ctx context.Context, partition string, from, to uint64) ([]*batch.Batch, error) {
	if from > to {
		return nil, fmt.Errorf("from %d > to %d", from, to)
	}
	tbl, found, err := t.load(ctx)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNoTable
	}
	enc, ok := tbl.Properties()[PropArrowSchema]
	if !ok {
		return nil, fmt.Errorf("table %s has no %s: thalweg did not write it", t.opts.Table, PropArrowSchema)
	}
	schema, err := decodeArrowSchema(enc)
	if err != nil {
		return nil, err
	}
	id := identityOf(schema)
	if !id.ok {
		return nil, fmt.Errorf("table %s has no identity columns (topic, partition, seq)", t.opts.Table)
	}
	if from > math.MaxInt64 {
		return nil, nil
	}
	topic, index := batch.SplitPartition(partition)
	col := func(i int) iceberg.UnboundTerm { return iceberg.Reference(schema.Field(i).Name) }
	filter := iceberg.NewAnd(
		iceberg.EqualTo(col(id.Topic), topic),
		iceberg.EqualTo(col(id.Partition), index),
		iceberg.GreaterThanEqual(col(id.Seq), int64(from)),
		iceberg.LessThanEqual(col(id.Seq), int64(min(to, math.MaxInt64))))
	mem := t.opts.Allocator
	sctx := compute.WithAllocator(ctx, mem)
	_, recs, err := tbl.Scan(table.WithRowFilter(filter)).ToArrowRecords(sctx)
	if err != nil {
		return nil, err
	}
	var restored []arrow.RecordBatch
	defer func() {
		for _, r := range restored {
			r.Release()
		}
	}()
	for rec, err := range recs {
		if err != nil {
			return nil, err
		}
		r, err := restore(sctx, rec, schema, mem)
		rec.Release()
		if err != nil {
			return nil, err
		}
		restored = append(restored, r)
	}
	pos, err := tablePositions(tbl)
	if err != nil {
		return nil, err
	}
	return seqOrder(sctx, restored, id, partition, from, min(to, max(pos[partition], from)))
}

// seqOrder sorts the rows of recs by seq, drops repeated seqs and cuts the
// result into batches with consecutive spans from from to at least last.
func seqOrder(ctx context.Context, recs []arrow.RecordBatch, id identity, partition string, from, last uint64) (out []*batch.Batch, err error) {
	type row struct {
		seq uint64
		i   int64 // in all
	}
	var rows []row
	for _, rec := range recs {
		seqs := rec.Column(id.Seq).(*array.Uint64)
		for i := range int(rec.NumRows()) {
			rows = append(rows, row{seqs.Value(i), int64(len(rows))})
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	all, err := concat(ctx, recs)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	slices.SortStableFunc(rows, func(a, b row) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	rows = slices.CompactFunc(rows, func(a, b row) bool { return a.seq == b.seq })

	defer func() {
		if err != nil {
			for _, b := range out {
				b.Release()
			}
			out = nil
		}
	}()
	msgID := messageIDColumn(all.Schema())
	next := from
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), rebuildBatchRows)]
		rows = rows[len(chunk):]
		idx := make([]int64, len(chunk))
		for k, r := range chunk {
			idx[k] = r.i
		}
		rec, err := take(ctx, all, idx)
		if err != nil {
			return out, err
		}
		sp := batch.OffsetSpan{Partition: partition, First: next, Last: chunk[len(chunk)-1].seq}
		if len(rows) == 0 {
			sp.Last = max(sp.Last, last)
		}
		if msgID >= 0 {
			ids := rec.Column(msgID).(*array.Binary)
			sp.LastID = slices.Clone(ids.Value(int(rec.NumRows()) - 1))
		}
		out = append(out, &batch.Batch{Rec: rec, Spans: []batch.OffsetSpan{sp}})
		next = sp.Last + 1
	}
	return out, nil
}

// messageIDColumn is the index of a binary message_id (or _message_id)
// column, -1 when there is none.
func messageIDColumn(s *arrow.Schema) int {
	for _, name := range []string{"message_id", "_message_id"} {
		if idx := s.FieldIndices(name); len(idx) == 1 && s.Field(idx[0]).Type.ID() == arrow.BINARY {
			return idx[0]
		}
	}
	return -1
}

// concat concatenates recs (all of one schema) into one record.
func concat(ctx context.Context, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	mem := compute.GetAllocator(ctx)
	cols := make([]arrow.Array, recs[0].NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var total int64
	for _, rec := range recs {
		total += rec.NumRows()
	}
	for c := range cols {
		parts := make([]arrow.Array, len(recs))
		for r, rec := range recs {
			parts[r] = rec.Column(c)
		}
		a, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, err
		}
		cols[c] = a
	}
	return array.NewRecordBatch(recs[0].Schema(), cols, total), nil
}

// take builds the record of rows idx of all.
func take(ctx context.Context, all arrow.RecordBatch, idx []int64) (arrow.RecordBatch, error) {
	ib := array.NewInt64Builder(compute.GetAllocator(ctx))
	defer ib.Release()
	ib.AppendValues(idx, nil)
	ia := ib.NewInt64Array()
	defer ia.Release()
	taken, err := compute.Take(ctx, *compute.DefaultTakeOptions(), compute.NewDatumWithoutOwning(all), compute.NewDatumWithoutOwning(ia))
	if err != nil {
		return nil, err
	}
	return taken.(*compute.RecordDatum).Value, nil
}
