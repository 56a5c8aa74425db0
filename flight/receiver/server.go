package receiver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
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
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/atomicfile"
	"github.com/thalweg/thalweg/internal/bearer"
	"github.com/thalweg/thalweg/internal/diskstatus"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/ipcguard"
	"github.com/thalweg/thalweg/internal/limits"
	"github.com/thalweg/thalweg/internal/schemaevo"
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

// ---- authentication ----

func (s *Server) authorize(ctx context.Context) error {
	if s.opts.Token == "" {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(bearer.Header)
	if len(vals) == 0 {
		return status.Error(codes.Unauthenticated, "missing authorization metadata (want: Bearer <token>)")
	}
	tok, ok := bearer.Token(vals[0])
	if !ok {
		return status.Error(codes.Unauthenticated, "authorization metadata is not a Bearer token")
	}
	// Comparing digests keeps the comparison constant-time in the token
	// length too.
	sum := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare(sum[:], s.tokenSum[:]) != 1 {
		return status.Error(codes.Unauthenticated, "invalid bearer token")
	}
	return nil
}

func (s *Server) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := s.authorize(ctx); err != nil {
		s.logAuthFailure(ctx, info.FullMethod, err)
		return nil, err
	}
	return h(ctx, req)
}

// streamAuth authenticates a streaming RPC, then holds one of its peer's
// stream slots (Options.MaxStreamsPerPeer) for the RPC's duration.
func (s *Server) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx := ss.Context()
	if err := s.authorize(ctx); err != nil {
		s.logAuthFailure(ctx, info.FullMethod, err)
		return err
	}
	release, err := s.peers.Acquire(ctx)
	if err != nil {
		s.opts.Logger.Warn("receiver: stream refused", "peer", peerAddr(ctx), "method", info.FullMethod, "err", err)
		return err
	}
	defer release()
	return h(srv, ss)
}

// logAuthFailure records a rejected request. It logs the reason, never the
// presented credentials.
func (s *Server) logAuthFailure(ctx context.Context, method string, err error) {
	s.opts.Logger.Warn("receiver: unauthenticated request", "peer", peerAddr(ctx), "method", method, "reason", status.Convert(err).Message())
}

// ---- datasets ----

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

// ---- DoPut ----

// putReader feeds the DoPut stream to an ipc.Reader and keeps the raw
// FlightData of the latest message, which is what gets stored.
type putReader struct {
	stream flight.FlightService_DoPutServer
	// first is the schema message, kept (never released) for the
	// stream's life; last is the latest message, whose reference put
	// holds until it stored or refused the batch.
	first    *flightwire.ReceivedData
	last     *flightwire.ReceivedData
	n        int
	recvErr  error // transport failure (not io.EOF)
	protoErr error // malformed message
	limitErr error // a limit refused the message (a status)

	budget   *limits.StreamBudget
	maxCost  int64 // Options.MaxDecodedMessageBytes
	decoding int64 // budget held for the latest message's decoding
}

// releaseDecoding gives back the decode reservation of the latest message:
// arrow-go's reader releases a batch before it asks for the next message,
// and DoPut keeps only the raw bytes.
func (r *putReader) releaseDecoding() {
	r.budget.Release(r.decoding)
	r.decoding = 0
}

func (r *putReader) Retain()  {}
func (r *putReader) Release() {}

