package pipeline_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
)

// mapped is a generator whose records are renamed and renumbered by remap
// (applied to every record Next returns), standing in for a broker's
// global positions: another topic-partition name per worker, seqs with
// gaps where the broker skipped messages, a start after what other
// workers delivered. Records whose mapped seq is at or below after[p] are
// not delivered (a restarted or reconciled source).
type mapped struct {
	*gen.Source
	remap func(rec *batch.Record)
	after map[string]uint64
}

func (m *mapped) Next(ctx context.Context, rec *batch.Record) error {
	for {
		if err := m.Source.Next(ctx, rec); err != nil {
			return err
		}
		m.remap(rec)
		if rec.Seq > m.after[rec.Partition] {
			return nil
		}
	}
}

// expected replays opts through remap: every (partition, seq) the mapped
// source produces.
func expected(t *testing.T, opts gen.Options, remap func(rec *batch.Record)) map[string][]uint64 {
	t.Helper()
	g, err := gen.New(opts)
	require.NoError(t, err)
	out := map[string][]uint64{}
	var rec batch.Record
	for g.Next(&rec) {
		remap(&rec)
		out[rec.Partition] = append(out[rec.Partition], rec.Seq)
	}
	return out
}

// requireAll asserts that tally holds every record of want at least once
// and nothing else, and returns the number of duplicates.
func requireAll(t *testing.T, what string, tally *audit.Tally, want map[string][]uint64) uint64 {
	t.Helper()
	var n, missing uint64
	var first []string
	for p, seqs := range want {
		for _, s := range seqs {
			n++
			if tally.Count(p, s) == 0 {
				missing++
				if len(first) < 5 {
					first = append(first, fmt.Sprintf("%s/%d", p, s))
				}
			}
		}
	}
	require.Zero(t, missing, "%s: %d of %d records missing (first %v)", what, missing, n, first)
	require.GreaterOrEqual(t, tally.Rows(), n)
	return tally.Rows() - n
}

// runAnchorOnly runs src to its end into the raw anchor at rawAddr alone
// and returns the durable delivered seq per partition.
func runAnchorOnly(t *testing.T, src pipeline.Source, asm batch.AssemblerOptions, store *offsetstore.Store,
	rawAddr string, mem memory.Allocator) map[string]uint64 {
	t.Helper()
	p, err := pipeline.New(pipeline.Options{Source: src, Assembler: asm, Store: store, Anchor: flightDest("raw", rawAddr, mem)})
	require.NoError(t, err)
	require.NoError(t, p.Run(flighttest.Ctx(t, 30*time.Second)))
	del, err := store.Delivered("raw")
	require.NoError(t, err)
	out := map[string]uint64{}
	for part, pos := range del {
		out[part] = pos.Seq
	}
	return out
}

// runWithSecondary runs src to its end into the raw anchor at rawAddr and
// a Zerobus-compatible secondary "zb" that catches up from the anchor in
// chunks of chunk seqs, checking throughout that its coverage never leads.
func runWithSecondary(t *testing.T, src pipeline.Source, asm batch.AssemblerOptions, store *offsetstore.Store,
	rawAddr string, mem memory.Allocator, chunk uint64) (*pipeline.Pipeline, *zbHarness) {
	t.Helper()
	zb := newZB(t)
	zb.start()
	conf := &confirmedPrefix{seqs: map[string]uint64{}}
	p, err := pipeline.New(pipeline.Options{
		Source: src, Assembler: asm, Store: store,
		Anchor:       flightDest("raw", rawAddr, mem),
		Secondaries:  []pipeline.Destination{zb.dest("zb", mem, conf)},
		Rebuild:      flight.Rebuild(flighttest.Client(t, rawAddr), []string{"raw"}, mem),
		RebuildChunk: chunk,
		DrainTimeout: 30 * time.Second,
	})
	require.NoError(t, err)
	watch := watchLead(store, "raw", "zb", conf)
	require.NoError(t, p.Run(flighttest.Ctx(t, 60*time.Second)))
	watch.finish(t)
	return p, zb
}

// skipSeqs renumbers a generator's seq s as the broker's position of the
// s-th record when it skipped 50 messages after every 100 (a TTL expiry, a
// cursor reset forward): 1..100, 151..250, 301..400, ...
func skipSeqs(rec *batch.Record) { rec.Seq += 50 * ((rec.Seq - 1) / 100) }

