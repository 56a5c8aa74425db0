package iceberg

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// TestCommittedTablesHoldNoPredecessor: a table the sink committed on top
// of another, by a commit or a maintenance run, does not keep the one
// before it alive. Every table the sink held is watched with a finalizer
// on its metadata; after a second of commits with maintenance every 20 ms
// and a garbage collection, all of them but the few the sink still holds
// are collected. A table whose file IO was the method value of the table
// before it (tbl.FS copies tbl) held every earlier one: its metadata, one
// a commit, grew without bound.
func TestCommittedTablesHoldNoPredecessor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := maintenanceOptions(t, mem)
	o.Ordered = true
	_, s := openDial(t, ctx, o)
	var watched, collected atomic.Int64
	var last table.Metadata
	watch := func() {
		s.mu.Lock()
		md := s.mu.tbl.Metadata()
		s.mu.Unlock()
		if md != last {
			last = md
			watched.Add(1)
			runtime.SetFinalizer(md, func(table.Metadata) { collected.Add(1) })
		}
	}
	var off uint64
	start := time.Now()
	commitUntil(t, ctx, s, mem, &off, 2000, "a second of commits", func() bool {
		watch()
		return time.Since(start) > time.Second
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	last = nil
	// The sink keeps its last table; the test's own handles are gone.
	const kept = 3
	testenv.WaitFor(t, 10*time.Second, fmt.Sprintf("all but %d of the tables the sink held to be collected", kept), func() bool {
		runtime.GC()
		if alive := watched.Load() - collected.Load(); alive > kept {
			t.Logf("%d of %d tables alive after %d commits", alive, watched.Load(), off)
			return false
		}
		return true
	})
}
