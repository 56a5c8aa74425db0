package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/ipcguard"
)

// Defaults of the resource limits in Options.
const (
	DefaultMaxStreamsPerPeer = 64
	DefaultMaxPendingBytes   = 1 << 30
	minMaxDecodedBufferSize  = 256 << 20
)

// ErrDecodeLimit is the cause of a Flight batch rejected because decoding
// it would allocate a buffer above Options.MaxDecodedBufferSize.
var ErrDecodeLimit = errors.New("zerobus server: declared buffer size exceeds the decode limit")

// boundedAllocator refuses, before delegating, allocations above max. It
// panics with an error: arrow-go's IPC reader recovers allocator panics and
// returns them (wrapped) as the reader's error.
type boundedAllocator struct {
	memory.Allocator
	max int
}

func (a boundedAllocator) check(n int) {
	if n < 0 || n > a.max {
		panic(fmt.Errorf("%w: %d bytes requested, limit %d", ErrDecodeLimit, n, a.max))
	}
}

func (a boundedAllocator) Allocate(n int) []byte {
	a.check(n)
	return a.Allocator.Allocate(n)
}

func (a boundedAllocator) Reallocate(n int, b []byte) []byte {
	a.check(n)
	return a.Allocator.Reallocate(n, b)
}

// guardedReader checks every FlightData header with ipcguard before
// arrow-go's reader sees it.
type guardedReader struct {
	flight.FlightService_DoPutServer
	n int
}

func (g *guardedReader) Recv() (*flight.FlightData, error) {
	fd, err := g.FlightService_DoPutServer.Recv()
	if err != nil {
		return nil, err
	}
	g.n++
	if err := ipcguard.CheckMessage(fd.DataHeader, len(fd.DataBody)); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "flight message %d: %v", g.n, err)
	}
	return fd, nil
}

// peerLimiter counts concurrent streams per client host.
type peerLimiter struct {
	max int
	mu  struct {
		sync.Mutex
		n map[string]int
	}
}

func newPeerLimiter(max int) *peerLimiter {
	l := &peerLimiter{max: max}
	l.mu.n = make(map[string]int)
	return l
}

func peerHost(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	a := p.Addr.String()
	if h, _, err := net.SplitHostPort(a); err == nil {
		return h
	}
	return a
}

// interceptor holds one of the peer's stream slots for the stream's life.
func (l *peerLimiter) interceptor(log func(string, ...any)) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		host := peerHost(ss.Context())
		l.mu.Lock()
		if l.mu.n[host] >= l.max {
			l.mu.Unlock()
			log("zerobus server: stream refused: too many concurrent streams", "peer", host, "method", info.FullMethod, "limit", l.max)
			return status.Errorf(codes.ResourceExhausted, "too many concurrent streams from %s (limit %d)", host, l.max)
		}
		l.mu.n[host]++
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			if l.mu.n[host]--; l.mu.n[host] == 0 {
				delete(l.mu.n, host)
			}
			l.mu.Unlock()
		}()
		return h(srv, ss)
	}
}

// pendingBudget counts, server-wide, the bytes of records stored but not
// yet acknowledged (waiting for their fsync).
type pendingBudget struct {
	max int64
	n   atomic.Int64
}

func (b *pendingBudget) reserve(n int64) error {
	if v := b.n.Add(n); v > b.max {
		b.n.Add(-n)
		return status.Errorf(codes.ResourceExhausted,
			"server has %d bytes pending durability; %d more would exceed the limit %d", v-n, n, b.max)
	}
	return nil
}

func (b *pendingBudget) release(n int64) { b.n.Add(-n) }