func (r *putReader) Message() (msg *ipc.Message, err error) {
	r.releaseDecoding()
	fd := new(flightwire.ReceivedData)
	err = r.stream.RecvMsg(fd)
	if err != nil {
		if !errors.Is(err, io.EOF) {
			r.recvErr = err
		}
		return nil, err
	}
	r.n++
	if r.first == nil {
		r.first = fd
	}
	r.last = fd
	if len(fd.DataHeader) == 0 {
		r.protoErr = fmt.Errorf("message %d carries no IPC header (metadata-only FlightData is not accepted)", r.n)
		return nil, r.protoErr
	}
	defer func() {
		if p := recover(); p != nil {
			r.protoErr = fmt.Errorf("message %d: garbled IPC header: %v", r.n, p)
			msg, err = nil, r.protoErr
		}
	}()
	// arrow-go trusts the counts a header declares; check them first so a
	// hostile header is an InvalidArgument, not a fatal out-of-memory.
	if err := ipcguard.CheckMessage(fd.DataHeader, len(fd.DataBody)); err != nil {
		r.protoErr = fmt.Errorf("message %d: %w", r.n, err)
		return nil, r.protoErr
	}
	msg = ipc.NewMessage(memory.NewBufferBytes(fd.DataHeader), memory.NewBufferBytes(fd.DataBody))
	want := ipc.MessageRecordBatch
	if r.n == 1 {
		want = ipc.MessageSchema
	}
	if got := msg.Type(); got != want {
		r.protoErr = fmt.Errorf("message %d is a %v message, want %v", r.n, got, want)
		return nil, r.protoErr
	}
	if bl := msg.BodyLen(); bl != int64(len(fd.DataBody)) {
		r.protoErr = fmt.Errorf("message %d: header declares a %d-byte body, FlightData has %d bytes", r.n, bl, len(fd.DataBody))
		return nil, r.protoErr
	}
	if want == ipc.MessageRecordBatch {
		// Bound what decoding may allocate (decompressed buffers, rows)
		// before the reader allocates any of it.
		cost, err := r.budget.ReserveMessage(fd.DataHeader, fd.DataBody, r.maxCost)
		if err != nil {
			r.limitErr = status.Errorf(status.Code(err), "message %d: %s", r.n, status.Convert(err).Message())
			return nil, r.limitErr
		}
		r.decoding = cost
	}
	return msg, nil
}

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// DoPut stores the stream's batches and acknowledges them cumulatively once
// durable. See the package documentation for the protocol.
//
// The stream is served by put on its own goroutine, so that the handler can
// end the stream while put is blocked receiving: when an acknowledgement is
// not taken by the client within Options.AckSendTimeout, the handler returns
// the acker's status and gRPC cancels the stream's context, which ends
// put's Recv and the blocked Send.
func (s *Server) DoPut(stream flight.FlightService_DoPutServer) error {
	stalled := make(chan error, 1)
	done := make(chan error, 1)
	s.puts.Add(1)
	go func() {
		defer s.puts.Done()
		done <- s.put(stream, stalled)
	}()
	select {
	case err := <-done:
		return err
	case err := <-stalled:
		s.opts.Logger.Warn("receiver: DoPut stream ended: the client does not read its acknowledgements",
			"peer", peerAddr(stream.Context()), "timeout", s.opts.AckSendTimeout)
		return err
	}
}

