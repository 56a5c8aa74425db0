package iceberg

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/icebergrest"
)

// These tests are internal: they wrap the catalog at the package's one
// injection point (hooks.catalog) to fail commits at chosen operations.

const itopic = "persistent://public/default/events"

func ipart(i int32) string { return batch.JoinPartition(itopic, i) }

// ibatch builds n rows (topic, partition, seq, v) of partition p from seq
// first on.
func ibatch(mem memory.Allocator, p int32, first uint64, n int) *batch.Batch {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "topic", Type: arrow.BinaryTypes.String},
		{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "v", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, s)
	defer b.Release()
	for i := range n {
		seq := first + uint64(i)
		b.Field(0).(*array.StringBuilder).Append(itopic)
		b.Field(1).(*array.Int32Builder).Append(p)
		b.Field(2).(*array.Uint64Builder).Append(seq)
		b.Field(3).(*array.Uint32Builder).Append(uint32(seq * 3))
	}
	return &batch.Batch{Rec: b.NewRecordBatch(),
		Spans: []batch.OffsetSpan{{Partition: ipart(p), First: first, Last: first + uint64(n) - 1}}}
}

// faultyCatalog fails chosen CommitTable calls: before (the commit does
// not happen) or after (it happens and the answer is lost).
type faultyCatalog struct {
	catalogIO
	calls  atomic.Int64
	before func(i int64) error
	after  func(i int64) error
}

func (f *faultyCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	i := f.calls.Add(1)
	if f.before != nil {
		if err := f.before(i); err != nil {
			return nil, "", err
		}
	}
	m, loc, err := f.catalogIO.CommitTable(ctx, ident, reqs, updates)
	if err == nil && f.after != nil {
		if err := f.after(i); err != nil {
			return nil, "", err
		}
	}
	return m, loc, err
}

func testOptions(t *testing.T) Options {
	dir := t.TempDir()
	return Options{
		Catalog:        CatalogOptions{URI: filepath.Join(dir, "catalog.db")},
		Warehouse:      filepath.Join(dir, "warehouse"),
		Table:          "ns.events",
		CommitInterval: 5 * time.Millisecond,
		MaxBackoff:     20 * time.Millisecond,
		Encoders:       testEncoders,
	}
}

// testEncoders is the encoders of the tests' Sinks: more than one
// whatever the machine's cores, so that every test writes a table's
// batches on several encoders (DefaultEncoders is 1 on one core).
const testEncoders = 3

func mustOpen(t *testing.T, o Options) *Table {
	t.Helper()
	tbl, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

// stored reads every row of partition p back and returns the seqs as
// stored (duplicates included), sorted.
func stored(t *testing.T, ctx context.Context, tbl *Table) []uint64 {
	t.Helper()
	it, _, err := tbl.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at, err := it.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var out []uint64
	col := at.Column(at.Schema().FieldIndices("seq")[0])
	for _, c := range col.Data().Chunks() {
		for _, v := range c.(*array.Int64).Int64Values() {
			out = append(out, uint64(v))
		}
	}
	slices.Sort(out)
	return out
}

func seqRangeOf(first, last uint64) []uint64 {
	var s []uint64
	for q := first; q <= last; q++ {
		s = append(s, q)
	}
	return s
}

// TestCommitFailureAtEveryOperation fails the i-th catalog commit (the
// table's creation and schema are commits too), once before and once
// after it took effect, for every i until a run needs no failure: every
// row is stored exactly once and every offset is durable.
func TestCommitFailureAtEveryOperation(t *testing.T) {
	errInjected := errors.New("injected: connection reset")
	for _, lost := range []bool{false, true} {
		for i := int64(1); ; i++ {
			fired := false
			t.Run(fmt.Sprintf("lost=%v/op=%d", lost, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				o := testOptions(t)
				o.Ordered = true
				o.Allocator = mem
				fail := func(n int64) error {
					if n == i {
						fired = true
						return errInjected
					}
					return nil
				}
				o.hooks.catalog = func(c catalogIO) catalogIO {
					f := &faultyCatalog{catalogIO: c}
					if lost {
						f.after = fail
					} else {
						f.before = fail
					}
					return f
				}
				tbl := mustOpen(t, o)
				s, err := tbl.Dial(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				for k := range 4 {
					b := ibatch(mem, 0, uint64(k*10+1), 10)
					if err := s.Send(ctx, uint64(k+1), b); err != nil {
						b.Release()
						t.Fatalf("Send %d: %v", k+1, err)
					}
					b.Release()
					if err := s.WaitDurable(ctx, uint64(k+1)); err != nil {
						t.Fatalf("WaitDurable %d: %v", k+1, err)
					}
				}
				if got := stored(t, ctx, tbl); !slices.Equal(got, seqRangeOf(1, 40)) {
					t.Fatalf("stored seqs = %v, want 1..40 once each", got)
				}
				p, err := tbl.Positions(ctx)
				if err != nil || p[ipart(0)] != 40 {
					t.Fatalf("Positions = %v, %v; want %s: 40", p, err, ipart(0))
				}
			})
			if !fired {
				break
			}
		}
	}
}

// TestConcurrentSinks runs two ordered sinks on one table, fed the same
// overlapping ranges (a failover replays what the other worker may have
// stored): commits conflict and are merged, no row is stored twice. It
// runs on the SQL catalog and on the Iceberg project's REST catalog
// fixture, whose server checks each commit's requirements itself.
func TestConcurrentSinks(t *testing.T) {
	t.Run("catalog=sql", func(t *testing.T) { concurrentSinks(t, testOptions(t)) })
	// The rows both write are split over the buckets: a conflict writes
	// each batch's files again without what the other committed.
	t.Run("catalog=sql/partitioned", func(t *testing.T) {
		o := testOptions(t)
		o.PartitionBy = []string{"bucket(4, seq)", "identity(partition)"}
		concurrentSinks(t, o)
	})
	t.Run("catalog=rest", func(t *testing.T) {
		srv := icebergrest.Start(t)
		o := testOptions(t)
		o.Catalog = CatalogOptions{Type: CatalogREST, URI: srv.URI}
		o.Warehouse = ""
		concurrentSinks(t, o)
	})
}

func concurrentSinks(t *testing.T, o Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o.Ordered = true
	o.Allocator = mem
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tbl, err := Open(o)
			if err != nil {
				errs <- err
				return
			}
			defer tbl.Close()
			s, err := tbl.Dial(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			// Worker w owns partition w and replays partition 2 (shared).
			for k := range 20 {
				for _, p := range []int32{int32(w), 2} {
					b := ibatch(mem, p, uint64(k*5+1), 5)
					off := uint64(k*2 + 1)
					if p == 2 {
						off++
					}
					err := s.Send(ctx, off, b)
					b.Release()
					if err != nil {
						errs <- err
						return
					}
				}
			}
			if err := s.WaitDurable(ctx, 40); err != nil {
				errs <- err
				return
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	tbl := mustOpen(t, o)
	p, err := tbl.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int32{0, 1, 2} {
		if p[ipart(i)] != 100 {
			t.Errorf("position of %s = %d, want 100", ipart(i), p[ipart(i)])
		}
		bs, err := tbl.Rebuild(ctx, ipart(i), 1, 100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, b := range bs {
			n += int(b.NumRows())
			b.Release()
		}
		if n != 100 {
			t.Errorf("partition %d: %d rows rebuilt, want 100", i, n)
		}
	}
	// Partition 2 was written by both: each row once.
	all := stored(t, ctx, tbl)
	if len(all) != 300 {
		t.Errorf("%d rows stored, want 300 (no duplicates)", len(all))
	}
}
