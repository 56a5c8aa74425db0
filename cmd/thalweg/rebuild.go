package main

import (
	"fmt"
	"io"

	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/config"
	"github.com/thalweg/thalweg/pipeline"
)

// anchorRebuild returns how secondaries read missing ranges back from the
// raw anchor (recovery from raw), and the connection to close after the
// run. Only a Flight anchor (a thalweg receiver) serves reads; for any
// other kind it returns nil and secondaries that fall behind stay detached.
func anchorRebuild(d *config.DestinationConfig, env *cliEnv) (pipeline.RebuildFunc, io.Closer, error) {
	if d.Kind != config.KindFlight {
		return nil, nil, nil
	}
	creds := insecure.NewCredentials()
	if d.TLS.Enabled {
		to := flight.TLSOptions{CAFile: d.TLS.CAFile, CertFile: d.TLS.CertFile, KeyFile: d.TLS.KeyFile,
			ServerName: d.TLS.ServerName, InsecureSkipVerify: d.TLS.InsecureSkipVerify}
		tc, err := to.Config()
		if err != nil {
			return nil, nil, fmt.Errorf("destinations.%s.tls: %w", d.Name, err)
		}
		creds = credentials.NewTLS(tc)
	}
	conn, err := grpc.NewClient(d.Endpoint, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(int(d.MaxMessageSize)+1<<20)))
	if err != nil {
		return nil, nil, fmt.Errorf("destinations.%s: rebuild client: %w", d.Name, err)
	}
	var opts []grpc.CallOption
	tok, err := d.Token(lookupEnv(env))
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	if t := tok.Reveal(); t != "" {
		opts = append(opts, flight.BearerToken(t))
	}
	return flight.Rebuild(arrowflight.NewFlightServiceClient(conn), d.Path, memory.DefaultAllocator, opts...), conn, nil
}