func (s *Server) put(stream flight.FlightService_DoPutServer, stalled chan<- error) (err error) {
	ctx := stream.Context()
	budget := limits.NewStreamBudget(&s.pending, s.opts.MaxStreamPendingBytes)
	pr := &putReader{stream: stream, budget: budget, maxCost: s.opts.MaxDecodedMessageBytes}
	defer pr.releaseDecoding()
	rdr, err := ipc.NewReaderFromMessageReader(pr, ipc.WithAllocator(s.decodeMem))
	if err != nil {
		switch {
		case pr.recvErr != nil:
			return pr.recvErr
		case pr.protoErr != nil:
			return invalid("%v", pr.protoErr)
		case pr.n == 0:
			return nil // the client closed without sending anything
		default:
			return invalid("first message: not a valid schema: %v", err)
		}
	}
	defer rdr.Release()

	desc := pr.first.GetFlightDescriptor()
	if desc == nil || desc.Type != flight.DescriptorPATH {
		return invalid("the first message must carry a PATH FlightDescriptor naming the dataset")
	}
	schema := rdr.Schema()
	if flightwire.HasDictionary(schema) {
		return invalid("dictionary-encoded fields are not supported")
	}
	ds, err := s.dataset(desc.Path, true)
	if err != nil {
		return err
	}
	claim, err := ds.claimSchema(schema, pr.first.DataHeader)
	if err != nil {
		if errors.Is(err, schemaevo.ErrIncompatible) {
			// Logged here, as the deferred log below is not set up yet: the
			// client may not show the status, and this line is then the
			// operator's only one naming the field (docs/operations.md).
			err = schemaRefused(desc.Path, err)
			ds.log.Warn("receiver: DoPut stream ended with an error", "peer", peerAddr(ctx), "err", err)
			return err
		}
		return diskstatus.Error("dataset storage", err)
	}
	log := ds.log.With("peer", peerAddr(ctx))

	ack := newAcker(ds, stream, budget, s.opts.AckSendTimeout, stalled)
	ackCtx, cancelAck := context.WithCancel(ctx)
	go ack.run(ackCtx)
	// reserved counts this stream's bytes taken from s.pending; the acker
	// gives back those of acknowledged batches, the rest is given back when
	// the stream ends (stored batches are no longer held in memory, and a
	// discarded split batch never will be).
	var reserved int64
	defer func() {
		<-ack.done
		budget.Release(reserved - ack.released.Load())
	}()
	defer func() {
		if err != nil {
			cancelAck()
			<-ack.done
			log.Warn("receiver: DoPut stream ended with an error", "err", err)
			return
		}
		ack.finish()
		<-ack.done
		cancelAck()
		err = ack.err
	}()

	var (
		last       uint64
		any        bool
		group      []pendingBatch
		groupBytes int64 // reserved bytes of group
		n          int
		records    uint64
	)
	for rdr.Next() {
		n++
		fd := pr.last
		rec := rdr.RecordBatch()
		m, err := flightwire.ParseBatchMeta(fd.AppMetadata)
		if err != nil {
			return invalid("batch %d: %v", n, err)
		}
		if err := ipcguard.ValidateBatch(rec); err != nil {
			return invalid("batch %d: %v", n, err)
		}
		size := int64(len(fd.DataHeader) + len(fd.DataBody))
		if err := budget.Reserve(size); err != nil {
			return status.Errorf(codes.ResourceExhausted, "batch %d: %s", n, status.Convert(err).Message())
		}
		reserved += size
		if len(group) > 0 {
			g := group[0]
			if m.OffsetID != g.offset || m.Parts != int(g.parts) || m.Part != len(group) {
				return invalid("batch %d: expected part %d of %d of offset %d, got part %d of %d of offset %d",
					n, len(group), g.parts, g.offset, m.Part, m.Parts, m.OffsetID)
			}
		} else {
			if any && m.OffsetID <= last {
				return invalid("batch %d: offset_id %d is not greater than the previous %d", n, m.OffsetID, last)
			}
			if m.Parts > 1 && m.Part != 0 {
				return invalid("batch %d: split batch offset %d starts at part %d", n, m.OffsetID, m.Part)
			}
		}
		groupBytes += size
		group = append(group, pendingBatch{
			meta: fd.DataHeader, body: fd.DataBody, ref: fd, rows: rec.NumRows(), offset: m.OffsetID,
			spans: m.Spans, part: int32(m.Part), parts: int32(m.Parts),
		})
		if m.Parts > 1 && m.Part < m.Parts-1 {
			continue
		}
		last, any = m.OffsetID, true
		var rows uint64
		for _, b := range group {
			rows += uint64(b.rows)
		}
		var ord *order
		if m.Ordered {
			ord = &order{schemaMsg: pr.first.DataHeader, mem: s.decodeMem}
		}
		res, err := ds.append(group, &claim, ord)
		if err != nil {
			if errors.Is(err, schemaevo.ErrIncompatible) {
				return schemaRefused(desc.Path, err) // another stream stored an incompatible schema first
			}
			if errors.Is(err, errFilter) {
				return status.Errorf(codes.Internal, "batch %d: %v", n, err)
			}
			return diskstatus.Error(fmt.Sprintf("storing batch %d", n), err)
		}
		// The messages are stored (append copied them or holds its own
		// references) or were stored before; rec, which aliases the last
		// one, is not read again. (On the error returns above, a message's
		// buffer is left to the garbage collector.)
		for _, b := range group {
			b.ref.Release()
		}
		s.count(res)
		// Rows not stored count as acknowledged: they are durable, stored
		// by an earlier batch (package flight documents ack_up_to_records).
		records += rows
		group = group[:0]
		ack.push(res.last, m.OffsetID, records, groupBytes)
		groupBytes = 0
		select {
		case <-ack.done:
			if ack.err != nil {
				return ack.err
			}
		default:
		}
	}
	switch {
	case pr.recvErr != nil:
		return pr.recvErr
	case pr.limitErr != nil:
		return pr.limitErr
	case pr.protoErr != nil:
		return invalid("%v", pr.protoErr)
	case rdr.Err() != nil:
		return invalid("batch %d: %v", n+1, rdr.Err())
	case len(group) > 0:
		return invalid("stream ended inside split batch offset %d: %d of %d parts received", group[0].offset, len(group), group[0].parts)
	}
	return nil
}

