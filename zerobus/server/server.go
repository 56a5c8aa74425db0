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

	"github.com/thalweg/thalweg/internal/diskstatus"
	"github.com/thalweg/thalweg/internal/errlog"
	"github.com/thalweg/thalweg/internal/limits"
	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

// Header names of the Zerobus protocol (gRPC metadata keys are lower case).
const (
	HeaderAuthorization = "authorization"
	HeaderTableName     = "x-databricks-zerobus-table-name"
)

// DefaultMaxMessageBytes is the service's per-message limit (10 MiB).
const DefaultMaxMessageBytes = 10 << 20

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
	// only for synced records. Default 10ms.
	SyncInterval time.Duration
	// RotateEvery, when positive, makes the server send a close-stream signal
	// this long after a stream opened, and end the stream RotateGrace later.
	RotateEvery time.Duration
	// RotateGrace is the duration announced in the close-stream signal.
	// Default 2s.
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
	// Allocator backs decoded Flight batches. Default memory.DefaultAllocator.
	Allocator memory.Allocator
	// Logger receives stream lifecycle events. Default: discard.
	Logger *slog.Logger
}

func (o *Options) withDefaults() (Options, error) {
	c := *o
	if c.Dir == "" {
		return c, errors.New("zerobus server: Options.Dir is required")
	}
	if c.SyncInterval < 0 || c.RotateEvery < 0 || c.RotateGrace < 0 || c.AckDelay < 0 {
		return c, errors.New("zerobus server: Options durations must not be negative")
	}
	if c.DropStreamAfter < 0 || c.DropStreams < 0 || c.MaxMessageBytes < 0 ||
		c.MaxStreamsPerPeer < 0 || c.MaxPendingBytes < 0 || c.MaxDecodedBufferSize < 0 {
		return c, errors.New("zerobus server: Options counts must not be negative")
	}
	for _, t := range c.Tables {
		if !validTableName(t) {
			return c, fmt.Errorf("zerobus server: Options.Tables: invalid table name %q", t)
		}
	}
	if c.SyncInterval == 0 {
		c.SyncInterval = 10 * time.Millisecond
	}
	if c.RotateGrace == 0 {
		c.RotateGrace = 2 * time.Second
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.Allocator == nil {
		c.Allocator = memory.DefaultAllocator
	}
	if c.MaxStreamsPerPeer == 0 {
		c.MaxStreamsPerPeer = DefaultMaxStreamsPerPeer
	}
	if c.MaxPendingBytes == 0 {
		c.MaxPendingBytes = DefaultMaxPendingBytes
	}
	if c.MaxPendingBytes < int64(c.MaxMessageBytes) {
		return c, fmt.Errorf("zerobus server: Options.MaxPendingBytes %d is below MaxMessageBytes %d", c.MaxPendingBytes, c.MaxMessageBytes)
	}
	if c.MaxDecodedBufferSize == 0 {
		c.MaxDecodedBufferSize = max(4*c.MaxMessageBytes, minMaxDecodedBufferSize)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
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

	streamSeq atomic.Uint64
	stats     struct{ streams, rotations, dropped, records atomic.Int64 }

	pending   limits.PendingBudget
	decodeMem memory.Allocator // opts.Allocator behind MaxDecodedBufferSize
}

// New validates opts, opens the data directory and starts the sync loop.
func New(opts Options) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	st, err := newStore(o.Dir)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, store: st, stop: make(chan struct{}),
		decodeMem: limits.BoundedAllocator{Allocator: o.Allocator, Max: o.MaxDecodedBufferSize}}
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
	}
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

// Serve accepts connections on lis until Stop. It returns nil after Stop.
func (s *Server) Serve(lis net.Listener) error {
	err := s.grpc.Serve(lis)
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
		tok, ok := strings.CutPrefix(auth, "Bearer ")
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
