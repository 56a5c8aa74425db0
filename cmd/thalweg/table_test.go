package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/internal/testkit/icebergrest"
)

// printedTable is one destination's block of `thalweg table`: its
// figures by name, and its positions by partition.
type printedTable struct {
	figures   map[string]string
	positions map[string]uint64
}

var (
	figureLine   = regexp.MustCompile(`^(\S.*?)  +(.*)$`)
	positionLine = regexp.MustCompile(`^(\S+)  +(\d+)$`)
)

// parseTables splits the output of `thalweg table` into its blocks, by
// destination name.
func parseTables(t *testing.T, out string) map[string]printedTable {
	t.Helper()
	tables := map[string]printedTable{}
	for _, block := range strings.Split(strings.TrimSpace(out), "\n\n") {
		pt := printedTable{figures: map[string]string{}, positions: map[string]uint64{}}
		inPositions := false
		for _, l := range strings.Split(block, "\n") {
			if strings.HasPrefix(l, "PARTITION") {
				inPositions = true
				continue
			}
			if inPositions {
				if m := positionLine.FindStringSubmatch(l); m != nil {
					n, _ := strconv.ParseUint(m[2], 10, 64)
					pt.positions[m[1]] = n
				}
				continue
			}
			m := figureLine.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("line %q of\n%s", l, out)
			}
			pt.figures[m[1]] = m[2]
		}
		name, _, _ := strings.Cut(pt.figures["destination"], " ")
		tables[name] = pt
	}
	return tables
}