// schemaRefused is the status of a stream whose schema is incompatible
// with the dataset's: permanent (the stream will never be accepted as it
// is), naming the field, never the schemas.
func schemaRefused(path []string, err error) error {
	return invalid("dataset %q: %v", strings.Join(path, "/"), err)
}

func peerAddr(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}

// acker is a DoPut stream's ack goroutine: it watches the dataset's durable
// count and sends one cumulative PutResult whenever it covers more of the
// stream's batches.
type acker struct {
	ds       *dataset
	stream   flight.FlightService_DoPutServer
	budget   *limits.StreamBudget
	timeout  time.Duration // Options.AckSendTimeout
	stalled  chan<- error  // receives the status when a send times out (cap 1, sent once)
	released atomic.Int64  // bytes of acknowledged batches given back to budget
	kick     chan struct{}
	done     chan struct{}
	err      error // set before done is closed

	mu struct {
		sync.Mutex
		pending []ackItem
		ended   bool
	}
}

type ackItem struct {
	idx     int // dataset index of the batch's last entry
	offset  uint64
	records uint64 // cumulative rows on this stream through this batch
	bytes   int64  // pending-budget bytes the batch holds until durable
}

func newAcker(ds *dataset, stream flight.FlightService_DoPutServer, budget *limits.StreamBudget,
	timeout time.Duration, stalled chan<- error) *acker {
	return &acker{ds: ds, stream: stream, budget: budget, timeout: timeout, stalled: stalled,
		kick: make(chan struct{}, 1), done: make(chan struct{})}
}

