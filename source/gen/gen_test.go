package gen_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"math"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/source/gen"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// copyRec deep-copies a record the generator will overwrite.
func copyRec(r *batch.Record) batch.Record {
	c := *r
	c.ID = bytes.Clone(r.ID)
	c.Key = bytes.Clone(r.Key)
	c.Payload = bytes.Clone(r.Payload)
	c.Props = maps.Clone(r.Props)
	return c
}

func collect(t *testing.T, opts gen.Options) []batch.Record {
	t.Helper()
	g, err := gen.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []batch.Record
	var rec batch.Record
	for g.Next(&rec) {
		out = append(out, copyRec(&rec))
	}
	return out
}

func TestDeterminism(t *testing.T) {
	for _, mode := range []gen.Mode{gen.ModeRaw, gen.ModeJSON} {
		t.Run(mode.String(), func(t *testing.T) {
			opts := gen.Options{Seed: 42, Partitions: 3, Records: 500, Mode: mode}
			if mode == gen.ModeJSON {
				opts.MalformedFraction = 0.1
			}
			a, b := collect(t, opts), collect(t, opts)
			if len(a) != 500 {
				t.Fatalf("got %d records, want 500", len(a))
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatal("same seed produced different records")
			}
			opts.Seed = 43
			if c := collect(t, opts); reflect.DeepEqual(a, c) {
				t.Fatal("different seeds produced the same records")
			}
		})
	}
}

func TestPartitionsAndSeq(t *testing.T) {
	const parts, n = 7, 7000
	recs := collect(t, gen.Options{Seed: 1, Partitions: parts, Records: n, PayloadSize: 33})
	last := make(map[string]uint64)
	ids := make(map[string]bool)
	names := make(map[string]bool)
	for p := range parts {
		names[gen.PartitionName(p)] = true
	}
	for _, r := range recs {
		if !names[r.Partition] {
			t.Fatalf("partition %q is not one of gen-0..gen-%d", r.Partition, parts-1)
		}
		if r.Seq != last[r.Partition]+1 {
			t.Fatalf("partition %q: seq %d after %d", r.Partition, r.Seq, last[r.Partition])
		}
		last[r.Partition] = r.Seq
		if len(r.Payload) != 33 || len(r.Key) == 0 || r.EventTime.IsZero() || r.PublishTime.Before(r.EventTime) {
			t.Fatalf("bad record %+v", r)
		}
		if r.Props["partition"] == "" || r.Props["source"] != "gen" {
			t.Fatalf("props %v", r.Props)
		}
		if ids[string(r.ID)] {
			t.Fatalf("duplicate ID %x", r.ID)
		}
		ids[string(r.ID)] = true
	}
	for p := range parts {
		// Uniform spread: each partition gets n/parts ± 20%.
		if got := float64(last[gen.PartitionName(p)]); math.Abs(got-n/parts) > 0.2*n/parts {
			t.Errorf("partition %d got %v records, want about %d", p, got, n/parts)
		}
	}
}

