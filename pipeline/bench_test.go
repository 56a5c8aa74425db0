package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
)

// countingSource signals when n records were acknowledged upstream.
type countingSource struct {
	*gen.Source
	n    uint64
	once sync.Once
	done chan struct{}

	mu    sync.Mutex
	acked uint64
}

func (c *countingSource) Ack(spans []batch.OffsetSpan) error {
	var k uint64
	for _, s := range spans {
		k += s.Len()
	}
	c.mu.Lock()
	c.acked += k
	all := c.acked >= c.n
	c.mu.Unlock()
	if all {
		c.once.Do(func() { close(c.done) })
	}
	return c.Source.Ack(spans)
}

// BenchmarkAnchorRate measures the raw lane — generator, assembler, anchor
// lane, real Flight receiver, Pebble store, upstream acks — from the first
// record to the last upstream ack, alone and with a secondary whose sink
// accepts everything and never acknowledges (frozen). Per-lane isolation
// means the two rates are within noise of each other: the frozen secondary
// overflows its queue and drops batches (to be rebuilt from raw later)
// instead of slowing the dispatcher. The clock stops at the last upstream
// ack; the frozen secondary's bounded drain afterwards is not measured.
// "metrics" is "alone" with the OpenTelemetry SDK's MeterProvider, as
// thalweg run has it (the others use the no-op default, which hides what
// the instruments cost). cpu-ns/record is the process's CPU time (the
// in-process receiver's included) over the measured span per record.
//
//	go test -run '^$' -bench 'AnchorRate/(alone|metrics)' -benchtime 200000x -count 5 ./pipeline/
func BenchmarkAnchorRate(b *testing.B) {
	for _, tc := range []struct {
		name    string
		frozen  bool
		metrics bool
	}{{"alone", false, false}, {"metrics", false, true}, {"frozen-secondary", true, false}} {
		b.Run(tc.name, func(b *testing.B) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(b, 0)
			_, addr := flighttest.Receiver(b, receiver.Options{Dir: b.TempDir()})
			store, err := offsetstore.Open(b.TempDir(), offsetstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			records := uint64(max(b.N, 1000))
			g, err := gen.NewSource(gen.Options{Seed: 1, Partitions: 4, Records: records, PayloadSize: 100})
			if err != nil {
				b.Fatal(err)
			}
			src := &countingSource{Source: g, n: records, done: make(chan struct{})}
			opts := pipeline.Options{
				Source:       src,
				Assembler:    batch.AssemblerOptions{Allocator: mem, MaxRows: 1000, Linger: 20 * time.Millisecond},
				Store:        store,
				Anchor:       flightDest("raw", addr, mem),
				DrainTimeout: 2 * time.Second,
			}
			// One deadline for the whole drain, the anchor's first: the
			// frozen secondary gets what is left and is cut (so keep it
			// short), but the anchor's last batch took over 200 ms on a
			// loaded machine, and Run then ended with records never
			// acknowledged upstream.
			if !tc.frozen {
				opts.DrainTimeout = 10 * time.Second // nothing is expected to be cut
			}
			if tc.metrics {
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				defer func() { _ = mp.Shutdown(context.Background()) }()
				opts.MeterProvider = mp
			}
			if tc.frozen {
				opts.Secondaries = []pipeline.Destination{{
					Name: "frozen",
					Dial: func(context.Context) (lanes.Transport, error) { return newFrozen(), nil },
					Lane: pipeline.LaneOptions{Capacity: 4},
				}}
				opts.Rebuild = flight.Rebuild(flighttest.Client(b, addr), []string{"raw"}, mem)
			}
			p, err := pipeline.New(opts)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(100)
			b.ReportAllocs()
			b.ResetTimer()
			start, cpu0 := time.Now(), testenv.ProcessCPU()
			ran := make(chan error, 1)
			go func() { ran <- p.Run(context.Background()) }()
			select {
			case <-src.done:
			case err := <-ran: // src.done would never come: fail, do not hang
				b.Fatalf("Run ended before every record was acknowledged upstream: %v", err)
			}
			elapsed, cpu := time.Since(start), testenv.ProcessCPU()-cpu0
			b.StopTimer()
			err = <-ran
			if tc.frozen != (err != nil) { // only the frozen secondary may fail to drain
				b.Fatalf("Run: %v", err)
			}
			b.ReportMetric(float64(records)/elapsed.Seconds(), "records/s")
			if cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(records), "cpu-ns/record")
			}
			if tc.frozen {
				b.ReportMetric(float64(p.Stats().Secondaries[0].Dropped), "dropped-batches")
			}
		})
	}
}
