package pulsarschema_test

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

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
