package iceberg

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// TestCommitsRetainNoPastMetadata: a sink that commits on and on keeps
// the metadata of the tables it no longer uses collectable. Each commit
// parses a table's metadata anew (every retained snapshot with its
// summary); were a committed table to hold its predecessor, the heap
// would grow with the commit count, not with the table, and the memory
// bound would not hold over a long run.
func TestCommitsRetainNoPastMetadata(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := maintenanceOptions(t, mem)
	// Expiry and manifest rewriting commit too; a compaction's swap
	// loads the table afresh, which would hide a chain of commits.
	o.Maintenance.CompactMinFiles = -1
	_, s := openDial(t, ctx, o)

	const commits = 60
	var registered, collected atomic.Int64
	for off := uint64(1); off <= commits; off++ {
		b := ibatch(mem, 0, 10*(off-1)+1, 10)
		err := s.Send(ctx, off, b)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WaitDurable(ctx, off); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		md := s.mu.tbl.Metadata()
		s.mu.Unlock()
		// The metadata's concrete value is the allocation a chain of
		// tables would keep alive.
		p := (*byte)(reflect.ValueOf(md).UnsafePointer())
		registered.Add(1)
		runtime.AddCleanup(p, func(*atomic.Int64) { collected.Add(1) }, &collected)
	}
	// Cleanups run after the collection that found their object
	// unreachable, on a goroutine of their own: collect until the count
	// settles.
	testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("the metadata of at most 5 of the tables of %d commits to stay reachable", commits), func() bool {
		runtime.GC()
		return registered.Load()-collected.Load() <= 5
	})
}