// push queues the ack of a batch whose last entry is idx, and wakes the
// acker: the entry may have become durable (and its notification been
// consumed by the acker, with nothing pending yet) between the append and
// this push, and no later sync would come for the last batch of a stream.
func (a *acker) push(idx int, offset, records uint64, bytes int64) {
	a.mu.Lock()
	a.mu.pending = append(a.mu.pending, ackItem{idx, offset, records, bytes})
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// finish tells the acker no more batches come; it returns once everything
// pushed is acknowledged.
func (a *acker) finish() {
	a.mu.Lock()
	a.mu.ended = true
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

func (a *acker) run(ctx context.Context) {
	defer close(a.done)
	for {
		durable, notify, dsErr := a.ds.durableState()
		a.mu.Lock()
		n := 0
		var freed int64
		for n < len(a.mu.pending) && a.mu.pending[n].idx < durable {
			freed += a.mu.pending[n].bytes
			n++
		}
		if freed > 0 {
			a.budget.Release(freed)
			a.released.Add(freed)
		}
		var top ackItem
		if n > 0 {
			top = a.mu.pending[n-1]
			a.mu.pending = a.mu.pending[n:]
		}
		ended, left := a.mu.ended, len(a.mu.pending)
		a.mu.Unlock()
		if n > 0 {
			if err := a.send(flightwire.AppendAck(nil, top.offset, top.records)); err != nil {
				a.err = err
				return
			}
		}
		if left == 0 && ended {
			return
		}
		if dsErr != nil && left > 0 {
			a.err = diskstatus.Error("dataset storage", dsErr)
			return
		}
		select {
		case <-notify:
		case <-a.kick:
		case <-ctx.Done():
			a.err = status.FromContextError(ctx.Err()).Err()
			return
		}
	}
}

// send sends one ack. A send blocks while the client does not read (its
// HTTP/2 receive window closed); if it has not completed within a.timeout
// the watchdog hands DoPut's handler the Stalled status, the handler
// returns it, and gRPC cancels the stream, which ends this send.
func (a *acker) send(md []byte) error {
	if a.timeout <= 0 {
		return a.stream.Send(&flight.PutResult{AppMetadata: md})
	}
	stall := limits.Stalled(a.timeout)
	w := time.AfterFunc(a.timeout, func() { a.stalled <- stall })
	err := a.stream.Send(&flight.PutResult{AppMetadata: md})
	if !w.Stop() {
		return stall
	}
	return err
}

// ---- DoGet, ListFlights, GetFlightInfo ----

// DoGet serves the durable batches the JSON ticket selects (see Ticket),
// verified against their checksums, each with app_metadata
// {"position":i,"offset_id":N,"spans":[...]}.
//
// An Arrow IPC stream has one schema, so a DoGet stream serves one run of
// the selection: the selected batches from the first one on that share its
// schema. When selected batches of another schema follow, the last batch
// served also carries "next":P, the position of the first of them; the same
// ticket with "from":P serves the next run (Get follows it). A selection of
// nothing is served as the dataset's latest schema and no batch.
func (s *Server) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	tk, err := ParseTicket(t.GetTicket())
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	ds, err := s.dataset(tk.Path, false)
	if err != nil {
		return err
	}
	entries, segs, schemas := ds.snapshot()
	if len(schemas) == 0 {
		return status.Errorf(codes.NotFound, "dataset %q has no data yet", strings.Join(tk.Path, "/"))
	}
	if err := setAsideIn(entries, &tk); err != nil {
		return err
	}
	first, last, next := selectRun(entries, segs, &tk)
	sid := len(schemas) - 1
	if first >= 0 {
		sid = segs[entries[first].seg].schema
	}
	if err := stream.Send(&flight.FlightData{DataHeader: schemas[sid].msg}); err != nil {
		return err
	}
	var buf, md []byte
	for i := max(first, 0); first >= 0 && i <= last; i++ {
		e := &entries[i]
		if !selects(&tk, i, e) {
			continue
		}
		var meta, body []byte
		meta, body, buf, err = ds.readEntry(segs[e.seg], e, buf)
		if err != nil {
			if errors.Is(err, errCorrupt) {
				return status.Errorf(codes.DataLoss, "position %d: %v", i, err)
			}
			return status.Errorf(codes.Internal, "position %d: %v", i, err)
		}
		nx := -1
		if i == last {
			nx = next
		}
		md = appendServedMeta(md[:0], i, e, nx)
		if err := stream.Send(&flight.FlightData{DataHeader: meta, DataBody: body, AppMetadata: md}); err != nil {
			return err
		}
	}
	return nil
}

// selectRun returns the positions of the first and last selected entries of
// the first run of the selection (the selected entries that share the
// schema of the first one, up to the first that does not), and the position
// of that next one, or -1. first is -1 when nothing is selected.
func selectRun(entries []entry, segs []*segment, tk *ticket) (first, last, next int) {
	first, last, next = -1, -1, -1
	sid := -1
	for i := range entries {
		e := &entries[i]
		if !selects(tk, i, e) {
			continue
		}
		switch s := segs[e.seg].schema; {
		case first < 0:
			first, last, sid = i, i, s
		case s == sid:
			last = i
		default:
			return first, last, i
		}
	}
	return first, last, next
}

// DatasetInfo is the JSON app_metadata of a FlightInfo.
type DatasetInfo struct {
	Batches  int `json:"batches"`
	Segments int `json:"segments"`
	// Schemas counts the distinct schemas the dataset's segments have.
	Schemas    int             `json:"schemas"`
	Partitions []PartitionInfo `json:"partitions"`
}

// PartitionInfo is the stored seq range of one partition: the smallest
// First and largest Last of the stored spans, and how many spans there are.
type PartitionInfo struct {
	Partition string `json:"partition"`
	MinSeq    uint64 `json:"min_seq"`
	MaxSeq    uint64 `json:"max_seq"`
	Spans     int    `json:"spans"`
}

// flightInfo describes ds. Its schema is the dataset's latest; a dataset
// that holds batches of more than one schema gets one endpoint per run of
// positions with one schema, in stored order, each with a position-range
// ticket whose DoGet serves that run with its own schema.
func (s *Server) flightInfo(ds *dataset) (*flight.FlightInfo, error) {
	entries, segs, schemas := ds.snapshot()
	info := &flight.FlightInfo{
		FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: ds.path},
		Endpoint:         schemaEndpoints(ds.path, entries, segs),
		TotalRecords:     0,
		TotalBytes:       0,
		Ordered:          true,
	}
	// The latest schema a batch is stored with (a stream may have claimed
	// a newer one and stored nothing yet).
	schema := arrow.NewSchema(nil, nil)
	if n := len(segs); n > 0 && segs[n-1].schema < len(schemas) {
		schema = schemas[segs[n-1].schema].schema
	} else if n := len(schemas); n > 0 {
		schema = schemas[n-1].schema
	}
	info.Schema = flight.SerializeSchema(schema, memory.DefaultAllocator)
	parts := map[string]*PartitionInfo{}
	for i := range entries {
		e := &entries[i]
		info.TotalRecords += e.rows
		info.TotalBytes += e.bodyLen
		for _, sp := range e.spans {
			p, ok := parts[sp.Partition]
			if !ok {
				p = &PartitionInfo{Partition: sp.Partition, MinSeq: sp.First, MaxSeq: sp.Last}
				parts[sp.Partition] = p
			}
			p.MinSeq, p.MaxSeq = min(p.MinSeq, sp.First), max(p.MaxSeq, sp.Last)
			p.Spans++
		}
	}
	di := DatasetInfo{Batches: len(entries), Segments: len(segs), Schemas: len(schemas), Partitions: []PartitionInfo{}}
	for _, p := range parts {
		di.Partitions = append(di.Partitions, *p)
	}
	sort.Slice(di.Partitions, func(i, j int) bool { return di.Partitions[i].Partition < di.Partitions[j].Partition })
	md, err := json.Marshal(di)
	if err != nil {
		return nil, err
	}
	info.AppMetadata = md
	return info, nil
}

