package batch_test

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/thalweg/thalweg/batch"
)

// TestJSONRowsMaps: JSONRows appends to a caller's builders, maps of utf8
// keys decode from JSON objects with any keys (escaped keys too), a bad
// value names its key, and a rejected payload leaves the builders as they
// were.
func TestJSONRowsMaps(t *testing.T) {
	attrs := arrow.MapOf(arrow.BinaryTypes.String, arrow.StructOf(arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int64}))
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "attrs", Type: attrs, Nullable: true},
	}, nil)
	full := arrow.NewSchema(append([]arrow.Field{{Name: "_mine", Type: arrow.PrimitiveTypes.Int32}}, s.Fields()...), nil)
	rb := array.NewRecordBuilder(checkedMem(t), full)
	defer rb.Release()
	rows, err := batch.NewJSONRows(s, rb, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{`{"id":1,"attrs":{"a":{"n":1},"b\u00e9":{"n":2}}}`, `{"id":2,"attrs":{}}`, `{"id":3}`} {
		rb.Field(0).(*array.Int32Builder).Append(0)
		if _, err := rows.Append([]byte(p)); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	_, err = rows.Append([]byte(`{"id":4,"attrs":{"a":{"n":1},"k":{"n":"x"}}}`))
	var re *batch.RejectError
	if !errors.As(err, &re) || re.Path != "attrs{k}.n" {
		t.Fatalf("error = %v, want a RejectError at attrs{k}.n", err)
	}
	if _, err := batch.NewJSONRows(arrow.NewSchema([]arrow.Field{{Name: "m", Type: arrow.MapOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int32)}}, nil), rb, 2); !errors.Is(err, batch.ErrInvalidOptions) {
		t.Errorf("int-keyed map: %v, want ErrInvalidOptions", err)
	}
	r := rb.NewRecordBatch()
	defer r.Release()
	if r.NumRows() != 3 {
		t.Fatalf("%d rows, want 3", r.NumRows())
	}
	m := r.Column(2).(*array.Map)
	if got := m.ValueStr(0); got != `[{"key":"a","value":{"n":1}},{"key":"bé","value":{"n":2}}]` {
		t.Errorf("attrs[0] = %s", got)
	}
	if m.IsNull(1) || m.ValueStr(1) != `[]` || !m.IsNull(2) {
		t.Errorf("attrs[1] = %s (null %v), attrs[2] null %v", m.ValueStr(1), m.IsNull(1), m.IsNull(2))
	}
}
