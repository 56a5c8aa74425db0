package main

import (
	"context"
	"fmt"
	"io"

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

// anchorReads returns how the worker reads from the raw anchor: the
// secondaries' rebuild of missing ranges (recovery from raw) and the
// Pulsar source's reconciliation (the anchor's stored positions:
// flight.Positions of a Flight anchor's dataset, iceberg.Table.Positions
// of an Iceberg anchor's table, which is the one its lane writes through:
// tbl, nil for any other kind). A Flight anchor (a thalweg receiver, or a
// server offering the same calls) is read over one connection of its own,
// returned to close after the run; for a Zerobus anchor all are nil,
// secondaries that fall behind stay detached and the source goes by its
// own store only.
func anchorReads(d *config.DestinationConfig, tbl *iceberg.Table, env *cliEnv) (pipeline.RebuildFunc, reconcileFunc, io.Closer, error) {
	if tbl != nil {
		return tbl.Rebuild, tbl.Positions, nil, nil
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
