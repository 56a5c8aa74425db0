package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/thalweg/thalweg/internal/config"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
)

var errNoPulsar = errors.New("the Pulsar source is not wired yet")

func openPulsar(ctx context.Context, cfg *config.Config, store *offsetstore.Store, env *cliEnv, log *slog.Logger) (pipeline.Source, error) {
	return nil, errNoPulsar
}

func demoPulsarSource(ctx context.Context, cfg *config.Config, url, topic string, records int64, partitions int, env *cliEnv) (map[int32]uint64, error) {
	return nil, errNoPulsar
}
