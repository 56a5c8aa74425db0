package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
)

// sharedSource plays one consumer of a Shared subscription: it hands over
// the seqs of seqs in that order — a partition's seqs with holes where
// other consumers took records, and, later, a lower range it takes over
// when another consumer dropped it. It counts outstanding records (handed
// over, not yet covered by an Ack) and keeps the most ever outstanding.
type sharedSource struct {
	part string
	seqs []uint64
	next int

	// exhausted, when not nil, is closed when the last seq was handed over.
	exhausted chan struct{}

	mu             sync.Mutex
	emitted        map[uint64]bool
	outstanding    int
	maxOutstanding int
	acked          int
}

func (s *sharedSource) Next(ctx context.Context, rec *batch.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.next == len(s.seqs) {
		return io.EOF
	}
	seq := s.seqs[s.next]
	s.next++
	if s.next == len(s.seqs) && s.exhausted != nil {
		close(s.exhausted)
	}
	*rec = batch.Record{Partition: s.part, Seq: seq, ID: fmt.Appendf(nil, "id-%d", seq),
		Payload: fmt.Appendf(nil, "payload-%d", seq), PublishTime: time.Unix(0, 0)}
	s.mu.Lock()
	s.emitted[seq] = true
	s.outstanding++
	s.maxOutstanding = max(s.maxOutstanding, s.outstanding)
	s.mu.Unlock()
	return nil
}

// Ack covers, like source/pulsar's Shared acknowledgement, the records
// handed over whose seqs the spans contain.
func (s *sharedSource) Ack(spans []batch.OffsetSpan) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range spans {
		for seq := sp.First; seq <= sp.Last; seq++ {
			if s.emitted[seq] {
				delete(s.emitted, seq)
				s.outstanding--
				s.acked++
			}
		}
	}
	return nil
}

func (s *sharedSource) DeadLetter(context.Context, *batch.Record, string) error { return nil }
func (s *sharedSource) Close() error                                            { return nil }

// TestSharedSourceSecondaryGetsEveryRecord: a worker of a Shared
// subscription sees seqs 1..100 except 50..60 (another consumer had them),
// then takes over 50..60 — lower seqs after higher ones. The run does not
// stop, the raw anchor (a real receiver) and the secondary (another real
// receiver) get every record, max_unacked holds, and the secondary's
// coverage ends at the anchor's watermark once the late batch is
// confirmed — with the default queue, and with a queue of one whose drops
// are read back from the raw anchor.
func TestSharedSourceSecondaryGetsEveryRecord(t *testing.T) {
	for _, tc := range []struct {
		queue int
		slow  bool // the secondary sends nothing before the source handed over its last record
	}{{0, false}, {1, false}, {1, true}} {
		queue := tc.queue
		t.Run(fmt.Sprintf("queue=%d,slow=%v", tc.queue, tc.slow), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			_, rawAddr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
			_, secAddr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
			store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
			require.NoError(t, err)
			defer func() { require.NoError(t, store.Close()) }()

			const part = "persistent://public/default/shared-partition-0"
			var seqs []uint64
			for s := uint64(1); s <= 100; s++ {
				if s < 50 || s > 60 {
					seqs = append(seqs, s)
				}
			}
			for s := uint64(50); s <= 60; s++ {
				seqs = append(seqs, s)
			}
			src := &sharedSource{part: part, seqs: seqs, emitted: map[uint64]bool{}, exhausted: make(chan struct{})}
			sec := flightDest("sec", secAddr, mem)
			sec.Queue = queue
			if tc.slow {
				dial := sec.Dial
				sec.Dial = func(ctx context.Context) (lanes.Transport, error) {
					tr, err := dial(ctx)
					return gatedTransport{tr, src.exhausted}, err
				}
			}
			const bound = 12
			p, err := pipeline.New(pipeline.Options{
				Source: src, Store: store, Unordered: true, MaxUnacked: bound,
				Assembler:    batch.AssemblerOptions{Allocator: mem, MaxRows: 7, Linger: 5 * time.Millisecond},
				Anchor:       flightDest("raw", rawAddr, mem),
				Secondaries:  []pipeline.Destination{sec},
				Rebuild:      flight.Rebuild(flighttest.Client(t, rawAddr), []string{"raw"}, mem),
				RebuildChunk: 16,
				DrainTimeout: 30 * time.Second,
			})
			require.NoError(t, err)
			require.NoError(t, p.Run(flighttest.Ctx(t, 60*time.Second)), "a lower seq after a higher one must not stop the run")

			for name, addr := range map[string]string{"raw": rawAddr, "sec": secAddr} {
				tally := readStored(t, addr, []string{name})
				for s := uint64(1); s <= 100; s++ {
					require.NotZero(t, tally.Count(part, s), "%s is missing seq %d", name, s)
				}
			}
			src.mu.Lock()
			require.LessOrEqual(t, src.maxOutstanding, bound, "max_unacked")
			require.Equal(t, 100, src.acked)
			src.mu.Unlock()
			st := p.Stats()
			require.EqualValues(t, 100, st.Acked)
			require.EqualValues(t, 1, st.Assembler.OutOfOrder, "seq 50 after 100 started a new span")
			require.False(t, st.Secondaries[0].Detached)
			cov, err := store.Coverage("sec")
			require.NoError(t, err)
			del, err := store.Delivered("raw")
			require.NoError(t, err)
			require.EqualValues(t, 100, del[part].Seq)
			require.EqualValues(t, 100, cov[part].Seq, "coverage is released once the late batch is confirmed")
			if tc.slow {
				require.NotZero(t, st.Secondaries[0].Dropped, "the slow secondary's queue of one overflowed")
			}
			t.Logf("secondary: dropped %d live batches, rebuilt %d records", st.Secondaries[0].Dropped, st.Secondaries[0].Rebuilt)
		})
	}
}

