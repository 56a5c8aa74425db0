package flightwire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/thalweg/thalweg/batch"
)

// FuzzParseBatchMeta is the receiver's side of the batch app_metadata. For
// any input: no panic; an error names app_metadata; an accepted value obeys
// every invariant the receiver relies on (spans ordered inside, part within
// parts) and survives a round trip through AppendBatchMeta unchanged.
// Allocation is bounded by the input: the decoder allocates one Span per
// span object present, never from a declared count.
func FuzzParseBatchMeta(f *testing.F) {
	for _, s := range []string{
		`{"offset_id":0}`, `{"offset_id":18446744073709551615}`,
		`{"offset_id":7,"spans":[{"partition":"persistent://public/default/t-partition-1","first":2,"last":3}]}`,
		`{"offset_id":7,"ordered":true,"spans":[{"partition":"a\\\"b\u00e9","first":0,"last":18446744073709551615}],"part":1,"parts":3}`,
		`{"offset_id":7,"ordered":false}`, `{"offset_id":7,"spans":[{"partition":1,"first":2,"last":3}]}`,
		`{"offset_id":1,"part":0,"parts":1}`, `{"offset_id":1,"part":2,"parts":2}`, `{"offset_id":1,"parts":2}`,
		`{"offset_id":1,"spans":[{"partition":"0","first":5,"last":4}]}`, `{"offset_id":-1}`, `{"offset_id":1e3}`,
		`{"offset_id":1,"spans":null}`, `{"offset_id":1,"spans":{}}`, `{"offset_id":1,"part":9223372036854775807,"parts":-9223372036854775808}`,
		``, ` `, `null`, `[]`, `{`, `{"offset_id":1}garbage`, "{\"offset_id\":1,\"x\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Add(AppendBatchMeta(nil, 42, true, []batch.OffsetSpan{{Partition: "gen-3", First: 1, Last: 9}}, 2, 5))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ParseBatchMeta(in)
		if err != nil {
			if !strings.Contains(err.Error(), "app_metadata") {
				t.Fatalf("error %q does not name app_metadata", err)
			}
			return
		}
		for i, s := range m.Spans {
			if s.Last < s.First {
				t.Fatalf("accepted spans[%d] with last < first: %+v", i, s)
			}
		}
		if m.Parts != 0 && (m.Part < 0 || m.Part >= m.Parts) || m.Parts < 0 {
			t.Fatalf("accepted part %d of %d", m.Part, m.Parts)
		}
		spans := ToSpans(m.Spans)
		again, err := ParseBatchMeta(AppendBatchMeta(nil, m.OffsetID, m.Ordered, spans, m.Part, m.Parts))
		if err != nil {
			t.Fatalf("re-encoding of accepted %q does not parse: %v", in, err)
		}
		if again.OffsetID != m.OffsetID || again.Ordered != m.Ordered || len(again.Spans) != len(m.Spans) {
			t.Fatalf("round trip changed %+v into %+v", m, again)
		}
		if m.Parts > 1 && (again.Part != m.Part || again.Parts != m.Parts) {
			t.Fatalf("round trip changed part %d/%d into %d/%d", m.Part, m.Parts, again.Part, again.Parts)
		}
	})
}

// FuzzParseAck is the sink's side of PutResult app_metadata: no panic, an
// error names PutResult, and an accepted ack is either Ready or an Offset
// that re-encodes to an equal value.
func FuzzParseAck(f *testing.F) {
	for _, s := range []string{
		`{"ack_up_to_offset":0,"ack_up_to_records":0}`, `{"ack_up_to_offset":-1,"ack_up_to_records":0}`,
		`{"ack_up_to_offset":18446744073709551615}`, `{"ack_up_to_offset":18446744073709551616}`,
		`{"ack_up_to_offset":-9223372036854775809}`, `{"ack_up_to_offset":-0}`, `{"ack_up_to_offset":1e2}`,
		`{"ack_up_to_offset":1,"ack_up_to_records":-1}`, `{"ack_up_to_offset":1,"close_stream_duration_ms":5}`,
		`{"ack_up_to_offset":"1"}`, `{}`, ``, `null`, `[1]`, `{"ack_up_to_offset":1}{}`,
		`{"ack_up_to_offset":5,"ack_up_to_records":10,"close_stream_duration_ms":2000}`,
		`{"ack_up_to_offset":5,"ack_up_to_records":10,"close_stream_duration_ms":9223372036854775807}`,
		`{"ack_up_to_offset":5,"ack_up_to_records":10,"close_stream_duration_ms":-1}`,
		`{"ack_up_to_offset":-7,"ack_up_to_records":0}`, `{"ack_up_to_offset":1e30,"ack_up_to_records":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := ParseAck(in)
		if err != nil {
			if !strings.Contains(err.Error(), "PutResult") {
				t.Fatalf("error %q does not name PutResult", err)
			}
			return
		}
		if a.Close && (a.CloseAfter < 0 || a.CloseAfter > MaxCloseAfter) {
			t.Fatalf("close grace %v accepted", a.CloseAfter)
		}
		if a.Ready {
			if a.Offset != 0 {
				t.Fatalf("ready ack carries offset %d", a.Offset)
			}
			return
		}
		b := AppendAck(nil, a.Offset, a.Records)
		if !json.Valid(b) {
			t.Fatalf("AppendAck produced invalid JSON %q", b)
		}
		again, err := ParseAck(b)
		if err != nil || again.Offset != a.Offset || again.Records != a.Records || again.Ready {
			t.Fatalf("round trip of %+v: %+v, %v", a, again, err)
		}
	})
}
