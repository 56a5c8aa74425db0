package iceberg

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/thalweg/thalweg/batch"
)

// dedupe returns files with every row at or below its partition's
// position in pos removed (an ordered sink's commit, against the table it
// commits on top of): a file with no such row is kept as it is; one with
// some is written again from its batches without them (or left out when
// nothing remains). The files it replaces are referenced by no snapshot;
// one written by an earlier dedupe of the same commit is removed at once,
// the sink's own when the commit lands (Sink.committed).
func (s *Sink) dedupe(files []*dataFile, pos positions, originals []*dataFile) ([]*dataFile, error) {
	var out []*dataFile
	split := map[*pendingOne]bool{} // the batches of split files done
	for _, f := range files {
		if f.split {
			if !split[f.batches[0]] {
				split[f.batches[0]] = true
				kept, err := s.dedupeSplit(files, f.batches[0], pos, originals)
				if err != nil {
					return nil, err
				}
				out = append(out, kept...)
			}
			continue
		}
		if !f.stale(pos) {
			out = append(out, f)
			continue
		}
		nf, err := s.rewrite(f, pos)
		if err != nil {
			return nil, err
		}
		if !contains(originals, f) {
			s.mu.Lock()
			s.remove(f.location)
			s.mu.Unlock()
		}
		if nf != nil {
			out = append(out, nf)
		}
	}
	return out, nil
}

// dedupeSplit is dedupe for the split files (writePartitioned) of batch
// p among files: kept as they are when none is stale, otherwise the
// batch's rows above pos written again, split by partition, in their
// place.
func (s *Sink) dedupeSplit(files []*dataFile, p *pendingOne, pos positions, originals []*dataFile) ([]*dataFile, error) {
	var mine []*dataFile
	stale := false
	for _, f := range files {
		if f.split && f.batches[0] == p {
			mine = append(mine, f)
			stale = stale || f.stale(pos)
		}
	}
	if !stale {
		return mine, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range mine {
		if !contains(originals, f) {
			s.remove(f.location)
		}
	}
	if p.rec == nil {
		return nil, nil
	}
	kept, err := s.keepAgain(p, pos)
	if err != nil || kept == nil {
		return nil, err
	}
	out, err := mine[0].plan.convert(s.ctx, kept)
	if err != nil {
		return nil, err
	}
	return s.writePartitioned(s.ctx, s.mu.tbl, mine[0].plan, p, out)
}

// keepAgain drops p's rows at or below pos (keep): p.rec becomes the
// rows kept, nil when none is. The result is p.rec, not retained again.
func (s *Sink) keepAgain(p *pendingOne, pos positions) (arrow.RecordBatch, error) {
	spans := p.spans
	if p.ranges != nil {
		spans = spansOf(p.ranges)
	}
	kept, ranges, err := keep(s.ctx, &batch.Batch{Rec: p.rec, Spans: spans}, p.plan.identity, pos, s.opts.Allocator)
	if err != nil {
		return nil, err
	}
	if kept == nil {
		s.m.dropped(p.rec.NumRows())
		p.rec.Release()
		p.rec, p.ranges = nil, map[string]seqRange{}
		return nil, nil
	}
	s.m.dropped(p.rec.NumRows() - kept.NumRows())
	p.rec.Release()
	p.rec = kept
	if ranges != nil {
		p.ranges = ranges
	}
	return kept, nil
}

func contains(fs []*dataFile, f *dataFile) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}

// stale reports whether f may hold a row at or below its partition's
// position in pos.
func (f *dataFile) stale(pos positions) bool {
	for _, p := range f.batches {
		if p.ranges != nil {
			for part, r := range p.ranges {
				if q, ok := pos[part]; ok && r.min <= q {
					return true
				}
			}
			continue
		}
		for _, sp := range p.spans {
			if q, ok := pos[sp.Partition]; ok && sp.First <= q {
				return true
			}
		}
	}
	return false
}

// rewrite writes f's batches again without their rows at or below pos;
// nil when no row remains.
func (s *Sink) rewrite(f *dataFile, pos positions) (*dataFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w *fileWriter
	for _, p := range f.batches {
		if p.rec == nil {
			continue
		}
		kept, err := s.keepAgain(p, pos)
		if err != nil {
			return nil, err
		}
		if kept == nil {
			continue
		}
		if w == nil {
			if w, err = s.createFile(s.mu.tbl, f.plan); err != nil {
				return nil, err
			}
		}
		out, err := f.plan.convert(s.ctx, kept)
		if err != nil {
			return nil, err
		}
		err = w.w.Write(out)
		out.Release()
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", w.df.location, err)
		}
		w.df.rows += kept.NumRows()
		w.df.batches = append(w.df.batches, p)
	}
	if w == nil {
		return nil, nil
	}
	if err := w.finish(); err != nil {
		return nil, err
	}
	return w.df, nil
}

func spansOf(ranges map[string]seqRange) []batch.OffsetSpan {
	out := make([]batch.OffsetSpan, 0, len(ranges))
	for part, r := range ranges {
		out = append(out, batch.OffsetSpan{Partition: part, First: r.min, Last: r.max})
	}
	return out
}
