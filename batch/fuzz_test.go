package batch_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/source/gen"
)

// FuzzAssembleJSON feeds arbitrary input, split on '\n' into up to 16
// payloads spread over 3 partitions, through a JSON assembler over a schema
// with every supported type. It asserts: no panic; every record becomes
// exactly one row (identified by the _partition/_seq meta columns) or one
// rejection with an ErrRejected reason; the emitted spans cover exactly the
// added sequence numbers, in order, without overlap; no Arrow memory leaks.
func FuzzAssembleJSON(f *testing.F) {
	for _, p := range goodRows {
		f.Add([]byte(p))
	}
	f.Add([]byte(goodRows[0] + "\n" + goodRows[1] + "\n{\"i64\":\n[]\n" + goodRows[2]))
	for _, p := range []string{
		``, `{`, `}`, `{"i64":1}`, `{"i64":1}}`, `{"i64":"1"}`, `{"i64":1,"user":{"name":"a","tags":["x",1]}}`,
		`{"i64":1,"items":[{"sku":"a"}]}`, `{"i64":1,"s":"\ud83d"}`, `{"i64":1,"s":"\u00"}`, `{"i64":1,"bin":"AA=="}`,
		`{"i64":1,"ts":"2024-01-01T00:00:00.1234567891+23:59"}`, `{"i64":1,"d":"0000-01-01"}`, `{"i64":1,"matrix":[[1,[2]]]}`,
		`{"i64":-0,"f32":-0.0e-0,"u64":0}`, `{"i64":1,"x":{"a":[{"b":"\"\\"}]}}`, "{\"i64\":1,\"s\":\"\x00\"}",
	} {
		f.Add([]byte(p))
	}
	g, err := gen.New(gen.Options{Seed: 1, Records: 8, Mode: gen.ModeJSON, MalformedFraction: 0.5})
	if err != nil {
		f.Fatal(err)
	}
	var rec batch.Record
	for g.Next(&rec) {
		f.Add(bytes.Clone(rec.Payload))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		payloads := bytes.SplitN(data, []byte("\n"), 16)
		a, s := newAssembler(t, batch.AssemblerOptions{
			Mode: batch.ModeJSON, Schema: allTypes, IncludeMeta: true, MaxRows: 2,
		})
		type key struct {
			p   int32
			seq uint64
		}
		added := make(map[key]bool)
		var seqs [3]uint64
		for i, p := range payloads {
			part := int32(i % 3)
			seqs[part]++
			if err := a.Add(&batch.Record{Partition: pn(part), Seq: seqs[part], Payload: p}); err != nil {
				t.Fatal(err)
			}
			added[key{part, seqs[part]}] = true
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}

		seen := make(map[key]bool)
		for _, r := range s.rejected {
			if !errors.Is(r.reason, batch.ErrRejected) || r.reason.Error() == "" {
				t.Fatalf("bad reason %v", r.reason)
			}
			var re *batch.RejectError
			if !errors.As(r.reason, &re) || re.Kind == 0 {
				t.Fatalf("reason %v has no kind", r.reason)
			}
			_, idx := batch.SplitPartition(r.partition)
			seen[key{idx, r.seq}] = true
		}
		var covered [3]uint64
		rejected := 0
		for _, b := range s.batches {
			rejected += b.Rejected
			for i := range b.Rec.NumCols() {
				if int64(b.Rec.Column(int(i)).Len()) != b.NumRows() {
					t.Fatalf("column %d has %d values, batch %d rows", i, b.Rec.Column(int(i)).Len(), b.NumRows())
				}
			}
			parts := b.Rec.Column(1).(*array.Int32)
			sq := b.Rec.Column(2).(*array.Uint64)
			for i := range int(b.NumRows()) {
				k := key{parts.Value(i), sq.Value(i)}
				if seen[k] || !added[k] {
					t.Fatalf("row %v duplicated, or never added", k)
				}
				seen[k] = true
			}
			for _, sp := range b.Spans {
				_, idx := batch.SplitPartition(sp.Partition)
				if sp.First != covered[idx]+1 || sp.Last < sp.First {
					t.Fatalf("span %v does not continue partition %d at %d", sp, idx, covered[idx]+1)
				}
				covered[idx] = sp.Last
			}
		}
		if covered != seqs {
			t.Fatalf("spans cover %v, added %v", covered, seqs)
		}
		if len(seen) != len(added) || rejected != len(s.rejected) {
			t.Fatalf("%d records accounted for, %d added; %d rejected in batches, %d to OnReject",
				len(seen), len(added), rejected, len(s.rejected))
		}
	})
}
