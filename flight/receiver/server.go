package receiver

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/atomicfile"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/limits"
)

// Server is the durable Flight receiver. Create it with New, serve with
// Serve, stop with Stop or GracefulStop (each exactly once).
//
// Goroutines: gRPC's per-RPC goroutines, one ack goroutine per DoPut
// stream, and one committer goroutine per dataset. Stop order: the gRPC
// server stops (and, with WaitForHandlers, waits for every handler and its
// ack goroutine to return), then each dataset syncs what it has and closes
// its files, then the directory lock is released.
type Server struct {
	flight.BaseFlightServer

	opts     Options
	grpc     *grpc.Server
	lock     io.Closer
	tokenSum [32]byte
	peers    *limits.PeerLimiter
	pending  limits.PendingBudget
	// decodeMem is opts.Allocator behind the MaxDecodedBufferSize check.
	decodeMem memory.Allocator
	conns     *limits.ConnLimiter
	// puts tracks DoPut's receive goroutines, which can outlive their
	// handler by the moment gRPC takes to cancel the stream.
	puts sync.WaitGroup
	// stats are the idempotent append counters (Stats).
	stats struct {
		droppedRows, droppedBatches, filtered, unchecked atomic.Int64
	}

	mu struct {
		sync.Mutex
		datasets map[string]*dataset
		lis      net.Listener
		stopped  bool
	}
}

// New validates opts, locks opts.Dir and recovers every dataset in it
// (discarding torn tails), then returns a Server ready to Serve.
func New(opts Options) (*Server, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.withDefaults()
	fs := opts.FS
	if err := fs.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("receiver: %w", err)
	}
	// Dir's own entry must survive a crash before any dataset in it can.
	if err := atomicfile.SyncDir(fs, fs.PathDir(opts.Dir)); err != nil {
		return nil, fmt.Errorf("receiver: %w", err)
	}
	lock, err := fs.Lock(fs.PathJoin(opts.Dir, "LOCK"))
	if err != nil {
		return nil, fmt.Errorf("receiver: locking %s (is another receiver using it?): %w", opts.Dir, err)
	}
	s := &Server{
		opts: opts, lock: lock, tokenSum: sha256.Sum256([]byte(opts.Token)),
		peers:     limits.NewPeerLimiter(opts.MaxStreamsPerPeer),
		decodeMem: limits.BoundedAllocator{Allocator: opts.Allocator, Max: opts.MaxDecodedBufferSize},
		conns:     limits.NewConnLimiter(opts.MaxConnections),
	}
	s.pending.Max = opts.MaxPendingBytes
	s.mu.datasets = make(map[string]*dataset)
	names, err := fs.List(opts.Dir)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("receiver: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		if !isDatasetDir(fs, opts.Dir, name) {
			continue // LOCK, or a dataset directory whose creation did not complete
		}
		d, err := openDataset(fs, opts.Dir, name, &s.opts)
		if err != nil {
			s.closeDatasets()
			lock.Close()
			return nil, fmt.Errorf("receiver: recovering dataset %s: %w", name, err)
		}
		s.mu.datasets[name] = d
	}

	gopts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(opts.MaxMessageSize),
		grpc.MaxSendMsgSize(opts.MaxMessageSize),
		grpc.ChainUnaryInterceptor(s.unaryAuth),
		grpc.ChainStreamInterceptor(s.streamAuth),
		grpc.WaitForHandlers(true),
		// The transport's buffers are not zeroed before reuse (gRPC
		// overwrites what it reads), and a DoPut FlightData is decoded
		// in place over one copy of the message (flightwire.ServerCodec).
		experimental.BufferPool(flightwire.Pool),
		grpc.ForceServerCodecV2(flightwire.ServerCodec{}),
		grpc.ReadBufferSize(flightwire.ReadBufferSize),
	}
	gopts = append(gopts, limits.ConnOptions(opts.MaxConnectionIdle)...)
	if opts.TLSConfig != nil {
		gopts = append(gopts, grpc.Creds(credentials.NewTLS(opts.TLSConfig)))
	}
	s.grpc = grpc.NewServer(gopts...)
	flight.RegisterFlightServiceServer(s.grpc, s)
	return s, nil
}

// Serve accepts connections on lis until Stop or GracefulStop, at most
// Options.MaxConnections at once.
func (s *Server) Serve(lis net.Listener) error {
	s.mu.Lock()
	s.mu.lis = lis
	s.mu.Unlock()
	return s.grpc.Serve(s.conns.Listener(lis))
}

// PendingBytes is the server's MaxPendingBytes budget in use: received bytes
// not yet durable and the decoded size of messages being decoded.
func (s *Server) PendingBytes() int64 { return s.pending.Pending() }

// Connections is the number of open client connections.
func (s *Server) Connections() int64 { return s.conns.Active() }

// Addr is the address Serve listens on, or nil before Serve.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.lis == nil {
		return nil
	}
	return s.mu.lis.Addr()
}

// Stop cancels every RPC, waits for the handlers to return, syncs and
// closes every dataset and releases the directory lock.
func (s *Server) Stop() error { return s.stop(s.grpc.Stop) }

// GracefulStop stops accepting RPCs, waits for the running ones to finish
// (DoPut streams end when their clients close them), then shuts down like
// Stop.
func (s *Server) GracefulStop() error { return s.stop(s.grpc.GracefulStop) }

func (s *Server) stop(grpcStop func()) error {
	s.mu.Lock()
	if s.mu.stopped {
		s.mu.Unlock()
		return nil
	}
	s.mu.stopped = true
	s.mu.Unlock()
	grpcStop()
	s.puts.Wait()
	err := s.closeDatasets()
	if cerr := s.lock.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Server) closeDatasets() error {
	s.mu.Lock()
	ds := slices.Collect(maps.Values(s.mu.datasets))
	s.mu.Unlock()
	var errs []error
	for _, d := range ds {
		if err := d.close(); err != nil {
			errs = append(errs, fmt.Errorf("dataset %s: %w", d.name, err))
		}
	}
	return errors.Join(errs...)
}

// dataset returns the dataset of path, creating it when create is set.
func (s *Server) dataset(path []string, create bool) (*dataset, error) {
	name, err := dirName(path)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.stopped {
		return nil, status.Error(codes.Unavailable, "receiver is stopping")
	}
	if d, ok := s.mu.datasets[name]; ok {
		return d, nil
	}
	if !create {
		return nil, status.Errorf(codes.NotFound, "no dataset %q", strings.Join(path, "/"))
	}
	d, err := createDataset(s.opts.FS, s.opts.Dir, name, path, &s.opts)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "creating dataset: %v", err)
	}
	s.mu.datasets[name] = d
	return d, nil
}
