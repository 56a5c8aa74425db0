package main

import (
	"context"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/metric"

	"github.com/thalweg/thalweg/internal/config"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/pulsar"
)

// storePositions adapts the offset store to what the Pulsar source needs:
// stable partition ids and the raw anchor's durable delivered watermark,
// from which a restarted source resumes numbering and recognises
// redelivered messages.
func storePositions(store *offsetstore.Store, anchor string) pulsar.PositionStore {
	return pulsar.PositionFuncs{
		PartitionIDFunc: store.PartitionID,
		DeliveredFunc: func() (map[int32]pulsar.Position, error) {
			d, err := store.Delivered(anchor)
			if err != nil {
				return nil, err
			}
			out := make(map[int32]pulsar.Position, len(d))
			for p, pos := range d {
				out[p] = pulsar.Position{Seq: pos.Seq, ID: pos.ID}
			}
			return out, nil
		},
	}
}

func openPulsar(ctx context.Context, cfg *config.Config, store *offsetstore.Store, env *cliEnv, log *slog.Logger, mp metric.MeterProvider) (pipeline.Source, error) {
	opts, err := pulsarOptions(cfg, store, env, log)
	if err != nil {
		return nil, err
	}
	opts.MeterProvider = mp // thalweg.source.unacked_wait{bound="pulsar"}
	src, err := pulsar.Open(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("pulsar source: %w", err)
	}
	return src, nil
}

// pulsarOptions maps the source section of cfg to the Pulsar source's
// options, resolving the token.
func pulsarOptions(cfg *config.Config, store *offsetstore.Store, env *cliEnv, log *slog.Logger) (pulsar.Options, error) {
	sc := cfg.Source
	tok, err := sc.Auth.Token(lookupEnv(env))
	if err != nil {
		return pulsar.Options{}, err
	}
	typ, err := pulsar.ParseSubscriptionType(string(sc.Subscription.Type))
	if err != nil {
		return pulsar.Options{}, fmt.Errorf("source.subscription.type: %w", err)
	}
	opts := pulsar.Options{
		URL:               sc.URL,
		TLSTrustCertsFile: sc.Auth.TLSCAFile,
		ListenerName:      sc.ListenerName,
		Topics:            sc.Topics,
		TopicsPattern:     sc.TopicsPattern,
		Subscription:      sc.Subscription.Name,
		Type:              typ,
		StartLatest:       sc.Start == config.StartLatest,
		DeadLetterTopic:   sc.DeadLetterTopic,
		ReceiverQueueSize: sc.ReceiverQueueSize,
		MaxUnacked:        sc.MaxUnacked,
		Positions:         storePositions(store, cfg.RawAnchor().Name),
		Logger:            log, // the source names itself (component=source/pulsar)
	}
	if sc.Auth.TokenFile != "" {
		opts.TokenFile = sc.Auth.TokenFile
	} else {
		opts.Token = tok.Reveal()
	}
	return opts, nil
}
