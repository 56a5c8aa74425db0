package flightwire

import (
	"reflect"
	"testing"
)

// parseAckJSON is ParseAck's general (encoding/json) path, the reference
// the fast path must agree with: a leading space, which encoding/json
// ignores, keeps the input off the fast path.
func parseAckJSON(in []byte) (Ack, error) {
	return ParseAck(append([]byte(" "), in...))
}

// FuzzCanonicalAckMatchesJSON: whatever the fast path of ParseAck accepts,
// the general (encoding/json) path decodes to the same Ack, so the fast
// path never changes what an acknowledgement means.
func FuzzCanonicalAckMatchesJSON(f *testing.F) {
	for _, s := range []string{
		`{"ack_up_to_offset":0,"ack_up_to_records":0}`, `{"ack_up_to_offset":18446744073709551615,"ack_up_to_records":18446744073709551615}`,
		`{"ack_up_to_offset":18446744073709551616,"ack_up_to_records":0}`, `{"ack_up_to_offset":01,"ack_up_to_records":1}`,
		`{"ack_up_to_offset":-1,"ack_up_to_records":0}`, `{"ack_up_to_offset":1,"ack_up_to_records":2} `,
		`{"ack_up_to_offset":1,"ack_up_to_records":2}{}`, `{"ack_up_to_offset":1,"ack_up_to_records":2,"close_stream_duration_ms":5}`,
		`{"ack_up_to_offset":1}`, `{"ack_up_to_offset":1e2,"ack_up_to_records":1}`, `{"ack_up_to_offset":1,"ack_up_to_records":-0}`,
	} {
		f.Add([]byte(s))
	}
	f.Add(AppendAck(nil, 123456, 1234560))
	f.Fuzz(func(t *testing.T, in []byte) {
		fast, ok := parseCanonicalAck(in)
		if !ok {
			return
		}
		slow, err := parseAckJSON(in)
		if err != nil {
			t.Fatalf("fast path accepted %q, the general path rejects it: %v", in, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast path %+v, general path %+v", in, fast, slow)
		}
	})
}

// TestCanonicalAckFastPath: what AppendAck writes (every thalweg receiver's
// ack) takes the fast path, without an allocation; the Zerobus signals and
// anything not in canonical form do not, and still parse as before.
func TestCanonicalAckFastPath(t *testing.T) {
	for _, v := range [][2]uint64{{0, 0}, {1, 10}, {123456, 1234560}, {1<<64 - 1, 1<<64 - 1}} {
		in := AppendAck(nil, v[0], v[1])
		a, ok := parseCanonicalAck(in)
		if !ok {
			t.Fatalf("%s does not take the fast path", in)
		}
		if want := (Ack{Offset: v[0], Records: v[1], HasRecords: true}); a != want {
			t.Fatalf("%s: %+v, want %+v", in, a, want)
		}
		if allocs := testing.AllocsPerRun(100, func() { _, _ = ParseAck(in) }); allocs != 0 {
			t.Fatalf("%s: %v allocations per ParseAck, want 0", in, allocs)
		}
	}
	for _, in := range []string{
		string(AppendReady(nil)), string(AppendCloseStream(nil, 5, 10, 0)), `{"ack_up_to_offset":5}`,
		`{"ack_up_to_records":10,"ack_up_to_offset":5}`, ` {"ack_up_to_offset":5,"ack_up_to_records":10}`,
		`{"ack_up_to_offset":05,"ack_up_to_records":10}`, `{"ack_up_to_offset":18446744073709551616,"ack_up_to_records":10}`,
	} {
		if _, ok := parseCanonicalAck([]byte(in)); ok {
			t.Fatalf("%s took the fast path", in)
		}
	}
	a, err := ParseAck([]byte(`{"ack_up_to_records":10,"ack_up_to_offset":5}`))
	if err != nil || a != (Ack{Offset: 5, Records: 10, HasRecords: true}) {
		t.Fatalf("reordered fields: %+v, %v", a, err)
	}
	if a, err := ParseAck(AppendReady(nil)); err != nil || !a.Ready {
		t.Fatalf("ready signal: %+v, %v", a, err)
	}
	if _, err := ParseAck([]byte(`{"ack_up_to_offset":05,"ack_up_to_records":10}`)); err == nil {
		t.Fatal("a leading zero accepted")
	}
}

func BenchmarkParseAck(b *testing.B) {
	in := AppendAck(nil, 123456, 1234560)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseAck(in); err != nil {
			b.Fatal(err)
		}
	}
}
