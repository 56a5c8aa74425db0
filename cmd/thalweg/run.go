package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

func cmdRun(ctx context.Context, args []string, env *cliEnv) int {
	fs := newFlagSet("run", "run --config pipeline.yaml", env)
	path := fs.String("config", "", "pipeline config file (YAML; required)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	cfg, code := loadConfig(*path, env)
	if cfg == nil {
		return code
	}
	return runDaemon(ctx, *path, cfg, env)
}

// loadConfig loads and validates path; on failure it reports and returns
// (nil, exit code).
func loadConfig(path string, env *cliEnv) (*config.Config, int) {
	if path == "" {
		fmt.Fprintln(env.stderr, "thalweg: --config is required")
		return nil, exitUsage
	}
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintln(env.stderr, err)
		return nil, exitUsage
	}
	return cfg, exitOK
}

func cmdValidate(_ context.Context, args []string, env *cliEnv) int {
	fs := newFlagSet("validate", "validate --config pipeline.yaml", env)
	path := fs.String("config", "", "pipeline config file (YAML; required)")
	secrets := fs.Bool("secrets", false, "also check that every token variable is set (and the files, whatever --files says)")
	files := fs.Bool("files", true, "check that every file the config names (TLS CA, certificate and key, token file) can be read and holds what its field needs; --files=false checks the config alone, e.g. on a machine without the worker's secrets")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	cfg, code := loadConfig(*path, env)
	if cfg == nil {
		return code
	}
	var err error
	switch {
	case *secrets:
		err = cfg.CheckSecrets(lookupEnv(env))
	case *files:
		err = cfg.CheckFiles()
	}
	if err != nil {
		fmt.Fprintln(env.stderr, err)
		return exitUsage
	}
	fmt.Fprintf(env.stdout, "%s: valid (%s source, %d destinations, raw anchor %q)\n",
		*path, cfg.Source.Kind, len(cfg.Destinations), cfg.RawAnchor().Name)
	var sb strings.Builder
	memoryBound(cfg).print(&sb)
	fmt.Fprint(env.stdout, sb.String())
	return exitOK
}

// storeFailed reports an offset store that failed for good — Pebble keeps
// the I/O error and cannot write again in this process — and returns
// exitRestart, so that a supervisor restarts the worker: the new process
// reopens the store from what is durable. (A full disk is not this: the
// store waits for space and recovers in-process.)
func storeFailed(env *cliEnv, log *slog.Logger, err error) int {
	log.Error("offset store failed and cannot recover in this process; exiting for a restart",
		"exit_code", exitRestart, "err", err)
	fmt.Fprintf(env.stderr, "thalweg run: offset store failed, restart needed (exit %d): %v\n", exitRestart, err)
	return exitRestart
}

// anchorFailed reports a raw anchor whose lane failed for good — its
// destination kept refusing the stream (credentials, schema, a missing
// dataset) for lane.permanent_budget — and returns exitAnchorFailed. The
// error names the gRPC status and message: that is what must be fixed.
func anchorFailed(env *cliEnv, log *slog.Logger, err error) int {
	log.Error("raw anchor failed for good: its destination refuses the stream; fix the cause and restart",
		"exit_code", exitAnchorFailed, "err", oneLine(err))
	fmt.Fprintf(env.stderr, "thalweg run: raw anchor failed for good (exit %d): %v\n", exitAnchorFailed, oneLine(err))
	return exitAnchorFailed
}

// mustFix reports a source failure no restart heals — messages without a
// broker index (the broker lacks the two settings the error names), or a
// schema version incompatible with the topic's earlier ones (the error
// names the field) — and returns exitUsage, the class of a configuration
// an operator must fix.
func mustFix(env *cliEnv, log *slog.Logger, err error) int {
	log.Error("the source cannot go on until an operator acts: fix what the error names, then restart",
		"exit_code", exitUsage, "err", oneLine(err))
	fmt.Fprintf(env.stderr, "thalweg run: %v\n", oneLine(err))
	return exitUsage
}