// TestTableCommand runs the worker into an Iceberg anchor in the default
// SQL catalog and a partitioned secondary in the Iceberg REST fixture, then
// `thalweg table`: for each table, the partition spec in partition_by's
// spelling (or "unpartitioned"), the snapshot id, the snapshots, data files and
// bytes, records, manifests, metadata location and the bounded-metadata
// properties it prints are what pyiceberg reads; the positions are the
// highest seq pyiceberg finds per partition; the metadata.json's size and
// its directory's bytes are the file system's; there is no maintenance
// lease. --destination prints one table; a wrong one is a usage error. A
// table whose SQL catalog does not exist yet is said not to exist, and no
// catalog is created.
func TestTableCommand(t *testing.T) {
	const records, partitions = 3000, 2
	rest := icebergrest.Start(t)
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
    iceberg:
      catalog: {type: rest, uri: %q}
      table: thalweg.copy
      commit_interval: 100ms
      partition_by: ["identity(partition)", "bucket(4, seq)"]
  - name: other
    kind: flight
    role: secondary
    endpoint: 127.0.0.1:1
store: {dir: %s}
metrics: {listen: ""}
`, partitions, records, rest.URI, storeDir)
	cfg := writeConfig(t, doc)
	before := time.Now()
	// The flight secondary stays unreachable: the anchor and the Iceberg
	// secondary get every record all the same.
	runDoc := strings.Replace(doc, "  - name: other\n    kind: flight\n    role: secondary\n    endpoint: 127.0.0.1:1\n", "", 1)
	var c cli
	if code := c.run(t.Context(), "run", "--config", writeConfig(t, runDoc)); code != exitOK {
		t.Fatalf("run: exit %d; stderr:\n%s", code, c.stderr.String())
	}

	code, stdout, stderr := runCLI(t, "table", "--config", cfg)
	if code != exitOK {
		t.Fatalf("table: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("thalweg table:\n%s", stdout)
	printed := parseTables(t, stdout)
	if len(printed) != 2 {
		t.Fatalf("%d tables printed, want lake and copy:\n%s", len(printed), stdout)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		dest, table, spec string
		props             map[string]string
	}{
		{"lake", "thalweg.events", "unpartitioned", icebergpeer.SQLProps(storeDir+".iceberg/catalog.db", storeDir+".iceberg/warehouse")},
		{"copy", "thalweg.copy", "identity(partition), bucket(4, seq)", rest.PeerProps()},
	} {
		pt, ok := printed[tc.dest]
		if !ok {
			t.Errorf("%s: not printed", tc.dest)
			continue
		}
		v := icebergpeer.Read(t, ctx, tc.props, tc.table)
		if v.Rows != records {
			t.Fatalf("%s: pyiceberg reads %d rows, want %d", tc.table, v.Rows, records)
		}
		// file:///path (SQL catalog) or file:/path (the REST fixture).
		meta := "/" + strings.TrimLeft(strings.TrimPrefix(v.MetadataLocation, "file:"), "/")
		st, err := os.Stat(meta)
		if err != nil {
			t.Fatal(err)
		}
		dirBytes := int64(0)
		entries, err := os.ReadDir(filepath.Dir(meta))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			dirBytes += info.Size()
		}
		want := map[string]string{
			"table":               tc.table,
			"partition spec":      tc.spec,
			"metadata":            v.MetadataLocation,
			"current snapshot":    fmt.Sprint(v.SnapshotID),
			"snapshots":           fmt.Sprint(len(v.Snapshots)),
			"data files":          fmt.Sprint(v.DataFiles),
			"data bytes":          fmt.Sprint(v.DataBytes),
			"records":             fmt.Sprint(v.Rows),
			"manifests":           fmt.Sprint(v.Manifests),
			"metadata.json bytes": fmt.Sprint(st.Size()),
			"metadata dir bytes":  fmt.Sprint(dirBytes),
		}
		// The worker took the maintenance lease in its appends; the
		// printed holder and until are the table property's.
		if l, err := iceberg.ParseLease(v.TableProps[iceberg.PropMaintenanceLease]); err != nil {
			t.Errorf("%s: the table property %s: %v", tc.dest, iceberg.PropMaintenanceLease, err)
		} else {
			want["maintenance lease"] = l.Holder + " until " + l.Until.UTC().Format(time.RFC3339Nano)
			pt.figures["maintenance lease"], _, _ = strings.Cut(pt.figures["maintenance lease"], " (")
		}
		for _, k := range iceberg.BoundedMetadataKeys() {
			want[k] = v.TableProps[k]
		}
		for k, w := range want {
			if got := pt.figures[k]; got != w {
				t.Errorf("%s: %s printed %q, pyiceberg and the file system say %q", tc.dest, k, got, w)
			}
		}
		// The last commit was made during the run.
		m := regexp.MustCompile(`^(\S+) \(`).FindStringSubmatch(pt.figures["last commit"])
		if m == nil {
			t.Fatalf("%s: last commit %q", tc.dest, pt.figures["last commit"])
		}
		if at, err := time.Parse(time.RFC3339Nano, m[1]); err != nil || at.Before(before.Add(-time.Second)) || at.After(time.Now()) {
			t.Errorf("%s: last commit %q (%v), want during the run", tc.dest, pt.figures["last commit"], err)
		}
		wantPos := map[string]uint64{}
		for key, seqs := range v.Seqs {
			topic, p, _ := strings.Cut(key, "/")
			idx, _ := strconv.Atoi(p)
			wantPos[batch.JoinPartition(topic, int32(idx))] = seqs[len(seqs)-1]
		}
		if fmt.Sprint(pt.positions) != fmt.Sprint(wantPos) || len(wantPos) != partitions {
			t.Errorf("%s: positions printed %v, pyiceberg's highest seqs %v", tc.dest, pt.positions, wantPos)
		}
	}

	code, stdout, _ = runCLI(t, "table", "--config", cfg, "--destination", "copy")
	if got := parseTables(t, stdout); code != exitOK || len(got) != 1 || got["copy"].figures["table"] != "thalweg.copy" {
		t.Errorf("--destination copy: exit %d, printed\n%s", code, stdout)
	}
	// No catalog yet: nothing to print, and nothing created.
	fresh := filepath.Join(t.TempDir(), "offsets")
	code, stdout, stderr = runCLI(t, "table", "--config", writeConfig(t, strings.Replace(doc, storeDir, fresh, 1)), "--destination", "lake")
	if code != exitOK || parseTables(t, stdout)["lake"].figures["state"] != "does not exist yet (the first batch with a row creates it)" {
		t.Errorf("no catalog: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(fresh + ".iceberg"); !os.IsNotExist(err) {
		t.Errorf("thalweg table created %s.iceberg: %v", fresh, err)
	}
	for _, dest := range []string{"other", "nope"} {
		if code, _, stderr := runCLI(t, "table", "--config", cfg, "--destination", dest); code != exitUsage || !strings.Contains(stderr, dest) {
			t.Errorf("--destination %s: exit %d, stderr %q; want %d naming it", dest, code, stderr, exitUsage)
		}
	}
}
