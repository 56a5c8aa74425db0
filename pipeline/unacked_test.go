package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
)

// strideSource takes every stride-th seq of each partition, as one of
// stride consumers of a Shared subscription does: its spans are about
// stride times wider than the records they cover. It counts the records it
// handed out and those its (slow) Ack covered, and the most ever
// outstanding between them.
type strideSource struct {
	*gen.Source
	stride uint64
	delay  time.Duration

	mu                   sync.Mutex
	taken, acked, maxOut uint64
}

func (s *strideSource) Next(ctx context.Context, rec *batch.Record) error {
	if err := s.Source.Next(ctx, rec); err != nil {
		return err
	}
	rec.Seq *= s.stride
	s.mu.Lock()
	s.taken++
	s.maxOut = max(s.maxOut, s.taken-min(s.acked, s.taken))
	s.mu.Unlock()
	return nil
}

func (s *strideSource) Ack(spans []batch.OffsetSpan) error {
	time.Sleep(s.delay) // the slow upstream ack the test simulates
	var n uint64
	for _, sp := range spans {
		first := (sp.First + s.stride - 1) / s.stride * s.stride // the first of this source's seqs in the span
		if first <= sp.Last {
			n += (sp.Last-first)/s.stride + 1
		}
	}
	s.mu.Lock()
	s.acked += n
	s.mu.Unlock()
	return s.Source.Ack(spans)
}

// TestMaxUnackedCountsRecordsNotPositions: seqs are global positions, so a
// worker's spans cover positions it never took (other consumers' records,
// seqs the broker skipped). MaxUnacked must count the records: with acks
// flowing slowly and spans 1000 times wider than their record counts, the
// source is never more than the bound ahead of the acks, and Acked counts
// records. Releasing by span width released about 1000 slots per record,
// so the bound stopped holding after the first ack.
func TestMaxUnackedCountsRecordsNotPositions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	const records, bound = 20000, 500
	g, err := gen.NewSource(gen.Options{Seed: 3, Partitions: 2, Records: records, Mode: gen.ModeRaw})
	require.NoError(t, err)
	src := &strideSource{Source: g, stride: 1000, delay: 2 * time.Millisecond}
	p, err := pipeline.New(pipeline.Options{
		Source: src, Store: store, Anchor: flightDest("raw", addr, mem), MaxUnacked: bound,
		Assembler: batch.AssemblerOptions{Allocator: mem, MaxRows: 100, Linger: 5 * time.Millisecond},
	})
	require.NoError(t, err)
	require.NoError(t, p.Run(flighttest.Ctx(t, 60*time.Second)))
	st := p.Stats()
	src.mu.Lock()
	defer src.mu.Unlock()
	require.EqualValues(t, records, src.taken)
	require.LessOrEqual(t, src.maxOut, uint64(bound), "%d records were outstanding (taken, not acknowledged upstream), max_unacked %d", src.maxOut, bound)
	require.EqualValues(t, records, st.Acked, "Acked counts records")
	require.EqualValues(t, records, src.acked)
}
