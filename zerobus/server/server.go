package server

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/bearer"
	"github.com/thalweg/thalweg/internal/diskstatus"
	"github.com/thalweg/thalweg/internal/errlog"
	"github.com/thalweg/thalweg/internal/limits"
	"github.com/thalweg/thalweg/internal/optcheck"
	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

// Header names of the Zerobus protocol (gRPC metadata keys are lower case).
const (
	HeaderAuthorization = bearer.Header
	HeaderTableName     = "x-databricks-zerobus-table-name"
)

// Defaults of Options, filled in by withDefaults after validate.
const (
	// DefaultMaxMessageBytes is the service's per-message limit (10 MiB).
	DefaultMaxMessageBytes = 10 << 20
	// DefaultSyncInterval is how often written records are fsynced.
	DefaultSyncInterval = 10 * time.Millisecond
	// DefaultRotateGrace is the grace announced in a close-stream signal.
	DefaultRotateGrace = 2 * time.Second
)

// Options configure a Server. The zero value of every field but Dir is
// usable.
type Options struct {
	// Dir holds one JSON-lines file per table (required; created if missing).
	Dir string
	// Token, when set, is the bearer token every stream must present in the
	// authorization header; when empty any token (or none) is accepted.
	Token string
	// Tables, when set, is the list of tables that exist; a stream for any
	// other table ends with NotFound.
	Tables []string
	// SyncInterval is how often written records are fsynced; acks are sent
	// only for synced records. Default DefaultSyncInterval (10ms).
	SyncInterval time.Duration
	// RotateEvery, when positive, makes the server send a close-stream signal
	// this long after a stream opened, and end the stream RotateGrace later.
	RotateEvery time.Duration
	// RotateGrace is the duration announced in the close-stream signal.
	// Default DefaultRotateGrace (2s).
	RotateGrace time.Duration
	// AckDelay holds back every ack for this long after its records synced
	// (fault injection: slow acks).
	AckDelay time.Duration
	// DropStreamAfter, when positive, aborts a stream with Unavailable once it
	// has received that many records, without acknowledging the last ones
	// (fault injection). DropStreams bounds how many streams are dropped
	// over the server's life (0: every stream that gets there).
	DropStreamAfter int
	DropStreams     int
	// MaxMessageBytes is the largest request message accepted; larger ones
	// end the stream with ResourceExhausted. Default DefaultMaxMessageBytes.
	MaxMessageBytes int
	// TLS, when set, serves TLS with this configuration. For mutual TLS set
	// ClientCAs and ClientAuth = tls.RequireAndVerifyClientCert.
	TLS *tls.Config
	// MaxStreamsPerPeer bounds the concurrent streams of one client host
	// (peer address without port); a stream over it ends at once with
	// ResourceExhausted. Default DefaultMaxStreamsPerPeer (64).
	MaxStreamsPerPeer int
	// MaxPendingBytes bounds, server-wide, the record bytes stored but not
	// yet acknowledged (waiting for the next fsync). A message that would
	// exceed it ends its stream with ResourceExhausted; the client replays
	// on a new stream. Default DefaultMaxPendingBytes (1 GiB); it must be
	// at least MaxMessageBytes.
	MaxPendingBytes int64
	// MaxDecodedBufferSize bounds one decoded buffer of a Flight batch (a
	// compressed IPC buffer declares its uncompressed size); larger
	// declarations end the stream with InvalidArgument before anything is
	// allocated. Default max(4 × MaxMessageBytes, 256 MiB).
	MaxDecodedBufferSize int
	// MaxStreamPendingBytes bounds the bytes one stream holds within
	// MaxPendingBytes: records stored but not yet acknowledged plus what the
	// message being decoded declares it needs. A message that would exceed
	// it ends the stream with ResourceExhausted. Default MaxPendingBytes/2
	// (at least MaxMessageBytes, at most MaxPendingBytes).
	MaxStreamPendingBytes int64
	// MaxDecodedMessageBytes bounds what one message may take to decode,
	// checked before decoding: for a Flight batch the sum of its buffers'
	// decoded sizes (a compressed buffer's declared uncompressed length)
	// plus 32 bytes per declared row, and the size of its rendered rows; for
	// an EphemeralStream message the estimated decoded size of its records.
	// Larger messages end the stream with InvalidArgument naming the limit.
	// Default min(max(4 × MaxMessageBytes, 256 MiB), MaxStreamPendingBytes/2).
	MaxDecodedMessageBytes int64
	// MaxDecodedRecordBytes bounds one record's estimated decoded size (a
	// PROTO record: its decoded message and rendered JSON, estimated from
	// its wire form; a JSON record: its length). A packed repeated int32
	// takes ~140× its wire size to decode and render, so this is checked
	// before decoding.
	// Default min(4 × MaxMessageBytes, MaxDecodedMessageBytes).
	MaxDecodedRecordBytes int64
	// AckSendTimeout bounds how long one acknowledgement may wait for the
	// client to read it (a client that never reads keeps its HTTP/2 receive
	// window closed and the send blocked). Past it the stream ends with
	// DeadlineExceeded and gives back its budget. Default
	// DefaultAckSendTimeout (30 s).
	AckSendTimeout time.Duration
	// MaxConnections bounds the connections open at once over all of
	// Serve's listeners; a connection over it is closed as soon as it is
	// accepted. Default DefaultMaxConnections (1024).
	MaxConnections int
	// MaxConnectionIdle closes a connection without streams for this long
	// (and one whose handshake does not complete within min(10 s,
	// MaxConnectionIdle)). Default DefaultMaxConnectionIdle (2 min).
	MaxConnectionIdle time.Duration
	// Allocator backs decoded Flight batches. Default memory.DefaultAllocator.
	Allocator memory.Allocator
	// Logger receives stream lifecycle events. Default: slog.Default().
	Logger *slog.Logger
}

