package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// `thalweg run` with a bounded generator into a raw anchor whose table is
// the template raw.{topic}: each generator partition (a topic of its own)
// lands in its own table, pyiceberg reads every record of it there exactly
// once and nothing of another; the tables' positions are the store's;
// `thalweg table` prints each table.
func TestRunIntoIcebergTemplate(t *testing.T) {
	const records, partitions = 3000, 3
	storeDir := filepath.Join(t.TempDir(), "offsets")
	doc := fmt.Sprintf(`source:
  kind: generator
  generator: {seed: 7, partitions: %d, records: %d, payload_size: 64B, mode: raw}
batching: {max_rows: 500, linger: 20ms}
destinations:
  - name: lake
    kind: iceberg
    role: raw_anchor
    iceberg: {table: "raw.{topic}", commit_interval: 100ms}
store: {dir: %s}
metrics: {listen: ""}
`, partitions, records, storeDir)
	cfg := writeConfig(t, doc)
	var c cli
	if code := c.run(t.Context(), "run", "--config", cfg); code != exitOK {
		t.Fatalf("run: exit %d; stderr:\n%s", code, c.stderr.String())
	}
	want := produced(t, records, partitions)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	catalogDB, warehouse := storeDir+".iceberg/catalog.db", storeDir+".iceberg/warehouse"
	props := icebergpeer.SQLProps(catalogDB, warehouse)
	ts, err := iceberg.OpenTables(iceberg.Options{Catalog: iceberg.CatalogOptions{URI: catalogDB}, Warehouse: warehouse, Table: "raw.{topic}"})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	var tables []string
	total := 0
	for p, last := range want {
		table, err := ts.Route(p)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, table)
		v := icebergpeer.Read(t, ctx, props, table)
		perPart := checkSeqs(t, table, v)
		if len(perPart) != 1 || len(v.Seqs) != 1 {
			t.Errorf("%s holds partitions %v, want only %s's", table, perPart, p)
		}
		for _, seqs := range v.Seqs {
			if seqs[len(seqs)-1] != last {
				t.Errorf("%s: last seq %d, want %d", table, seqs[len(seqs)-1], last)
			}
		}
		total += v.Rows
	}
	if total != records {
		t.Errorf("the tables hold %d rows, want %d", total, records)
	}
	pos, err := ts.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	delivered, _ := durable(t, storeDir, "lake")
	for p, last := range want {
		if pos[p] != last || delivered[p] != last {
			t.Errorf("%s: tables' position %d, store delivered %d; want %d", p, pos[p], delivered[p], last)
		}
	}
	code, stdout, stderr := runCLI(t, "table", "--config", cfg)
	if code != exitOK {
		t.Fatalf("table: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var printed []string
	for _, block := range strings.Split(strings.TrimSpace(stdout), "\n\n") {
		for _, l := range strings.Split(block, "\n") {
			if m := figureLine.FindStringSubmatch(l); m != nil && m[1] == "table" {
				printed = append(printed, m[2])
			}
		}
	}
	slices.Sort(tables)
	if !slices.Equal(printed, tables) {
		t.Errorf("thalweg table prints tables %v, want %v:\n%s", printed, tables, stdout)
	}
}

// schemaProducer is a producer written with the Pulsar Python client's
// schema classes (the Go client of this build has no Avro codec): argv URL
// TOPIC KIND SCHEMA N sends N records of the record class KIND with the
// registry schema SCHEMA (JsonSchema or AvroSchema; AvroSchema needs
// fastavro, in testdata/python/requirements.txt).
const schemaProducer = `
import sys
import pulsar
from pulsar.schema import AvroSchema, Boolean, Double, Integer, JsonSchema, Long, Record, String

class orders(Record):
    id = Long(required=True)
    item = String(required=True)

class prices(Record):
    id = Long(required=True)
    price = Double(required=True)

class flags(Record):
    on = Boolean(required=True)

class late(Record):
    note = String(required=True)
    n = Integer(required=True)

class clash(Record):
    id = Long(required=True)
    item = Long(required=True)

values = {
    "orders": lambda i: orders(id=i, item="item-%d" % i),
    "prices": lambda i: prices(id=i, price=i / 4),
    "flags": lambda i: flags(on=i % 2 == 0),
    "late": lambda i: late(note="late", n=i),
    "clash": lambda i: clash(id=i, item=i),
}
url, topic, kind, schema, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
codecs = {"JsonSchema": JsonSchema, "AvroSchema": AvroSchema}
client = pulsar.Client(url)
producer = client.create_producer(topic, schema=codecs[schema](globals()[kind]))
for i in range(n):
    producer.send(values[kind](i))
client.close()
`

// produceWithSchema publishes n records of kind (a record class of
// schemaProducer) to topic, with the registry schema the Python class
// schema (JsonSchema or AvroSchema) derives from it.
func produceWithSchema(ctx context.Context, t *testing.T, url, topic, kind, schema string, n int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, testenv.Python(t), "-c", schemaProducer, url, topic, kind, schema, strconv.Itoa(n))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("producing %s to %s with %s: %v\n%s", kind, topic, schema, err, out)
	}
}

