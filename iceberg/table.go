package iceberg

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/apache/iceberg-go/table"
)

// Table is one Iceberg table thalweg writes: the Sinks it dials write into
// it, Positions and Rebuild read from it. It connects to the catalog on
// first use (Open does no I/O), so that a catalog that is down at start is
// retried by whoever calls (a lane's Dial, the source's reconciliation)
// instead of failing the start.
//
// A Table is safe for concurrent use. Close it after every Sink it dialed.
type Table struct {
	opts    Options
	ident   table.Identifier
	metrics *metrics
	// shared, for a table of a template (Tables), is the Table whose
	// catalog connection it uses; nil: its own.
	shared *Table

	mu struct {
		sync.Mutex
		cat      catalogIO
		closeCat func() error
		closed   bool
	}
}

// Open validates opts and returns the Table they name.
func Open(opts Options) (*Table, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.withDefaults()
	ns, name, _ := splitTable(opts.Table)
	return &Table{opts: opts, ident: append(append(table.Identifier{}, ns...), name),
		metrics: newMetrics(opts.MeterProvider, opts.Destination, opts.Table)}, nil
}

// Name is the table's "namespace.table".
func (t *Table) Name() string { return t.opts.Table }

// catalog connects to the catalog on first use.
func (t *Table) catalog(ctx context.Context) (catalogIO, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return nil, ErrClosed
	}
	if t.shared != nil {
		return t.shared.catalog(ctx)
	}
	if t.mu.cat != nil {
		return t.mu.cat, nil
	}
	cat, closeCat, err := openCatalog(ctx, &t.opts)
	if err != nil {
		return nil, err
	}
	if t.opts.hooks.catalog != nil {
		cat = t.opts.hooks.catalog(cat)
	}
	t.mu.cat, t.mu.closeCat = cat, closeCat
	return cat, nil
}

// load loads the table; found is false when it does not exist yet.
func (t *Table) load(ctx context.Context) (*table.Table, bool, error) {
	cat, err := t.catalog(ctx)
	if err != nil {
		return nil, false, err
	}
	return loadTable(ctx, cat, t.ident, t.opts.hooks)
}

// Positions returns the highest seq the table holds per partition (the
// partition name, as batch.OffsetSpan names it): what its newest
// thalweg commit recorded (PropPositions). Empty when the table does not
// exist or holds nothing of thalweg's. It has the shape of
// flight.Positions, for the source's reconciliation.
func (t *Table) Positions(ctx context.Context) (map[string]uint64, error) {
	tbl, found, err := t.load(ctx)
	if err != nil {
		return nil, newError("positions", err, false)
	}
	if !found {
		return map[string]uint64{}, nil
	}
	p, err := tablePositions(tbl)
	if err != nil {
		return nil, newError("positions", err, false)
	}
	return p, nil
}

// Rows returns the number of rows the table's current snapshot holds,
// duplicates included (its summary's total-records): 0 when the table does
// not exist or has no snapshot. With Rebuild, which returns each seq once,
// it tells whether any record is stored twice.
func (t *Table) Rows(ctx context.Context) (int64, error) {
	tbl, found, err := t.load(ctx)
	if err != nil {
		return 0, newError("rows", err, false)
	}
	if !found {
		return 0, nil
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil || snap.Summary == nil {
		return 0, nil
	}
	v, ok := snap.Summary.Properties["total-records"]
	if !ok {
		return 0, newError("rows", fmt.Errorf("snapshot %d has no total-records in its summary", snap.SnapshotID), false)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, newError("rows", fmt.Errorf("snapshot %d: total-records %q: %w", snap.SnapshotID, v, err), false)
	}
	return n, nil
}

// Dial returns a Sink writing into the table, starting from what the table
// holds now. ctx bounds the dial only.
func (t *Table) Dial(ctx context.Context) (*Sink, error) {
	tbl, found, err := t.load(ctx)
	if err != nil {
		return nil, newError("open", err, true)
	}
	pos := positions{}
	if found {
		if pos, err = tablePositions(tbl); err != nil {
			return nil, newError("open", err, true)
		}
	} else {
		tbl = nil
	}
	cat, _ := t.catalog(ctx)
	return newSink(t, cat, tbl, pos), nil
}

// Close disconnects from the catalog. Sinks must be closed first.
func (t *Table) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return nil
	}
	t.mu.closed = true
	if t.mu.closeCat != nil {
		if err := t.mu.closeCat(); err != nil {
			return fmt.Errorf("iceberg: close catalog: %w", err)
		}
	}
	return nil
}

// errorsAs is errors.As for the *Error of the package.
func errorsAs(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
