package batch_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/thalweg/thalweg/batch"
)

// A non-monotone source (several consumers of a Shared subscription) hands
// over a lower seq after a higher one when it takes over what another
// consumer dropped: with Unordered the assembler starts a new span for it,
// in emission order, in raw and JSON mode, and NumRecords counts records,
// not the positions the spans cover.
func TestUnorderedStartsNewSpan(t *testing.T) {
	for _, mode := range []string{"raw", "json"} {
		t.Run(mode, func(t *testing.T) {
			opts := batch.AssemblerOptions{MaxRows: 100, Unordered: true}
			rec := rawRec
			if mode == "json" {
				opts.Mode, opts.Schema = batch.ModeJSON, arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
				rec = func(p int32, seq uint64) *batch.Record {
					r := rawRec(p, seq)
					r.Payload = []byte(`{"n":1}`)
					return r
				}
			}
			a, s := newAssembler(t, opts)
			for _, ad := range []add{{0, 100}, {0, 151}, {1, 7}, {0, 50}, {0, 52}, {0, 52}, {1, 3}} {
				if err := a.Add(rec(ad.p, ad.seq)); err != nil {
					t.Fatalf("Add(%v): %v", ad, err)
				}
			}
			a.Flush()
			if err := a.Add(rec(0, 10)); err != nil { // below the previous batch's spans
				t.Fatal(err)
			}
			a.Flush()
			if len(s.batches) != 2 {
				t.Fatalf("%d batches, want 2", len(s.batches))
			}
			id := func(p int32, seq uint64) []byte { return rawRec(p, seq).ID }
			want := []batch.OffsetSpan{
				{Partition: pn(0), First: 100, Last: 151, LastID: id(0, 151)},
				{Partition: pn(0), First: 50, Last: 52, LastID: id(0, 52)},
				{Partition: pn(0), First: 52, Last: 52, LastID: id(0, 52)},
				{Partition: pn(1), First: 7, Last: 7, LastID: id(1, 7)},
				{Partition: pn(1), First: 3, Last: 3, LastID: id(1, 3)},
			}
			if got := s.batches[0].Spans; !reflect.DeepEqual(got, want) {
				t.Fatalf("spans:\n got %v\nwant %v", got, want)
			}
			if n := s.batches[0].NumRecords(); n != 7 {
				t.Fatalf("NumRecords = %d, want 7 (records, not the %d positions the spans cover)", n, 52+3+1+1+1)
			}
			if got := s.batches[1].Spans; !reflect.DeepEqual(got, []batch.OffsetSpan{{Partition: pn(0), First: 10, Last: 10, LastID: id(0, 10)}}) {
				t.Fatalf("second batch spans %v", got)
			}
			if st := a.Stats(); st.OutOfOrder != 4 || st.Records != 8 {
				t.Fatalf("stats = %+v", st)
			}
		})
	}
}

// Without Unordered, ErrSeqOrder stays the guard of ordered sources.
func TestOrderedStillRefuses(t *testing.T) {
	a, _ := newAssembler(t, batch.AssemblerOptions{})
	if err := a.Add(rawRec(0, 5)); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(rawRec(0, 5)); !errors.Is(err, batch.ErrSeqOrder) {
		t.Fatalf("Add = %v, want ErrSeqOrder", err)
	}
}
