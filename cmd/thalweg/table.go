package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/iceberg"
)

// tableTimeout bounds reading one table's state (the catalog, the
// manifest list, the metadata directory's listing).
const tableTimeout = 30 * time.Second

// cmdTable prints the state of the config's Iceberg tables, read from
// their catalogs and warehouses: what the worker's metrics show of a
// table, on demand. A destination with a table template prints every
// table of it the catalog holds, one after the other.
func cmdTable(ctx context.Context, args []string, env *cliEnv) int {
	fs := newFlagSet("table", "table --config pipeline.yaml [--destination NAME]", env)
	path := fs.String("config", "", "the worker's pipeline config (required): its kind: iceberg destinations")
	dest := fs.String("destination", "", "only this destination (default: every kind: iceberg destination)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	cfg, code := loadConfig(*path, env)
	if cfg == nil {
		return code
	}
	var dests []*config.DestinationConfig
	for i := range cfg.Destinations {
		d := &cfg.Destinations[i]
		if *dest != "" && d.Name != *dest {
			continue
		}
		if d.Kind != config.KindIceberg {
			if *dest != "" {
				fmt.Fprintf(env.stderr, "thalweg table: destination %q is of kind %s, not iceberg\n", *dest, d.Kind)
				return exitUsage
			}
			continue
		}
		dests = append(dests, d)
	}
	if len(dests) == 0 {
		if *dest != "" {
			fmt.Fprintf(env.stderr, "thalweg table: %s has no destination %q\n", *path, *dest)
		} else {
			fmt.Fprintf(env.stderr, "thalweg table: %s has no kind: iceberg destination\n", *path)
		}
		return exitUsage
	}
	code = exitOK
	for i, d := range dests {
		if i > 0 {
			fmt.Fprintln(env.stdout)
		}
		sts, err := tableStates(ctx, cfg, d, env)
		if err != nil {
			fmt.Fprintf(env.stderr, "thalweg table: destination %s: %v\n", d.Name, err)
			code = exitFail
			continue
		}
		for j, st := range sts {
			if j > 0 {
				fmt.Fprintln(env.stdout)
			}
			if err := printTable(env, d, st, time.Now()); err != nil {
				fmt.Fprintf(env.stderr, "thalweg table: %v\n", err)
				return exitFail
			}
		}
	}
	return code
}

// tableStates opens d's table as the worker does and reads its state; for
// a table template, the state of every table of the catalog the template
// gives (iceberg.Tables.List), or, when there is none yet, one that does
// not exist, named by the template.
func tableStates(ctx context.Context, cfg *config.Config, d *config.DestinationConfig, env *cliEnv) ([]iceberg.State, error) {
	o, err := destinationOptions(cfg, d, env, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	none := []iceberg.State{{Identifier: o.Iceberg.Table}}
	// A SQL catalog's file that does not exist holds no table: opening it
	// would create it, and this command changes nothing.
	if c := o.Iceberg.Catalog; c.Type == "" || c.Type == iceberg.CatalogSQL {
		if _, err := os.Stat(strings.TrimPrefix(c.URI, "file:")); errors.Is(err, fs.ErrNotExist) {
			return none, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, tableTimeout)
	defer cancel()
	if !iceberg.IsTemplate(o.Iceberg.Table) {
		tbl, err := iceberg.Open(*o.Iceberg)
		if err != nil {
			return nil, fmt.Errorf("destinations.%s.iceberg: %w", d.Name, err)
		}
		defer tbl.Close()
		st, err := tbl.State(ctx)
		return []iceberg.State{st}, err
	}
	ts, err := iceberg.OpenTables(*o.Iceberg)
	if err != nil {
		return nil, fmt.Errorf("destinations.%s.iceberg: %w", d.Name, err)
	}
	defer ts.Close()
	names, err := ts.List(ctx)
	if err != nil || len(names) == 0 {
		return none, err
	}
	var out []iceberg.State
	for _, name := range names {
		tbl, err := ts.Table(name)
		if err != nil {
			return nil, err
		}
		st, err := tbl.State(ctx)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// printTable prints st: one line a figure, then the positions per
// partition.
func printTable(env *cliEnv, d *config.DestinationConfig, st iceberg.State, now time.Time) error {
	tw := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	line := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, a...)...) }
	line("destination", "%s (%s)", d.Name, d.Role)
	line("table", "%s", st.Identifier)
	if !st.Exists {
		line("state", "does not exist yet (the first batch with a row creates it)")
		return tw.Flush()
	}
	line("metadata", "%s", st.MetadataLocation)
	if len(st.PartitionBy) == 0 {
		line("partition spec", "unpartitioned")
	} else {
		line("partition spec", "%s", strings.Join(st.PartitionBy, ", "))
	}
	if st.SnapshotID == 0 {
		line("current snapshot", "none")
	} else {
		line("current snapshot", "%d", st.SnapshotID)
		line("last commit", "%s (%s ago)", st.LastCommit.UTC().Format(time.RFC3339Nano), now.Sub(st.LastCommit).Round(time.Millisecond))
	}
	line("snapshots", "%d", st.Snapshots)
	line("data files", "%d", st.DataFiles)
	line("data bytes", "%d", st.DataBytes)
	line("records", "%d", st.Records)
	line("manifests", "%d", st.Manifests)
	line("metadata.json bytes", "%d", st.MetadataBytes)
	line("metadata dir bytes", "%d", st.MetadataDirBytes)
	switch {
	case st.Lease != nil:
		state := "held"
		if !now.Before(st.Lease.Until) {
			state = "expired: any worker may take it"
		}
		line("maintenance lease", "%s until %s (%s)", st.Lease.Holder, st.Lease.Until.UTC().Format(time.RFC3339Nano), state)
	case st.LeaseValue != "":
		line("maintenance lease", "unreadable: %q", st.LeaseValue)
	default:
		line("maintenance lease", "none")
	}
	for _, k := range iceberg.BoundedMetadataKeys() {
		v := st.BoundedMetadata[k]
		if v == "" {
			v = "(unset)"
		}
		line(k, "%s", v)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tPOSITION")
	for _, p := range slices.Sorted(maps.Keys(st.Positions)) {
		fmt.Fprintf(tw, "%s\t%d\n", p, st.Positions[p])
	}
	if len(st.Positions) == 0 {
		fmt.Fprintln(tw, "(none)\t")
	}
	return tw.Flush()
}
