package receiver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrDecodeLimit is the cause of a batch rejected because decoding it would
// allocate a buffer larger than Options.MaxDecodedBufferSize (a compressed
// IPC buffer declares its uncompressed length in its first 8 bytes; a
// hostile or corrupt message can declare any length).
var ErrDecodeLimit = errors.New("receiver: declared buffer size exceeds the decode limit")

// boundedAllocator refuses, before delegating, any allocation above max.
// arrow-go's IPC reader recovers a panicking allocator and reports the
// panic value as the reader's error (wrapped with %w), which is how the
// refusal reaches DoPut as a precise InvalidArgument instead of an
// out-of-memory crash.
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

// peerLimiter counts the concurrent streams of each client host.
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

// acquire takes a stream slot of ctx's peer host; the caller must call the
// returned release exactly once.
func (l *peerLimiter) acquire(ctx context.Context) (release func(), err error) {
	host := peerHost(ctx)
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

// peerHost is the client's host (IP) without the port: one client opening
// many connections is still one client.
func peerHost(ctx context.Context) string {
	a := peerAddr(ctx)
	if h, _, err := net.SplitHostPort(a); err == nil {
		return h
	}
	return a
}

// pendingBudget is the server-wide count of received bytes that are not yet
// durable: parts of split batches held in memory until their batch is
// complete, and stored batches awaiting their sync and ack.
type pendingBudget struct {
	max int64
	n   atomic.Int64
}

// reserve takes n bytes of the budget, or fails with ResourceExhausted and
// takes nothing.
func (b *pendingBudget) reserve(n int64) error {
	if v := b.n.Add(n); v > b.max {
		b.n.Add(-n)
		return status.Errorf(codes.ResourceExhausted,
			"receiver has %d bytes pending durability; a %d-byte message would exceed the limit %d",
			v-n, n, b.max)
	}
	return nil
}

func (b *pendingBudget) release(n int64) { b.n.Add(-n) }
