package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/thalweg/thalweg/offsetstore"
)

// cmdOffsetsMigrate rewrites a format-1 offset store as an empty format-2
// store (offsetstore.Migrate). Format-1 seqs counted that store's own
// records and name nothing in Pulsar, so they are dropped, not converted:
// on its next start the worker takes its positions from the raw anchor and
// secondaries are rebuilt from it.
func cmdOffsetsMigrate(_ context.Context, args []string, env *cliEnv) int {
	fs := newFlagSet("offsets migrate", "offsets migrate --store DIR", env)
	dir := fs.String("store", "", "offset store directory (required; the worker must be stopped)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *dir == "" {
		fmt.Fprintln(env.stderr, "thalweg offsets migrate: --store is required")
		return exitUsage
	}
	dropped, err := offsetstore.Migrate(*dir)
	switch {
	case err == nil:
	case errors.Is(err, offsetstore.ErrNotStore):
		fmt.Fprintf(env.stderr, "thalweg offsets migrate: %v\n", err)
		return exitUsage
	case errors.Is(err, offsetstore.ErrLocked):
		fmt.Fprintf(env.stderr, "thalweg offsets migrate: %s\n", lockedMessage(err))
		return exitFail
	default:
		fmt.Fprintf(env.stderr, "thalweg offsets migrate: %v\n", err)
		return exitFail
	}
	if dropped == 0 {
		fmt.Fprintf(env.stdout, "%s is an offset store of format 2 (or held no positions): 0 positions dropped.\n", *dir)
		return exitOK
	}
	fmt.Fprintf(env.stdout, "migrated %s to offset store format 2: dropped %d position(s) of format 1.\n", *dir, dropped)
	fmt.Fprintln(env.stdout, "Format-1 seqs counted this store's own records and name nothing in Pulsar. On its next start")
	fmt.Fprintln(env.stdout, "the worker takes its positions from the raw anchor (a Flight receiver's positions action, or the")
	fmt.Fprintln(env.stdout, "positions in an Iceberg table's snapshot summaries), the subscription's cursor decides what is")
	fmt.Fprintln(env.stdout, "delivered again, and secondaries are rebuilt from the anchor.")
	return exitOK
}
