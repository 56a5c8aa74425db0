package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/offsetstore"
)

// TestHostKeepsWhatReloadDidNotChange: prepared again for a config that
// changes nothing of its own, the host keeps the listener, the meter
// provider and the offset store (the same objects); a changed
// metrics.listen rebinds only the listener; a changed store section
// reopens only the store; a changed metrics.otlp makes a new meter
// provider and so reopens the store (its instruments live on the provider)
// but keeps the listener; close releases everything.
func TestHostKeepsWhatReloadDidNotChange(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	logCfg := config.LogConfig{Level: config.LevelInfo, Format: config.FormatText}
	dir := t.TempDir()
	wo := workerOpts{MetricsListen: "127.0.0.1:0", StoreDir: filepath.Join(dir, "a"),
		Store: offsetstore.Options{TeardownTimeout: 10 * time.Second}}
	h := &host{}
	defer func() { _ = h.close(log) }()
	prepare := func(wo workerOpts, logCfg config.LogConfig) {
		t.Helper()
		if err := h.prepare(ctx, wo, logCfg, log); err != nil {
			t.Fatal(err)
		}
	}
	prepare(wo, logCfg)
	lis, mp, store := h.lis, h.mp, h.store
	addr := lis.Addr().String()

	prepare(wo, logCfg) // a reload that changed only the pipeline
	if h.lis != lis || h.mp != mp || h.store != store {
		t.Fatalf("kept: listener %v, meter provider %v, store %v; want all kept", h.lis == lis, h.mp == mp, h.store == store)
	}
	if got := h.lis.Addr().String(); got != addr {
		t.Errorf("listener moved from %s to %s", addr, got)
	}

	moved := wo
	moved.MetricsListen = testenv.FreeAddr(t)
	prepare(moved, logCfg)
	if h.lis == lis || h.mp != mp || h.store != store {
		t.Errorf("metrics.listen changed: new listener %v, provider kept %v, store kept %v", h.lis != lis, h.mp == mp, h.store == store)
	}
	lis = h.lis

	other := moved
	other.StoreDir = filepath.Join(dir, "b")
	prepare(other, logCfg)
	if h.lis != lis || h.mp != mp || h.store == store {
		t.Errorf("store.dir changed: listener kept %v, provider kept %v, new store %v", h.lis == lis, h.mp == mp, h.store != store)
	}
	store = h.store

	otlp := other
	otlp.OTLP = config.OTLPConfig{Endpoint: "127.0.0.1:4317", Protocol: config.OTLPGRPC, Insecure: true, Interval: time.Hour}
	prepare(otlp, logCfg)
	if h.lis != lis || h.mp == mp || h.store == store {
		t.Errorf("metrics.otlp changed: listener kept %v, new provider %v, new store %v", h.lis == lis, h.mp != mp, h.store != store)
	}
	mp, store = h.mp, h.store
	// With an OTLP endpoint, the log section shapes the provider too.
	prepare(otlp, config.LogConfig{Level: config.LevelDebug, Format: config.FormatJSON})
	if h.mp == mp || h.store == store {
		t.Errorf("log changed with OTLP on: new provider %v, new store %v", h.mp != mp, h.store != store)
	}

	if err := h.close(log); err != nil {
		t.Fatal(err)
	}
	if h.lis != nil || h.store != nil || h.mp != nil {
		t.Error("close left something open")
	}
}
