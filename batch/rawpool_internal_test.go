package batch

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestPoolClass(t *testing.T) {
	for _, tc := range []struct{ size, want int }{
		{1, 64}, {64, 64}, {65, 128}, {1024, 1024}, {1025, 1088},
		{1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 1<<16}, {8193 * 4, 32768 + 2048},
	} {
		if got := poolClass(tc.size); got != tc.want {
			t.Errorf("poolClass(%d) = %d, want %d", tc.size, got, tc.want)
		}
	}
	for size := 1; size < 1<<22; size += 1 + size/7 {
		c := poolClass(size)
		if c < size || c%64 != 0 || c-size >= max(64, size/16) {
			t.Fatalf("poolClass(%d) = %d: below, unaligned or more than 1/16 above", size, c)
		}
	}
}

func TestBufferPool(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p := newBufferPool(mem)
	addr := func(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

	// Before the first limit nothing is pooled.
	p.Free(p.Allocate(100))
	if n := mem.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes allocated after a free with no limit", n)
	}

	p.setLimit(1 << 20)
	a := p.Allocate(1000)
	if len(a) != 1000 || mem.CurrentAlloc() != 1024 {
		t.Fatalf("len %d, allocated %d; want 1000 of a 1024-byte class", len(a), mem.CurrentAlloc())
	}
	a[0] = 1
	p.Free(a)
	if mem.CurrentAlloc() != 1024 {
		t.Fatalf("a pooled buffer is no longer allocated (%d)", mem.CurrentAlloc())
	}
	b := p.Allocate(1010) // the same class: a's memory
	if addr(b) != addr(a) || len(b) != 1010 || mem.CurrentAlloc() != 1024 {
		t.Fatalf("not reused: %x vs %x, len %d, allocated %d", addr(b), addr(a), len(b), mem.CurrentAlloc())
	}
	if poisonFreed && b[0] != poison {
		t.Fatalf("freed buffer not poisoned under -race: %#x", b[0])
	}
	c := p.Allocate(2000) // another class: new memory
	if addr(c) == addr(b) || mem.CurrentAlloc() != 1024+2048 {
		t.Fatalf("allocated %d, want %d", mem.CurrentAlloc(), 1024+2048)
	}

	// Reallocate: in place within the class, else a copy.
	for i := range b {
		b[i] = byte(i)
	}
	if r := p.Reallocate(1024, b); addr(r) != addr(b) || len(r) != 1024 {
		t.Fatalf("Reallocate within the class moved or has len %d", len(r))
	}
	r := p.Reallocate(4000, b)
	if len(r) != 4000 || r[1009] != byte(1009%256) || addr(r) == addr(b) {
		t.Fatalf("Reallocate beyond the class: len %d, r[1009] = %d", len(r), r[1009])
	}
	if mem.CurrentAlloc() != 1024+2048+4096 { // b pooled, c and r in use
		t.Fatalf("allocated %d after Reallocate", mem.CurrentAlloc())
	}

	// The limit evicts the oldest first; a buffer over it is not pooled.
	p.Free(c)
	p.Free(r)
	p.setLimit(2048 + 4096)
	if mem.CurrentAlloc() != 2048+4096 {
		t.Fatalf("after lowering the limit %d bytes allocated, want the newest two buffers", mem.CurrentAlloc())
	}
	p.setLimit(1024)
	big := p.Allocate(1 << 12)
	p.Free(big)
	if mem.CurrentAlloc() != 0 {
		t.Fatalf("%d bytes allocated with a 1 KiB limit", mem.CurrentAlloc())
	}

	// close returns the pool and later frees bypass it.
	p.setLimit(1 << 20)
	held := p.Allocate(300)
	p.Free(p.Allocate(500))
	p.close()
	if mem.CurrentAlloc() != 320 {
		t.Fatalf("%d bytes allocated after close, want the held 320", mem.CurrentAlloc())
	}
	p.Free(held)
}

// TestBufferPoolConcurrent frees from other goroutines, as consumers
// releasing batches do, while the owner allocates (run with -race).
func TestBufferPoolConcurrent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p := newBufferPool(mem)
	p.setLimit(1 << 16)
	bufs := make(chan []byte, 16)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for b := range bufs {
				p.Free(b)
			}
		})
	}
	for i := range 2000 {
		b := p.Allocate(64 + i%7*512)
		b[len(b)-1] = byte(i)
		bufs <- b
	}
	close(bufs)
	wg.Wait()
	p.close()
}
