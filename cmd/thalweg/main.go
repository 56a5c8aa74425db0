// Command thalweg is the ingestion worker and its companion servers.
//
//	thalweg run --config pipeline.yaml     run the pipeline a config describes
//	thalweg validate --config FILE         check a config and exit
//	thalweg demo                           run the whole pipeline on an embedded default
//	thalweg receive --listen ADDR --dir D  a durable Arrow Flight receiver
//	thalweg receiver migrate --dir D       move pre-identity receiver datasets aside
//	thalweg zerobus-server ...             a Zerobus-compatible server
//	thalweg offsets --store DIR            print durable positions
//	thalweg offsets reset --config FILE    reset the subscription and every destination's positions
//	thalweg offsets migrate --store DIR    rewrite a format-1 offset store as format 2
//	thalweg dlq --config FILE              list (or republish) dead letters
//	thalweg table --config FILE            print the state of the config's Iceberg tables
//	thalweg version
//
// Exit codes: 0 success; 1 runtime failure; 2 usage error or invalid
// configuration; 3 forced exit after a second interrupt (nothing is lost:
// undelivered records are redelivered, as duplicates, on the next start);
// 4 (run) the offset store failed for good and the worker must be
// restarted (a supervisor should do so; a full disk is not this: the
// worker waits for space); 5 (run) the raw anchor's destination refused
// the stream for good — a permanent failure (bad credentials, a refused
// schema, a missing dataset) outlasted lane.permanent_budget; the last
// ERROR line names the gRPC status and message, and restarting without a
// fix fails the same way.
// SIGHUP makes `thalweg run` reload its config instead of exiting.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

const (
	exitOK     = 0
	exitFail   = 1
	exitUsage  = 2
	exitForced = 3
	// exitRestart: the offset store failed for good (Pebble keeps an I/O
	// error); a new process recovers from what is durable.
	exitRestart = 4
	// exitAnchorFailed: the raw anchor's lane failed for good (a permanent
	// failure outlasted its budget); it needs an operator, not a restart.
	exitAnchorFailed = 5
)

// command is one subcommand. run returns the process exit code.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, env *cliEnv) int
}

// cliEnv carries the process streams so that commands are testable in-process.
type cliEnv struct {
	stdout, stderr io.Writer
	stdin          io.Reader // confirmations; nil: none can be given
	getenv         func(string) string
	// reload, when set, subscribes `thalweg run` to reload requests
	// (SIGHUP in the process; a channel in tests) until the returned stop.
	reload func() (<-chan struct{}, func())
}

func commands() map[string]command {
	return map[string]command{
		"run":            {"run the pipeline described by --config", cmdRun},
		"validate":       {"validate a pipeline config and exit", cmdValidate},
		"demo":           {"run the full pipeline on an embedded default (generator, in-process servers)", cmdDemo},
		"receive":        {"serve a durable Arrow Flight receiver", cmdReceive},
		"receiver":       {"receiver maintenance: migrate moves datasets written before record identity aside", cmdReceiver},
		"zerobus-server": {"serve a Zerobus-compatible ingest server", cmdZerobusServer},
		"offsets":        {"print the durable positions of an offset store; reset (the subscription with them) or migrate it", cmdOffsets},
		"dlq":            {"list the dead letters of source.dead_letter_topic, or republish them", cmdDLQ},
		"table":          {"print the state of the config's Iceberg tables: snapshots, files, manifests, metadata, positions, maintenance lease", cmdTable},
		"version":        {"print the version", cmdVersion},
	}
}

func main() {
	env := &cliEnv{stdout: os.Stdout, stderr: os.Stderr, stdin: os.Stdin, getenv: os.Getenv, reload: hangupSignal}
	ctx, stop := signalContext(env.stderr)
	code := dispatch(ctx, os.Args[1:], env)
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, args []string, env *cliEnv) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(env.stderr, cmds)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "thalweg: unknown command %q\n\n", args[0])
		usage(env.stderr, cmds)
		return exitUsage
	}
	return c.run(ctx, args[1:], env)
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "thalweg: Pulsar → Arrow → Flight/Zerobus ingestion with durable ack lanes")
	fmt.Fprintln(w, "\nUsage: thalweg <command> [flags]   (thalweg <command> --help for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-15s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nExit codes: 0 ok, 1 failure, 2 usage or invalid config, 3 forced by a second interrupt, 4 offset store failed: restart, 5 raw anchor refused the stream for good: fix the cause")
	fmt.Fprintln(w, "Signals (run): SIGINT/SIGTERM drain and stop, SIGHUP reloads the config")
}

// newFlagSet returns a FlagSet whose errors are reported, not fatal, so that
// a command maps them to exitUsage.
func newFlagSet(name, synopsis string, env *cliEnv) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "Usage: thalweg %s\n\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and maps the outcome to an exit code: ok is false
// when the command must return code immediately (help or a usage error).
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments: %v\n", fs.Args())
		fs.Usage()
		return exitUsage, false
	}
	return exitOK, true
}

// signalContext returns a context cancelled by the first SIGINT or SIGTERM,
// which starts a graceful, bounded shutdown. A second signal exits the
// process at once with exitForced: everything not yet durably delivered is
// redelivered on the next start, so a forced stop costs duplicates, never data.
func signalContext(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			fmt.Fprintf(stderr, "\nthalweg: %v: shutting down gracefully (again to force)\n", sig)
			cancel()
		case <-done:
			return
		}
		select {
		case <-ch:
			fmt.Fprintln(stderr, "thalweg: forced exit; undelivered records will be redelivered on restart")
			os.Exit(exitForced)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}
