package batch_test

import (
	"errors"
	"strings"
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
	rows, err := batch.NewJSONRows(s, rb, 1, batch.JSONBinaryBase64)
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
	if _, err := batch.NewJSONRows(arrow.NewSchema([]arrow.Field{{Name: "m", Type: arrow.MapOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int32)}}, nil), rb, 2, batch.JSONBinaryBase64); !errors.Is(err, batch.ErrInvalidOptions) {
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

// TestJSONRowsBinaryText: with JSONBinaryText a binary field's bytes are
// its string's UTF-8 encoding, escapes resolved (surrogate pairs too), in
// lists, maps and structs; a string with no UTF-8 bytes (an unpaired
// surrogate escape, raw bytes that are not UTF-8) or a value that is not a
// string is rejected with the field's path, leaving the builders as they
// were. The same strings under JSONBinaryBase64 are base64.
func TestJSONRowsBinaryText(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "b", Type: arrow.BinaryTypes.Binary},
		{Name: "l", Type: arrow.ListOf(arrow.BinaryTypes.Binary), Nullable: true},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.Binary), Nullable: true},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "d", Type: arrow.BinaryTypes.Binary, Nullable: true}), Nullable: true},
	}, nil)
	rb := array.NewRecordBuilder(checkedMem(t), s)
	defer rb.Release()
	rows, err := batch.NewJSONRows(s, rb, 0, batch.JSONBinaryText)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		`{"b": "h\u00e9llo \u0000\"\\\/\n\ud83d\ude00", "l": ["", "\u20ac", "x"], "m": {"k": "v\u00e9"}, "s": {"d": "\u007f"}}`,
		"{\"b\": \"raw h\xc3\xa9\", \"s\": {\"d\": null}}",
	} {
		if _, err := rows.Append([]byte(p)); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	for _, tc := range []struct{ payload, path, detail string }{
		{`{"b": "a\ud800"}`, "b", "unpaired surrogate"},
		{`{"b": "\udc00\u0041"}`, "b", "unpaired surrogate"},
		{`{"b": "", "l": ["\ud83d x"]}`, "l[0]", "unpaired surrogate"},
		{"{\"b\": \"\xff\"}", "b", "not valid UTF-8"},
		{`{"b": "", "s": {"d": 7}}`, "s.d", "found number"},
	} {
		_, err := rows.Append([]byte(tc.payload))
		var re *batch.RejectError
		if !errors.As(err, &re) || re.Path != tc.path || !strings.Contains(re.Detail, tc.detail) || re.Expected != "binary (UTF-8 text)" {
			t.Errorf("%s: %v, want a rejection at %s saying %q", tc.payload, err, tc.path, tc.detail)
		}
	}
	r := rb.NewRecordBatch()
	defer r.Release()
	if r.NumRows() != 2 {
		t.Fatalf("%d rows, want 2", r.NumRows())
	}
	b := r.Column(0).(*array.Binary)
	if got, want := string(b.Value(0)), "h\u00e9llo \x00\"\\/\n\U0001F600"; got != want {
		t.Errorf("b[0] = %q, want %q", got, want)
	}
	if got := string(b.Value(1)); got != "raw h\u00e9" {
		t.Errorf("b[1] = %q", got)
	}
	l := r.Column(1).(*array.List)
	if got := string(l.ListValues().(*array.Binary).Value(1)); got != "\u20ac" || !l.IsNull(1) {
		t.Errorf("l = %s", l)
	}
	if got := string(r.Column(2).(*array.Map).Items().(*array.Binary).Value(0)); got != "v\u00e9" {
		t.Errorf("m = %q", got)
	}
	if d := r.Column(3).(*array.Struct).Field(0); string(d.(*array.Binary).Value(0)) != "\x7f" || !d.IsNull(1) {
		t.Errorf("s.d = %s", d)
	}

	// Base64, the default, reads the same text as base64 (and refuses it).
	rb64 := array.NewRecordBuilder(checkedMem(t), s)
	defer rb64.Release()
	rows64, err := batch.NewJSONRows(s, rb64, 0, batch.JSONBinaryBase64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rows64.Append([]byte(`{"b": "h\u00e9llo"}`)); err == nil || !strings.Contains(err.Error(), "base64") {
		t.Errorf("text under base64: %v", err)
	}
	if _, err := batch.NewJSONRows(s, rb64, 0, batch.JSONBinaryText+1); !errors.Is(err, batch.ErrInvalidOptions) {
		t.Errorf("unknown JSONBinary: %v", err)
	}
}
