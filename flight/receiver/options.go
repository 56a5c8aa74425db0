package receiver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/thalweg/thalweg/internal/limits"
	"github.com/thalweg/thalweg/internal/optcheck"
)

// Defaults of Options, filled in by withDefaults after validate.
const (
	DefaultMaxMessageSize = 64 << 20
	DefaultMaxSyncBatch   = 4096
	DefaultSegmentSize    = 256 << 20
	// DefaultMaxStreamsPerPeer bounds the concurrent RPC streams of one
	// client host.
	DefaultMaxStreamsPerPeer = 64
	// DefaultMaxPendingBytes bounds the received bytes not yet durable,
	// server-wide.
	DefaultMaxPendingBytes = limits.DefaultMaxPendingBytes // 1 GiB
	// DefaultAckSendTimeout bounds how long one acknowledgement may wait
	// for the client to read.
	DefaultAckSendTimeout = 30 * time.Second
	// DefaultMaxConnections bounds the open connections, server-wide.
	DefaultMaxConnections = 1024
	// DefaultMaxConnectionIdle closes a connection without RPCs.
	DefaultMaxConnectionIdle = 2 * time.Minute
)

// ErrInvalidOptions is wrapped by every error New returns for invalid
// Options.
var ErrInvalidOptions = errors.New("receiver: invalid options")

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
	// MaxStreamPendingBytes bounds the bytes one DoPut stream holds within
	// MaxPendingBytes: its messages not yet durable plus the decoded size of
	// the message being decoded. A message that would exceed it ends the
	// stream with ResourceExhausted, so one stream cannot take the whole
	// server budget. Default MaxPendingBytes/2; at least MaxMessageSize, at
	// most MaxPendingBytes.
	MaxStreamPendingBytes int64
	// MaxDecodedMessageBytes bounds what one record batch message may take
	// to decode: the sum of its buffers' decoded sizes (a compressed buffer's
	// declared uncompressed length) plus 32 bytes per declared row. It is
	// checked against the header before anything is decompressed; a larger
	// message ends the stream with InvalidArgument naming the limit. Default
	// min(max(4 × MaxMessageSize, 256 MiB), MaxStreamPendingBytes/2); at most
	// MaxStreamPendingBytes.
	MaxDecodedMessageBytes int64
	// AckSendTimeout bounds how long the server waits for one
	// acknowledgement to be taken by the client (a client that never reads
	// keeps its HTTP/2 receive window closed and the send blocked). Past
	// it the stream ends with DeadlineExceeded and gives back its
	// MaxPendingBytes share. Default DefaultAckSendTimeout (30 s).
	AckSendTimeout time.Duration
	// MaxConnections bounds the connections open at once, server-wide; a
	// connection over it is closed as soon as it is accepted. Default
	// DefaultMaxConnections (1024).
	MaxConnections int
	// MaxConnectionIdle closes a connection that has had no RPC for this
	// long (and one whose TLS/HTTP/2 handshake does not complete within
	// min(10 s, MaxConnectionIdle)). Default DefaultMaxConnectionIdle (2 min).
	MaxConnectionIdle time.Duration
	// Allocator serves decoding of incoming batches (decompression). Default
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// Logger receives lifecycle events and protocol violations. Default:
	// slog.Default().
	Logger *slog.Logger
}

// withDefaults fills the zero fields with their defaults; it runs after
// validate and never overwrites a field the caller set.
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
	b := o.budgets()
	b.WithDefaults()
	o.MaxPendingBytes, o.MaxStreamPendingBytes = b.Pending, b.StreamPending
	o.MaxDecodedMessageBytes, o.MaxDecodedBufferSize = b.DecodedMessage, b.DecodedBuffer
	if o.AckSendTimeout == 0 {
		o.AckSendTimeout = DefaultAckSendTimeout
	}
	if o.MaxConnections == 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxConnectionIdle == 0 {
		o.MaxConnectionIdle = DefaultMaxConnectionIdle
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// validate reports every problem of the caller's values at once, each
// naming its field and the value it got, wrapped in ErrInvalidOptions. It
// runs before withDefaults so that messages name what the user wrote; the
// relations between limits (MaxPendingBytes ≥ MaxMessageSize, ...) are
// checked on the values New will use, with a defaulted field named as
// "0 (default N)".
func (o *Options) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.Dir == "" {
		bad("Options.Dir is required")
	}
	if o.MaxMessageSize != 0 && o.MaxMessageSize < 64<<10 {
		bad("Options.MaxMessageSize %d is below the minimum 65536", o.MaxMessageSize)
	}
	if o.SyncInterval < 0 {
		bad("Options.SyncInterval %v is negative", o.SyncInterval)
	}
	if o.MaxSyncBatch < 0 {
		bad("Options.MaxSyncBatch %d must be positive", o.MaxSyncBatch)
	}
	if o.SegmentSize != 0 && o.SegmentSize < 1<<10 {
		bad("Options.SegmentSize %d is below the minimum 1024", o.SegmentSize)
	}
	if o.AckDelay < 0 {
		bad("Options.AckDelay %v is negative", o.AckDelay)
	}
	if o.MaxStreamsPerPeer < 0 {
		bad("Options.MaxStreamsPerPeer %d must be positive", o.MaxStreamsPerPeer)
	}
	if o.MaxDecodedBufferSize < 0 {
		bad("Options.MaxDecodedBufferSize %d must be positive", o.MaxDecodedBufferSize)
	}
	if o.AckSendTimeout < 0 {
		bad("Options.AckSendTimeout %v is negative", o.AckSendTimeout)
	}
	if o.MaxConnections < 0 {
		bad("Options.MaxConnections %d must be positive", o.MaxConnections)
	}
	if o.MaxConnectionIdle < 0 {
		bad("Options.MaxConnectionIdle %v is negative", o.MaxConnectionIdle)
	}
	// The relations, on the effective values.
	e := *o
	e.withDefaults()
	errs = append(errs, e.budgets().Relations(o.budgets(), "MaxMessageSize")...)
	if e.MaxDecodedMessageBytes < 1 || e.MaxDecodedMessageBytes > e.MaxStreamPendingBytes {
		bad("Options.MaxDecodedMessageBytes %s is not between 1 and Options.MaxStreamPendingBytes %s",
			optcheck.OrDefault(o.MaxDecodedMessageBytes, e.MaxDecodedMessageBytes), optcheck.OrDefault(o.MaxStreamPendingBytes, e.MaxStreamPendingBytes))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

// budgets are o's memory bounds in the form both servers derive and check
// them (limits.Budgets).
func (o *Options) budgets() limits.Budgets {
	return limits.Budgets{MaxMessage: o.MaxMessageSize, Pending: o.MaxPendingBytes, StreamPending: o.MaxStreamPendingBytes,
		DecodedMessage: o.MaxDecodedMessageBytes, DecodedBuffer: o.MaxDecodedBufferSize}
}
