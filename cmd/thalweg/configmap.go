package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
	"github.com/thalweg/thalweg/zerobus"
)

// This file is the one place where configuration keys become component
// options: one function per component, each a plain mapping the worker
// calls and configmap_test.go inspects. The test holds one case per key
// (and fails for a key of the config structs that has none), and
// docs/configuration.md is generated from those cases. A new key is one
// line here and one case there. (The Pulsar source's mapping is
// pulsarOptions in pulsar.go; the log section's is newLogger in worker.go.)

// workerOpts are the settings the worker applies itself.
type workerOpts struct {
	MetricsListen  string              // metrics.listen; "" serves nothing
	StoreDir       string              // store.dir
	Store          offsetstore.Options // MeterProvider and Logger are set by the worker
	DrainTimeout   time.Duration       // shutdown.drain_timeout → pipeline.Options
	MaxUnacked     int                 // source.max_unacked → pipeline.Options, for every source kind
	LingerWhenIdle bool                // batching.linger_when_idle → pipeline.Options
	Pprof          bool                // metrics.pprof: /debug/pprof/ on the metrics listener
	StatsInterval  time.Duration       // log.stats_interval: the periodic stats line; 0 disables
	OTLP           config.OTLPConfig   // metrics.otlp.*: read by otlpReader
}

func workerOptions(cfg *config.Config) workerOpts {
	return workerOpts{
		MetricsListen:  cfg.Metrics.Listen,
		StoreDir:       cfg.Store.Dir,
		Store:          offsetstore.Options{TeardownTimeout: cfg.Store.TeardownTimeout},
		DrainTimeout:   cfg.Shutdown.DrainTimeout,
		MaxUnacked:     cfg.Source.MaxUnacked,
		LingerWhenIdle: cfg.Batching.LingerWhenIdle,
		Pprof:          cfg.Metrics.Pprof,
		StatsInterval:  cfg.Log.StatsInterval,
		OTLP:           cfg.Metrics.OTLP,
	}
}

// assemblerOptions maps the batching and schema sections.
func assemblerOptions(cfg *config.Config) (batch.AssemblerOptions, error) {
	o := batch.AssemblerOptions{
		MaxRows:  cfg.Batching.MaxRows,
		MaxBytes: int(cfg.Batching.MaxBytes),
		Linger:   cfg.Batching.Linger,
	}
	if cfg.Schema.Mode == config.SchemaJSON {
		sc, err := cfg.Schema.ArrowSchema()
		if err != nil {
			return o, err
		}
		o.Mode, o.Schema, o.IncludeMeta = batch.ModeJSON, sc, true
	}
	if cfg.Schema.Mode == config.SchemaPulsar {
		o.Mode, o.IncludeMeta = batch.ModeDecoded, true // the source resolves each record's schema
	}
	return o, nil
}

// generatorOptions maps source.generator.
func generatorOptions(cfg *config.Config) gen.Options {
	g := cfg.Source.Generator
	mode := gen.ModeRaw
	if g.Mode == config.GenJSON {
		mode = gen.ModeJSON
	}
	return gen.Options{
		Seed: uint64(g.Seed), Partitions: g.Partitions, Records: uint64(g.Records), Rate: g.Rate,
		PayloadSize: int(g.PayloadSize), Mode: mode, MalformedFraction: g.MalformedFraction,
	}
}

// reconcileFunc returns the raw anchor's stored position per partition
// (pulsar.Options.Reconcile).
type reconcileFunc = func(ctx context.Context) (map[string]uint64, error)

// openSource opens the configured source; reconcile (nil: none) asks the
// raw anchor for its positions.
func openSource(ctx context.Context, cfg *config.Config, store *offsetstore.Store, reconcile reconcileFunc, env *cliEnv, log *slog.Logger, mp metric.MeterProvider) (pipeline.Source, error) {
	switch cfg.Source.Kind {
	case config.SourceGenerator:
		return gen.NewSource(generatorOptions(cfg))
	case config.SourcePulsar:
		return openPulsar(ctx, cfg, store, reconcile, env, log, mp)
	}
	return nil, fmt.Errorf("source.kind %q is not supported", cfg.Source.Kind)
}

// laneOptions maps destinations[].lane. The lane's MaxRetries of 0 selects
// its default, while the configuration's explicit 0 (an absent key already
// became the default 5) means "rebuild at once", which the lane spells -1.
func laneOptions(l config.LaneConfig) pipeline.LaneOptions {
	o := pipeline.LaneOptions{Capacity: l.Capacity, MaxBytes: int64(l.MaxBytes), AckTimeout: l.AckTimeout, MaxRetries: l.MaxRetries,
		PermanentBudget: l.PermanentBudget}
	if l.MaxRetries == 0 {
		o.MaxRetries = -1
	}
	return o
}

// destOpts is one destination's lane and sink options; exactly one of
// Flight, Zerobus and Iceberg is set.
type destOpts struct {
	Lane    pipeline.LaneOptions
	Flight  *flight.Options
	Zerobus *zerobus.Options
	Iceberg *iceberg.Options
}

