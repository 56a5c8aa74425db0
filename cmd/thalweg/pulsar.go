package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/metric"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/internal/pulsaradmin"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/pulsar"
)

func openPulsar(ctx context.Context, cfg *config.Config, store *offsetstore.Store, reconcile reconcileFunc, env *cliEnv, log *slog.Logger, mp metric.MeterProvider) (pipeline.Source, error) {
	opts, err := pulsarOptions(cfg, store, reconcile, env, log)
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
// options, resolving the token. reconcile (the raw anchor's positions when
// it is a Flight destination, see anchorReads; nil otherwise) becomes
// Options.Reconcile: a worker whose store is behind the anchor, empty or
// lost takes the anchor's positions.
func pulsarOptions(cfg *config.Config, store *offsetstore.Store, reconcile reconcileFunc, env *cliEnv, log *slog.Logger) (pulsar.Options, error) {
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
		ChannelSize:       cfg.Batching.MaxRows, // a batch's records wait in front of the source loop
		MaxUnacked:        sc.MaxUnacked,
		Positions:         pulsar.StorePositions(store, cfg.RawAnchor().Name),
		Reconcile:         reconcile,
		Logger:            log, // the source names itself (component=source/pulsar)
	}
	if sc.Auth.TokenFile != "" {
		opts.TokenFile = sc.Auth.TokenFile
	} else {
		opts.Token = tok.Reveal()
	}
	if cfg.Schema.Mode == config.SchemaPulsar {
		if opts.Schemas, err = registrySchemas(cfg, tok.Reveal()); err != nil {
			return pulsar.Options{}, err
		}
	}
	return opts, nil
}

// adminOptions maps source.admin_url, with the source's token and CA, to
// the admin REST client `thalweg offsets reset` uses. URL is empty when
// admin_url is not set.
func adminOptions(cfg *config.Config, env *cliEnv) (pulsaradmin.Options, error) {
	sc := cfg.Source
	tok, err := sc.Auth.Token(lookupEnv(env))
	if err != nil {
		return pulsaradmin.Options{}, err
	}
	return adminClientOptions(sc, sc.AdminURL, tok.Reveal()), nil
}

// adminClientOptions is the admin REST client of url with the source's
// credentials: its token_file (reread by the client on every request), or
// else token (the resolved token_env value); for an https:// url its
// tls_ca_file. `thalweg offsets reset` (source.admin_url) and the schema
// registry (schema.registry_url) share it.
func adminClientOptions(sc config.SourceConfig, url, token string) pulsaradmin.Options {
	o := pulsaradmin.Options{URL: url, TokenFile: sc.Auth.TokenFile}
	if sc.Auth.TokenFile == "" {
		o.Token = token
	}
	if strings.HasPrefix(url, "https://") {
		o.TLSCAFile = sc.Auth.TLSCAFile
	}
	return o
}