// ErrInvalidOptions is wrapped by every error New returns for invalid
// Options.
var ErrInvalidOptions = errors.New("zerobus server: invalid options")

// validate reports every problem of the caller's values at once, each
// naming its field and the value it got, wrapped in ErrInvalidOptions. It
// runs before withDefaults so that messages name what the user wrote; the
// relations between limits (MaxPendingBytes ≥ MaxMessageBytes, ...) are
// checked on the values New will use, with a defaulted field named as
// "0 (default N)".
func (o *Options) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.Dir == "" {
		bad("Options.Dir is required")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"SyncInterval", o.SyncInterval}, {"RotateEvery", o.RotateEvery}, {"RotateGrace", o.RotateGrace},
		{"AckDelay", o.AckDelay}, {"AckSendTimeout", o.AckSendTimeout}, {"MaxConnectionIdle", o.MaxConnectionIdle},
	} {
		if d.v < 0 {
			bad("Options.%s %v is negative", d.name, d.v)
		}
	}
	negative := false
	for _, c := range []struct {
		name string
		v    int64
	}{
		{"DropStreamAfter", int64(o.DropStreamAfter)}, {"DropStreams", int64(o.DropStreams)},
		{"MaxMessageBytes", int64(o.MaxMessageBytes)}, {"MaxStreamsPerPeer", int64(o.MaxStreamsPerPeer)},
		{"MaxPendingBytes", o.MaxPendingBytes}, {"MaxDecodedBufferSize", int64(o.MaxDecodedBufferSize)},
		{"MaxStreamPendingBytes", o.MaxStreamPendingBytes}, {"MaxDecodedMessageBytes", o.MaxDecodedMessageBytes},
		{"MaxDecodedRecordBytes", o.MaxDecodedRecordBytes}, {"MaxConnections", int64(o.MaxConnections)},
	} {
		if c.v < 0 {
			bad("Options.%s %d is negative", c.name, c.v)
			negative = true
		}
	}
	for i, t := range o.Tables {
		if !validTableName(t) {
			bad("Options.Tables[%d]: invalid table name %q", i, t)
		}
	}
	if !negative {
		// The relations, on the effective values (a negative limit above
		// would only repeat itself here).
		e := *o
		e.withDefaults()
		errs = append(errs, e.budgets().Relations(o.budgets(), "MaxMessageBytes")...)
		if e.MaxDecodedMessageBytes > e.MaxStreamPendingBytes {
			bad("Options.MaxDecodedMessageBytes %s is above Options.MaxStreamPendingBytes %s",
				optcheck.OrDefault(o.MaxDecodedMessageBytes, e.MaxDecodedMessageBytes), optcheck.OrDefault(o.MaxStreamPendingBytes, e.MaxStreamPendingBytes))
		}
		if e.MaxDecodedRecordBytes > e.MaxDecodedMessageBytes {
			bad("Options.MaxDecodedRecordBytes %s is above Options.MaxDecodedMessageBytes %s",
				optcheck.OrDefault(o.MaxDecodedRecordBytes, e.MaxDecodedRecordBytes), optcheck.OrDefault(o.MaxDecodedMessageBytes, e.MaxDecodedMessageBytes))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

// withDefaults fills the zero fields with their defaults; it runs after
// validate and never overwrites a field the caller set.
func (o *Options) withDefaults() {
	if o.SyncInterval == 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if o.RotateGrace == 0 {
		o.RotateGrace = DefaultRotateGrace
	}
	if o.MaxMessageBytes == 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
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
	if o.MaxDecodedRecordBytes == 0 {
		o.MaxDecodedRecordBytes = min(4*int64(o.MaxMessageBytes), o.MaxDecodedMessageBytes)
	}
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

// Stats are counters over the server's life.
type Stats struct {
	Streams   int64 // streams that passed validation
	Rotations int64 // close-stream signals sent
	Dropped   int64 // streams aborted by DropStreamAfter
	Records   int64 // records stored
}

// Server is a Zerobus-compatible ingest server: the EphemeralStream gRPC
// service and the Arrow Flight DoPut variant on one endpoint. It stores
// records durably per table and acknowledges them cumulatively after fsync.
//
// Use New, then Serve (possibly on several listeners), then Stop. All
// methods are safe for concurrent use.
type Server struct {
	zerobuspb.UnimplementedZerobusServer
	opts   Options
	tables map[string]bool
	store  *store
	grpc   *grpc.Server

	wg       sync.WaitGroup // sync loop and per-stream goroutines
	stop     chan struct{}
	stopOnce sync.Once
	stopErr  error

	streamSeq  atomic.Uint64
	stats      struct{ streams, rotations, dropped, records atomic.Int64 }
	syncRounds atomic.Int64 // sync loop rounds done; read by tests

	pending   limits.PendingBudget
	decodeMem memory.Allocator // opts.Allocator behind MaxDecodedBufferSize
	conns     *limits.ConnLimiter
}

// New validates opts, opens the data directory and starts the sync loop.
func New(opts Options) (*Server, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	o := opts
	o.withDefaults()
	st, err := newStore(o.Dir, o.Logger)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, store: st, stop: make(chan struct{}),
		decodeMem: limits.BoundedAllocator{Allocator: o.Allocator, Max: o.MaxDecodedBufferSize},
		conns:     limits.NewConnLimiter(o.MaxConnections)}
	s.pending.Max = o.MaxPendingBytes
	if len(o.Tables) > 0 {
		s.tables = make(map[string]bool, len(o.Tables))
		for _, t := range o.Tables {
			s.tables[t] = true
		}
	}
	sopts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(o.MaxMessageBytes),
		grpc.MaxSendMsgSize(o.MaxMessageBytes),
		grpc.ChainStreamInterceptor(limits.NewPeerLimiter(o.MaxStreamsPerPeer).StreamInterceptor(o.Logger.Warn)),
		// Stop waits on s.wg, which a running handler still Adds to (its
		// receive goroutine, every SendWithin): grpc.Stop must return only
		// once every handler has, or Add races Wait (as flight/receiver).
		grpc.WaitForHandlers(true),
	}
	sopts = append(sopts, limits.ConnOptions(o.MaxConnectionIdle)...)
	if o.TLS != nil {
		sopts = append(sopts, grpc.Creds(credentials.NewTLS(o.TLS)))
	}
	s.grpc = grpc.NewServer(sopts...)
	zerobuspb.RegisterZerobusServer(s.grpc, s)
	flight.RegisterFlightServiceServer(s.grpc, &flightService{srv: s})
	s.wg.Add(1)
	go s.syncLoop()
	return s, nil
}

// Serve accepts connections on lis until Stop, at most
// Options.MaxConnections at once over all listeners. It returns nil after
// Stop.
func (s *Server) Serve(lis net.Listener) error {
	err := s.grpc.Serve(s.conns.Listener(lis))
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Stop ends every stream (clients see Unavailable), waits for the server's
// goroutines, syncs and closes the table files. Records that were written
// but not yet acknowledged are kept: clients replay them, producing
// duplicates, never gaps. Stop is idempotent.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.grpc.Stop()
		close(s.stop)
		s.wg.Wait()
		s.stopErr = s.store.close()
	})
	return s.stopErr
}

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats {
	return Stats{
		Streams:   s.stats.streams.Load(),
		Rotations: s.stats.rotations.Load(),
		Dropped:   s.stats.dropped.Load(),
		Records:   s.stats.records.Load(),
	}
}

