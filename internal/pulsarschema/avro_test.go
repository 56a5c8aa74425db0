package pulsarschema_test

import (
	"errors"
	"math/big"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/linkedin/goavro/v2"

	"github.com/thalweg/thalweg/internal/pulsarschema"
)

var (
	tAt  = time.Date(2024, 3, 5, 10, 11, 12, 345_000_000, time.UTC)
	tAtu = time.Date(2024, 3, 5, 10, 11, 12, 345_678_000, time.UTC)
)

// orderNative is one Order in goavro's native form: goavro, an independent
// implementation, writes the bytes the decoder is checked against.
func orderNative(id int64, withAddr bool) map[string]any {
	m := map[string]any{
		"id": id, "name": "widget", "note": goavro.Union("string", "fragile"), "ok": true, "qty": int32(-3),
		"price": 9.5, "ratio": float32(0.25), "raw": []byte{0, 1, 2}, "color": "GREEN",
		"tags": []any{"a", "b"}, "attrs": map[string]any{"k": int64(-7)}, "addr": nil, "prev": nil,
		"hash": []byte{1, 2, 3, 4}, "day": time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC),
		"tod": 36*time.Second + 250*time.Millisecond, "tus": 2*time.Hour + 7*time.Microsecond,
		"at": tAt, "atus": tAtu, "amount": big.NewRat(-12345, 100), "famount": big.NewRat(1234567, 1000),
		"uid": "4f3c3a8e-8a8c-4c71-9f0e-1c2d3e4f5a6b", "choice": goavro.Union("long", int64(42)),
	}
	if withAddr {
		m["addr"] = goavro.Union("shop.Addr", map[string]any{"city": "Oslo", "zip": goavro.Union("int", int32(150))})
		m["note"] = nil
		m["choice"] = goavro.Union("string", "s")
	}
	return m
}