// schemaEndpoints is one endpoint for the whole dataset when its batches
// share one schema, and one per run of positions with one schema otherwise.
func schemaEndpoints(path []string, entries []entry, segs []*segment) []*flight.FlightEndpoint {
	endpoint := func(t ticket) *flight.FlightEndpoint {
		return &flight.FlightEndpoint{Ticket: &flight.Ticket{Ticket: t.Bytes()}}
	}
	var eps []*flight.FlightEndpoint
	from := 0
	for i := 1; i <= len(entries); i++ {
		if i < len(entries) && segs[entries[i].seg].schema == segs[entries[from].seg].schema {
			continue
		}
		lo, hi := uint64(from), uint64(i)
		eps = append(eps, endpoint(ticket{Path: path, From: &lo, To: &hi}))
		from = i
	}
	if len(eps) <= 1 {
		return []*flight.FlightEndpoint{endpoint(ticket{Path: path})}
	}
	return eps
}

// GetFlightInfo describes the dataset named by a PATH descriptor.
func (s *Server) GetFlightInfo(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if desc.GetType() != flight.DescriptorPATH {
		return nil, status.Error(codes.InvalidArgument, "only PATH descriptors name datasets")
	}
	ds, err := s.dataset(desc.Path, false)
	if err != nil {
		return nil, err
	}
	return s.flightInfo(ds)
}

