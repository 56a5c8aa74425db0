package receiver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Defaults applied by Options.withDefaults.
const (
	DefaultMaxMessageSize = 64 << 20
	DefaultMaxSyncBatch   = 4096
	DefaultSegmentSize    = 256 << 20
)

// Options configure a Server. Dir is required; everything else has a
// documented default.
type Options struct {
	// Dir is the root directory of the stored datasets. It is created if
	// missing and locked against a second Server.
	Dir string
	// FS is the file system Dir lives on. Default vfs.Default; tests use
	// vfs.NewMem / NewCrashableMem / errorfs.
	FS vfs.FS
	// Token, when set, is the bearer token every RPC must present as
	// "authorization: Bearer <Token>" metadata. It is compared in constant
	// time; a missing or wrong token fails the RPC with Unauthenticated
	// before any data is read.
	Token string
	// MaxMessageSize is the largest gRPC message accepted or sent. Larger
	// messages fail the stream with ResourceExhausted. Default 64 MiB.
	MaxMessageSize int
	// SyncInterval is how long a dataset's committer gathers batches after
	// the first unsynced one before it syncs, unless MaxSyncBatch batches
	// are waiting. Default 0: sync as soon as the previous sync ended, which
	// already groups every batch that arrived during that sync.
	SyncInterval time.Duration
	// MaxSyncBatch ends the SyncInterval wait early once that many batches
	// are waiting. Default 4096.
	MaxSyncBatch int
	// SegmentSize is the size after which a dataset starts a new segment
	// file. Default 256 MiB.
	SegmentSize int64
	// AckDelay is an artificial delay added before every group sync, to
	// model a slow durable store in benchmarks. Default 0.
	AckDelay time.Duration
	// TLSConfig, when set, serves TLS.
	TLSConfig *tls.Config
	// Allocator serves decoding of incoming batches (decompression). Default
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// Logger receives lifecycle events and protocol violations. Default:
	// discard.
	Logger *slog.Logger
}

func (o *Options) withDefaults() {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.MaxMessageSize == 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.MaxSyncBatch == 0 {
		o.MaxSyncBatch = DefaultMaxSyncBatch
	}
	if o.SegmentSize == 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

func (o *Options) validate() error {
	switch {
	case o.Dir == "":
		return errors.New("receiver: Options.Dir is required")
	case o.MaxMessageSize < 64<<10:
		return fmt.Errorf("receiver: Options.MaxMessageSize %d is below the minimum 65536", o.MaxMessageSize)
	case o.SyncInterval < 0:
		return fmt.Errorf("receiver: Options.SyncInterval %v is negative", o.SyncInterval)
	case o.MaxSyncBatch < 1:
		return fmt.Errorf("receiver: Options.MaxSyncBatch %d must be positive", o.MaxSyncBatch)
	case o.SegmentSize < 1<<10:
		return fmt.Errorf("receiver: Options.SegmentSize %d is below the minimum 1024", o.SegmentSize)
	case o.AckDelay < 0:
		return fmt.Errorf("receiver: Options.AckDelay %v is negative", o.AckDelay)
	}
	return nil
}
