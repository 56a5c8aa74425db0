package pulsarschema_test

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/thalweg/thalweg/internal/pulsarschema"
)

func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// TestPrimitiveDecode: each primitive schema's payloads as the Pulsar
// clients encode them (big-endian fixed width, UTF-8, raw bytes).
func TestPrimitiveDecode(t *testing.T) {
	for _, tc := range []struct {
		typ     pulsarschema.Type
		payload []byte
		want    string
	}{
		{pulsarschema.TypeString, []byte("héllo"), "héllo"},
		{pulsarschema.TypeBytes, []byte{1, 2}, "AQI="},
		{pulsarschema.TypeBoolean, []byte{1}, "true"},
		{pulsarschema.TypeInt8, []byte{0xfe}, "-2"},
		{pulsarschema.TypeInt16, []byte{0x01, 0x02}, "258"},
		{pulsarschema.TypeInt32, []byte{0xff, 0xff, 0xff, 0xfd}, "-3"},
		{pulsarschema.TypeInt64, be64(-1 << 40), "-1099511627776"},
		{pulsarschema.TypeFloat, binary.BigEndian.AppendUint32(nil, math.Float32bits(1.5)), "1.5"},
		{pulsarschema.TypeDouble, binary.BigEndian.AppendUint64(nil, math.Float64bits(-2.25)), "-2.25"},
		{pulsarschema.TypeTimestamp, be64(tAt.UnixMilli()), "2024-03-05T10:11:12.345Z"},
		{pulsarschema.TypeDate, be64(tAt.UnixMilli()), "2024-03-05T10:11:12.345Z"},
		{pulsarschema.TypeTime, be64(-3_600_000), "23:00:00.000"},
		{pulsarschema.TypeInstant, binary.BigEndian.AppendUint32(be64(tAtu.Unix()), uint32(tAtu.Nanosecond())), "2024-03-05T10:11:12.345678Z"},
		{pulsarschema.TypeLocalDate, be64(19787), "2024-03-05"},
		{pulsarschema.TypeLocalTime, be64(3_723_000_000_001), "01:02:03.000000001"},
		{pulsarschema.TypeLocalDateTime, append(be64(19787), be64(60_000_000_000)...), "2024-03-05T00:01:00"},
	} {
		t.Run(string(tc.typ), func(t *testing.T) {
			d, rb := decoderFor(t, mustCompile(t, pulsarschema.Info{Type: tc.typ}))
			if _, err := d.Append(tc.payload); err != nil {
				t.Fatal(err)
			}
			if !slices.Contains([]pulsarschema.Type{pulsarschema.TypeString, pulsarschema.TypeBytes}, tc.typ) {
				if _, err := d.Append(tc.payload[1:]); !errors.Is(err, pulsarschema.ErrDecode) || !strings.Contains(err.Error(), "bytes, want") {
					t.Errorf("short payload: %v", err)
				}
			}
			r := rows(rb)
			defer r.Release()
			if r.NumRows() != 1 {
				t.Fatalf("%d rows", r.NumRows())
			}
			if got := r.Column(0).ValueStr(0); !strings.HasPrefix(got, tc.want) {
				t.Errorf("value = %q, want %q", got, tc.want)
			}
		})
	}
	d, _ := decoderFor(t, mustCompile(t, pulsarschema.Info{Type: pulsarschema.TypeString}))
	if _, err := d.Append([]byte{0xc3}); !errors.Is(err, pulsarschema.ErrDecode) || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
}

func TestJSONSchemaDecode(t *testing.T) {
	c := mustCompile(t, pulsarschema.Info{Type: pulsarschema.TypeJSON, Definition: []byte(`{"type":"record","name":"R","fields":[
		{"name":"id","type":"long"},{"name":"note","type":["null","string"]},
		{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"tags","type":{"type":"array","items":"string"}},
		{"name":"addr","type":["null",{"type":"record","name":"A","fields":[{"name":"city","type":"string"}]}]}]}`)})
	d, rb := decoderFor(t, c)
	if _, err := d.Append([]byte(`{"id": 7, "at": 1709633472345, "tags": ["a"], "addr": {"city": "Oslo"}, "extra": 1}`)); err != nil {
		t.Fatal(err)
	}
	before := lens(rb)
	_, err := d.Append([]byte(`{"id": 8, "at": 0, "tags": ["a", 2]}`))
	var de *pulsarschema.DecodeError
	if !errors.As(err, &de) || de.Path != "tags[1]" {
		t.Fatalf("error = %v, want a DecodeError at tags[1]", err)
	}
	if !slices.Equal(lens(rb), before) {
		t.Fatal("builders changed")
	}
	r := rows(rb)
	defer r.Release()
	if r.NumRows() != 1 || col(r, "id").ValueStr(0) != "7" || col(r, "note").IsValid(0) ||
		col(r, "at").ValueStr(0) != "2024-03-05T10:11:12.345Z" || col(r, "addr").ValueStr(0) != `{"city":"Oslo"}` {
		t.Errorf("row = %v", r)
	}
}

