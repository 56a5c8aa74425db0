package main

import (
	"context"
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/thalweg/thalweg/offsetstore"
)

func cmdOffsets(_ context.Context, args []string, env *cliEnv) int {
	fs := newFlagSet("offsets", "offsets --store DIR [--reset DEST [--partition N] --yes]", env)
	dir := fs.String("store", "", "offset store directory (required; the worker must not be running)")
	reset := fs.String("reset", "", "destination whose positions to reset")
	partition := fs.Int("partition", -1, "with --reset: only this partition (default: all)")
	yes := fs.Bool("yes", false, "confirm --reset (records after the reset position are delivered again)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *dir == "" {
		fmt.Fprintln(env.stderr, "thalweg offsets: --store is required")
		return exitUsage
	}
	if *reset != "" && !*yes {
		fmt.Fprintf(env.stderr, "thalweg offsets: resetting %q re-delivers everything after it: add --yes to confirm\n", *reset)
		return exitUsage
	}
	store, err := offsetstore.Open(*dir, offsetstore.Options{})
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg offsets: %v\n", err)
		return exitFail
	}
	defer store.Close()
	if *reset != "" {
		if *partition >= 0 {
			err = store.Reset(*reset, int32(*partition))
		} else {
			err = store.ResetDestination(*reset)
		}
		if err != nil {
			fmt.Fprintf(env.stderr, "thalweg offsets: reset: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(env.stdout, "reset %s\n", *reset)
	}
	if err := printOffsets(store, env); err != nil {
		fmt.Fprintf(env.stderr, "thalweg offsets: %v\n", err)
		return exitFail
	}
	return exitOK
}

// printOffsets prints, per destination and partition, the delivered
// watermark and the coverage, with the lag of coverage behind the most
// advanced delivered watermark of that partition.
func printOffsets(store *offsetstore.Store, env *cliEnv) error {
	names, err := store.PartitionNames()
	if err != nil {
		return err
	}
	dests, err := store.Destinations()
	if err != nil {
		return err
	}
	type row struct {
		dest      string
		p         int32
		delivered *offsetstore.Position
		coverage  *offsetstore.Position
	}
	var rows []row
	anchor := map[int32]uint64{}
	for _, d := range dests {
		del, err := store.Delivered(d)
		if err != nil {
			return err
		}
		cov, err := store.Coverage(d)
		if err != nil {
			return err
		}
		parts := map[int32]bool{}
		for p := range del {
			parts[p] = true
			anchor[p] = max(anchor[p], del[p].Seq)
		}
		for p := range cov {
			parts[p] = true
		}
		for p := range parts {
			r := row{dest: d, p: p}
			if v, ok := del[p]; ok {
				r.delivered = &v
			}
			if v, ok := cov[p]; ok {
				r.coverage = &v
			}
			rows = append(rows, r)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].dest != rows[j].dest {
			return rows[i].dest < rows[j].dest
		}
		return rows[i].p < rows[j].p
	})
	tw := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DESTINATION\tPARTITION\tNAME\tDELIVERED\tCOVERAGE\tLAG")
	for _, r := range rows {
		del, cov, lag := "-", "-", "-"
		if r.delivered != nil {
			del = fmt.Sprint(r.delivered.Seq)
		}
		if r.coverage != nil {
			cov = fmt.Sprint(r.coverage.Seq)
			lag = fmt.Sprint(anchor[r.p] - min(anchor[r.p], r.coverage.Seq))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", r.dest, r.p, names[r.p], del, cov, lag)
	}
	if len(rows) == 0 {
		fmt.Fprintln(tw, "(empty)\t\t\t\t\t")
	}
	return tw.Flush()
}