func encodeAvro(t testing.TB, def []byte, native map[string]any) []byte {
	t.Helper()
	codec, err := goavro.NewCodec(string(def))
	if err != nil {
		t.Fatal(err)
	}
	b, err := codec.BinaryFromNative(nil, native)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAvroDecodeEveryType(t *testing.T) {
	def := orderDef(t)
	c := mustCompile(t, pulsarschema.Info{Type: pulsarschema.TypeAvro, Definition: def})
	d, rb := decoderFor(t, c)
	for i, p := range [][]byte{encodeAvro(t, def, orderNative(1, false)), encodeAvro(t, def, orderNative(2, true))} {
		if _, err := d.Append(p); err != nil {
			t.Fatalf("payload %d: %v", i, err)
		}
	}
	r := rows(rb)
	defer r.Release()
	if r.NumRows() != 2 {
		t.Fatalf("%d rows", r.NumRows())
	}
	check := func(name string, row int, want string) {
		t.Helper()
		if got := col(r, name).ValueStr(row); got != want {
			t.Errorf("%s[%d] = %q, want %q", name, row, got, want)
		}
	}
	check("id", 0, "1")
	check("id", 1, "2")
	check("name", 0, "widget")
	check("note", 0, "fragile")
	check("note", 1, array.NullValueStr)
	check("ok", 0, "true")
	check("qty", 0, "-3")
	check("price", 0, "9.5")
	check("ratio", 0, "0.25")
	check("raw", 0, "AAEC")
	check("color", 0, "GREEN")
	check("hash", 0, "AQIDBA==")
	check("day", 0, "2024-03-05")
	check("tod", 0, "00:00:36.250")
	check("tus", 0, "02:00:00.000007")
	check("amount", 0, "-123.45")
	check("famount", 0, "1234.567")
	check("uid", 0, "4f3c3a8e-8a8c-4c71-9f0e-1c2d3e4f5a6b")
	check("addr", 0, array.NullValueStr)
	check("prev", 1, array.NullValueStr)
	if got := col(r, "at").(*array.Timestamp).Value(0); got != arrow.Timestamp(tAt.UnixMilli()) {
		t.Errorf("at = %d, want %d", got, tAt.UnixMilli())
	}
	if got := col(r, "atus").(*array.Timestamp).Value(0); got != arrow.Timestamp(tAtu.UnixMicro()) {
		t.Errorf("atus = %d, want %d", got, tAtu.UnixMicro())
	}
	tags := col(r, "tags").(*array.List)
	if s, e := tags.ValueOffsets(0); e-s != 2 || tags.ListValues().(*array.String).Value(int(s+1)) != "b" {
		t.Errorf("tags[0] = %s", tags.ValueStr(0))
	}
	attrs := col(r, "attrs").(*array.Map)
	if attrs.Keys().(*array.String).Value(0) != "k" || attrs.Items().(*array.Int64).Value(0) != -7 {
		t.Errorf("attrs[0] = %s", attrs.ValueStr(0))
	}
	addr := col(r, "addr").(*array.Struct)
	if addr.IsNull(1) || addr.Field(0).(*array.String).Value(1) != "Oslo" || addr.Field(1).(*array.Int32).Value(1) != 150 {
		t.Errorf("addr[1] = %s", addr.ValueStr(1))
	}
	choice := col(r, "choice").(*array.Struct)
	if choice.Field(1).(*array.Int64).Value(0) != 42 || !choice.Field(0).IsNull(0) {
		t.Errorf("choice[0] = %s, want long 42", choice.ValueStr(0))
	}
	if choice.Field(0).(*array.String).Value(1) != "s" || !choice.Field(1).IsNull(1) {
		t.Errorf("choice[1] = %s, want string s", choice.ValueStr(1))
	}
}

// TestAvroFailedPayloadLeavesBuildersAsBefore: a payload that fails deep in
// the record (after many fields would have been appended) leaves no trace,
// and the rows before and after it are intact.
func TestAvroFailedPayloadLeavesBuildersAsBefore(t *testing.T) {
	def := orderDef(t)
	c := mustCompile(t, pulsarschema.Info{Type: pulsarschema.TypeAvro, Definition: def})
	d, rb := decoderFor(t, c)
	good1 := encodeAvro(t, def, orderNative(1, true))
	good2 := encodeAvro(t, def, orderNative(2, false))
	if _, err := d.Append(good1); err != nil {
		t.Fatal(err)
	}
	before := lens(rb)
	for cut := range len(good1) {
		_, err := d.Append(good1[:cut])
		if !errors.Is(err, pulsarschema.ErrDecode) {
			t.Fatalf("cut %d: error %v, want ErrDecode", cut, err)
		}
		if got := lens(rb); !slices.Equal(got, before) {
			t.Fatalf("cut %d: builder lengths %v, want %v", cut, got, before)
		}
	}
	if _, err := d.Append(append(slices.Clone(good1), 0)); err == nil || !strings.Contains(err.Error(), "1 bytes after the record") {
		t.Errorf("trailing byte: %v", err)
	}
	if _, err := d.Append(good2); err != nil {
		t.Fatal(err)
	}
	r := rows(rb)
	defer r.Release()
	if r.NumRows() != 2 || col(r, "id").ValueStr(1) != "2" || col(r, "tags").ValueStr(1) != `["a","b"]` {
		t.Fatalf("rows = %d, id[1] = %s, tags[1] = %s", r.NumRows(), col(r, "id").ValueStr(1), col(r, "tags").ValueStr(1))
	}
}

// avroVarint appends the zig-zag varint of v.
func avroVarint(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

func TestAvroErrorsNameFieldAndOffset(t *testing.T) {
	def := []byte(`{"type":"record","name":"R","fields":[{"name":"a","type":"long"},
		{"name":"s","type":{"type":"record","name":"S","fields":[{"name":"tags","type":{"type":"array","items":"string"}}]}},
		{"name":"m","type":{"type":"map","values":{"type":"enum","name":"E","symbols":["X","Y"]}}},
		{"name":"n","type":{"type":"array","items":"null"}}]}`)
	c := mustCompile(t, pulsarschema.Info{Type: pulsarschema.TypeAvro, Definition: def})
	d, rb := decoderFor(t, c)
	p := func(parts ...[]byte) []byte { return slices.Concat(parts...) }
	v := func(xs ...int64) []byte {
		var b []byte
		for _, x := range xs {
			b = avroVarint(b, x)
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		payload []byte
		path    string
		offset  int
		detail  string
	}{
		{"bad utf8", p(v(1, 2, 1), []byte{0xff}, v(0)), "s.tags[0]", 2, "not valid UTF-8"},
		{"huge string length", p(v(1, 1, 1<<40)), "s.tags[0]", 2, "length 1099511627776 exceeds"},
		{"negative length", p(v(1, 1, -5)), "s.tags[0]", 2, "length -5"},
		{"huge block count", p(v(1, 1<<62)), "s.tags", 1, "block of 4611686018427387904 items exceeds"},
		{"zero-width flood", p(v(1, 0, 0, 1<<40)), "n", 3, "zero-width items"},
		{"enum out of range", p(v(1, 0, 1, 1), []byte("k"), v(2)), "m{}", 5, "enum index 2 out of range"},
		{"varint too long", p([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), "a", 0, "invalid varint"},
		{"min block count", p(v(1, -1<<63)), "s.tags", 1, "block count out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := lens(rb)
			_, err := d.Append(tc.payload)
			var de *pulsarschema.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *DecodeError", err)
			}
			if de.Path != tc.path || de.Offset != tc.offset || !strings.Contains(de.Detail, tc.detail) {
				t.Errorf("error = %q (path %q, offset %d), want path %q offset %d detail %q", err, de.Path, de.Offset, tc.path, tc.offset, tc.detail)
			}
			if !slices.Equal(lens(rb), before) {
				t.Errorf("builders changed")
			}
		})
	}
	// A negative block count (items, then the block's size) is valid Avro.
	if _, err := d.Append(p(v(1, -2, 4, 1), []byte("x"), v(1), []byte("y"), v(0, 0, 0))); err != nil {
		t.Fatal(err)
	}
	r := rows(rb)
	defer r.Release()
	if got := col(r, "s").ValueStr(0); got != `{"tags":["x","y"]}` {
		t.Errorf("s[0] = %s", got)
	}
}

// TestAvroHostileLengthsAllocateNothing: a payload of a few bytes that
// declares huge lengths or counts is refused before anything is sized by
// them: what one refusal allocates is the error, a few hundred bytes.
func TestAvroHostileLengthsAllocateNothing(t *testing.T) {
	def := []byte(`{"type":"record","name":"R","fields":[{"name":"b","type":{"type":"array","items":"bytes"}},
		{"name":"n","type":{"type":"array","items":"null"}}]}`)
	c := mustCompile(t, pulsarschema.Info{Type: pulsarschema.TypeAvro, Definition: def})
	d, _ := decoderFor(t, c)
	hostile := [][]byte{
		avroVarint(avroVarint(nil, 1), 1<<50),
		avroVarint(nil, 1<<60),
		avroVarint(avroVarint(avroVarint(nil, 0), -(1<<40)), 1<<40),
		avroVarint(avroVarint(avroVarint(nil, 0), 0), 1<<60),
	}
	for i, h := range hostile {
		const runs = 100
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			if _, err := d.Append(h); err == nil {
				t.Fatalf("hostile payload %d decoded", i)
			}
		}
		runtime.ReadMemStats(&after)
		if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 1024 {
			t.Errorf("hostile payload %d: %d bytes allocated per refusal, want at most the error's (< 1 KiB)", i, per)
		}
	}
}

// TestAvroNestedContainers: maps of arrays of nullable records, arrays of
// maps, and a union of several record types inside an array.
func TestAvroNestedContainers(t *testing.T) {
	def := []byte(`{"type":"record","name":"R","namespace":"n","fields":[
		{"name":"m","type":{"type":"map","values":{"type":"array","items":["null",
			{"type":"record","name":"P","fields":[{"name":"x","type":"int"}]}]}}},
		{"name":"a","type":{"type":"array","items":{"type":"map","values":"string"}}},
		{"name":"u","type":{"type":"array","items":["P",{"type":"record","name":"Q","fields":[{"name":"y","type":"string"}]}]}}]}`)
	c := mustCompile(t, pulsarschema.Info{Type: pulsarschema.TypeAvro, Definition: def})
	if got := c.Schema().Field(2).Type.String(); got != "list<item: struct<P: struct<x: int32> nullable, Q: struct<y: utf8> nullable>>" {
		t.Errorf("u = %s", got)
	}
	d, rb := decoderFor(t, c)
	p := encodeAvro(t, def, map[string]any{
		"m": map[string]any{"k": []any{nil, goavro.Union("n.P", map[string]any{"x": int32(5)})}},
		"a": []any{map[string]any{"s": "t"}, map[string]any{}},
		"u": []any{goavro.Union("n.Q", map[string]any{"y": "why"}), goavro.Union("n.P", map[string]any{"x": int32(1)})},
	})
	if _, err := d.Append(p); err != nil {
		t.Fatal(err)
	}
	r := rows(rb)
	defer r.Release()
	for name, want := range map[string]string{
		"m": `[{"key":"k","value":[null,{"x":5}]}]`,
		"a": `[[{"key":"s","value":"t"}],[]]`,
		"u": `[{"P":null,"Q":{"y":"why"}},{"P":{"x":1},"Q":null}]`,
	} {
		if got := col(r, name).ValueStr(0); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
}