// orderedSource reports whether the source hands each partition's records
// to one consumer at a time, in broker order: a Pulsar Exclusive or
// Failover subscription. Only then may the raw anchor drop rows at or
// below its stored position (flight.Options.Ordered, idempotent append);
// Shared and Key_Shared deliver a partition's redeliveries out of order,
// and the generator's seqs are not a broker's.
func orderedSource(cfg *config.Config) bool {
	t := cfg.Source.Subscription.Type
	return cfg.Source.Kind == config.SourcePulsar && (t == config.SubExclusive || t == config.SubFailover)
}

// destinationOptions maps one destination, resolving its token.
func destinationOptions(cfg *config.Config, d *config.DestinationConfig, env *cliEnv, log *slog.Logger) (destOpts, error) {
	tok, err := d.Token(lookupEnv(env))
	if err != nil {
		return destOpts{}, err
	}
	out := destOpts{Lane: laneOptions(d.Lane)}
	dlog := log.With("destination", d.Name)
	switch d.Kind {
	case config.KindFlight:
		comp, err := flight.ParseCompression(string(d.Compression))
		if err != nil {
			return out, fmt.Errorf("destinations.%s.compression: %w", d.Name, err)
		}
		fo := flight.Options{
			Endpoint: d.Endpoint, Path: d.Path, Token: tok.Reveal(), Compression: comp,
			MaxMessageSize: int(d.MaxMessageSize), AckTimeout: d.SilenceTimeout, Logger: dlog,
			// The anchor only: a secondary's rebuild fills gaps below what
			// it already stores, which an ordered append would drop.
			Ordered: d.Role == config.RoleRawAnchor && orderedSource(cfg),
		}
		if d.TLS.Enabled {
			fo.TLS = &flight.TLSOptions{CAFile: d.TLS.CAFile, CertFile: d.TLS.CertFile, KeyFile: d.TLS.KeyFile,
				ServerName: d.TLS.ServerName, InsecureSkipVerify: d.TLS.InsecureSkipVerify}
		}
		out.Flight = &fo
	case config.KindZerobus:
		mode, err := zerobus.ParseMode(string(d.Mode))
		if err != nil {
			return out, fmt.Errorf("destinations.%s.mode: %w", d.Name, err)
		}
		zo := zerobus.Options{
			Endpoint: d.Endpoint, Table: d.Table, Token: tok.Reveal(), Mode: mode,
			Compression: zerobus.Compression(d.Compression), MaxMessageSize: int(d.MaxMessageSize),
			AckTimeout: d.SilenceTimeout, Logger: dlog,
		}
		if d.TLS.Enabled {
			zo.TLS = zerobus.TLSOptions{CAFile: d.TLS.CAFile, CertFile: d.TLS.CertFile, KeyFile: d.TLS.KeyFile,
				ServerName: d.TLS.ServerName, InsecureSkipVerify: d.TLS.InsecureSkipVerify}
		} else {
			zo.TLS = zerobus.TLSOptions{Insecure: true}
		}
		out.Zerobus = &zo
	case config.KindIceberg:
		ico, err := icebergOptions(cfg, d, env, dlog)
		if err != nil {
			return out, err
		}
		out.Iceberg = &ico
	default:
		return out, fmt.Errorf("destinations.%s.kind %q is not supported", d.Name, d.Kind)
	}
	return out, nil
}

// icebergOptions maps destinations[].iceberg, resolving its secrets.
// Local paths become absolute (relative ones are relative to the working
// directory, like store.dir). The MeterProvider is the worker's.
func icebergOptions(cfg *config.Config, d *config.DestinationConfig, env *cliEnv, log *slog.Logger) (iceberg.Options, error) {
	ic := d.Iceberg
	var errs []error
	secret := func(key, name string) string {
		s, err := config.IcebergSecret(name, lookupEnv(env))
		if err != nil {
			errs = append(errs, fmt.Errorf("destinations.%s.iceberg.%s: %w", d.Name, key, err))
		}
		return s.Reveal()
	}
	o := iceberg.Options{
		Catalog: iceberg.CatalogOptions{
			Type: iceberg.CatalogType(ic.Catalog.Type), URI: ic.Catalog.URI, Name: ic.Catalog.Name,
			Token:      secret("catalog.token_env", ic.Catalog.TokenEnv),
			Credential: secret("catalog.credential_env", ic.Catalog.CredentialEnv),
			Properties: ic.Catalog.Properties,
		},
		Warehouse: ic.Warehouse,
		Table:     ic.Table,
		S3: iceberg.S3Options{
			Endpoint: ic.S3.Endpoint, Region: ic.S3.Region, PathStyle: &ic.S3.PathStyle,
			AccessKeyID:     ic.S3.AccessKeyID,
			SecretAccessKey: secret("s3.secret_access_key_env", ic.S3.SecretAccessKeyEnv),
			SessionToken:    secret("s3.session_token_env", ic.S3.SessionTokenEnv),
		},
		CommitInterval: ic.CommitInterval,
		TargetFileSize: int64(ic.TargetFileSize),
		PartitionBy:    ic.PartitionBy,
		Maintenance: iceberg.MaintenanceOptions{
			Disabled: !ic.Maintenance.Enabled, Interval: ic.Maintenance.Interval,
			SnapshotMaxAge: ic.Maintenance.SnapshotMaxAge, MinSnapshots: ic.Maintenance.MinSnapshots,
			OrphanAge: ic.Maintenance.OrphanAge, OrphanInterval: ic.Maintenance.OrphanInterval,
			Timeout: ic.Maintenance.Timeout, CompactMinFiles: compactMinFiles(ic.Maintenance.CompactMinFiles),
			LeaseTTL: ic.Maintenance.LeaseTTL,
		},
		// As for flight: only the anchor drops what it holds already.
		Ordered:     d.Role == config.RoleRawAnchor && orderedSource(cfg),
		Logger:      log,
		Destination: d.Name,
	}
	if ic.Catalog.Type == config.CatalogSQL && o.Catalog.URI != "" {
		abs, err := filepath.Abs(o.Catalog.URI)
		errs = append(errs, err)
		o.Catalog.URI = abs
	}
	if o.Warehouse != "" && !strings.Contains(o.Warehouse, "://") {
		abs, err := filepath.Abs(o.Warehouse)
		errs = append(errs, err)
		o.Warehouse = abs
	}
	return o, errors.Join(errs...)
}

