package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/internal/testkit/icebergrest"
	"github.com/thalweg/thalweg/internal/testkit/s3test"
)

// icebergPositions reads the positions an Iceberg table names in its
// current snapshot, through thalweg's own reader (used only to wait; the
// assertions read the table with pyiceberg).
func icebergPositions(t *testing.T, catalogDB, warehouse, table string) map[string]uint64 {
	t.Helper()
	tbl, err := iceberg.Open(iceberg.Options{
		Catalog:   iceberg.CatalogOptions{Type: iceberg.CatalogSQL, URI: catalogDB},
		Warehouse: warehouse, Table: table,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	pos, err := tbl.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// checkSeqs checks that every partition's seqs in v are distinct, and
// returns how many rows the table holds per partition.
func checkSeqs(t *testing.T, name string, v icebergpeer.View) map[string]int {
	t.Helper()
	out := map[string]int{}
	for p, seqs := range v.Seqs {
		if d := len(slices.Compact(slices.Clone(seqs))); d != len(seqs) {
			t.Errorf("%s: %s holds %d rows for %d distinct seqs", name, p, len(seqs), d)
		}
		out[p] = len(seqs)
	}
	return out
}

// `thalweg run` with a bounded generator into an Iceberg raw anchor and an
// Iceberg secondary, both in the embedded default catalog next to the
// offset store: pyiceberg (and DuckDB over its scan) reads every record
// exactly once from both tables, the last snapshot names every partition's
// position, the offset store holds the same positions, and `thalweg
// validate` prints the commit buffer in the memory bound.
func TestRunIntoIceberg(t *testing.T) {
	const records, partitions = 6000, 3
	storeDir := filepath.Join(t.TempDir(), "offsets")
	doc := fmt.Sprintf(`source:
  kind: generator
  generator: {seed: 7, partitions: %d, records: %d, payload_size: 64B, mode: raw}
batching: {max_rows: 500, linger: 20ms}
destinations:
  - name: lake
    kind: iceberg
    role: raw_anchor
    iceberg: {table: thalweg.events, commit_interval: 100ms}
  - name: copy
    kind: iceberg
    role: secondary
    iceberg: {table: thalweg.copy, commit_interval: 300ms}
store: {dir: %s}
metrics: {listen: ""}
`, partitions, records, storeDir)
	cfg := writeConfig(t, doc)

	code, stdout, stderr := runCLI(t, "validate", "--config", cfg)
	if code != exitOK || !strings.Contains(stdout, "iceberg write") {
		t.Fatalf("validate: exit %d, want the iceberg terms of the bound in\n%s\n%s", code, stdout, stderr)
	}

	var c cli
	if code := c.run(t.Context(), "run", "--config", cfg); code != exitOK {
		t.Fatalf("run: exit %d; stderr:\n%s", code, c.stderr.String())
	}
	want := produced(t, records, partitions)
	catalogDB := storeDir + ".iceberg/catalog.db"
	warehouse := storeDir + ".iceberg/warehouse"
	if _, err := os.Stat(catalogDB); err != nil {
		t.Fatalf("the default catalog is not next to the offset store: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	props := icebergpeer.SQLProps(catalogDB, warehouse)
	for _, table := range []string{"thalweg.events", "thalweg.copy"} {
		v := icebergpeer.Read(t, ctx, props, table)
		if v.Rows != records || v.DuckDBCount == nil || *v.DuckDBCount != records {
			t.Errorf("%s: pyiceberg reads %d rows, DuckDB counts %v; want %d", table, v.Rows, v.DuckDBCount, records)
		}
		perPart := checkSeqs(t, table, v)
		if len(perPart) != partitions {
			t.Errorf("%s: %d partitions, want %d", table, len(perPart), partitions)
		}
		var lasts, wantLasts []uint64
		for _, seqs := range v.Seqs {
			lasts = append(lasts, seqs[len(seqs)-1])
		}
		for _, last := range want {
			wantLasts = append(wantLasts, last)
		}
		slices.Sort(lasts)
		slices.Sort(wantLasts)
		if !slices.Equal(lasts, wantLasts) {
			t.Errorf("%s: last seqs %v, want %v", table, lasts, wantLasts)
		}
		if len(v.Snapshots) == 0 {
			t.Fatalf("%s: no snapshots", table)
		}
		if last := v.Snapshots[len(v.Snapshots)-1]; last["thalweg.commit-id"] == "" || last["thalweg.positions"] == "" {
			t.Errorf("%s: the last snapshot's summary %v lacks the commit id or positions", table, last)
		}
	}
	pos := icebergPositions(t, catalogDB, warehouse, "thalweg.events")
	delivered, _ := durable(t, storeDir, "lake")
	_, coverage := durable(t, storeDir, "copy")
	for p, last := range want {
		if pos[p] != last || delivered[p] != last || coverage[p] != last {
			t.Errorf("%s: table position %d, store delivered %d, secondary coverage %d; want %d", p, pos[p], delivered[p], coverage[p], last)
		}
	}
}

// TestDemoIcebergAnchor runs `thalweg demo --anchor iceberg`: the summary
// verifies the table, and pyiceberg (with DuckDB) reads the same rows from
// the catalog and warehouse under the demo's folder.
func TestDemoIcebergAnchor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := runCLI(t, "demo", "--anchor", "iceberg", "--records", "20000", "--partitions", "3", "--dir", dir)
	if code != exitOK {
		t.Fatalf("demo: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	m := regexp.MustCompile(`verify iceberg table +\(raw anchor\): expected (\d+), present (\d+), duplicates 0, missing 0`).FindStringSubmatch(stdout)
	if m == nil || m[1] != m[2] || !strings.Contains(stdout, "pyiceberg") {
		t.Fatalf("demo summary does not verify the table or say how to query it:\n%s", stdout)
	}
	present, _ := strconv.Atoi(m[2])
	abs, err := filepath.Abs(filepath.Join(dir, "iceberg"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	v := icebergpeer.Read(t, ctx, icebergpeer.SQLProps(filepath.Join(abs, "catalog.db"), filepath.Join(abs, "warehouse")), demoIcebergTable)
	if v.Rows != present || v.DuckDBCount == nil || *v.DuckDBCount != present {
		t.Errorf("pyiceberg reads %d rows (DuckDB %v); the demo verified %d", v.Rows, v.DuckDBCount, present)
	}
	for p, seqs := range v.Seqs {
		for i := 1; i < len(seqs); i++ {
			if seqs[i] == seqs[i-1] {
				t.Errorf("pyiceberg: %s seq %d stored twice", p, seqs[i])
				break
			}
		}
	}
}

// TestRunIntoIcebergRESTAndS3 runs the worker with its anchor in a table of
// a real Iceberg REST catalog (the Iceberg project's fixture) and a
// secondary in a SQL-catalog table whose warehouse is on a real
// S3-compatible server (moto), with the secret from the environment, as a
// user configures them; pyiceberg reads both back through the same
// catalog and bucket.
func TestRunIntoIcebergRESTAndS3(t *testing.T) {
	const records, partitions = 3000, 2
	rest := icebergrest.Start(t)
	s3 := s3test.Start(t)
	s3.CreateBucket(t, "lake")
	storeDir := filepath.Join(t.TempDir(), "offsets")
	doc := fmt.Sprintf(`source:
  kind: generator
  generator: {seed: 7, partitions: %d, records: %d, payload_size: 64B, mode: raw}
batching: {max_rows: 500, linger: 20ms}
destinations:
  - name: lake
    kind: iceberg
    role: raw_anchor
    iceberg:
      catalog: {type: rest, uri: %q, token_env: LAKE_TOKEN}
      table: thalweg.events
      commit_interval: 100ms
  - name: bucket
    kind: iceberg
    role: secondary
    iceberg:
      warehouse: s3://lake/warehouse
      table: thalweg.copy
      s3: {endpoint: %q, region: us-east-1, access_key_id: thalweg, secret_access_key_env: LAKE_S3_SECRET}
      commit_interval: 100ms
store: {dir: %s}
metrics: {listen: ""}
`, partitions, records, rest.URI, s3.Endpoint, storeDir)
	cfg := writeConfig(t, doc)
	c := cli{env: map[string]string{"LAKE_TOKEN": "a-token", "LAKE_S3_SECRET": "a-secret"}}
	if code := c.run(t.Context(), "run", "--config", cfg); code != exitOK {
		t.Fatalf("run: exit %d; stderr:\n%s", code, c.stderr.String())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s3Props := icebergpeer.SQLProps(storeDir+".iceberg/catalog.db", "")
	delete(s3Props, "warehouse")
	for k, v := range map[string]string{"s3.endpoint": s3.Endpoint, "s3.region": "us-east-1", "s3.access-key-id": "thalweg", "s3.secret-access-key": "a-secret"} {
		s3Props[k] = v
	}
	for _, tc := range []struct {
		table string
		props map[string]string
	}{{"thalweg.events", rest.PeerProps()}, {"thalweg.copy", s3Props}} {
		v := icebergpeer.Read(t, ctx, tc.props, tc.table)
		if v.Rows != records {
			t.Errorf("%s: pyiceberg reads %d rows, want %d", tc.table, v.Rows, records)
		}
		if perPart := checkSeqs(t, tc.table, v); len(perPart) != partitions {
			t.Errorf("%s: %d partitions, want %d", tc.table, len(perPart), partitions)
		}
	}
}

// A table the batches cannot go into (it has the raw schema's required
// columns; the run's JSON schema has none of them) is a refusal for good:
// as the raw anchor it ends a bounded run at once with exit 5 and an error
// naming a field, not after shutdown.drain_timeout with the drain's
// "context canceled"; as a secondary it is detached and the anchor gets
// every record.
func TestIcebergSchemaRefusal(t *testing.T) {
	const records = 2000
	storeDir := filepath.Join(t.TempDir(), "offsets")
	cfgFile := func(schema, dests string) string {
		doc := fmt.Sprintf(`source:
  kind: generator
  generator: {seed: 7, partitions: 2, records: %d, payload_size: 64B, mode: %s}
batching: {max_rows: 500, linger: 20ms}
%s
destinations:
%s
store: {dir: %s}
shutdown: {drain_timeout: 20s}
metrics: {listen: ""}
`, records, map[bool]string{true: "json", false: "raw"}[schema != ""], schema, dests, storeDir)
		return writeConfig(t, doc)
	}
	raw := func(name, role string) string {
		return fmt.Sprintf("  - {name: %s, kind: iceberg, role: %s, iceberg: {table: thalweg.%s, commit_interval: 100ms}}\n", name, role, name)
	}
	// A raw run creates thalweg.events with the raw schema.
	var c cli
	if code := c.run(t.Context(), "run", "--config", cfgFile("", raw("events", "raw_anchor"))); code != exitOK {
		t.Fatalf("raw run: exit %d\n%s", code, c.stderr.String())
	}
	schema := "schema:\n  mode: json\n  fields:\n    - {name: id, type: int64}\n    - {name: payload, type: int64}"

	// As the raw anchor: exit 5, the field named.
	c = cli{}
	code := c.run(t.Context(), "run", "--config", cfgFile(schema, raw("events", "raw_anchor")))
	if code != exitAnchorFailed {
		t.Fatalf("a refused schema at the anchor: exit %d, want %d\n%s", code, exitAnchorFailed, c.stderr.String())
	}
	if !strings.Contains(c.stderr.String(), `incompatible schema change: field "topic"`) {
		t.Errorf("the error does not name the field:\n%s", tail(c.stderr.String(), 10))
	}

	// As a secondary: detached; the anchor (a fresh table) has every record.
	c = cli{}
	code = c.run(t.Context(), "run", "--config", cfgFile(schema, raw("fresh", "raw_anchor")+raw("events", "secondary")))
	if code != exitOK {
		t.Fatalf("a refused schema at a secondary: exit %d, want 0\n%s", code, c.stderr.String())
	}
	if !strings.Contains(c.stderr.String(), "detach") {
		t.Errorf("the log does not say the secondary was detached:\n%s", tail(c.stderr.String(), 10))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	props := icebergpeer.SQLProps(storeDir+".iceberg/catalog.db", storeDir+".iceberg/warehouse")
	if v := icebergpeer.Read(t, ctx, props, "thalweg.fresh"); v.Rows == 0 || v.Schema["payload"] != "long" {
		t.Errorf("the anchor's table: %d rows, payload %q; want every valid record, payload long", v.Rows, v.Schema["payload"])
	}
	if v := icebergpeer.Read(t, ctx, props, "thalweg.events"); v.Rows != records || v.Schema["payload"] != "binary" {
		t.Errorf("the refused table changed: %d rows, payload %q; want %d, binary", v.Rows, v.Schema["payload"], records)
	}
}