// TestSecondaryCatchesUpOverSkippedSeqs: the anchor's records of a
// partition have interior gaps (seqs the broker skipped). A secondary
// added afterwards catches up from the raw anchor over them — it does not
// detach and its confirmed prefix does not stall at the first gap — while
// live batches with the same gaps keep coming; it ends holding every
// record, with coverage at the anchor's watermark.
func TestSecondaryCatchesUpOverSkippedSeqs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, rawAddr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	asm := batch.AssemblerOptions{Allocator: mem, MaxRows: 64, Linger: 20 * time.Millisecond}

	// Run 1: the anchor only.
	opts := gen.Options{Seed: 21, Partitions: 2, Records: 3000}
	g1, err := gen.NewSource(opts)
	require.NoError(t, err)
	after := runAnchorOnly(t, &mapped{Source: g1, remap: skipSeqs}, asm, store, rawAddr, mem)

	// Run 2: the same partitions go on (with the same kind of gaps) and a
	// secondary is added; its coverage starts at nothing.
	opts.Records, opts.Rate = 6000, 6000
	g2, err := gen.NewSource(opts)
	require.NoError(t, err)
	// A rebuild chunk smaller than a gap plus its neighbours: probing
	// crosses chunks.
	p2, zb := runWithSecondary(t, &mapped{Source: g2, remap: skipSeqs, after: after}, asm, store, rawAddr, mem, 120)

	sec := p2.Stats().Secondaries[0]
	t.Logf("secondary: rebuilt %d records, skipped %d seqs the anchor holds no record for, dropped %d live batches",
		sec.Rebuilt, sec.Skipped, sec.Dropped)
	require.False(t, sec.Detached, "the secondary detached")
	require.GreaterOrEqual(t, sec.Rebuilt, uint64(3000), "run 1's records come from the raw anchor")
	require.Positive(t, sec.Skipped, "no gap was crossed")
	require.Zero(t, sec.CoverageLag)

	want := expected(t, opts, skipSeqs)
	dups := requireAll(t, "secondary table", zb.tally(), want)
	requireAll(t, "raw anchor", readStored(t, rawAddr, []string{"raw"}), want)
	t.Logf("secondary holds every one of %d records (%d duplicates at seams)", 6000, dups)
	cov, err := store.Coverage("zb")
	require.NoError(t, err)
	del, err := store.Delivered("raw")
	require.NoError(t, err)
	for p, seqs := range want {
		last := seqs[len(seqs)-1]
		require.Equal(t, last, del[p].Seq, "delivered of %s", p)
		require.Equal(t, last, cov[p].Seq, "coverage of %s", p)
	}
}

