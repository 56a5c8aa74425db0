package pulsarschema_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/thalweg/thalweg/internal/pulsarschema"
	"github.com/thalweg/thalweg/internal/schemaevo"
	"github.com/thalweg/thalweg/internal/testkit/pulsartest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

type received struct {
	payload []byte
	version []byte
}

// consumeAll reads n messages of topic from the earliest position with a
// schema-less consumer, as thalweg's source does.
func consumeAll(t *testing.T, client pulsar.Client, topic string, n int) []received {
	t.Helper()
	c, err := client.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "schema-test",
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out []received
	for len(out) < n {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		msg, err := c.Receive(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: %d of %d messages: %v", topic, len(out), n, err)
		}
		out = append(out, received{payload: msg.Payload(), version: msg.SchemaVersion()})
		_ = c.Ack(msg)
	}
	return out
}

// decodeAt decodes one message against its own schema version, fetched
// from the registry, into a one-row record.
func decodeAt(t *testing.T, reg *pulsarschema.Registry, topic string, m received) (arrow.RecordBatch, *pulsarschema.Codec, error) {
	t.Helper()
	v, err := pulsarschema.VersionFromMessage(m.version)
	if err != nil {
		t.Fatal(err)
	}
	c, err := reg.Codec(context.Background(), topic, v)
	if err != nil {
		t.Fatalf("%s version %d: %v", topic, v, err)
	}
	d, rb := decoderFor(t, c)
	if _, err := d.Append(m.payload); err != nil {
		return nil, c, err
	}
	return rb.NewRecordBatch(), c, nil
}

// produce runs testdata/produce.py against the shared broker (see
// pulsartest.PythonSchemaProducers).
func produce(t *testing.T) (prefix string, sent sentRecords) {
	t.Helper()
	serviceURL, _ := testenv.PulsarURL(t)
	prefix, out := pulsartest.PythonSchemaProducers(t, testenv.Python(t), serviceURL)
	if err := json.Unmarshal(out, &sent); err != nil {
		t.Fatalf("produce.py output %q: %v", out, err)
	}
	return prefix, sent
}

// sentRecords is what produce.py reports it sent.
type sentRecords struct {
	Avro []struct {
		ID     int64            `json:"id"`
		Name   string           `json:"name"`
		Note   *string          `json:"note"`
		OK     bool             `json:"ok"`
		Qty    int32            `json:"qty"`
		Price  float64          `json:"price"`
		Tags   []string         `json:"tags"`
		Attrs  map[string]int64 `json:"attrs"`
		City   *string          `json:"city"`
		Coupon string           `json:"coupon"`
	} `json:"avro"`
	JSON []struct {
		ID   int64   `json:"id"`
		Name string  `json:"name"`
		Note *string `json:"note"`
		City *string `json:"city"`
	} `json:"json"`
	JSONBytes []blobRow `json:"jsonbytes"`
	String    []string  `json:"string"`
}

// blobRow is one record of a producer of Blob (testdata/produce.py,
// testdata/JSONBytes.java) as it reports it: every byte array in base64,
// null where the field was absent.
type blobRow struct {
	ID     int64             `json:"id"`
	Blob   *string           `json:"blob"`
	Maybe  *string           `json:"maybe"`
	Chunks []*string         `json:"chunks"`
	Attrs  map[string]string `json:"attrs"`
	Part   *string           `json:"part"` // part.data; null: no part
	Parts  []*string         `json:"parts"`
}

