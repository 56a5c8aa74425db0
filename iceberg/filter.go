package iceberg

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/idempotent"
)

// identity is a schema's identity columns (batch.IdentityOf). ok is false
// when it has none; such rows cannot be told apart and are stored as they
// come.
type identity struct {
	batch.Identity
	ok bool
}

func identityOf(s *arrow.Schema) identity {
	id, ok := batch.IdentityOf(s)
	return identity{id, ok}
}

// seqRange is the lowest and highest seq of the rows of one partition.
type seqRange struct{ min, max uint64 }

// rowRanges are the seq ranges of rec's rows per partition.
func (id identity) rowRanges(rec arrow.RecordBatch) map[string]seqRange {
	out := map[string]seqRange{}
	id.Each(rec, func(part string, seq uint64, _ int) {
		r, ok := out[part]
		switch {
		case !ok:
			r = seqRange{seq, seq}
		case seq < r.min:
			r.min = seq
		case seq > r.max:
			r.max = seq
		}
		out[part] = r
	})
	return out
}

func judge(spans []batch.OffsetSpan, pos positions) idempotent.Verdict {
	return idempotent.Judge(pos, len(spans), func(i int) (string, uint64, uint64) {
		return spans[i].Partition, spans[i].First, spans[i].Last
	})
}

// keep returns the rows of b above their partition's position: b's
// record itself (retained) when all are, nil when none is, otherwise a
// filtered copy. ranges are the kept rows' seq ranges per partition when
// they were computed (a filtered or row-checked batch), nil when the
// spans stand for them. A batch without identity columns is kept whole
// unless its spans say it is stored already. The caller releases the
// returned record.
func keep(ctx context.Context, b *batch.Batch, id identity, pos positions, mem memory.Allocator) (arrow.RecordBatch, map[string]seqRange, error) {
	switch judge(b.Spans, pos) {
	case idempotent.KeepAll:
		b.Rec.Retain()
		return b.Rec, nil, nil
	case idempotent.DropAll:
		return nil, nil, nil
	}
	if !id.ok {
		b.Rec.Retain()
		return b.Rec, nil, nil
	}
	mask := array.NewBooleanBuilder(mem)
	defer mask.Release()
	mask.Reserve(int(b.Rec.NumRows()))
	n := 0
	id.Each(b.Rec, func(part string, seq uint64, _ int) {
		p, ok := pos[part]
		k := !ok || seq > p
		if k {
			n++
		}
		mask.UnsafeAppend(k)
	})
	switch n {
	case 0:
		return nil, nil, nil
	case int(b.Rec.NumRows()):
		b.Rec.Retain()
		return b.Rec, id.rowRanges(b.Rec), nil
	}
	m := mask.NewBooleanArray()
	defer m.Release()
	out, err := compute.FilterRecordBatch(compute.WithAllocator(ctx, mem), b.Rec, m, compute.DefaultFilterOptions())
	if err != nil {
		return nil, nil, err
	}
	return out, id.rowRanges(out), nil
}
