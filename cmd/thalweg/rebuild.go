package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/pipeline"
)

// anchorReads returns how the worker reads from the raw anchor, over one
// connection to close after the run: the secondaries' rebuild of missing
// ranges (recovery from raw) and the Pulsar source's reconciliation (the
// anchor's stored positions: flight.Positions of a Flight anchor's
// dataset, iceberg.Table.Positions of an Iceberg anchor's table). A Flight
// anchor (a thalweg receiver, or a server offering the same calls) and an
// Iceberg anchor serve them; for a Zerobus anchor all are nil, secondaries
// that fall behind stay detached and the source goes by its own store
// only.
func anchorReads(cfg *config.Config, env *cliEnv, log *slog.Logger) (pipeline.RebuildFunc, reconcileFunc, io.Closer, error) {
	d := cfg.RawAnchor()
	if d.Kind == config.KindIceberg {
		o, err := icebergOptions(cfg, d, env, log.With("destination", d.Name))
		if err != nil {
			return nil, nil, nil, err
		}
		tbl, err := iceberg.Open(o)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("destinations.%s.iceberg: %w", d.Name, err)
		}
		return tbl.Rebuild, tbl.Positions, tbl, nil
	}
	if d.Kind != config.KindFlight {
		return nil, nil, nil, nil
	}
	creds := insecure.NewCredentials()
	if d.TLS.Enabled {
		to := flight.TLSOptions{CAFile: d.TLS.CAFile, CertFile: d.TLS.CertFile, KeyFile: d.TLS.KeyFile,
			ServerName: d.TLS.ServerName, InsecureSkipVerify: d.TLS.InsecureSkipVerify}
		tc, err := to.Config()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("destinations.%s.tls: %w", d.Name, err)
		}
		creds = credentials.NewTLS(tc)
	}
	conn, err := grpc.NewClient(d.Endpoint, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(int(d.MaxMessageSize)+1<<20)))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("destinations.%s: rebuild client: %w", d.Name, err)
	}
	var opts []grpc.CallOption
	tok, err := d.Token(lookupEnv(env))
	if err != nil {
		conn.Close()
		return nil, nil, nil, err
	}
	if t := tok.Reveal(); t != "" {
		opts = append(opts, flight.BearerToken(t))
	}
	client := arrowflight.NewFlightServiceClient(conn)
	path := d.Path
	positions := func(ctx context.Context) (map[string]uint64, error) {
		return flight.Positions(ctx, client, path, opts...)
	}
	return flight.Rebuild(client, path, memory.DefaultAllocator, opts...), positions, conn, nil
}
