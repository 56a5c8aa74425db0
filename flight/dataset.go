package flight

import (
	"context"
	"errors"
	"fmt"
	"sync"

	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/thalweg/thalweg/batch"
)

// readSlack is what a read call accepts beyond Options.MaxMessageSize: a
// served message carries the batch's stored app_metadata (its spans)
// besides the body the sink kept under the limit.
const readSlack = 1 << 20

// ErrDatasetClosed is returned by a Dataset's reads after Close.
var ErrDatasetClosed = errors.New("flight: dataset closed")

// Dataset is the handle of one dataset on a thalweg receiver (or a server
// offering the same calls), built from one Options: the endpoint, Path,
// TLS, Token and MaxMessageSize every call to it uses. Dial opens the
// lane's DoPut stream (each Sink on a connection of its own, so that a
// redial after a poisoning starts afresh); Positions, Rebuild and ReadAll
// read the dataset back over one connection the Dataset keeps, made on
// first use. It is iceberg.Table's counterpart for a Flight anchor.
//
// A Dataset is safe for concurrent use. Close closes the read connection;
// Sinks it dialed are their owners' to close.
type Dataset struct {
	opts     Options
	callOpts []grpc.CallOption

	mu struct {
		sync.Mutex
		conn   *grpc.ClientConn // nil until the first read
		client arrowflight.FlightServiceClient
		closed bool
	}
}

// Open validates opts (as Dial does: every problem at once, wrapped in
// ErrInvalidOptions) and returns the dataset's handle. It connects to
// nothing.
func Open(opts Options) (*Dataset, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.Path = append([]string(nil), opts.Path...)
	d := &Dataset{opts: opts}
	if opts.Token != "" {
		d.callOpts = append(d.callOpts, BearerToken(opts.Token))
	}
	return d, nil
}

// Dial opens a Sink on the dataset: Dial(ctx, opts) with the Dataset's
// Options. Its signature is a pipeline Destination's Dial but for the
// result type.
func (d *Dataset) Dial(ctx context.Context) (*Sink, error) { return Dial(ctx, d.opts) }

// client returns the read client, connecting on first use.
func (d *Dataset) client() (arrowflight.FlightServiceClient, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return nil, ErrDatasetClosed
	}
	if d.mu.client != nil {
		return d.mu.client, nil
	}
	o := d.opts
	o.withDefaults()
	dopts, err := o.dialOptions()
	if err != nil {
		return nil, err
	}
	dopts = append(dopts, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(o.MaxMessageSize+readSlack)))
	conn, err := grpc.NewClient(o.Endpoint, dopts...)
	if err != nil {
		return nil, fmt.Errorf("flight: read client for %s: %w", o.Endpoint, err)
	}
	d.mu.conn, d.mu.client = conn, arrowflight.NewFlightServiceClient(conn)
	return d.mu.client, nil
}

// Positions is Positions of the dataset: the highest seq stored per
// partition.
func (d *Dataset) Positions(ctx context.Context) (map[string]uint64, error) {
	c, err := d.client()
	if err != nil {
		return nil, err
	}
	return Positions(ctx, c, d.opts.Path, d.callOpts...)
}

// Rebuild is Rebuild's function for the dataset (a pipeline.RebuildFunc):
// the stored batches of partition from seq from to seq to, allocated from
// Options.Allocator (default memory.DefaultAllocator).
func (d *Dataset) Rebuild(ctx context.Context, partition string, from, to uint64) ([]*batch.Batch, error) {
	c, err := d.client()
	if err != nil {
		return nil, err
	}
	return Rebuild(c, d.opts.Path, d.allocator(), d.callOpts...)(ctx, partition, from, to)
}

// ReadAll is ReadAll of the dataset: every stored batch, allocated from
// mem. The caller releases them (ReleaseAll).
func (d *Dataset) ReadAll(ctx context.Context, mem memory.Allocator) ([]Stored, error) {
	c, err := d.client()
	if err != nil {
		return nil, err
	}
	return ReadAll(ctx, c, d.opts.Path, mem, d.callOpts...)
}

func (d *Dataset) allocator() memory.Allocator {
	if d.opts.Allocator != nil {
		return d.opts.Allocator
	}
	return memory.DefaultAllocator
}

// Close closes the read connection, if one was made; later reads fail
// with ErrDatasetClosed. It does not wait for a server.
func (d *Dataset) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mu.closed = true
	if d.mu.conn == nil {
		return nil
	}
	err := d.mu.conn.Close()
	d.mu.conn, d.mu.client = nil, nil
	return err
}