// icebergTables is what the worker reads of an iceberg destination: its
// table (iceberg.Table) or, for a table template, its tables
// (iceberg.Tables).
type icebergTables interface {
	Positions(ctx context.Context) (map[string]uint64, error)
	Rebuild(ctx context.Context, partition string, from, to uint64) ([]*batch.Batch, error)
	Close() error
}

// openIceberg opens the table of o, or the tables of its template, and
// returns the dialer of its transport (a Sink, or a Router for a
// template).
func openIceberg(o iceberg.Options) (icebergTables, func(context.Context) (lanes.Transport, error), error) {
	if iceberg.IsTemplate(o.Table) {
		ts, err := iceberg.OpenTables(o)
		if err != nil {
			return nil, nil, err
		}
		return ts, func(ctx context.Context) (lanes.Transport, error) {
			r, err := ts.Dial(ctx)
			if err != nil {
				return nil, err
			}
			return r, nil
		}, nil
	}
	tbl, err := iceberg.Open(o)
	if err != nil {
		return nil, nil, err
	}
	return tbl, func(ctx context.Context) (lanes.Transport, error) {
		s, err := tbl.Dial(ctx)
		if err != nil {
			return nil, err
		}
		return s, nil
	}, nil
}

// destination builds the lane settings and transport dialer of one
// destination; tbl is its table(s) for kind iceberg (nil otherwise), to
// close after the pipeline ran.
func destination(cfg *config.Config, d *config.DestinationConfig, env *cliEnv, log *slog.Logger, mp metric.MeterProvider) (_ pipeline.Destination, tbl icebergTables, _ error) {
	o, err := destinationOptions(cfg, d, env, log)
	if err != nil {
		return pipeline.Destination{}, nil, err
	}
	out := pipeline.Destination{Name: d.Name, Lane: o.Lane}
	switch {
	case o.Flight != nil:
		fo := *o.Flight
		out.Dial = func(ctx context.Context) (lanes.Transport, error) { return flight.Dial(ctx, fo) }
	case o.Zerobus != nil:
		zo := *o.Zerobus
		out.Dial = func(ctx context.Context) (lanes.Transport, error) { return zerobus.Dial(ctx, zo) }
	case o.Iceberg != nil:
		ico := *o.Iceberg
		ico.MeterProvider = mp
		if tbl, out.Dial, err = openIceberg(ico); err != nil {
			return out, nil, fmt.Errorf("destinations.%s.iceberg: %w", d.Name, err)
		}
	}
	return out, tbl, nil
}

// destinations builds every destination: the raw anchor (destinations[].role
// raw_anchor) and the secondaries, in file order. tables are the Iceberg
// destinations' tables by destination name, to be closed after the
// pipeline ran (on error, they are closed already).
func destinations(cfg *config.Config, env *cliEnv, log *slog.Logger, mp metric.MeterProvider) (anchor pipeline.Destination, secondaries []pipeline.Destination, tables map[string]icebergTables, err error) {
	tables = map[string]icebergTables{}
	for i := range cfg.Destinations {
		d := &cfg.Destinations[i]
		dest, tbl, err := destination(cfg, d, env, log, mp)
		if err != nil {
			for _, t := range tables {
				_ = t.Close()
			}
			return anchor, nil, nil, err
		}
		if tbl != nil {
			tables[d.Name] = tbl
		}
		if d.Role == config.RoleRawAnchor {
			anchor = dest
		} else {
			secondaries = append(secondaries, dest)
		}
	}
	return anchor, secondaries, tables, nil
}

// compactMinFiles is compact_min_files as iceberg.MaintenanceOptions
// takes it: 0 (off) becomes -1.
func compactMinFiles(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
