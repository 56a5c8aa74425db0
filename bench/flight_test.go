package bench_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
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
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
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
//	tcp:    the same FlightData bytes written over a plain 127.0.0.1 TCP
//	        connection to a reader that discards them: what the loopback
//	        costs without gRPC, Arrow or the receiver.
//
// Every Flight mode ends when the receiver has made the last batch durable,
// so they measure delivered throughput. AckDelay adds an artificial delay
// before every group fsync. commit-busy is the share of the wall time the
// receiver's committer spent writing and syncing (receiver.SyncStats):
// near 1, the disk set the rate, and -flight.dir on a tmpfs mount shows
// what the transport does without it.
//
// The modes run in ABBA order (flightRounds). Compare cpu-us/batch (both ends: the receiver is in the
// process) and MB/s across modes of one run; lane/raw should be <= 1.1 in
// CPU, lane/tcp >= 0.4 in MB/s for large batches, lane/serial >= 100 in
// MB/s at 5 ms.

const benchDistinct = 32

// laneCapacity is the lane's Options.Capacity, by default the lane's own
// default (the benchmark measures what a user gets). It bounds the batches
// in flight, and so the receiver's group commit: a lane that fills syncs
// about Capacity/2 batches at a time, where raw, unbounded, syncs whatever
// arrived during the previous sync (batches/ack shows both).
var laneCapacity = flag.Int("flight.capacity", 0, "FlightDoPut: the lane's Options.Capacity (0: lanes.DefaultCapacity; Options.MaxBytes stays at its default)")

// Batch shapes: "large" (1000 rows of 256 B, ~280 KB: bandwidth-bound),
// "small" (10 rows of 100 B, ~1.2 KB: round-trip-bound, where the serial
// baseline hurts most) and, only when -flight.shapes names it, "max" (8000
// rows of 1 KB, ~8 MB: the worker's default batch limit, 8 MiB).
var shapes = []struct {
	name          string
	rows, payload int
}{{"large", 1000, 256}, {"small", 10, 100}, {"max", 8000, 1000}}

var flightShapes = flag.String("flight.shapes", "large,small", "FlightDoPut: the batch shapes to run, comma-separated (large, small, max)")

// flightDir is where the receiver keeps its segments: the test's temporary
// directory by default. A tmpfs mount takes the disk out of the figures
// (the receiver then writes through the page cache: tmpfs takes no direct
// writes).
var flightDir = flag.String("flight.dir", "", "FlightDoPut: the parent of the receiver's directory (default: the test's temporary directory)")

// flightRounds is how many times each mode runs per shape and delay, in
// ABBA order: odd rounds run the modes in reverse, so that every mode runs
// first as often as last. A repeated sub-benchmark gets go test's "#01"
// suffix; -count repeats each one in place.
var flightRounds = flag.Int("flight.rounds", 2, "FlightDoPut: rounds of the modes, in ABBA order")

func BenchmarkFlightDoPut(b *testing.B) {
	for _, sh := range shapes {
		if !slices.Contains(strings.Split(*flightShapes, ","), sh.name) {
			continue
		}
		for _, delay := range []time.Duration{0, 5 * time.Millisecond} {
			for round := range *flightRounds {
				modes := []string{"lane", "raw", "tcp", "serial"}
				if round%2 == 1 {
					slices.Reverse(modes)
				}
				for _, mode := range modes {
					if mode == "tcp" && delay != 0 {
						continue // no receiver, nothing to delay
					}
					b.Run(fmt.Sprintf("batch=%s/ackdelay=%v/%s", sh.name, delay, mode), func(b *testing.B) {
						benchFlight(b, mode, delay, sh.rows, sh.payload)
					})
				}
			}
		}
	}
}

func benchFlight(b *testing.B, mode string, delay time.Duration, rows, payload int) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	var (
		addr string
		srv  *receiver.Server
	)
	if mode != "tcp" {
		dir := b.TempDir()
		if *flightDir != "" {
			var err error
			if dir, err = os.MkdirTemp(*flightDir, "flight-bench-"); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = os.RemoveAll(dir) })
		}
		srv, addr = flighttest.Receiver(b, receiver.Options{Dir: dir, AckDelay: delay})
	}
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
	var sync0 receiver.SyncStats
	if srv != nil {
		sync0 = srv.SyncStats()
	}
	start, cpu0 := time.Now(), testenv.ProcessCPU().Seconds()
	var acks uint64 // lane: bursts the ack task confirmed; raw: PutResults
	switch mode {
	case "lane":
		l, err := lanes.New[lanes.NoCommit](lanes.Options{
			Destination: "bench",
			Capacity:    *laneCapacity,
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
		acks = l.Bursts()
	case "raw":
		acks = rawDoPut(b, ctx, addr, mem, batches)
	case "tcp":
		tcpStream(b, mem, batches)
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
	wall := time.Since(start)
	b.ReportMetric(float64(b.N)/wall.Seconds(), "batches/s")
	if srv != nil {
		// The share of the time the receiver's committer was writing and
		// syncing: near 1, the disk set the rate.
		b.ReportMetric(float64(srv.SyncStats().Busy-sync0.Busy)/float64(wall), "commit-busy")
	}
	if acks > 0 {
		// How many batches one acknowledgement covered (the receiver's
		// group commit): the modes' CPU per batch is comparable only
		// when this is too.
		b.ReportMetric(float64(b.N)/float64(acks), "batches/ack")
	}
	// Sink and receiver share the process, so this is the CPU both ends
	// spend per batch: on a shared machine it still measures the code when
	// batches/s mostly measures the neighbours.
	if cpu := testenv.ProcessCPU().Seconds() - cpu0; cpu > 0 {
		b.ReportMetric(cpu*1e6/float64(b.N), "cpu-us/batch")
		b.ReportMetric(cpu*1e9/float64(b.N)/float64(bytes/benchDistinct), "cpu-ns/B")
	}
}

// rawDoPut writes b.N batches on one DoPut with arrow-go's writer and the
// same app_metadata, drops the PutResults, and returns when the server ended
// the stream (after its last sync).
func rawDoPut(b *testing.B, ctx context.Context, addr string, mem memory.Allocator, batches []*batch.Batch) (acks uint64) {
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
			acks++
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
	return acks
}

// tcpStream writes b.N batches' FlightData bytes (encoded before the timer
// starts, as a sender that already holds them) over one loopback TCP
// connection to a goroutine that reads and discards them, and returns when
// the reader has read them all.
func tcpStream(b *testing.B, mem memory.Allocator, batches []*batch.Batch) {
	b.StopTimer()
	wire := make([][]byte, len(batches))
	var md []byte
	for i, bt := range batches {
		md = appendMeta(md[:0], uint64(i+1), bt.Spans)
		m, err := flightwire.EncodeBatch(bt.Rec, md, []ipc.Option{ipc.WithAllocator(mem)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		bufs, _ := flightwire.Codec{}.Marshal(m)
		wire[i] = bufs.Materialize()
		bufs.Free()
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer lis.Close()
	read := make(chan int64, 1)
	go func() {
		c, err := lis.Accept()
		if err != nil {
			read <- -1
			return
		}
		defer c.Close()
		n, _ := io.CopyBuffer(io.Discard, c, make([]byte, 64<<10))
		read <- n
	}()
	c, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	var sent int64
	for i := 0; i < b.N; i++ {
		n, err := c.Write(wire[i%len(wire)])
		if err != nil {
			b.Fatal(err)
		}
		sent += int64(n)
	}
	_ = c.Close()
	if n := <-read; n != sent {
		b.Fatalf("reader got %d of %d bytes", n, sent)
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
