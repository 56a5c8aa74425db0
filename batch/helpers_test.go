package batch_test

import (
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/thalweg/thalweg/batch"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// checkedMem returns a checked allocator that must be empty when the test
// ends (registered first, so it runs after every other cleanup).
func checkedMem(t testing.TB) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// sink collects emitted batches and releases them at cleanup.
type sink struct {
	mu       sync.Mutex
	batches  []*batch.Batch
	rejected []rejection
}

type rejection struct {
	partition string
	seq       uint64
	reason    error
}

func newSink(t testing.TB) *sink {
	s := &sink{}
	t.Cleanup(func() {
		for _, b := range s.batches {
			b.Release()
		}
	})
	return s
}

func (s *sink) emit(b *batch.Batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, b)
}

func (s *sink) reject(rec *batch.Record, reason error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejected = append(s.rejected, rejection{rec.Partition, rec.Seq, reason})
}

func (s *sink) reasons() []batch.FlushReason {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []batch.FlushReason
	for _, b := range s.batches {
		out = append(out, b.Reason)
	}
	return out
}

// newAssembler builds an assembler on a checked allocator; it is closed at
// cleanup (before the batches are released and the allocator checked). A
// zero Linger becomes noLinger, so that only the flushes a test asks for
// happen however slowly it runs; tests of linger set it and run in a
// synctest bubble.
func newAssembler(t testing.TB, opts batch.AssemblerOptions) (*batch.Assembler, *sink) {
	t.Helper()
	if opts.Allocator == nil {
		opts.Allocator = checkedMem(t)
	}
	if opts.Linger == 0 {
		opts.Linger = noLinger
	}
	s := newSink(t)
	opts.Emit = s.emit
	opts.OnReject = s.reject
	a, err := batch.NewAssembler(opts)
	if err != nil {
		t.Fatalf("NewAssembler: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a, s
}

// noLinger is a linger no test waits out.
const noLinger = 24 * time.Hour
