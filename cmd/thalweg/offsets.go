package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/thalweg/thalweg/offsetstore"
)

func cmdOffsets(ctx context.Context, args []string, env *cliEnv) int {
	if len(args) > 0 {
		switch args[0] {
		case "reset":
			return cmdOffsetsReset(ctx, args[1:], env)
		case "migrate":
			return cmdOffsetsMigrate(ctx, args[1:], env)
		}
	}
	fs := newFlagSet("offsets", "offsets --store DIR [--reset DEST [--partition NAME] --yes]", env)
	dir := fs.String("store", "", "offset store directory (required; the worker must not be running)")
	reset := fs.String("reset", "", "destination whose positions to reset")
	partition := fs.String("partition", "", "with --reset: only this partition, by name as listed (default: all)")
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
	store, code := openOffsets(ctx, *dir, *reset != "", env)
	if store == nil {
		return code
	}
	defer store.Close()
	if *reset != "" {
		var err error
		if *partition != "" {
			err = store.Reset(*reset, *partition)
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

// offsetsOpenTimeout bounds opening the store for --reset, which writes:
// on a full disk that waits for space, and a command must not wait forever.
const offsetsOpenTimeout = 10 * time.Second

// openOffsets opens an existing store — never creating one: a missing or
// empty directory (a typo) is refused with exit 2 — read-only to print it
// (which works on a full disk) or writable for --reset, bounded. A store a
// running worker holds is named as such. On failure it reports and returns
// (nil, exit code).
func openOffsets(ctx context.Context, dir string, write bool, env *cliEnv) (*offsetstore.Store, int) {
	quiet := slog.New(slog.DiscardHandler) // the error below says it all, once
	opts := offsetstore.Options{ReadOnly: !write, MustExist: true, Logger: quiet}
	ctx, cancel := context.WithTimeout(ctx, offsetsOpenTimeout)
	defer cancel()
	store, err := offsetstore.OpenContext(ctx, dir, opts)
	switch {
	case err == nil:
		return store, exitOK
	case errors.Is(err, offsetstore.ErrNotStore):
		fmt.Fprintf(env.stderr, "thalweg offsets: %v\n", err)
		return nil, exitUsage
	case errors.Is(err, offsetstore.ErrLocked):
		fmt.Fprintf(env.stderr, "thalweg offsets: %s\n", lockedMessage(err))
		return nil, exitFail
	case errors.Is(err, offsetstore.ErrFormat):
		// Its message names the command that migrates the store.
		fmt.Fprintf(env.stderr, "thalweg offsets: %v\n", err)
		return nil, exitUsage
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(env.stderr, "thalweg offsets: could not open %s for writing within %v: %v\n", dir, offsetsOpenTimeout, err)
		return nil, exitFail
	}
	fmt.Fprintf(env.stderr, "thalweg offsets: %v\n", err)
	return nil, exitFail
}

// lockedMessage is the store's own sentence for ErrLocked ("store DIR is
// locked by a running worker (pid N); stop it first"), without the wrapping.
func lockedMessage(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "store is locked: "); i >= 0 {
		msg = msg[i+len("store is locked: "):]
	}
	return msg
}

// printOffsets prints, per destination and partition, the delivered
// watermark and the coverage, with the lag of coverage behind the most
// advanced delivered watermark of that partition.
func printOffsets(store *offsetstore.Store, env *cliEnv) error {
	dests, err := store.Destinations()
	if err != nil {
		return err
	}
	type row struct {
		dest      string
		p         string
		delivered *offsetstore.Position
		coverage  *offsetstore.Position
	}
	var rows []row
	anchor := map[string]uint64{}
	for _, d := range dests {
		del, err := store.Delivered(d)
		if err != nil {
			return err
		}
		cov, err := store.Coverage(d)
		if err != nil {
			return err
		}
		parts := map[string]bool{}
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
	fmt.Fprintln(tw, "DESTINATION\tPARTITION\tDELIVERED\tCOVERAGE\tLAG")
	for _, r := range rows {
		del, cov, lag := "-", "-", "-"
		if r.delivered != nil {
			del = fmt.Sprint(r.delivered.Seq)
		}
		if r.coverage != nil {
			cov = fmt.Sprint(r.coverage.Seq)
			lag = fmt.Sprint(anchor[r.p] - min(anchor[r.p], r.coverage.Seq))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.dest, r.p, del, cov, lag)
	}
	if len(rows) == 0 {
		fmt.Fprintln(tw, "(empty)\t\t\t\t")
	}
	return tw.Flush()
}
