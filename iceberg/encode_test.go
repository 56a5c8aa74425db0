package iceberg

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestEncodersExactlyOnce: batches written by several encoders, into
// files rolled at a small target size and cut by commits every few
// milliseconds, are each committed once, in full: the table holds every
// row once (unordered too, where no commit drops a row it holds), the
// rows a WaitDurable covered are in the table when it returns, and the
// position is the last seq.
func TestEncodersExactlyOnce(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ordered     bool
		partitionBy []string
	}{
		{name: "unordered"},
		{name: "ordered", ordered: true},
		{name: "partitioned", partitionBy: []string{"bucket(4, seq)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			o := testOptions(t)
			o.Ordered, o.PartitionBy, o.Allocator = tc.ordered, tc.partitionBy, mem
			o.TargetFileSize = 4 << 10 // a file rolls every few batches
			tbl := mustOpen(t, o)
			s, err := tbl.Dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := len(s.encs); got != testEncoders {
				t.Fatalf("%d encoders, want Options.Encoders %d", got, testEncoders)
			}
			const batches, rows = 60, 50
			for k := range uint64(batches) {
				b := ibatch(mem, 0, k*rows+1, rows)
				err := s.Send(ctx, k+1, b)
				b.Release()
				if err != nil {
					t.Fatalf("Send %d: %v", k+1, err)
				}
				if k+1 == batches/2 {
					if err := s.WaitDurable(ctx, k+1); err != nil {
						t.Fatal(err)
					}
					// Later batches may be committed too; none twice.
					got := stored(t, ctx, tbl)
					want := seqRangeOf(1, (k+1)*rows)
					if len(got) < len(want) || !slices.Equal(got[:len(want)], want) || len(slices.Compact(slices.Clone(got))) != len(got) {
						t.Fatalf("after WaitDurable(%d): stored seqs %v, want 1..%d once each (and no row twice)", k+1, got, (k+1)*rows)
					}
				}
			}
			if err := s.WaitDurable(ctx, batches); err != nil {
				t.Fatal(err)
			}
			if got := stored(t, ctx, tbl); !slices.Equal(got, seqRangeOf(1, batches*rows)) {
				t.Fatalf("stored seqs = %v, want 1..%d once each", got, batches*rows)
			}
			if p, err := tbl.Positions(ctx); err != nil || p[ipart(0)] != batches*rows {
				t.Fatalf("Positions = %v, %v; want %s: %d", p, err, ipart(0), batches*rows)
			}
		})
	}
}

// TestDefaultEncoders: a Table's Sink has DefaultEncoders encoders unless
// Options.Encoders says otherwise; each table of a template has one, so
// that the goroutines grow with the tables, not with tables times cores.
func TestDefaultEncoders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := testOptions(t)
	o.Encoders = 0
	s, err := mustOpen(t, o).Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, want := len(s.encs), DefaultEncoders(); got != want || want < 1 || want > MaxEncoders {
		t.Errorf("a table's Sink has %d encoders, want DefaultEncoders %d (1..%d)", got, want, MaxEncoders)
	}

	o = routeOptions(t, "raw.{topic}")
	o.Encoders = 0
	ts := openTables(t, o)
	r := dialRouter(t, ctx, ts)
	routeSend(t, ctx, r, 1, mixedBatch(o.Allocator, arrow.PrimitiveTypes.Uint32,
		append(rowsOf(topicA, 0, 1, 2), rowsOf(topicB, 0, 1, 2)...)))
	if err := r.WaitDurable(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.mu.children) != 2 {
		t.Fatalf("%d tables dialled, want 2", len(r.mu.children))
	}
	for name, c := range r.mu.children {
		if got := len(c.s.encs); got != 1 {
			t.Errorf("template table %s: %d encoders, want 1", name, got)
		}
	}
}
