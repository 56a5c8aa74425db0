package main

import (
	"context"
	"fmt"

	"github.com/thalweg/thalweg/flight/receiver"
)

// cmdReceiver is `thalweg receiver migrate --dir D`: it moves the datasets a
// receiver wrote before record identity (which `thalweg receive` refuses,
// naming this command) aside, unchanged, so that the receiver starts again.
func cmdReceiver(_ context.Context, args []string, env *cliEnv) int {
	fs := newFlagSet("receiver", "receiver migrate --dir DIR", env)
	dir := fs.String("dir", "", "the receiver's directory (required; the receiver must not be running)")
	if len(args) > 0 && args[0] == "migrate" {
		args = args[1:]
	} else if len(args) == 0 || (args[0] != "-h" && args[0] != "--help" && args[0] != "-help") {
		fmt.Fprintln(env.stderr, "thalweg receiver: want the subcommand migrate")
		fs.Usage()
		return exitUsage
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *dir == "" {
		fmt.Fprintln(env.stderr, "thalweg receiver migrate: --dir is required")
		return exitUsage
	}
	aside, moved, err := receiver.Migrate(*dir)
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg receiver migrate: %v\n", err)
		return exitFail
	}
	if len(moved) == 0 {
		fmt.Fprintf(env.stdout, "nothing to migrate in %s: every dataset is version 2\n", *dir)
		return exitOK
	}
	for _, p := range moved {
		fmt.Fprintf(env.stdout, "moved version 1 dataset %s aside\n", p)
	}
	fmt.Fprintf(env.stdout, "%d dataset(s) moved to %s (files unchanged; segments are Arrow IPC streams); the receiver starts without them\n", len(moved), aside)
	return exitOK
}