// ListFlights describes every dataset, in path order. Criteria are ignored.
func (s *Server) ListFlights(_ *flight.Criteria, stream flight.FlightService_ListFlightsServer) error {
	s.mu.Lock()
	ds := slices.Collect(maps.Values(s.mu.datasets))
	s.mu.Unlock()
	sort.Slice(ds, func(i, j int) bool { return ds[i].name < ds[j].name })
	for _, d := range ds {
		info, err := s.flightInfo(d)
		if err != nil {
			return status.Errorf(codes.Internal, "%v", err)
		}
		if err := stream.Send(info); err != nil {
			return err
		}
	}
	return nil
}

// ---- positions ----

// Stats returns the idempotent append counters since New. Safe for
// concurrent use.
func (s *Server) Stats() Stats {
	return Stats{DroppedRows: s.stats.droppedRows.Load(), DroppedBatches: s.stats.droppedBatches.Load(),
		FilteredBatches: s.stats.filtered.Load(), UncheckedBatches: s.stats.unchecked.Load()}
}

// SyncStats are a Server's counters of group commit, since New, summed
// over its datasets.
type SyncStats struct {
	// Syncs counts the committers' sync rounds: each writes what its
	// dataset appended since the last one and syncs the segment and the
	// index (seals are not counted).
	Syncs int64
	// Busy is the time the committers spent in those rounds, writing and
	// syncing. Each dataset has one committer, and a batch is acknowledged
	// only after its round: a dataset whose committer is busy nearly all
	// the time (Busy grows almost as fast as the wall clock) receives as
	// fast as its disk writes, whatever the network and the senders could
	// do (BENCHMARKS.md, "commit-busy").
	Busy time.Duration
}

// SyncStats returns the group commit counters. Safe for concurrent use.
func (s *Server) SyncStats() SyncStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st SyncStats
	for _, d := range s.mu.datasets {
		st.Syncs += d.syncs.Load()
		st.Busy += time.Duration(d.syncNanos.Load())
	}
	return st
}

func (s *Server) count(r appendResult) {
	if r.dropped > 0 {
		s.stats.droppedRows.Add(r.dropped)
	}
	if !r.stored && r.dropped > 0 {
		s.stats.droppedBatches.Add(1)
	}
	if r.filtered {
		s.stats.filtered.Add(1)
	}
	if r.unchecked {
		s.stats.unchecked.Add(1)
	}
}

// ListActions lists the one action this server offers.
func (s *Server) ListActions(_ *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	return stream.Send(&flight.ActionType{Type: ActionPositions,
		Description: `highest seq stored per partition of a dataset: body {"path":[...]}, ` +
			`one result {"positions":[{"partition":"<name>","seq":N},...]}`})
}

// DoAction serves the "positions" action (documented in package flight):
// one Result with the durable positions of the dataset the body names, an
// empty list for a dataset that does not exist. Other action types are
// Unimplemented.
func (s *Server) DoAction(act *flight.Action, stream flight.FlightService_DoActionServer) error {
	if act.GetType() != ActionPositions {
		return status.Errorf(codes.Unimplemented, "unknown action %q (this server offers %q)", act.GetType(), ActionPositions)
	}
	path, err := parsePositionsRequest(act.GetBody())
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	p := positions{}
	ds, err := s.dataset(path, false)
	switch {
	case err == nil:
		p = ds.positions()
	case status.Code(err) != codes.NotFound:
		return err
	}
	return stream.Send(&flight.Result{Body: encodePositions(p)})
}
