package pipeline

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/instruments"
	"github.com/thalweg/thalweg/offsetstore"
)

// TestCatchUpGapsAndLoss drives catchUp against a raw anchor holding fixed
// spans of one partition. Seqs are global positions, so the anchor's spans
// may have interior gaps the source skipped: a range the anchor answers
// with a span beyond it is complete, and the gap is covered by a zero-row
// batch; a range served short up to the anchor's own watermark (which a
// stored span must reach) is a real loss and detaches the secondary.
func TestCatchUpGapsAndLoss(t *testing.T) {
	const p = "persistent://public/default/c-partition-0"
	sp := func(first, last uint64) []batch.OffsetSpan {
		return []batch.OffsetSpan{{Partition: p, First: first, Last: last}}
	}
	for _, tc := range []struct {
		name    string
		stored  [][]batch.OffsetSpan
		anchor  uint64 // the anchor's durable delivered watermark
		held    uint64 // the anchor's watermark at start: a record it must hold
		chunk   uint64
		hi      uint64 // catchUp target
		fed     uint64 // fed afterwards
		gaps    []batch.OffsetSpan
		detach  string // "" = stays attached
		queries int    // rebuild calls at most
	}{
		{name: "contiguous", stored: [][]batch.OffsetSpan{sp(1, 10), sp(11, 30)}, anchor: 30, hi: 30, fed: 30},
		{name: "interior gap", stored: [][]batch.OffsetSpan{sp(1, 10), sp(21, 30)}, anchor: 30, hi: 30, fed: 30,
			gaps: sp(11, 20)},
		{name: "gap at the start", stored: [][]batch.OffsetSpan{sp(41, 50)}, anchor: 50, hi: 50, fed: 50,
			gaps: sp(1, 40)},
		{name: "gaps across chunks, probed", stored: [][]batch.OffsetSpan{sp(1, 2), sp(15, 16), sp(40, 41)}, anchor: 41, chunk: 4,
			hi: 41, fed: 41, gaps: append(sp(3, 14), sp(17, 39)...), queries: 12},
		{name: "hole before a live batch", stored: [][]batch.OffsetSpan{sp(1, 2), sp(13, 16)}, anchor: 16, chunk: 4, hi: 12, fed: 16,
			gaps: sp(3, 12)},
		{name: "tail lost", stored: [][]batch.OffsetSpan{sp(1, 10)}, anchor: 30, hi: 30, fed: 10,
			detach: "holds nothing of seqs 11..30"},
		{name: "tail lost after a gap", stored: [][]batch.OffsetSpan{sp(1, 10), sp(21, 25)}, anchor: 30, chunk: 8, hi: 30, fed: 25,
			gaps: sp(11, 20), detach: "holds nothing of seqs 26..30"},
		{name: "nothing at all", anchor: 30, chunk: 7, hi: 30, fed: 0, detach: "holds nothing of seqs 1..30"},
		{name: "gap before the start watermark", stored: [][]batch.OffsetSpan{sp(1, 5), sp(21, 30)}, anchor: 30, held: 12, hi: 30, fed: 5,
			detach: "holds no record of seq 12"},
		{name: "start watermark lost, probed", stored: [][]batch.OffsetSpan{sp(41, 50)}, anchor: 50, held: 12, chunk: 8, hi: 50, fed: 0,
			detach: "holds no record of seq 12", queries: 2},
		{name: "gap after the start watermark", stored: [][]batch.OffsetSpan{sp(1, 12), sp(21, 30)}, anchor: 30, held: 12, hi: 30, fed: 30,
			gaps: sp(13, 20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lane := &fakeLane{acked: map[string]map[uint64]bool{p: {}}, rebuilt: map[*batch.Batch]bool{}, live: map[*batch.Batch]bool{}, prefix: frontier{}}
			lane.stored = func() [][]batch.OffsetSpan { return tc.stored }
			store := &fakeStore{cov: map[string]uint64{}}
			gate := newCoverageGate("s", store)
			lane.gate = gate
			metrics, err := instruments.NewCoverageMetrics(noop.NewMeterProvider(), "s", func() uint64 { return 0 })
			if err != nil {
				t.Fatal(err)
			}
			queries := 0
			rebuild := func(_ context.Context, part string, from, to uint64) ([]*batch.Batch, error) {
				queries++
				if part != p || from > to || to > tc.anchor {
					t.Fatalf("rebuild %s %d..%d (anchor %d)", part, from, to, tc.anchor)
				}
				var out []*batch.Batch
				for _, spans := range tc.stored {
					if spans[0].First <= to && spans[0].Last >= from {
						b := modelBatch(spans)
						lane.rebuilt[b] = true
						out = append(out, b)
					}
				}
				return out, nil
			}
			s := newSecondary("s", lane, gate, metrics, rebuild, tc.chunk, 4, slog.New(slog.DiscardHandler))
			gate.reset(map[string]offsetstore.Position{p: {Seq: tc.anchor}}, nil)
			s.fed, s.held = frontier{}, map[string]uint64{p: tc.held}
			err = s.catchUp(context.Background(), p, tc.hi)
			if lane.seamErr != "" {
				t.Fatal(lane.seamErr)
			}
			var gaps []batch.OffsetSpan
			for _, b := range lane.pending {
				if !lane.rebuilt[b] {
					gaps = append(gaps, b.Spans...)
				}
			}
			lane.confirm(len(lane.pending))
			if tc.detach == "" {
				if err != nil || s.detached.Load() {
					t.Fatalf("catchUp = %v, detached %q", err, s.detachedWhy())
				}
				if store.cov[p] != tc.fed {
					t.Errorf("coverage %d, want %d: the confirmed gap advances it", store.cov[p], tc.fed)
				}
			} else if err == nil || !strings.Contains(s.detachedWhy(), tc.detach) {
				t.Fatalf("catchUp = %v, detached %q; want a detach naming %q", err, s.detachedWhy(), tc.detach)
			}
			if got := s.fed.seq(p); got != tc.fed {
				t.Errorf("fed %d, want %d", got, tc.fed)
			}
			if len(gaps) != len(tc.gaps) {
				t.Fatalf("gap batches %v, want %v", gaps, tc.gaps)
			}
			var skipped uint64
			for i := range gaps {
				if gaps[i].Partition != tc.gaps[i].Partition || gaps[i].First != tc.gaps[i].First || gaps[i].Last != tc.gaps[i].Last {
					t.Fatalf("gap batches %v, want %v", gaps, tc.gaps)
				}
				skipped += gaps[i].Len()
			}
			if s.skipped.Load() != skipped {
				t.Errorf("skipped %d, want %d", s.skipped.Load(), skipped)
			}
			if tc.queries > 0 && queries > tc.queries {
				t.Errorf("%d rebuild calls, want at most %d", queries, tc.queries)
			}
		})
	}
}
