package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
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
