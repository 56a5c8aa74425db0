package flightwire

import (
	"testing"

	"github.com/thalweg/thalweg/batch"
)

// The served meta a receiver writes is what the client reads back: the
// stored position, the continuation and the batch meta, with and without
// next.
func TestServedMetaRoundTrip(t *testing.T) {
	spans := []batch.OffsetSpan{{Partition: "gen-3", First: 10, Last: 19}}
	for _, next := range []int{-1, 42} {
		b := AppendServedMeta(nil, 7, next, 5, spans, 1, 2)
		m, err := ParseServedMeta(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if m.Position != 7 || m.OffsetID != 5 || m.Part != 1 || m.Parts != 2 || len(m.Spans) != 1 ||
			m.Spans[0].Partition != "gen-3" || m.Spans[0].First != 10 || m.Spans[0].Last != 19 {
			t.Fatalf("%s parsed as %+v", b, m)
		}
		switch {
		case next < 0 && m.Next != nil:
			t.Fatalf("%s: next %d, want none", b, *m.Next)
		case next >= 0 && (m.Next == nil || *m.Next != uint64(next)):
			t.Fatalf("%s: next %v, want %d", b, m.Next, next)
		}
	}
	if _, err := ParseServedMeta([]byte(`{"position":1}`)); err == nil {
		t.Fatal("served meta without offset_id accepted")
	}
}