// gatedTransport sends nothing before gate is closed: a secondary that
// cannot keep up, whose queue overflows while the anchor takes every batch.
type gatedTransport struct {
	lanes.Transport
	gate <-chan struct{}
}

func (g gatedTransport) Send(ctx context.Context, offset uint64, b *batch.Batch) error {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Transport.Send(ctx, offset, b)
}

// TestSharedSourceSecondaryAddedLater: a Shared worker ran without the
// secondary (1..100 but 50..60, another consumer's); it restarts with the
// secondary added and takes over 50..60 while 101..120 arrive. The startup
// range (0, 100] is read back from the raw anchor, the late batch goes
// live, and the secondary ends with every record and coverage at 120.
func TestSharedSourceSecondaryAddedLater(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, rawAddr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	_, secAddr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	const part = "persistent://public/default/shared-later-partition-3"
	var first, second []uint64
	for s := uint64(1); s <= 100; s++ {
		if s < 50 || s > 60 {
			first = append(first, s)
		}
	}
	for s := uint64(101); s <= 120; s++ {
		second = append(second, s)
		if s == 105 {
			for l := uint64(50); l <= 60; l++ {
				second = append(second, l)
			}
		}
	}
	run := func(seqs []uint64, secs []pipeline.Destination) *pipeline.Pipeline {
		p, err := pipeline.New(pipeline.Options{
			Source: &sharedSource{part: part, seqs: seqs, emitted: map[uint64]bool{}}, Store: store, Unordered: true,
			Assembler:    batch.AssemblerOptions{Allocator: mem, MaxRows: 9, Linger: 5 * time.Millisecond},
			Anchor:       flightDest("raw", rawAddr, mem),
			Secondaries:  secs,
			Rebuild:      flight.Rebuild(flighttest.Client(t, rawAddr), []string{"raw"}, mem),
			RebuildChunk: 32,
			DrainTimeout: 30 * time.Second,
		})
		require.NoError(t, err)
		require.NoError(t, p.Run(flighttest.Ctx(t, 60*time.Second)))
		return p
	}
	run(first, nil)
	p := run(second, []pipeline.Destination{flightDest("sec", secAddr, mem)})
	tally := readStored(t, secAddr, []string{"sec"})
	for s := uint64(1); s <= 120; s++ {
		require.NotZero(t, tally.Count(part, s), "the secondary is missing seq %d", s)
	}
	st := p.Stats().Secondaries[0]
	require.False(t, st.Detached)
	require.GreaterOrEqual(t, st.Rebuilt, uint64(len(first)), "the first run's records come from the raw anchor")
	cov, err := store.Coverage("sec")
	require.NoError(t, err)
	require.EqualValues(t, 120, cov[part].Seq)
}
