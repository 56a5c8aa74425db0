package offsetstore

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Defaults applied by Open to zero-valued Options fields.
const (
	DefaultTeardownTimeout = 10 * time.Second
	DefaultMaxBatch        = 1024
	DefaultMaxInFlight     = 1
	DefaultRetryInitial    = 100 * time.Millisecond
	DefaultRetryMax        = 10 * time.Second
)

// Options configure a Store. The zero value is usable: every zero field is
// replaced by the default documented beside it.
type Options struct {
	// FS is the file system Pebble runs on. Default vfs.Default (the OS).
	// Tests pass vfs.NewMem / vfs.NewCrashableMem, optionally wrapped in
	// errorfs for fault injection.
	FS vfs.FS

	// MeterProvider supplies the store's instruments (see doc.go).
	// Default: a no-op provider.
	MeterProvider metric.MeterProvider

	// Logger receives the store's and Pebble's log output. Default
	// slog.Default().
	Logger *slog.Logger

	// TeardownTimeout bounds Close: the final synced commit, and closing
	// Pebble, must finish within it; whatever is not durable by then is
	// released with an error wrapping ErrClosed. Default 10s.
	TeardownTimeout time.Duration

	// MaxBatch is the maximum number of Commit* calls grouped into one synced
	// Pebble batch. Default 1024.
	MaxBatch int

	// MaxInFlight is the number of group commits that may be awaiting their
	// WAL sync at once. With 1 the store is a classic group committer: one
	// sync in flight, everything arriving meanwhile forms the next group, so
	// thalweg.offsetstore.syncs counts real fsyncs. With more, the next group
	// is written to the WAL while the previous one syncs (Pebble may cover
	// both with one fsync); groups get smaller, and completions may be
	// observed in any order — callbacks are still released in FIFO order
	// (see doc.go). On a shared virtio disk 1 gave the most confirmations
	// per sync at no loss of throughput. Default 1.
	MaxInFlight int

	// ReadOnly opens an existing store for reading only (Pebble read-only:
	// nothing is written, replayed or flushed, so it works on a full disk):
	// Commit*, SetPosition and Reset fail with ErrReadOnly. Implies
	// MustExist. Default false.
	ReadOnly bool

	// MustExist makes Open fail with ErrNotStore, creating nothing, when
	// dir does not exist or holds no store. Default false: Open creates
	// the store (and dir) if needed.
	MustExist bool

	// RetryInitial and RetryMax pace the retries while the disk is full
	// (see doc.go, "Full disk"): the wait doubles from RetryInitial up to
	// RetryMax. Defaults DefaultRetryInitial (100ms) and DefaultRetryMax (10s).
	RetryInitial, RetryMax time.Duration

	// OnDiskFull, if set, is called when the store starts waiting for
	// space (with the cause, wrapping ErrNoSpace) and when it can write
	// again (with nil): during OpenContext, while committing, and when a
	// Pebble flush fails for lack of space (at Open, the replay of the WAL)
	// and later succeeds. It runs on a store or Pebble goroutine, never
	// under the store's lock, and must not block. Default: none.
	OnDiskFull func(err error)

	// migrate makes Open rewrite a version 1 store instead of refusing it
	// (Migrate only).
	migrate bool

	// testing holds hooks for in-package tests only.
	testing testingKnobs
}

// testingKnobs let in-package tests interfere with the commit pipeline.
type testingKnobs struct {
	// syncDone, when set, is called on the waiter goroutine after a group's
	// WAL sync returned, instead of reporting the outcome directly. The hook
	// must eventually call report exactly once (from any goroutine), possibly
	// with a different error, possibly after reporting later groups first:
	// that is how tests reorder sync completions.
	syncDone func(group uint64, err error, report func(error))
}

// validate reports every out-of-range field at once: one error wrapping
// ErrInvalidOptions, each cause naming its field. It runs on the caller's
// values, before withDefaults.
func (o *Options) validate() error {
	var errs []error
	if o.TeardownTimeout < 0 {
		errs = append(errs, fmt.Errorf("Options.TeardownTimeout must be >= 0, got %v", o.TeardownTimeout))
	}
	if o.MaxBatch < 0 {
		errs = append(errs, fmt.Errorf("Options.MaxBatch must be >= 0, got %d", o.MaxBatch))
	}
	if o.MaxInFlight < 0 {
		errs = append(errs, fmt.Errorf("Options.MaxInFlight must be >= 0, got %d", o.MaxInFlight))
	}
	if o.RetryInitial < 0 || o.RetryMax < 0 {
		errs = append(errs, fmt.Errorf("Options.RetryInitial and RetryMax must be >= 0, got %v and %v", o.RetryInitial, o.RetryMax))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

// withDefaults replaces every zero field by its documented default.
func (o *Options) withDefaults() {
	if o.RetryInitial == 0 {
		o.RetryInitial = DefaultRetryInitial
	}
	if o.RetryMax == 0 {
		o.RetryMax = DefaultRetryMax
	}
	o.RetryMax = max(o.RetryMax, o.RetryInitial)
	if o.ReadOnly {
		o.MustExist = true
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.MeterProvider == nil {
		o.MeterProvider = noop.NewMeterProvider()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.TeardownTimeout == 0 {
		o.TeardownTimeout = DefaultTeardownTimeout
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
}