// assemble runs records through a JSON assembler and returns its stats.
func assemble(t *testing.T, g *gen.Generator) batch.Stats {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var reasons int
	a, err := batch.NewAssembler(batch.AssemblerOptions{
		Allocator: mem, Mode: batch.ModeJSON, Schema: gen.JSONSchema(),
		Linger: time.Hour, // never fires: the test flushes
		Emit:   func(b *batch.Batch) { b.Release() },
		OnReject: func(_ *batch.Record, reason error) {
			if errors.Is(reason, batch.ErrRejected) {
				reasons++
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var rec batch.Record
	for g.Next(&rec) {
		if err := a.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	st := a.Stats()
	if uint64(reasons) != st.Rejected {
		t.Fatalf("OnReject called %d times, Stats.Rejected = %d", reasons, st.Rejected)
	}
	return st
}

func TestJSONMatchesSchema(t *testing.T) {
	g, err := gen.New(gen.Options{Seed: 9, Partitions: 2, Records: 3000, Mode: gen.ModeJSON})
	if err != nil {
		t.Fatal(err)
	}
	if st := assemble(t, g); st.Rejected != 0 || st.Rows != 3000 {
		t.Fatalf("stats = %+v, want 3000 rows and no rejections", st)
	}
	if got := gen.JSONSchema().NumFields(); got != 10 {
		t.Fatalf("JSONSchema has %d fields, want 10", got)
	}
}

func TestMalformedFraction(t *testing.T) {
	for _, f := range []float64{0.01, 0.2, 1} {
		const n = 5000
		g, err := gen.New(gen.Options{Seed: 5, Records: n, Mode: gen.ModeJSON, MalformedFraction: f})
		if err != nil {
			t.Fatal(err)
		}
		st := assemble(t, g)
		// Every malformed record is rejected, and only those.
		if st.Rejected != g.Malformed() || st.Rows != n-g.Malformed() {
			t.Fatalf("f=%v: rejected %d, malformed %d, rows %d", f, st.Rejected, g.Malformed(), st.Rows)
		}
		if got := float64(g.Malformed()) / n; math.Abs(got-f) > 0.25*f+0.005 {
			t.Errorf("malformed fraction %v, want about %v", got, f)
		}
	}
}

func TestOptionsValidation(t *testing.T) {
	for _, o := range []gen.Options{
		{Partitions: -1},
		{Rate: -1},
		{Rate: math.Inf(1)},
		{PayloadSize: -5},
		{Mode: 7},
		{Mode: gen.ModeJSON, MalformedFraction: 1.5},
		{Mode: gen.ModeJSON, MalformedFraction: math.NaN()},
		{MalformedFraction: 0.5}, // raw mode
	} {
		if _, err := gen.New(o); !errors.Is(err, gen.ErrInvalidOptions) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOptions", o, err)
		}
	}
}

func TestNextZeroAlloc(t *testing.T) {
	for _, mode := range []gen.Mode{gen.ModeRaw, gen.ModeJSON} {
		g, err := gen.New(gen.Options{Seed: 1, Partitions: 4, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		var rec batch.Record
		for range 100 { // warm the buffers
			g.Next(&rec)
		}
		if allocs := testing.AllocsPerRun(1000, func() { g.Next(&rec) }); allocs != 0 {
			t.Errorf("%v: Next allocates %v per record", mode, allocs)
		}
	}
}

// TestRunRate runs a paced generator on the bubble's clock: no record comes
// before its due time, and Run waits for the last one.
func TestRunRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate, n = 1000.0, 2500 // 2.5s of fake time
		g, err := gen.New(gen.Options{Seed: 3, Records: n, Rate: rate})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		var got, maxAhead int
		err = g.Run(t.Context(), func(*batch.Record) error {
			got++
			// Record i (0-based) may not come before i/rate.
			allowed := int(time.Since(start).Nanoseconds()*int64(rate)/int64(time.Second)) + 1
			maxAhead = max(maxAhead, got-allowed)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got != n || maxAhead > 0 {
			t.Fatalf("got %d records, ran up to %d ahead of the rate", got, maxAhead)
		}
		// The last record is due at (n-1)/rate; Run must have waited for it.
		if el := time.Since(start); el < time.Duration(float64(n-1)/rate*float64(time.Second)) {
			t.Fatalf("finished after %v of fake time, too fast", el)
		}
	})
}

func TestRunStops(t *testing.T) {
	t.Run("ctx", func(t *testing.T) {
		// Real clock and an unbounded, rate-limited generator: cancellation
		// must interrupt the wait.
		g, err := gen.New(gen.Options{Seed: 1, Rate: 10})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		err = g.Run(ctx, func(*batch.Record) error {
			if n++; n == 2 {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) || n != 2 {
			t.Fatalf("Run = %v after %d records", err, n)
		}
	})
	t.Run("fn error", func(t *testing.T) {
		g, err := gen.New(gen.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		n := 0
		if err := g.Run(context.Background(), func(*batch.Record) error {
			if n++; n == 10 {
				return boom
			}
			return nil
		}); !errors.Is(err, boom) || g.Produced() != 10 {
			t.Fatalf("Run = %v, produced %d", err, g.Produced())
		}
	})
	t.Run("exhausted", func(t *testing.T) {
		g, err := gen.New(gen.Options{Seed: 1, Records: 100})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Run(context.Background(), func(*batch.Record) error { return nil }); err != nil || g.Produced() != 100 {
			t.Fatalf("Run = %v, produced %d", err, g.Produced())
		}
	})
}

// TestSourceNextStopsWhenBehindSchedule: a paced source whose consumer is
// slower than its rate never sleeps, and must still honour cancellation.
func TestSourceNextStopsWhenBehindSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, err := gen.NewSource(gen.Options{Seed: 1, Rate: 10})
		if err != nil {
			t.Fatal(err)
		}
		var rec batch.Record
		if err := src.Next(context.Background(), &rec); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour) // far behind schedule: 36 000 records due
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for i := 0; i < 128; i++ {
			if err := src.Next(ctx, &rec); err != nil {
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Next: %v, want context.Canceled", err)
				}
				return
			}
		}
		t.Fatal("Next kept producing after its context was cancelled")
	})
}
