package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/internal/schemaevo"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/pulsar"
)

// hangupSignal delivers SIGHUP to `thalweg run` as a reload request. The
// channel holds one pending request: hangups that arrive while one is
// being handled collapse into a single further reload.
func hangupSignal() (<-chan struct{}, func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	out := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-sig:
				select {
				case out <- struct{}{}:
				default:
				}
			case <-done:
				return
			}
		}
	}()
	return out, func() {
		signal.Stop(sig)
		close(done)
	}
}

// runDaemon runs the pipeline cfg describes until ctx ends, the source is
// exhausted or the pipeline fails, and reloads path on every request from
// env.reload: an invalid config (or one whose secrets do not resolve) is
// logged and the running pipeline keeps running; a valid one drains the
// running pipeline exactly as a SIGINT does — everything taken from the
// source is delivered and acknowledged, or redelivered — and starts the new
// one in the same process. It returns the exit code.
func runDaemon(ctx context.Context, path string, cfg *config.Config, env *cliEnv) int {
	var reload <-chan struct{}
	if env.reload != nil {
		var stop func()
		reload, stop = env.reload()
		defer stop()
	}
	log := newLogger(cfg.Log, env)
	var tot totals
	// What a reload does not change outlives the pipeline (host); it is
	// closed last, and its final commit's failure fails a clean run.
	h := &host{}
	exit := func(code int) int {
		if err := h.close(log); err != nil && code == exitOK {
			log.Error("pipeline stopped with an error", "err", err)
			code = exitFail
		}
		return tot.summary(log, code)
	}
	for generation := 1; ; generation++ {
		if cfg.Metrics.OTLP.Endpoint != "" {
			routeOTelErrors(log)
		}
		// Per generation: a reload's config has its own bound.
		applyGCDefaults(memoryBound(cfg), env, log)
		w, err := newWorker(ctx, cfg, env, log, h)
		if err != nil && ctx.Err() != nil {
			// A signal during start-up (e.g. while the broker is being
			// reached) is a graceful stop like any other: nothing was taken
			// from the source, so there is nothing to drain.
			log.Info("stopped before the pipeline started", "err", err)
			return exit(exitOK)
		}
		if err != nil {
			fmt.Fprintf(env.stderr, "thalweg run: %v\n", err)
			if generation > 1 {
				log.Error("reload: the new pipeline did not start", "config", path, "err", oneLine(err))
			}
			// A format-1 offset store needs `thalweg offsets migrate`
			// (its error says so): an operator's fix, like a bad config.
			if errors.Is(err, config.ErrInvalid) || errors.Is(err, config.ErrSecret) || errors.Is(err, offsetstore.ErrFormat) {
				return exit(exitUsage)
			}
			return exit(exitFail)
		}
		log.Info("pipeline started", "config", path, "anchor", cfg.RawAnchor().Name, "destinations", len(cfg.Destinations),
			"generation", generation)
		prog := startProgress(env.stderr, w.pipe.Stats, w.opts.StatsInterval, log)
		runCtx, cancelRun := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.run(runCtx) }()
		var next *config.Config
	wait:
		for {
			select {
			case err = <-done:
				break wait
			case <-reload:
				nc, err := reloadConfig(path, env)
				if err != nil {
					log.Error("reload: config rejected; the running pipeline keeps running", "config", path, "err", oneLine(err))
					continue
				}
				log.Info("reload: config valid; draining the pipeline to restart it", "config", path)
				next = nc
				cancelRun()
			}
		}
		cancelRun()
		prog.close()
		tot.add(w.pipe.Stats())
		if err != nil {
			if errors.Is(err, offsetstore.ErrFailed) {
				return exit(storeFailed(env, log, err))
			}
			if errors.Is(err, lanes.ErrFailed) {
				return exit(anchorFailed(env, log, err))
			}
			if errors.Is(err, pulsar.ErrNoIndex) || errors.Is(err, schemaevo.ErrIncompatible) {
				return exit(mustFix(env, log, err))
			}
			log.Error("pipeline stopped with an error", "err", err)
			return exit(exitFail)
		}
		if next == nil || ctx.Err() != nil {
			log.Info("pipeline stopped cleanly")
			return exit(exitOK)
		}
		cfg, log = next, newLogger(next.Log, env)
		tot.reloads++
		log.Info("reload: pipeline drained; starting it with the new config", "config", path)
	}
}

// reloadConfig loads and validates path and resolves its secrets, so that
// a config the new pipeline could not start with is refused before the
// running one is drained.
func reloadConfig(path string, env *cliEnv) (*config.Config, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckSecrets(lookupEnv(env)); err != nil {
		return nil, err
	}
	return cfg, nil
}

// oneLine joins the lines of a multi-problem config error ("file:line:
// field: problem" each) into one log value.
func oneLine(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
}

// totals sums the stats of every pipeline one `thalweg run` ran (one per
// reload), for the summary at exit.
type totals struct {
	reloads int
	st      pipeline.Stats
	ran     bool
}

func (t *totals) add(st pipeline.Stats) {
	if !t.ran {
		t.st, t.ran = st, true
		t.st.Secondaries = append([]pipeline.LaneStats(nil), st.Secondaries...)
		return
	}
	t.st.SourceRecords += st.SourceRecords
	t.st.DeadLettered += st.DeadLettered
	t.st.SourceDiscarded += st.SourceDiscarded
	t.st.SourceLost += st.SourceLost
	t.st.SourceSkipped += st.SourceSkipped
	t.st.Acked += st.Acked
	t.st.AckErrors += st.AckErrors
	t.st.AckAbandoned += st.AckAbandoned
	addLane(&t.st.Anchor, st.Anchor)
	for _, l := range st.Secondaries {
		found := false
		for i := range t.st.Secondaries {
			if t.st.Secondaries[i].Name == l.Name {
				addLane(&t.st.Secondaries[i], l)
				found = true
			}
		}
		if !found { // a destination the reload added
			t.st.Secondaries = append(t.st.Secondaries, l)
		}
	}
}

// addLane adds the counters of l to sum; the state is l's (the latest).
func addLane(sum *pipeline.LaneStats, l pipeline.LaneStats) {
	if sum.Name != l.Name { // the reload named another anchor
		*sum = l
		return
	}
	sum.State = l.State
	sum.Pending = l.Pending
	sum.Rows += l.Rows
	sum.Replayed += l.Replayed
	sum.Retries += l.Retries
	sum.Rebuilds += l.Rebuilds
	sum.DrainTimeouts += l.DrainTimeouts
}

// summary logs what the whole run did and returns code. Dead letters are
// called out: they are records the sinks will never hold.
func (t *totals) summary(log *slog.Logger, code int) int {
	if !t.ran {
		return code
	}
	attrs := append(statsAttrs(t.st), "reloads", t.reloads, "exit", code)
	if d, n := t.st.SourceDiscarded, t.st.SourceLost; d > 0 || n > 0 {
		log.Error(fmt.Sprintf("run summary: the Pulsar client discarded %d messages the broker holds; %d records are missing from the sinks "+
			"(see the ERROR lines naming them, thalweg_source_discarded_total and thalweg_source_gap_records_total, "+
			"and docs/operations.md, \"Records lost by the client\")", d, n), attrs...)
		return code
	}
	if n := t.st.DeadLettered; n > 0 {
		log.Warn(fmt.Sprintf("run summary: %d records were dead-lettered (rejected by the schema; see thalweg_dlq_records_total by reason, and `thalweg dlq` for a dead-letter topic)", n), attrs...)
		return code
	}
	log.Info("run summary", attrs...)
	return code
}
