package batch_test

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/thalweg/thalweg/batch"
)

// beSchema is a fake RowSchema for the assembler's ModeDecoded logic: its
// payloads are 8-byte big-endian int64s into column name (anything else is
// rejected), or, with bindErr, a version that never binds.
type beSchema struct {
	name, version string
	bindErr       error
}

func (s *beSchema) Schema() *arrow.Schema {
	md := arrow.NewMetadata([]string{"version"}, []string{s.version})
	return arrow.NewSchema([]arrow.Field{{Name: s.name, Type: arrow.PrimitiveTypes.Int64}}, &md)
}

func (s *beSchema) NewRowDecoder(rb *array.RecordBuilder, skip int) (batch.RowDecoder, error) {
	if s.bindErr != nil {
		return nil, s.bindErr
	}
	return beDecoder{rb.Field(skip).(*array.Int64Builder)}, nil
}

type beDecoder struct{ b *array.Int64Builder }

func (d beDecoder) Append(p []byte) (int, error) {
	if len(p) != 8 {
		return 0, &batch.RejectError{Kind: batch.RejectUndecodable, Path: "v", Offset: len(p), Detail: "want 8 bytes"}
	}
	d.b.Append(int64(binary.BigEndian.Uint64(p)))
	return 8, nil
}

func be(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// TestDecodedOneBatchOneSchema: ModeDecoded groups records by schema
// version: a record of another version flushes (FlushSchema) and starts a
// batch of its own schema, whose metadata carries the version; spans cover
// every record, rejected ones too (undecodable payloads, no schema, a
// version that never binds), and those go to OnReject with their reason.
func TestDecodedOneBatchOneSchema(t *testing.T) {
	v1 := &beSchema{name: "a", version: "1"}
	v2 := &beSchema{name: "b", version: "2"}
	broken := &beSchema{name: "x", version: "3", bindErr: errors.New("incompatible schema change: field \"a\"")}
	a, s := newAssembler(t, batch.AssemblerOptions{Mode: batch.ModeDecoded, IncludeMeta: true, MaxRows: 100})
	add := func(seq uint64, rs batch.RowSchema, p []byte) {
		t.Helper()
		if err := a.Add(&batch.Record{Seq: seq, Payload: p, Schema: rs}); err != nil {
			t.Fatal(err)
		}
	}
	add(1, nil, be(0))    // no schema yet, no builder: rejected
	add(2, v1, be(10))    // switches: flushes the rejected-only batch
	add(3, v1, []byte{1}) // undecodable: rejected, the batch keeps its row
	add(4, v1, be(11))    //
	add(5, broken, be(0)) // never binds: rejected, no switch
	add(6, v2, be(20))    // switches: FlushSchema
	add(7, v1, be(12))    // and back
	a.Flush()

	if got, want := s.reasons(), []batch.FlushReason{batch.FlushSchema, batch.FlushSchema, batch.FlushSchema, batch.FlushShutdown}; !slices.Equal(got, want) {
		t.Fatalf("flush reasons %v, want %v", got, want)
	}
	type want struct {
		col, version string
		rows         []int64
		first, last  uint64
		rejected     int
	}
	for i, w := range []want{
		{"", "", nil, 1, 1, 1},
		{"a", "1", []int64{10, 11}, 2, 5, 2},
		{"b", "2", []int64{20}, 6, 6, 0},
		{"a", "1", []int64{12}, 7, 7, 0},
	} {
		b := s.batches[i]
		if b.Rejected != w.rejected || len(b.Spans) != 1 || b.Spans[0].First != w.first || b.Spans[0].Last != w.last {
			t.Errorf("batch %d: rejected %d spans %v, want %d [%d, %d]", i, b.Rejected, b.Spans, w.rejected, w.first, w.last)
		}
		if w.col == "" {
			if b.NumRows() != 0 {
				t.Errorf("batch %d: %d rows", i, b.NumRows())
			}
			continue
		}
		sc := b.Rec.Schema()
		if v, _ := sc.Metadata().GetValue("version"); v != w.version || sc.Field(0).Name != "_topic" || sc.Field(4).Name != w.col {
			t.Errorf("batch %d: schema %s, want column %s version %s", i, sc, w.col, w.version)
			continue
		}
		if got := b.Rec.Column(4).(*array.Int64).Int64Values(); !slices.Equal(got, w.rows) {
			t.Errorf("batch %d: rows %v, want %v", i, got, w.rows)
		}
	}
	kinds := []batch.RejectKind{}
	for _, r := range s.rejected {
		var re *batch.RejectError
		if !errors.As(r.reason, &re) || !errors.Is(r.reason, batch.ErrRejected) {
			t.Fatalf("reason %v is not a RejectError", r.reason)
		}
		kinds = append(kinds, re.Kind)
	}
	if want := []batch.RejectKind{batch.RejectNoSchema, batch.RejectUndecodable, batch.RejectNoSchema}; !slices.Equal(kinds, want) {
		t.Errorf("reject kinds %v, want %v", kinds, want)
	}
	if got := s.rejected[2].reason.Error(); got != `batch: record rejected (no_schema): field <root>: incompatible schema change: field "a" (at byte 0)` {
		t.Errorf("bind failure reason = %q", got)
	}
	if st := a.Stats(); st.FlushSchema != 3 || st.Rejected != 3 || st.Rows != 4 {
		t.Errorf("stats %+v", st)
	}
}

func TestDecodedOptions(t *testing.T) {
	_, err := batch.NewAssembler(batch.AssemblerOptions{Mode: batch.ModeDecoded, Emit: func(b *batch.Batch) { b.Release() },
		Schema: arrow.NewSchema(nil, nil)})
	if !errors.Is(err, batch.ErrInvalidOptions) {
		t.Errorf("ModeDecoded with a Schema: %v, want ErrInvalidOptions", err)
	}
}