// Dir is the data directory (read tables with ReadTable).
func (s *Server) Dir() string { return s.opts.Dir }

func (s *Server) syncLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.opts.SyncInterval)
	defer t.Stop()
	// A failed table stays failed (sticky) and syncAll reports it on every
	// tick: log it once, then every 30 s, not 100 times a second.
	failed := &errlog.Throttle{Log: s.opts.Logger,
		What: "zerobus server: sync failed; the table stays unwritable until the server restarts (free space first if the disk is full)"}
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if err := s.store.syncAll(); err != nil {
				failed.Fail(err, "no_space", diskstatus.NoSpace(err))
			}
			s.syncRounds.Add(1)
		}
	}
}

// authorize checks the headers common to both protocols and returns the
// table the stream writes to. A rejection is logged with its reason, never
// with the presented credentials.
func (s *Server) authorize(ctx context.Context) (string, error) {
	table, err := s.checkHeaders(ctx)
	if err != nil {
		s.opts.Logger.Warn("zerobus server: stream rejected", "peer", limits.PeerHost(ctx),
			"code", status.Code(err).String(), "reason", status.Convert(err).Message())
	}
	return table, err
}

func (s *Server) checkHeaders(ctx context.Context) (string, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	if s.opts.Token != "" {
		auth := first(md, HeaderAuthorization)
		if auth == "" {
			return "", status.Error(codes.Unauthenticated, "missing authorization header")
		}
		tok, ok := strings.CutPrefix(auth, bearer.Scheme+" ")
		if !ok {
			return "", status.Error(codes.Unauthenticated, `authorization header is not "Bearer <token>"`)
		}
		if subtle.ConstantTimeCompare([]byte(tok), []byte(s.opts.Token)) != 1 {
			return "", status.Error(codes.Unauthenticated, "invalid bearer token")
		}
	}
	table := first(md, HeaderTableName)
	if table == "" {
		return "", status.Errorf(codes.InvalidArgument, "missing %s header", HeaderTableName)
	}
	if !validTableName(table) {
		return "", status.Errorf(codes.InvalidArgument, "%s header: %q is not a catalog.schema.table name", HeaderTableName, table)
	}
	if s.tables != nil && !s.tables[table] {
		return "", status.Errorf(codes.NotFound, "table %s does not exist", table)
	}
	return table, nil
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// dropNow reports whether a stream that has received records records must
// be dropped now (fault injection), and consumes one unit of the budget.
func (s *Server) dropNow(records int) bool {
	if s.opts.DropStreamAfter <= 0 || records < s.opts.DropStreamAfter {
		return false
	}
	for {
		n := s.stats.dropped.Load()
		if s.opts.DropStreams > 0 && n >= int64(s.opts.DropStreams) {
			return false
		}
		if s.stats.dropped.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (s *Server) newStreamID() string {
	return fmt.Sprintf("thalweg-zb-%d", s.streamSeq.Add(1))
}

// budgets are o's memory bounds in the form both servers derive and check
// them (limits.Budgets).
func (o *Options) budgets() limits.Budgets {
	return limits.Budgets{MaxMessage: o.MaxMessageBytes, Pending: o.MaxPendingBytes, StreamPending: o.MaxStreamPendingBytes,
		DecodedMessage: o.MaxDecodedMessageBytes, DecodedBuffer: o.MaxDecodedBufferSize}
}
