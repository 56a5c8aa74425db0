package pipeline

import (
	"context"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/lanes"
)

// The forwarder of a secondary of a source that is not monotone
// (Options.Unordered: several consumers of a Shared or KeyShared
// subscription). This worker's spans of a partition have holes at every
// other consumer's seq and may go down (a takeover of records another
// consumer dropped), so the fed prefix and the seam rule of an ordered
// source do not apply:
//
//   - every live batch is submitted, whatever its spans (the live stream
//     is this worker's records, holes between its spans are other
//     consumers' and not this secondary's to rebuild);
//   - the startup range (coverage, anchor] of each partition is read back
//     from the raw anchor, every served batch submitted (whoever's records
//     they are: duplicates are fine), then a zero-row marker whose span is
//     the range releases its hold at the gate once confirmed;
//   - a batch dropped from the full queue (or refused by the lane) is owed:
//     once the raw anchor made it durable (its own anchor token, not the
//     watermark, which is a maximum), its partitions' ranges are read back
//     and submitted, then a zero-row marker with the batch's spans releases
//     its hold.
//
// The gate (newUnorderedGate) holds the coverage of each partition below
// every record this worker emitted that the secondary has not confirmed.

// unorderedMode is the coverage mode of an unordered secondary.
var unorderedMode = coverageMode{
	feedLive: (*secondary).feedLiveUnordered,
	collect:  (*secondary).collectOwed,
	fill:     (*secondary).fillUnordered,
	waiting:  func(s *secondary) bool { return len(s.want) > 0 || len(s.owed) > 0 },
	finish:   (*secondary).finishUnordered,
}

// finishUnordered runs once the queue is closed and drained: the anchor
// lane is closed, so every owed batch the anchor made durable is known
// as such and is read back; one it did not make durable is redelivered by
// the source after a restart, and its hold keeps the coverage below it.
func (s *secondary) finishUnordered(ctx context.Context) {
	if s.laneFailed() {
		return
	}
	s.collectOwed()
	if (len(s.want) > 0 || len(s.owed) > 0) && s.rebuild == nil {
		s.detach("coverage is behind the raw anchor and there is no Options.Rebuild to catch up from")
		return
	}
	s.fillUnordered(ctx)
}

// feedLiveUnordered submits a live batch as it is; a batch the lane refuses
// is owed. It releases b.
func (s *secondary) feedLiveUnordered(ctx context.Context, b *batch.Batch) {
	defer b.Release()
	if s.detached.Load() {
		return
	}
	if err := s.lane.Submit(ctx, b, lanes.Coverage{}); err != nil {
		s.owed = append(s.owed, b.Spans)
		s.laneFailed()
	}
}

// collectOwed moves the spans of the batches offer dropped into owed.
func (s *secondary) collectOwed() {
	g := s.dropGen.Load()
	if g == s.seenGen {
		return
	}
	s.seenGen = g
	s.drops.Lock()
	s.owed = append(s.owed, s.drops.spans...)
	clear(s.drops.spans)
	s.drops.spans = s.drops.spans[:0]
	clear(s.drops.high)
	s.drops.Unlock()
	if s.rebuild == nil && len(s.owed) > 0 {
		s.detach("queue full and no Options.Rebuild to catch up from the raw anchor")
	}
}

// fillUnordered reads back the startup ranges and every owed batch the
// anchor made durable, and reports whether it fed anything.
func (s *secondary) fillUnordered(ctx context.Context) bool {
	progressed := false
	for _, p := range sortedKeys(s.want) {
		sp := s.starts[p]
		if err := s.rebuildRange(ctx, p, sp.First, sp.Last); err != nil {
			return progressed
		}
		if !s.submitMarker(ctx, []batch.OffsetSpan{sp}) {
			return progressed
		}
		delete(s.want, p)
		progressed = true
	}
	kept := s.owed[:0]
	for i, spans := range s.owed {
		held, anchored := s.gate.holdState(spans)
		if !held {
			continue // released meanwhile (a batch with the same spans was confirmed)
		}
		if !anchored {
			kept = append(kept, spans)
			continue
		}
		ok := true
		for _, r := range partitionRanges(spans) {
			if err := s.rebuildRange(ctx, r.Partition, r.First, r.Last); err != nil {
				ok = false
				break
			}
		}
		if !ok || !s.submitMarker(ctx, spans) {
			kept = append(kept, s.owed[i:]...)
			break
		}
		progressed = true
	}
	clear(s.owed[len(kept):])
	s.owed = kept
	return progressed
}

// partitionRanges is, per partition of spans, the range from its lowest
// First to its highest Last, sorted by partition.
func partitionRanges(spans []batch.OffsetSpan) []batch.OffsetSpan {
	var out []batch.OffsetSpan
next:
	for _, sp := range spans {
		for i := range out {
			if out[i].Partition == sp.Partition {
				out[i].First, out[i].Last = min(out[i].First, sp.First), max(out[i].Last, sp.Last)
				continue next
			}
		}
		out = append(out, batch.OffsetSpan{Partition: sp.Partition, First: sp.First, Last: sp.Last})
	}
	batch.SortSpans(out)
	return out
}

// submitMarker submits a zero-row batch carrying spans: its confirmation
// (after everything submitted before it, the lane confirms in order)
// releases the gate's hold of the same spans.
func (s *secondary) submitMarker(ctx context.Context, spans []batch.OffsetSpan) bool {
	z := emptyBatchOf(s.schema, spans)
	defer z.Release()
	if err := s.lane.Submit(ctx, z, lanes.Coverage{}); err != nil {
		s.laneFailed()
		return false
	}
	return true
}

// rebuildRange reads seqs from..to of partition p back from the raw anchor,
// in chunks of at most s.chunk seqs, and submits every served batch. The
// caller knows the anchor made the range durable (the startup range is at
// or below its watermark at start; an owed batch is anchored). It returns
// ctx's error, or errDetached when the lane failed for good.
func (s *secondary) rebuildRange(ctx context.Context, p string, from, to uint64) error {
	s.catching.Store(true)
	defer s.catching.Store(false)
	for attempt := 0; from <= to; {
		hi := to
		if s.chunk > 0 && hi-from >= s.chunk {
			hi = from + s.chunk - 1
		}
		bs, ok, err := s.readBack(ctx, p, from, hi, &attempt)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		var rows int64
		failed := false
		for _, b := range bs {
			if !failed {
				if err := s.lane.Submit(ctx, b, lanes.Coverage{}); err != nil {
					failed = true
				} else {
					rows += b.NumRows()
				}
			}
			b.Release()
		}
		if rows > 0 {
			s.rebuilt.Add(uint64(rows))
			s.metrics.Rebuilt(context.Background(), rows)
		}
		if failed {
			s.laneFailed()
			if err := ctx.Err(); err != nil {
				return err
			}
			return errDetached
		}
		from = hi + 1
	}
	return nil
}
