package bench_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/flighttest"
	"github.com/thalweg/thalweg/lanes"
)

// Flight benchmarks, all over loopback against the durable receiver (real
// files and fsync in a temp dir), each b.N iteration one ~280 KB batch:
//
//	lane:   lanes.Lane[NoCommit] over flight.Sink: pipelined, acks awaited
//	        by the lane's ack task in coalesced bursts (docs/design.md#ack-lanes).
//	raw:    arrow-go's Flight writer on a bare DoPut with no ack tracking
//	        (PutResults drained and dropped): the physical limit.
//	serial: flight.Sink, Send then WaitDurable for every batch: the naive
//	        await-each-ack baseline.
//
// Every mode ends when the receiver has made the last batch durable, so
// all three measure delivered throughput. AckDelay adds an artificial
// delay before every group fsync.
//
// Compare MB/s across modes at the same delay; lane/raw should be >= 0.9
// and lane/serial >= 100 at 5 ms.

const (
	benchDistinct = 32
	laneCapacity  = 512
)

// Two batch shapes: "large" (1000 rows of 256 B, ~280 KB: bandwidth-bound)
// and "small" (10 rows of 100 B, ~1.2 KB: round-trip-bound, where the
// serial baseline hurts most).
var shapes = []struct {
	name          string
	rows, payload int
}{{"large", 1000, 256}, {"small", 10, 100}}

func BenchmarkFlightDoPut(b *testing.B) {
	for _, sh := range shapes {
		for _, delay := range []time.Duration{0, 5 * time.Millisecond} {
			for _, mode := range []string{"lane", "raw", "serial"} {
				b.Run(fmt.Sprintf("batch=%s/ackdelay=%v/%s", sh.name, delay, mode), func(b *testing.B) {
					benchFlight(b, mode, delay, sh.rows, sh.payload)
				})
			}
		}
	}
}

func benchFlight(b *testing.B, mode string, delay time.Duration, rows, payload int) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	_, addr := flighttest.Receiver(b, receiver.Options{Dir: b.TempDir(), AckDelay: delay})
	batches := make([]*batch.Batch, benchDistinct)
	var bytes int64
	for i := range batches {
		batches[i] = flighttest.MakeBatch(mem, int32(i%4), uint64(i*rows), rows, payload)
		bytes += batches[i].BufferBytes()
	}
	defer func() {
		for _, bt := range batches {
			bt.Release()
		}
	}()
	b.SetBytes(bytes / benchDistinct)
	b.ReportAllocs()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sinkOpts := flight.Options{Endpoint: addr, Path: []string{"bench", mode}, Allocator: mem}

	b.ResetTimer()
	start, cpu0 := time.Now(), cpuSeconds()
	switch mode {
	case "lane":
		l, err := lanes.New[lanes.NoCommit](lanes.Options{
			Destination: "bench",
			Capacity:    laneCapacity,
			Dial: func(ctx context.Context) (lanes.Transport, error) {
				return flight.Dial(ctx, sinkOpts)
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			if err := l.Submit(ctx, batches[i%benchDistinct], lanes.NoCommit{}); err != nil {
				b.Fatal(err)
			}
		}
		// Close drains: it returns once every submitted batch is confirmed.
		if err := l.Close(ctx); err != nil {
			b.Fatal(err)
		}
		if l.Delivered() != uint64(b.N) || l.Rebuilds() != 0 {
			b.Fatalf("delivered %d of %d, %d rebuilds", l.Delivered(), b.N, l.Rebuilds())
		}
	case "raw":
		rawDoPut(b, ctx, addr, mem, batches)
	case "serial":
		s, err := flight.Dial(ctx, sinkOpts)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			if err := s.Send(ctx, uint64(i+1), batches[i%benchDistinct]); err != nil {
				b.Fatal(err)
			}
			if err := s.WaitDurable(ctx, uint64(i+1)); err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "batches/s")
	// Sink and receiver share the process, so this is the CPU both ends
	// spend per batch: on a shared machine it still measures the code when
	// batches/s mostly measures the neighbours.
	if cpu := cpuSeconds() - cpu0; cpu > 0 {
		b.ReportMetric(cpu*1e6/float64(b.N), "cpu-us/batch")
	}
}

// cpuSeconds is the process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// rawDoPut writes b.N batches on one DoPut with arrow-go's writer and the
// same app_metadata, drops the PutResults, and returns when the server ended
// the stream (after its last sync).
func rawDoPut(b *testing.B, ctx context.Context, addr string, mem memory.Allocator, batches []*batch.Batch) {
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20), grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	stream, err := arrowflight.NewClientFromConn(conn, nil).DoPut(ctx)
	if err != nil {
		b.Fatal(err)
	}
	drained := make(chan error, 1)
	go func() {
		for {
			if _, err := stream.Recv(); err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				drained <- err
				return
			}
		}
	}()
	w := arrowflight.NewRecordWriter(stream, ipc.WithSchema(flighttest.Schema), ipc.WithAllocator(mem))
	w.SetFlightDescriptor(&arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"bench", "raw"}})
	var md []byte
	for i := 0; i < b.N; i++ {
		bt := batches[i%benchDistinct]
		md = appendMeta(md[:0], uint64(i+1), bt.Spans)
		if err := w.WriteWithAppMetadata(bt.Rec, md); err != nil {
			b.Fatal(err)
		}
	}
	_ = w.Close()
	if err := stream.CloseSend(); err != nil {
		b.Fatal(err)
	}
	if err := <-drained; err != nil {
		b.Fatal(err)
	}
}

// appendMeta is the documented app_metadata encoding, written out here so
// that the raw baseline shares no code with the sink.
func appendMeta(dst []byte, offset uint64, spans []batch.OffsetSpan) []byte {
	dst = fmt.Appendf(dst, `{"offset_id":%d,"spans":[`, offset)
	for i, s := range spans {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = fmt.Appendf(dst, `{"partition":%q,"first":%d,"last":%d}`, s.Partition, s.First, s.Last)
	}
	return append(dst, "]}"...)
}