// The registrations of one record with a bytes field, as the broker's admin
// API returns them (captured from pulsar-client 3.13's JsonSchema and the
// Java client 4.0's JSONSchema.of on a 4.0 broker).
const (
	pythonRegistered = "{\n \"type\": \"record\",\n \"name\": \"R\",\n \"fields\": [\n  {\n   \"name\": \"blob\",\n   \"type\": [\n    \"null\",\n    \"bytes\"\n   ]\n  },\n  {\n   \"name\": \"arr\",\n   \"type\": [\n    \"null\",\n    {\n     \"type\": \"array\",\n     \"items\": \"bytes\"\n    }\n   ]\n  },\n  {\n   \"name\": \"doc\",\n   \"type\": \"string\",\n   \"doc\": \"caf\\u00e9\"\n  },\n  {\n   \"name\": \"m\",\n   \"type\": {\n    \"type\": \"map\",\n    \"values\": \"bytes\"\n   }\n  },\n  {\n   \"name\": \"e\",\n   \"type\": [\n    \"null\",\n    {\n     \"type\": \"array\",\n     \"items\": \"string\"\n    }\n   ],\n   \"default\": []\n  }\n ]\n}"
	javaRegistered   = `{"type":"record","name":"R","namespace":"JavaProduce","fields":[{"name":"blob","type":["null",{"type":"bytes","java-class":"[B"}],"default":null},{"name":"arr","type":["null",{"type":"array","items":{"type":"bytes","java-class":"[B"},"java-class":"java.util.List"}],"default":null}]}`
)

// TestJSONBytesRule: the registration decides how a JSON schema version's
// bytes fields are read (JSONBytesAuto), and CompileWith overrides it: the
// Python client's layout is text, the Java client's properties base64 even
// when its user wrote the definition in the Python layout, anything else
// (the Go client registers its user's definition written back compact)
// base64.
func TestJSONBytesRule(t *testing.T) {
	javaProps := map[string]string{"__alwaysAllowNull": "true", "__jsr310ConversionEnabled": "false"}
	for _, tc := range []struct {
		name  string
		info  pulsarschema.Info
		force pulsarschema.JSONBytes
		want  pulsarschema.JSONBytes
	}{
		{"python", pulsarschema.Info{Definition: []byte(pythonRegistered), Properties: map[string]string{}}, pulsarschema.JSONBytesAuto, pulsarschema.JSONBytesText},
		{"java", pulsarschema.Info{Definition: []byte(javaRegistered), Properties: javaProps}, pulsarschema.JSONBytesAuto, pulsarschema.JSONBytesBase64},
		{"java with a definition in the Python layout", pulsarschema.Info{Definition: []byte(pythonRegistered), Properties: javaProps}, pulsarschema.JSONBytesAuto, pulsarschema.JSONBytesBase64},
		{"go (compact)", pulsarschema.Info{Definition: []byte(javaRegistered)}, pulsarschema.JSONBytesAuto, pulsarschema.JSONBytesBase64},
		{"go (indented by two)", pulsarschema.Info{Definition: []byte(strings.ReplaceAll(pythonRegistered, "\n ", "\n  "))}, pulsarschema.JSONBytesAuto, pulsarschema.JSONBytesBase64},
		{"python with a trailing newline", pulsarschema.Info{Definition: []byte(pythonRegistered + "\n")}, pulsarschema.JSONBytesAuto, pulsarschema.JSONBytesBase64},
		{"python, forced base64", pulsarschema.Info{Definition: []byte(pythonRegistered)}, pulsarschema.JSONBytesBase64, pulsarschema.JSONBytesBase64},
		{"java, forced text", pulsarschema.Info{Definition: []byte(javaRegistered), Properties: javaProps}, pulsarschema.JSONBytesText, pulsarschema.JSONBytesText},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.info.Type = pulsarschema.TypeJSON
			c, err := pulsarschema.CompileWith(tc.info, tc.force)
			if err != nil {
				t.Fatal(err)
			}
			if c.JSONBytes() != tc.want {
				t.Fatalf("read as %s, want %s", c.JSONBytes(), tc.want)
			}
			d, rb := decoderFor(t, c)
			payload := map[pulsarschema.JSONBytes]string{
				pulsarschema.JSONBytesText:   `{"blob": "h\u00e9\u0000\ud83d\ude00", "arr": ["", "\u20ac"], "doc": "x", "m": {"k": "v"}}`,
				pulsarschema.JSONBytesBase64: `{"blob": "aMOpAPCfmIA=", "arr": ["", "4oKs"], "doc": "x", "m": {"k": "dg=="}}`,
			}[tc.want]
			if _, err := d.Append([]byte(payload)); err != nil {
				t.Fatal(err)
			}
			r := rows(rb)
			defer r.Release()
			if got := string(col(r, "blob").(*array.Binary).Value(0)); got != "h\u00e9\x00\U0001F600" {
				t.Errorf("blob = %q", got)
			}
			if got := col(r, "arr").ValueStr(0); got != `["","4oKs"]` {
				t.Errorf("arr = %s", got)
			}
		})
	}
	if _, err := pulsarschema.CompileWith(pulsarschema.Info{Type: pulsarschema.TypeJSON, Definition: []byte(javaRegistered)}, 9); err == nil {
		t.Error("CompileWith accepted JSONBytes 9")
	}
}
