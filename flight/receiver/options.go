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
	// DefaultMaxStreamsPerPeer bounds the concurrent RPC streams of one
	// client host.
	DefaultMaxStreamsPerPeer = 64
	// DefaultMaxPendingBytes bounds the received bytes not yet durable,
	// server-wide.
	DefaultMaxPendingBytes = 1 << 30
	// minMaxDecodedBufferSize is the floor of the MaxDecodedBufferSize
	// default (4 × MaxMessageSize).
	minMaxDecodedBufferSize = 256 << 20
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
	// TLSConfig, when set, serves TLS. For mutual TLS set ClientCAs and
	// ClientAuth = tls.RequireAndVerifyClientCert: a client without a
	// certificate signed by ClientCAs then fails the handshake.
	TLSConfig *tls.Config
	// MaxStreamsPerPeer bounds the concurrent RPC streams (DoPut, DoGet,
	// ListFlights) of one client host (the peer address without its port).
	// A stream over the limit ends at once with ResourceExhausted, before
	// anything is read. Default DefaultMaxStreamsPerPeer (64).
	MaxStreamsPerPeer int
	// MaxPendingBytes bounds, server-wide, the bytes of received messages
	// that are not yet durable: parts of a split batch held until the batch
	// is complete, and stored batches awaiting their sync. A message that
	// would exceed it ends its stream with ResourceExhausted (the sender
	// rebuilds its stream and replays; nothing acknowledged is lost), so a
	// client that never completes a split batch, or a store that stopped
	// syncing, cannot grow the server without bound. Default
	// DefaultMaxPendingBytes (1 GiB); it must be at least MaxMessageSize.
	MaxPendingBytes int64
	// MaxDecodedBufferSize bounds one decoded buffer of an incoming batch. A
	// compressed IPC buffer declares its uncompressed size; a declaration
	// above the limit fails the stream with InvalidArgument before anything
	// is allocated. Default max(4 × MaxMessageSize, 256 MiB).
	MaxDecodedBufferSize int
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
	if o.MaxStreamsPerPeer == 0 {
		o.MaxStreamsPerPeer = DefaultMaxStreamsPerPeer
	}
	if o.MaxPendingBytes == 0 {
		o.MaxPendingBytes = DefaultMaxPendingBytes
	}
	if o.MaxDecodedBufferSize == 0 {
		o.MaxDecodedBufferSize = max(4*o.MaxMessageSize, minMaxDecodedBufferSize)
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
	case o.MaxStreamsPerPeer < 1:
		return fmt.Errorf("receiver: Options.MaxStreamsPerPeer %d must be positive", o.MaxStreamsPerPeer)
	case o.MaxPendingBytes < int64(o.MaxMessageSize):
		return fmt.Errorf("receiver: Options.MaxPendingBytes %d is below MaxMessageSize %d", o.MaxPendingBytes, o.MaxMessageSize)
	case o.MaxDecodedBufferSize < 1:
		return fmt.Errorf("receiver: Options.MaxDecodedBufferSize %d must be positive", o.MaxDecodedBufferSize)
	}
	return nil
}