// TestSecondaryRebuiltAfterTwoWorkers: two workers, each with its own
// offset store, fed one raw anchor dataset with disjoint partitions of one
// topic (as two consumers of a Failover subscription do). A third worker
// then starts with an empty store — a new pod — and a secondary: its
// source starts after what the anchor holds (reconciled), and the
// secondary, finding its coverage behind on every partition, rebuilds from
// the anchor the other workers' records by (partition name, seq) range.
// It ends holding every record of every partition.
func TestSecondaryRebuiltAfterTwoWorkers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, rawAddr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	asm := batch.AssemblerOptions{Allocator: mem, MaxRows: 100, Linger: 20 * time.Millisecond}
	topic := "persistent://public/default/" + t.Name()
	rename := func(base int) func(rec *batch.Record) {
		return func(rec *batch.Record) {
			var i int
			_, err := fmt.Sscanf(rec.Partition, "gen-%d", &i)
			if err != nil {
				panic(err)
			}
			rec.Partition = batch.JoinPartition(topic, int32(base+i))
		}
	}

	want := map[string][]uint64{}
	anchorAt := map[string]uint64{}
	for w, o := range []struct {
		opts gen.Options
		base int
	}{
		{gen.Options{Seed: 31, Partitions: 2, Records: 2500}, 0}, // worker 1: partitions 0, 1
		{gen.Options{Seed: 32, Partitions: 2, Records: 1800}, 2}, // worker 2: partitions 2, 3
	} {
		store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
		require.NoError(t, err)
		g, err := gen.NewSource(o.opts)
		require.NoError(t, err)
		runAnchorOnly(t, &mapped{Source: g, remap: rename(o.base)}, asm, store, rawAddr, mem)
		require.NoError(t, store.Close(), "worker %d", w+1)
		for part, seqs := range expected(t, o.opts, rename(o.base)) {
			want[part] = append(want[part], seqs...)
			anchorAt[part] = seqs[len(seqs)-1]
		}
	}

	// Worker 3: an empty store, all four partitions, starting after the
	// anchor's positions (what reconciliation gives it).
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	shift := func(rec *batch.Record) {
		rename(0)(rec)
		rec.Seq += anchorAt[rec.Partition]
	}
	opts3 := gen.Options{Seed: 33, Partitions: 4, Records: 2000, Rate: 4000}
	g3, err := gen.NewSource(opts3)
	require.NoError(t, err)
	p3, zb := runWithSecondary(t, &mapped{Source: g3, remap: shift}, asm, store, rawAddr, mem, 500)
	for part, seqs := range expected(t, opts3, shift) {
		want[part] = append(want[part], seqs...)
	}
	require.Len(t, want, 4)

	sec := p3.Stats().Secondaries[0]
	t.Logf("worker 3's secondary: rebuilt %d records from the anchor, skipped %d seqs", sec.Rebuilt, sec.Skipped)
	require.False(t, sec.Detached, "the secondary detached")
	require.GreaterOrEqual(t, sec.Rebuilt, uint64(2500+1800), "the other workers' records come from the raw anchor")
	require.Zero(t, sec.Skipped, "the anchor holds every seq: nothing to skip")
	dups := requireAll(t, "secondary table", zb.tally(), want)
	requireAll(t, "raw anchor", readStored(t, rawAddr, []string{"raw"}), want)
	t.Logf("secondary holds all %d records of 4 partitions from 3 workers (%d duplicates)", 2500+1800+2000, dups)
	cov, err := store.Coverage("zb")
	require.NoError(t, err)
	for part, seqs := range want {
		require.Equal(t, seqs[len(seqs)-1], cov[part].Seq, "coverage of %s", part)
	}
}

// TestSecondaryDetachesOverALostAnchor: the raw anchor lost what it had
// acknowledged (its data directory was replaced by an empty one) and then
// stored new records. A secondary catching up finds nothing below the new
// records: that is not a gap the broker skipped — the anchor acknowledged
// the worker's last seq before this start — so the secondary detaches,
// naming the loss, instead of covering the lost records with a zero-row
// batch.
func TestSecondaryDetachesOverALostAnchor(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	asm := batch.AssemblerOptions{Allocator: mem, MaxRows: 100, Linger: 20 * time.Millisecond}

	_, lostAddr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	opts := gen.Options{Seed: 41, Partitions: 2, Records: 1500}
	g1, err := gen.NewSource(opts)
	require.NoError(t, err)
	after := runAnchorOnly(t, g1, asm, store, lostAddr, mem)

	// The anchor comes back empty; the worker goes on, with a secondary.
	_, rawAddr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	opts.Records = 3000
	g2, err := gen.NewSource(opts)
	require.NoError(t, err)
	var logs crashtest.LogBuffer
	zb := newZB(t)
	zb.start()
	p2, err := pipeline.New(pipeline.Options{
		Source: &mapped{Source: g2, remap: func(*batch.Record) {}, after: after}, Assembler: asm, Store: store,
		Anchor:       flightDest("raw", rawAddr, mem),
		Secondaries:  []pipeline.Destination{zb.dest("zb", mem, nil)},
		Rebuild:      flight.Rebuild(flighttest.Client(t, rawAddr), []string{"raw"}, mem),
		RebuildChunk: 400,
		DrainTimeout: 10 * time.Second,
		Logger:       slog.New(slog.NewTextHandler(&logs, nil)),
	})
	require.NoError(t, err)
	require.NoError(t, p2.Run(flighttest.Ctx(t, 30*time.Second)))
	sec := p2.Stats().Secondaries[0]
	require.True(t, sec.Detached, "the secondary covered a lost range instead of detaching")
	require.Zero(t, sec.Skipped, "lost records were covered as skipped")
	require.Contains(t, logs.String(), "which it acknowledged before this start: its data was lost")
	cov, err := store.Coverage("zb")
	require.NoError(t, err)
	for p, pos := range cov {
		require.LessOrEqual(t, pos.Seq, after[p], "coverage of %s passed the lost range", p)
	}
}
