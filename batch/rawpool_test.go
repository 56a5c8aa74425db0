package batch_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
)

// countingAllocator counts the allocations that reach the wrapped
// allocator.
type countingAllocator struct {
	memory.Allocator
	allocs atomic.Int64
}

func (c *countingAllocator) Allocate(n int) []byte {
	c.allocs.Add(1)
	return c.Allocator.Allocate(n)
}

func (c *countingAllocator) Reallocate(n int, b []byte) []byte {
	c.allocs.Add(1)
	return c.Allocator.Reallocate(n, b)
}

// TestRawSteadyStreamAllocatesNothing: once the batches of a steady stream
// are released as they come, the next batches are made of their buffers.
func TestRawSteadyStreamAllocatesNothing(t *testing.T) {
	mem := &countingAllocator{Allocator: checkedMem(t)}
	const rows = 1000
	batches := 0
	var atBatch3 int64
	a, err := batch.NewAssembler(batch.AssemblerOptions{
		Allocator: mem, MaxRows: rows, Linger: noLinger,
		Emit: func(b *batch.Batch) {
			if batches++; batches == 3 {
				atBatch3 = mem.allocs.Load()
			}
			b.Release()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Close() }()
	rec := rawRec(0, 0)
	rec.Key, rec.EventTime, rec.Props = []byte("key"), epoch, map[string]string{"a": "1", "b": "22"}
	rec.Payload = make([]byte, 100)
	for range 10 * rows {
		rec.Seq++
		if err := a.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	if batches != 10 {
		t.Fatalf("%d batches, want 10", batches)
	}
	// The first batch grows its buffers, the second is sized from the
	// first: from the third on every buffer is a released one.
	if n := mem.allocs.Load() - atBatch3; n != 0 {
		t.Fatalf("batches 4 to 10 allocated %d buffers, want none", n)
	}
}

// TestRawBuffersReusedSafely checks every value of every batch (random
// records: nulls, changing property sets, payloads of varying size) while
// most batches are released at once — from other goroutines, so their
// buffers return to the pool concurrently with assembly — and their memory,
// dirty (poisoned under -race), makes the next batches. Every fifth batch is
// held to the end and checked again then: reuse must never touch memory a
// batch still references, whether it is released before or after Close.
func TestRawBuffersReusedSafely(t *testing.T) {
	mem := checkedMem(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var want []batch.Record
	type held struct {
		b    *batch.Batch
		want []batch.Record
	}
	var (
		kept    []held
		emitted int
		rows    int
		wg      sync.WaitGroup
	)
	releases := make(chan *batch.Batch)
	for range 2 {
		wg.Go(func() {
			for b := range releases {
				b.Release()
			}
		})
	}
	a, err := batch.NewAssembler(batch.AssemblerOptions{
		Allocator: mem, MaxRows: 200, Linger: noLinger,
		Emit: func(b *batch.Batch) {
			n := int(b.NumRows())
			w := want[rows : rows+n]
			rows += n
			checkRawBatch(t, b.Rec, w)
			if emitted++; emitted%5 == 0 {
				kept = append(kept, held{b, w})
				return
			}
			releases <- b
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	propSets := [][]string{{"source", "partition", "mode"}, {"a"}, {"x", "b", "a", "c", "d", "e", "f", "g", "h", "i"}, nil}
	var seq uint64
	for i := range 5000 {
		seq++
		r := batch.Record{
			Partition: pn(int32(i % 3)), Seq: seq,
			ID:      fmt.Appendf(nil, "id-%d", i),
			Key:     fmt.Appendf(nil, "k%d", rng.IntN(100)),
			Payload: bytes.Repeat([]byte{byte(i)}, rng.IntN(150)+rng.IntN(150)*(i/1000)),
		}
		r.EventTime = epoch.Add(time.Duration(i) * time.Millisecond)
		r.PublishTime = r.EventTime.Add(time.Microsecond)
		if rng.IntN(3) == 0 {
			r.Key = nil
		}
		if rng.IntN(4) == 0 {
			r.PublishTime = time.Time{}
		}
		if rng.IntN(5) == 0 {
			r.EventTime = time.Time{}
		}
		set := propSets[0]
		if rng.IntN(8) == 0 {
			set = propSets[rng.IntN(len(propSets))]
		}
		if set != nil {
			r.Props = map[string]string{}
			for _, k := range set {
				r.Props[k] = strings.Repeat(k, rng.IntN(4))
			}
		}
		want = append(want, r)
		if err := a.Add(&r); err != nil {
			t.Fatal(err)
		}
	}
	for i, h := range kept { // half released before Close, half after
		if i%2 == 0 {
			checkRawBatch(t, h.b.Rec, h.want)
			h.b.Release()
		}
	}
	_ = a.Close()
	close(releases)
	wg.Wait()
	for i, h := range kept {
		if i%2 == 1 {
			checkRawBatch(t, h.b.Rec, h.want)
			h.b.Release()
		}
	}
	if rows != len(want) {
		t.Fatalf("batches held %d rows, added %d", rows, len(want))
	}
	// checkedMem asserts at cleanup that nothing is left allocated.
}
