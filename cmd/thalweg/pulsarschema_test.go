package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/pulsarschema"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/pulsartest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// TestRunWithRegistrySchemas: `thalweg run` with schema.mode pulsar on the
// topics the Pulsar Python client's schema classes wrote (AvroSchema and
// JsonSchema of a pulsar.schema.Record, ProtobufNativeSchema, StringSchema),
// one worker and Flight receiver per topic (topics of different schemas
// would not merge into one dataset). At the receiver every field has the
// mapped Arrow type and the value the producer sent, each stored batch names
// its schema version; the Avro topic's upgrade to version 1 (a new optional
// field) arrives without an operator, and its non-Avro payload is in the
// dead-letter topic with its reason (thalweg dlq), acknowledged upstream
// only after that.
func TestRunWithRegistrySchemas(t *testing.T) {
	url, adminURL := testenv.PulsarURL(t)
	prefix, out := pulsartest.PythonSchemaProducers(t, testenv.Python(t), url)
	var sent struct {
		Avro []struct {
			ID     int64   `json:"id"`
			Name   string  `json:"name"`
			Note   *string `json:"note"`
			Price  float64 `json:"price"`
			City   *string `json:"city"`
			Coupon string  `json:"coupon"`
		} `json:"avro"`
		JSON []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"json"`
		String []string `json:"string"`
	}
	if err := json.Unmarshal(out, &sent); err != nil {
		t.Fatalf("produce.py output %q: %v", out, err)
	}

	run := func(t *testing.T, suffix string, records int) (stored []flight.Stored, cfg string) {
		topic := prefix + "-" + suffix
		flightAt := startFlight(t, receiver.Options{})
		cfg = writeConfig(t, fmt.Sprintf(`source:
  url: %s
  topics: [%s]
  subscription: {name: worker}
  dead_letter_topic: %s-dlq
schema:
  mode: pulsar
  registry_url: %s
batching: {max_rows: 100, linger: 20ms}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "%s"}
store: {dir: %s}
metrics: {listen: "127.0.0.1:0"}
log: {format: json}
`, url, topic, topic, adminURL, flightAt, filepath.Join(t.TempDir(), "offsets")))
		r, base := startInProcess(t, cfg)
		testenv.WaitFor(t, 30*time.Second, "every record acknowledged upstream", func() bool {
			return metricSum(httpBody(t, base+"/metrics"), "thalweg_source_acked_total") >= float64(records)
		})
		if code := r.stop(t); code != exitOK {
			t.Fatalf("run: exit %d:\n%s", code, r.c.stderr.String())
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		t.Cleanup(func() { mem.AssertSize(t, 0) })
		stored, err := flight.ReadAll(flighttest.Ctx(t, 30*time.Second), flighttest.Client(t, flightAt), []string{"raw"}, mem)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { flight.ReleaseAll(stored) })
		return stored, cfg
	}
	// rowsOf concatenates column name over the stored batches, as strings,
	// with the schema version of each row.
	rowsOf := func(stored []flight.Stored, name string) (vals, versions []string) {
		for _, s := range stored {
			v, _ := s.Rec.Schema().Metadata().GetValue(pulsarschema.MetaSchemaVersion)
			idx := s.Rec.Schema().FieldIndices(name)
			for i := range int(s.Rec.NumRows()) {
				versions = append(versions, v)
				if len(idx) == 0 {
					vals = append(vals, "<absent>")
				} else {
					vals = append(vals, s.Rec.Column(idx[0]).ValueStr(i))
				}
			}
		}
		return vals, versions
	}
	typeOf := func(stored []flight.Stored, name string) arrow.DataType {
		for _, s := range stored {
			if idx := s.Rec.Schema().FieldIndices(name); len(idx) == 1 {
				return s.Rec.Schema().Field(idx[0]).Type
			}
		}
		return nil
	}

	t.Run("avro", func(t *testing.T) {
		stored, cfg := run(t, "avro", 4)
		ids, versions := rowsOf(stored, "id")
		if !slices.Equal(ids, []string{"1", "2", "3"}) || !slices.Equal(versions, []string{"0", "0", "1"}) {
			t.Fatalf("ids %v versions %v, want 1 2 3 at versions 0 0 1", ids, versions)
		}
		coupons, _ := rowsOf(stored, "coupon")
		if !slices.Equal(coupons, []string{"<absent>", "<absent>", sent.Avro[2].Coupon}) {
			t.Errorf("coupon %v: the upgraded version's new field did not arrive", coupons)
		}
		names, _ := rowsOf(stored, "name")
		notes, _ := rowsOf(stored, "note")
		prices, _ := rowsOf(stored, "price")
		cities, _ := rowsOf(stored, "addr")
		for i, w := range sent.Avro[:2] {
			note, city := array.NullValueStr, array.NullValueStr
			if w.Note != nil {
				note = *w.Note
			}
			if w.City != nil {
				city = fmt.Sprintf(`{"city":%q,"zip":150}`, *w.City)
			}
			if names[i] != w.Name || notes[i] != note || prices[i] != fmt.Sprint(w.Price) || cities[i] != city {
				t.Errorf("row %d: name %s note %s price %s addr %s, sent %+v", i, names[i], notes[i], prices[i], cities[i], w)
			}
		}
		for name, want := range map[string]string{"id": "int64", "qty": "int32", "ratio": "float32", "tags": "list<item: utf8>",
			"attrs": "map<utf8, int64, items_non_nullable>", "addr": "struct<city: utf8, zip: int32 nullable>", "_seq": "uint64"} {
			if got := typeOf(stored, name); got == nil || got.String() != want {
				t.Errorf("column %s: type %v, want %s", name, got, want)
			}
		}
		code, stdout, stderr := runCLI(t, "dlq", "--config", cfg)
		if code != exitOK || !strings.Contains(stdout, "undecodable") || !strings.Contains(stdout, "addr.city") ||
			!strings.Contains(stderr, "1 dead letters on") {
			t.Fatalf("dlq: exit %d:\n%s\n%s", code, stdout, stderr)
		}
		t.Logf("thalweg dlq:\n%s", stdout)
	})

	t.Run("json", func(t *testing.T) {
		stored, _ := run(t, "json", 2)
		ids, _ := rowsOf(stored, "id")
		names, _ := rowsOf(stored, "name")
		if !slices.Equal(ids, []string{fmt.Sprint(sent.JSON[0].ID), fmt.Sprint(sent.JSON[1].ID)}) || names[1] != sent.JSON[1].Name {
			t.Errorf("ids %v names %v, sent %+v", ids, names, sent.JSON)
		}
	})

	t.Run("protobuf-native", func(t *testing.T) {
		stored, _ := run(t, "proto", 1)
		for name, want := range map[string]string{"id": "77", "status": "ACTIVE", "at": "2024-03-05T10:11:12.345Z", "maybe": "8",
			"packed": "[1,-2,300]", "u": "9223372036854775808"} {
			if got, _ := rowsOf(stored, name); len(got) != 1 || got[0] != want {
				t.Errorf("%s = %v, want %s", name, got, want)
			}
		}
		if got := typeOf(stored, "at"); got == nil || got.String() != "timestamp[ns, tz=UTC]" {
			t.Errorf("at: type %v", got)
		}
	})

	t.Run("string", func(t *testing.T) {
		stored, _ := run(t, "string", 2)
		if got, _ := rowsOf(stored, "value"); !slices.Equal(got, sent.String) {
			t.Errorf("values %v, sent %v", got, sent.String)
		}
	})
}