// TestPulsarTopicsIntoTablePerTopic: one worker, schema.mode pulsar, a
// topics_pattern matching three topics whose registry schemas differ (two
// JSON, one Avro), and the raw anchor's table the template lake.{topic}: each topic
// lands in its own table with its own schema, pyiceberg reads each record
// there exactly once; a fourth topic created while the worker runs (found
// by the pattern's discovery) gets its own table too.
func TestPulsarTopicsIntoTablePerTopic(t *testing.T) {
	url, adminURL := testenv.PulsarURL(t)
	short := fmt.Sprintf("tpt%d", time.Now().UnixNano())
	topic := func(s string) string { return "persistent://public/default/" + short + "-" + s }
	const n = 40
	// Each topic's record class (schemaProducer) and registry schema, a
	// field of its own and that field's Iceberg type.
	cases := []struct{ suffix, schema, field, icebergType string }{
		{"orders", "JsonSchema", "item", "string"}, {"prices", "AvroSchema", "price", "double"},
		{"flags", "JsonSchema", "on", "boolean"}, {"late", "JsonSchema", "note", "string"},
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	for _, c := range cases[:3] {
		produceWithSchema(ctx, t, url, topic(c.suffix), c.suffix, c.schema, n)
	}
	storeDir := filepath.Join(t.TempDir(), "offsets")
	cfg := writeConfig(t, fmt.Sprintf(`source:
  url: %s
  topics_pattern: 'persistent://public/default/%s-.*'
  subscription: {name: worker}
schema:
  mode: pulsar
  registry_url: %s
batching: {max_rows: 16, linger: 20ms}
destinations:
  - {name: lake, kind: iceberg, role: raw_anchor, iceberg: {table: "lake.{topic}", commit_interval: 100ms}}
store: {dir: %s}
metrics: {listen: "127.0.0.1:0"}
log: {format: json}
`, url, short, adminURL, storeDir))
	r, base := startInProcess(t, cfg)
	testenv.WaitFor(t, 60*time.Second, "the three topics' records acknowledged upstream", func() bool {
		return metricSum(httpBody(t, base+"/metrics"), "thalweg_source_acked_total") >= 3*n
	})
	produceWithSchema(ctx, t, url, topic(cases[3].suffix), cases[3].suffix, cases[3].schema, n)
	// The pattern is evaluated again every 30 s (the source's default).
	testenv.WaitFor(t, 90*time.Second, "the fourth topic's records acknowledged upstream", func() bool {
		return metricSum(httpBody(t, base+"/metrics"), "thalweg_source_acked_total") >= 4*n
	})
	if code := r.stop(t); code != exitOK {
		t.Fatalf("run: exit %d:\n%s", code, r.c.stderr.String())
	}
	props := icebergpeer.SQLProps(storeDir+".iceberg/catalog.db", storeDir+".iceberg/warehouse")
	for _, c := range cases {
		table := "lake." + short + "_" + c.suffix
		v := icebergpeer.Read(t, ctx, props, table)
		perPart := checkSeqs(t, table, v)
		if v.Rows != n || len(perPart) != 1 {
			t.Errorf("%s: %d rows of partitions %v, want %d of %s", table, v.Rows, perPart, n, topic(c.suffix))
		}
		if v.Schema[c.field] != c.icebergType {
			t.Errorf("%s: field %s is %q, want %s (schema %v)", table, c.field, v.Schema[c.field], c.icebergType, v.Schema)
		}
		for _, o := range cases {
			if o.field != c.field && v.Schema[o.field] != "" {
				t.Errorf("%s has %s's field %s", table, o.suffix, o.field)
			}
		}
	}
}

// Two topics whose names sanitise to one table, their schemas' field item
// of types the table cannot change between (string, long): the raw anchor
// is refused for good once lane.permanent_budget ran out, and the worker
// exits 5 naming both topics, the table and the field.
func TestPulsarTopicCollisionRefused(t *testing.T) {
	url, adminURL := testenv.PulsarURL(t)
	short := fmt.Sprintf("tpc%d", time.Now().UnixNano())
	dash, dot := "persistent://public/default/"+short+"-a", "persistent://public/default/"+short+".a"
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	produceWithSchema(ctx, t, url, dash, "orders", "JsonSchema", 5)
	produceWithSchema(ctx, t, url, dot, "clash", "JsonSchema", 5)
	cfg := writeConfig(t, fmt.Sprintf(`source:
  url: %s
  topics_pattern: 'persistent://public/default/%s[-.]a'
  subscription: {name: worker}
schema:
  mode: pulsar
  registry_url: %s
batching: {max_rows: 16, linger: 20ms}
destinations:
  - name: lake
    kind: iceberg
    role: raw_anchor
    lane: {permanent_budget: 2s}
    iceberg: {table: "lake.{topic}", commit_interval: 100ms}
store: {dir: %s}
metrics: {listen: ""}
`, url, short, adminURL, filepath.Join(t.TempDir(), "offsets")))
	var c cli
	code := c.run(ctx, "run", "--config", cfg)
	if code != exitAnchorFailed {
		t.Fatalf("run: exit %d, want %d:\n%s", code, exitAnchorFailed, c.stderr.String())
	}
	var failed string
	for _, l := range strings.Split(c.stderr.String(), "\n") {
		if strings.Contains(l, "raw anchor failed for good") {
			failed = strings.ReplaceAll(l, `\"`, `"`)
		}
	}
	for _, want := range []string{dash, dot, "routes to table lake." + short + "_a", `field "item"`} {
		if !strings.Contains(failed, want) {
			t.Errorf("the failure line does not name %s: %s\n%s", want, failed, tail(c.stderr.String(), 10))
		}
	}
}
