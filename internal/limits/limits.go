// Package limits holds the resource limits thalweg's servers (the Flight
// receiver and the Zerobus-compatible server) share, so that one client
// cannot exhaust a server: concurrent streams per client host, bytes
// pending durability server-wide, and the largest buffer a hostile or
// corrupt IPC message may make the decoder allocate.
//
// It stays thalweg's own: x/net/netutil.LimitListener makes a connection
// over the limit wait where ConnLimiter refuses it and counts the refusal,
// and x/sync/semaphore waits or fails without saying what is pending;
// limits per client host and arrow-go's allocator bound have no library.
package limits

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// ErrDecodeLimit is the cause of a batch rejected because decoding it would
// allocate a buffer larger than the server's decode limit (a compressed IPC
// buffer declares its uncompressed length in its first 8 bytes; a hostile or
// corrupt message can declare any length).
var ErrDecodeLimit = errors.New("declared buffer size exceeds the decode limit")

// BoundedAllocator refuses, before delegating, any allocation above Max. It
// panics with an error wrapping ErrDecodeLimit: arrow-go's IPC reader
// recovers allocator panics and returns them (wrapped with %w) as the
// reader's error, which is how the refusal reaches the stream as a precise
// InvalidArgument instead of an out-of-memory crash.
type BoundedAllocator struct {
	memory.Allocator
	Max int
}

func (a BoundedAllocator) check(n int) {
	if n < 0 || n > a.Max {
		panic(fmt.Errorf("%w: %d bytes requested, limit %d", ErrDecodeLimit, n, a.Max))
	}
}

// Allocate implements memory.Allocator.
func (a BoundedAllocator) Allocate(n int) []byte {
	a.check(n)
	return a.Allocator.Allocate(n)
}

// Reallocate implements memory.Allocator.
func (a BoundedAllocator) Reallocate(n int, b []byte) []byte {
	a.check(n)
	return a.Allocator.Reallocate(n, b)
}

// PeerLimiter counts the concurrent streams of each client host. It is
// safe for concurrent use.
type PeerLimiter struct {
	max int
	mu  struct {
		sync.Mutex
		n map[string]int
	}
}

// NewPeerLimiter allows max concurrent streams per client host.
func NewPeerLimiter(max int) *PeerLimiter {
	l := &PeerLimiter{max: max}
	l.mu.n = make(map[string]int)
	return l
}

// Acquire takes a stream slot of ctx's peer host, or fails with
// ResourceExhausted and takes nothing. The caller must call release exactly
// once.
func (l *PeerLimiter) Acquire(ctx context.Context) (release func(), err error) {
	host := PeerHost(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.n[host] >= l.max {
		return nil, status.Errorf(codes.ResourceExhausted,
			"too many concurrent streams from %s (limit %d)", host, l.max)
	}
	l.mu.n[host]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.mu.n[host]--; l.mu.n[host] == 0 {
			delete(l.mu.n, host)
		}
	}, nil
}

// StreamInterceptor holds one of the peer's slots for each stream's life;
// refusals are reported to warn (e.g. a slog.Logger's Warn).
func (l *PeerLimiter) StreamInterceptor(warn func(msg string, args ...any)) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		release, err := l.Acquire(ss.Context())
		if err != nil {
			warn("stream refused: too many concurrent streams",
				"peer", PeerHost(ss.Context()), "method", info.FullMethod, "limit", l.max)
			return err
		}
		defer release()
		return h(srv, ss)
	}
}

// PeerHost is the client's host (IP) without the port: one client opening
// many connections is still one client. Empty when ctx has no peer.
func PeerHost(ctx context.Context) string {
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

// PendingBudget is a server-wide count of received bytes that are not yet
// durable. The zero value has no room; set Max.
type PendingBudget struct {
	Max int64
	n   atomic.Int64
}

// Reserve takes n bytes of the budget, or fails with ResourceExhausted and
// takes nothing.
func (b *PendingBudget) Reserve(n int64) error {
	if v := b.n.Add(n); v > b.Max {
		b.n.Add(-n)
		return status.Errorf(codes.ResourceExhausted,
			"server has %d bytes pending durability; a %d-byte message would exceed the limit %d", v-n, n, b.Max)
	}
	return nil
}

// Release returns n bytes to the budget.
func (b *PendingBudget) Release(n int64) { b.n.Add(-n) }

// Pending is the number of bytes currently reserved.
func (b *PendingBudget) Pending() int64 { return b.n.Load() }
