package gen

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/thalweg/thalweg/batch"
)

// DeadLetter is a record the pipeline rejected, as the Source keeps it.
type DeadLetter struct {
	Partition string
	Seq       uint64
	Reason    string
	Payload   []byte
}

// Source adapts a Generator to the pipeline's source contract (Next, Ack,
// DeadLetter, Close) for the demo, tests and benchmarks. It stands in for
// an upstream broker: Ack records the acknowledged watermark per partition,
// DeadLetter keeps rejected records in memory.
//
// Next must be called from one goroutine; Ack, DeadLetter and the accessors
// are safe from any goroutine.
type Source struct {
	g    *Generator
	pace pacer
	last []uint64 // per partition: the last seq Next produced; read after Next returns io.EOF or from Next's goroutine

	mu struct {
		sync.Mutex
		acked map[string]uint64
		dead  []DeadLetter
	}
}

// NewSource returns a Source producing what New(opts) would.
func NewSource(opts Options) (*Source, error) {
	g, err := New(opts)
	if err != nil {
		return nil, err
	}
	s := &Source{g: g, pace: pacer{rate: g.opts.Rate}}
	s.mu.acked = map[string]uint64{}
	return s, nil
}

// Generator returns the underlying generator (for Produced and Malformed).
func (s *Source) Generator() *Generator { return s.g }

// Next fills rec with the next record, honouring Options.Rate; io.EOF once
// Options.Records have been produced.
func (s *Source) Next(ctx context.Context, rec *batch.Record) error {
	if err := s.pace.wait(ctx, s.g.produced); err != nil {
		return err
	}
	if !s.g.Next(rec) {
		return io.EOF
	}
	if p := s.g.last; p >= len(s.last) {
		s.last = append(s.last, make([]uint64, p+1-len(s.last))...)
	}
	s.last[s.g.last] = rec.Seq
	return nil
}

// Produced returns the last seq produced per partition: what a sink must
// hold (less the dead letters) once the pipeline drained. Call it from the
// goroutine that calls Next, or after the pipeline stopped.
func (s *Source) Produced() map[string]uint64 {
	out := make(map[string]uint64, len(s.last))
	for p, seq := range s.last {
		if seq > 0 {
			out[s.g.names[p]] = seq
		}
	}
	return out
}

// Ack records that every seq covered by spans was acknowledged.
func (s *Source) Ack(spans []batch.OffsetSpan) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range spans {
		if sp.Last > s.mu.acked[sp.Partition] {
			s.mu.acked[sp.Partition] = sp.Last
		}
	}
	return nil
}

// DeadLetter keeps a copy of rec with its reason.
func (s *Source) DeadLetter(_ context.Context, rec *batch.Record, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.dead = append(s.mu.dead, DeadLetter{Partition: rec.Partition, Seq: rec.Seq, Reason: reason,
		Payload: append([]byte(nil), rec.Payload...)})
	return nil
}

// Close is a no-op; the generator holds no resources.
func (s *Source) Close() error { return nil }

// Acked returns the highest acknowledged seq per partition.
func (s *Source) Acked() map[string]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]uint64, len(s.mu.acked))
	for p, v := range s.mu.acked {
		out[p] = v
	}
	return out
}

// DeadLetters returns the rejected records so far.
func (s *Source) DeadLetters() []DeadLetter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]DeadLetter(nil), s.mu.dead...)
}

// pacer holds record i back until i/rate seconds after the first call. A
// zero rate never waits.
type pacer struct {
	rate  float64
	start time.Time
	now   time.Time
}

func (p *pacer) wait(ctx context.Context, i uint64) error {
	// Checked whatever the rate: a source behind its schedule never sleeps,
	// and must still stop when asked.
	if i%64 == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if p.rate <= 0 {
		return nil
	}
	if p.start.IsZero() {
		p.start = time.Now()
		p.now = p.start
	}
	due := p.start.Add(time.Duration(float64(i) / p.rate * float64(time.Second)))
	if due.After(p.now) {
		p.now = time.Now()
	}
	if due.After(p.now) {
		if err := sleep(ctx, due.Sub(p.now)); err != nil {
			return err
		}
		p.now = time.Now()
	}
	return nil
}
