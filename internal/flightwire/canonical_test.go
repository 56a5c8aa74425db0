package flightwire

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/thalweg/thalweg/batch"
)

// FuzzCanonicalMatchesJSON: whatever the canonical fast path of
// ParseBatchMeta accepts, encoding/json decodes to the same fields, so the
// fast path never changes what a message means.
func FuzzCanonicalMatchesJSON(f *testing.F) {
	f.Add(AppendBatchMeta(nil, 0, false, nil, 0, 0))
	f.Add(AppendBatchMeta(nil, 18446744073709551615, true, []batch.OffsetSpan{
		{Partition: "persistent://public/default/t-partition-0", First: 0, Last: 18446744073709551615}, {Partition: "", First: 5, Last: 4},
	}, 3, 7))
	for _, s := range []string{
		`{"offset_id":01}`, `{"offset_id":-0}`, `{"offset_id":18446744073709551616}`,
		`{"offset_id":1,"spans":[]}`, `{"offset_id":1,"spans":[{"partition":0,"first":1,"last":2}]}`,
		`{"offset_id":1,"spans":[{"partition":"a\\u0041","first":1,"last":2}]}`,
		`{"offset_id":1,"spans":[{"partition":"a\"b","first":1,"last":2}]}`, "{\"offset_id\":1,\"spans\":[{\"partition\":\"\xff\",\"first\":1,\"last\":2}]}",
		`{"offset_id":1,"ordered":true,"spans":[{"partition":"x","first":1,"last":2}]}`, `{"offset_id":1,"ordered":false}`,
		`{"offset_id":1,"part":9223372036854775808,"parts":1}`, `{"offset_id":1,"part":0,"parts":0}`,
		`{"offset_id":1} `, `{"offset_id":1,"spans":[{"partition":"1","first":1,"last":2},]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fast, ok := parseCanonicalMeta(in)
		if !ok {
			return
		}
		var j batchMetaJSON
		if err := json.Unmarshal(in, &j); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json rejects it: %v", in, err)
		}
		if slow := j.fields(); !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast path %+v, encoding/json %+v", in, fast, slow)
		}
	})
}

// TestCanonicalFastPath: what the sink sends takes the fast path, and
// ParseBatchMeta returns the same for it as for an equivalent that does not.
func TestCanonicalFastPath(t *testing.T) {
	spans := []batch.OffsetSpan{{Partition: "persistent://public/default/t-partition-3", First: 10, Last: 20}, {Partition: "gen-4", First: 1, Last: 1}}
	for _, tc := range []struct {
		part, parts int
		ordered     bool
	}{{0, 0, false}, {0, 2, false}, {1, 2, true}, {0, 0, true}} {
		in := AppendBatchMeta(nil, 77, tc.ordered, spans, tc.part, tc.parts)
		if _, ok := parseCanonicalMeta(in); !ok {
			t.Fatalf("%s does not take the fast path", in)
		}
		fast, err := ParseBatchMeta(in)
		if err != nil {
			t.Fatal(err)
		}
		var generic map[string]any
		if err := json.Unmarshal(in, &generic); err != nil {
			t.Fatal(err)
		}
		generic["x-peer-field"] = true // unknown fields force the slow path
		other, _ := json.Marshal(generic)
		if _, ok := parseCanonicalMeta(other); ok {
			t.Fatalf("%s took the fast path", other)
		}
		slow, err := ParseBatchMeta(other)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, slow) || fast.Ordered != tc.ordered {
			t.Fatalf("fast %+v, slow %+v", fast, slow)
		}
	}
	if _, err := ParseBatchMeta([]byte(`{"offset_id":1,"spans":[{"partition":"p","first":5,"last":4}]}`)); err == nil {
		t.Fatal("last < first accepted on the fast path")
	}
}

func BenchmarkParseBatchMeta(b *testing.B) {
	in := AppendBatchMeta(nil, 123456, true, []batch.OffsetSpan{{Partition: "persistent://public/default/orders-partition-3", First: 1000, Last: 1009}}, 0, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseBatchMeta(in); err != nil {
			b.Fatal(err)
		}
	}
}