// TestRegistryWithPythonProducers: producers written with the Pulsar Python
// client's schema classes (AvroSchema and JsonSchema of a pulsar.schema
// Record, ProtobufNativeSchema of a generated message, StringSchema) on the
// real broker; every message is decoded against the schema version it
// names, fetched from the admin API, and every field is checked against
// what the producer sent. The Avro topic's schema is upgraded mid-stream
// (a new optional field: version 1), which the evolution rules accept, and
// its last payload is not Avro: it fails with the field and offset.
func TestRegistryWithPythonProducers(t *testing.T) {
	serviceURL, adminURL := testenv.PulsarURL(t)
	prefix, sent := produce(t)

	client, err := pulsar.NewClient(pulsar.ClientOptions{URL: serviceURL, Logger: log.DefaultNopLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	reg := newRegistry(t, adminURL)

	t.Run("avro", func(t *testing.T) {
		topic := prefix + "-avro"
		msgs := consumeAll(t, client, topic, 4)
		var merged []schemaevo.Field
		for i, m := range msgs[:3] {
			r, c, err := decodeAt(t, reg, topic, m)
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			defer r.Release()
			if merged, err = schemaevo.MergeArrow(merged, c.Schema()); err != nil {
				t.Fatalf("version %d: %v", c.Info().Version, err)
			}
			w := sent.Avro[i]
			if got := col(r, "id").(*array.Int64).Value(0); got != w.ID {
				t.Errorf("message %d: id %d, want %d", i, got, w.ID)
			}
			if i == 2 {
				if c.Info().Version != 1 || col(r, "coupon").ValueStr(0) != w.Coupon {
					t.Errorf("upgraded message: version %d, coupon %s", c.Info().Version, col(r, "coupon").ValueStr(0))
				}
				continue
			}
			if c.Info().Version != 0 || len(c.Schema().FieldIndices("coupon")) != 0 {
				t.Errorf("message %d: version %d, schema %s", i, c.Info().Version, c.Schema())
			}
			if col(r, "name").ValueStr(0) != w.Name || col(r, "ok").ValueStr(0) != fmt.Sprint(w.OK) ||
				col(r, "qty").(*array.Int32).Value(0) != w.Qty || col(r, "price").(*array.Float64).Value(0) != w.Price ||
				col(r, "ratio").(*array.Float32).Value(0) != 0.25 {
				t.Errorf("message %d: row %v, sent %+v", i, r, w)
			}
			if (w.Note == nil) != col(r, "note").IsNull(0) || (w.Note != nil && col(r, "note").ValueStr(0) != *w.Note) {
				t.Errorf("message %d: note %s, sent %v", i, col(r, "note").ValueStr(0), w.Note)
			}
			if got, want := col(r, "tags").ValueStr(0), mustJSON(w.Tags); got != want {
				t.Errorf("message %d: tags %s, want %s", i, got, want)
			}
			attrs := col(r, "attrs").(*array.Map)
			if attrs.Keys().Len() != 1 || attrs.Items().(*array.Int64).Value(0) != w.Attrs["k"] {
				t.Errorf("message %d: attrs %s, sent %v", i, attrs.ValueStr(0), w.Attrs)
			}
			addr := col(r, "addr").(*array.Struct)
			if (w.City == nil) != addr.IsNull(0) || (w.City != nil && addr.Field(0).ValueStr(0) != *w.City) {
				t.Errorf("message %d: addr %s, sent city %v", i, addr.ValueStr(0), w.City)
			}
		}
		_, c, err := decodeAt(t, reg, topic, msgs[3])
		var de *pulsarschema.DecodeError
		if !errors.As(err, &de) || c.Info().Version != 1 {
			t.Fatalf("broken payload (version %d): %v, want a *DecodeError", c.Info().Version, err)
		}
		t.Logf("broken payload: %v", err)
	})

	t.Run("json", func(t *testing.T) {
		topic := prefix + "-json"
		for i, m := range consumeAll(t, client, topic, 2) {
			r, _, err := decodeAt(t, reg, topic, m)
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			defer r.Release()
			w := sent.JSON[i]
			if col(r, "id").(*array.Int64).Value(0) != w.ID || col(r, "name").ValueStr(0) != w.Name ||
				(w.Note == nil) != col(r, "note").IsNull(0) || (w.City == nil) != col(r, "addr").IsNull(0) {
				t.Errorf("message %d: row %v, sent %+v", i, r, w)
			}
			if w.City != nil && col(r, "addr").(*array.Struct).Field(0).ValueStr(0) != *w.City {
				t.Errorf("message %d: addr %s", i, col(r, "addr").ValueStr(0))
			}
		}
	})

	// The Python client's JsonSchema writes Bytes fields as UTF-8 text; the
	// registry says so by how the version is laid out (JSONBytesAuto).
	t.Run("json-bytes", func(t *testing.T) {
		topic := prefix + "-jsonbytes"
		msgs := consumeAll(t, client, topic, len(sent.JSONBytes)+2)
		checkBlobs(t, reg, topic, msgs[:len(sent.JSONBytes)], sent.JSONBytes, pulsarschema.JSONBytesText)
		// The two payloads of the same version that fit neither convention.
		for i, detail := range []string{"unpaired surrogate", "found number"} {
			_, c, err := decodeAt(t, reg, topic, msgs[len(sent.JSONBytes)+i])
			var de *pulsarschema.DecodeError
			if !errors.As(err, &de) || de.Path != "blob" || !strings.Contains(de.Detail, detail) || c.JSONBytes() != pulsarschema.JSONBytesText {
				t.Errorf("payload %d that fits no convention: %v, want a DecodeError at blob saying %q", i, err, detail)
			}
			t.Logf("dead-letter reason: %v", err)
		}
	})

	t.Run("protobuf-native", func(t *testing.T) {
		topic := prefix + "-proto"
		r, c, err := decodeAt(t, reg, topic, consumeAll(t, client, topic, 1)[0])
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		if c.Info().Type != pulsarschema.TypeProtobufNative {
			t.Fatalf("schema type %s", c.Info().Type)
		}
		for name, want := range map[string]string{
			"id": "77", "name": "proto", "ok": "true", "price": "2.5", "status": "ACTIVE", "tags": `["p","q"]`,
			"s32": "-5", "packed": "[1,-2,300]", "u": "9223372036854775808", "item": `{"n":0,"sku":"s1"}`,
			"at": "2024-03-05T10:11:12.345Z", "maybe": "8", "opt": array.NullValueStr, "items": "[]",
		} {
			if got := col(r, name).ValueStr(0); got != want {
				t.Errorf("%s = %s, want %s", name, got, want)
			}
		}
		attrs := col(r, "attrs").(*array.Map)
		if attrs.Keys().(*array.String).Value(0) != "z" || attrs.Items().(*array.Int64).Value(0) != 26 {
			t.Errorf("attrs = %s", attrs.ValueStr(0))
		}
	})

	t.Run("string", func(t *testing.T) {
		topic := prefix + "-string"
		for i, m := range consumeAll(t, client, topic, 2) {
			r, c, err := decodeAt(t, reg, topic, m)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			if c.Info().Type != pulsarschema.TypeString || r.Column(0).ValueStr(0) != sent.String[i] {
				t.Errorf("message %d: %s %s, sent %q", i, c.Info().Type, r.Column(0).ValueStr(0), sent.String[i])
			}
		}
	})

	if _, err := reg.Codec(context.Background(), prefix+"-absent", -1); !errors.Is(err, pulsarschema.ErrNoSchema) {
		t.Errorf("topic without a schema: %v, want ErrNoSchema", err)
	}
}

// TestRegistryJSONBytesJavaClient: records of the Pulsar Java client's
// JSONSchema (Jackson: byte[] as base64, bytes that are not UTF-8 among
// them) land with their bytes intact, on a broker and registry that also
// hold the Python client's text convention (TestRegistryWithPythonProducers):
// the Java client's registration (its __alwaysAllowNull property) picks
// base64.
func TestRegistryJSONBytesJavaClient(t *testing.T) {
	serviceURL, adminURL := testenv.PulsarURL(t)
	topic := fmt.Sprintf("persistent://public/default/schema-java-%d", time.Now().UnixNano())
	out := pulsartest.JavaJSONBytesProducer(t, testenv.Java(t), testenv.PulsarHome(t), serviceURL, topic)
	var sent []blobRow
	if err := json.Unmarshal(out, &sent); err != nil {
		t.Fatalf("JSONBytes.java output %q: %v", out, err)
	}
	client, err := pulsar.NewClient(pulsar.ClientOptions{URL: serviceURL, Logger: log.DefaultNopLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	checkBlobs(t, newRegistry(t, adminURL), topic, consumeAll(t, client, topic, len(sent)), sent, pulsarschema.JSONBytesBase64)
}

// checkBlobs decodes each Blob message against its version from the
// registry and checks every byte array against what the producer sent,
// and that the version was read with the bytes convention want.
func checkBlobs(t *testing.T, reg *pulsarschema.Registry, topic string, msgs []received, sent []blobRow, want pulsarschema.JSONBytes) {
	t.Helper()
	if len(sent) == 0 {
		t.Fatal("the producer reports no records")
	}
	for i, m := range msgs {
		r, c, err := decodeAt(t, reg, topic, m)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		defer r.Release()
		if c.JSONBytes() != want {
			t.Errorf("version %d read as %s, want %s", c.Info().Version, c.JSONBytes(), want)
		}
		w := sent[i]
		b64 := func(a arrow.Array, j int) *string {
			if a.IsNull(j) {
				return nil
			}
			s := base64.StdEncoding.EncodeToString(a.(*array.Binary).Value(j))
			return &s
		}
		list := func(l *array.List, f func(arrow.Array, int) *string) []*string {
			var out []*string
			start, end := l.ValueOffsets(0)
			for j := start; j < end; j++ {
				out = append(out, f(l.ListValues(), int(j)))
			}
			return out
		}
		attrs := col(r, "attrs").(*array.Map)
		gotAttrs := map[string]string{}
		for j := range attrs.Keys().Len() {
			gotAttrs[attrs.Keys().ValueStr(j)] = *b64(attrs.Items(), j)
		}
		part := col(r, "part").(*array.Struct)
		var gotPart *string
		if !part.IsNull(0) {
			gotPart = b64(structField(part, "data"), 0)
		}
		got := blobRow{ID: col(r, "id").(*array.Int64).Value(0), Blob: b64(col(r, "blob"), 0), Maybe: b64(col(r, "maybe"), 0),
			Chunks: list(col(r, "chunks").(*array.List), b64), Attrs: gotAttrs, Part: gotPart,
			Parts: list(col(r, "parts").(*array.List), func(a arrow.Array, j int) *string { return b64(structField(a.(*array.Struct), "data"), j) })}
		if g, w := mustJSON(got), mustJSON(w); g != w {
			t.Errorf("message %d:\n got %s\nsent %s", i, g, w)
		}
	}
}

func structField(s *array.Struct, name string) arrow.Array {
	i, ok := s.DataType().(*arrow.StructType).FieldIdx(name)
	if !ok {
		panic("no struct field " + name)
	}
	return s.Field(i)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return strings.ReplaceAll(string(b), " ", "")
}

func TestMain(m *testing.M) {
	os.Exit(runWithLeakCheck(m))
}
