package batch

import (
	"math/bits"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// bufferPool is the memory.Allocator of ModeRaw batches: it keeps the
// buffers of released batches and hands them to the next batches, so a
// steady stream of batches allocates nothing. Without it every batch
// allocates its size afresh (about 240 bytes per 100-byte record): that
// allocation rate alone drives the garbage collector, which marks the whole
// live heap each cycle, and every batch is written into cold, newly zeroed
// memory. Together that was half of BenchmarkAssembleRaw's time (a fifth
// of its instructions).
//
// Ownership: a buffer enters the pool only through Free, which Arrow calls
// when the buffer's last reference is released, so memory still referenced
// by a batch is never reused. A consumer that reads a batch after releasing
// it would now read the next batches' data instead of stale data; in builds
// with the race detector freed buffers are overwritten (poisonFreed) so that
// such a bug shows in tests rather than in production.
//
// Accounting: pooled buffers stay allocated from the wrapped allocator: a
// memory.CheckedAllocator counts them, and sees every buffer with the
// pointer and size it allocated. The pool holds at most limit bytes (see
// setLimit, about two batches); close returns them and makes later frees go
// straight to the wrapped allocator, so once the assembler is closed and
// every batch released, the wrapped allocator is back where it started.
//
// Goroutine safety: all methods may be called concurrently; consumers
// release batches, and so call Free, from any goroutine.
type bufferPool struct {
	mem memory.Allocator // the wrapped allocator, immutable

	mu struct {
		sync.Mutex
		closed bool
		// free holds the pooled buffers, oldest first, each with the length
		// mem allocated; bytes is the sum of their lengths.
		free  [][]byte
		bytes int
		limit int
	}
}

var _ memory.Allocator = (*bufferPool)(nil)

func newBufferPool(mem memory.Allocator) *bufferPool { return &bufferPool{mem: mem} }

// Allocate returns a buffer of size bytes, pooled if one of its size class
// is (the most recently freed, whose memory is likeliest still cached), else
// new from the wrapped allocator. Its contents are undefined. Its capacity
// is that of the underlying allocation, which Free relies on and callers
// must not use.
func (p *bufferPool) Allocate(size int) []byte {
	class := size
	if size > 0 {
		class = poolClass(size)
		if b := p.take(class); b != nil {
			return b[:size]
		}
	}
	b := p.mem.Allocate(class)
	return b[:size:len(b)]
}

// poolClass rounds size up to its size class: 16 classes between
// consecutive powers of two, multiples of 64 bytes. Buffers are allocated
// and matched by class, so batches of similar but unequal sizes (a data
// buffer sized from the previous batch's bytes) reuse each other's buffers,
// for at most 1/16 more memory.
func poolClass(size int) int {
	step := max(64, 1<<max(0, bits.Len(uint(size-1))-5))
	return (size + step - 1) &^ (step - 1)
}

// take removes and returns the most recently pooled buffer of class bytes,
// or nil.
func (p *bufferPool) take(class int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.mu.free) - 1; i >= 0; i-- {
		if b := p.mu.free[i]; len(b) == class {
			p.mu.free = slices.Delete(p.mu.free, i, i+1)
			p.mu.bytes -= len(b)
			return b
		}
	}
	return nil
}

// Reallocate resizes b, keeping its contents: in place when the underlying
// allocation is large enough, otherwise by copying into a new buffer.
func (p *bufferPool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free pools b, or returns it to the wrapped allocator when the pool is
// closed or b is empty or over the limit. Pooling may evict the oldest
// buffers to stay within the limit.
func (p *bufferPool) Free(b []byte) {
	b = b[:cap(b)] // the allocation as the wrapped allocator returned it
	if poisonFreed {
		for i := range b {
			b[i] = poison
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed || len(b) == 0 || len(b) > p.mu.limit {
		p.mem.Free(b)
		return
	}
	p.mu.free = append(p.mu.free, b)
	p.mu.bytes += len(b)
	p.evictLocked()
}

// setLimit bounds the pooled bytes, evicting the oldest buffers over it.
// rawColumns sets it to twice the bytes of the batch it just built: the
// buffers of one released batch make the next, and the second batch's worth
// absorbs a batch released late and sizes that vary.
func (p *bufferPool) setLimit(limit int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.limit = limit
	p.evictLocked()
}

// close returns the pooled buffers to the wrapped allocator; buffers freed
// later go straight to it. The pool remains a valid allocator.
func (p *bufferPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.closed = true
	p.mu.limit = 0
	p.evictLocked()
}

// evictLocked returns the oldest buffers to the wrapped allocator until the
// pool is within its limit.
func (p *bufferPool) evictLocked() {
	n := 0
	for ; p.mu.bytes > p.mu.limit; n++ {
		p.mu.bytes -= len(p.mu.free[n])
		p.mem.Free(p.mu.free[n])
	}
	p.mu.free = slices.Delete(p.mu.free, 0, n)
}

// poison is the byte pooled buffers are filled with when poisonFreed.
const poison = 0xa5
