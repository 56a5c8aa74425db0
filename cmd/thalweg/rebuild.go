package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/pipeline"
)

// anchorReads returns how the worker reads from the raw anchor: the
// secondaries' rebuild of missing ranges (recovery from raw) and the
// Pulsar source's reconciliation (the anchor's stored positions). An
// Iceberg anchor is read through its table, the one its lane writes
// through, or for a table template through its tables: Rebuild reads a
// partition's table, Positions the union of the tables the template
// gives (tbl, nil for any other kind); a Flight anchor (a thalweg
// receiver, or a server offering the same calls) through a flight.Dataset
// built from the same options as its lane, returned to close after the
// run. For a Zerobus anchor all are nil: secondaries that fall behind stay
// detached and the source goes by its own store only.
func anchorReads(cfg *config.Config, d *config.DestinationConfig, tbl icebergTables, env *cliEnv, log *slog.Logger) (pipeline.RebuildFunc, reconcileFunc, io.Closer, error) {
	if tbl != nil {
		return tbl.Rebuild, tbl.Positions, nil, nil
	}
	if d.Kind != config.KindFlight {
		return nil, nil, nil, nil
	}
	o, err := destinationOptions(cfg, d, env, log)
	if err != nil {
		return nil, nil, nil, err
	}
	ds, err := flight.Open(*o.Flight)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("destinations.%s: %w", d.Name, err)
	}
	return ds.Rebuild, ds.Positions, ds, nil
}
