package faults_test

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/source/gen"
)

// frozenServer reads every DoPut message and discards it, never
// acknowledging: the sink's batches are all accepted and none is ever
// durable. batches counts the record batch messages it read.
type frozenServer struct {
	arrowflight.BaseFlightServer
	batches atomic.Int64
}

func (f *frozenServer) DoPut(s arrowflight.FlightService_DoPutServer) error {
	for {
		m, err := s.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if len(m.DataBody) > 0 {
			f.batches.Add(1)
		}
	}
}

// TestMemoryBoundedUnderNeverAckingSink runs generator → assembler → lane →
// Flight sink against a server that never acknowledges, with the producer
// pulling as fast as it can. The lane fills to its capacity, Submit blocks
// (the assembler's Emit and so the producer's pull block with it: the
// generator stops producing), and once the server has read every batch
// the lane holds, both the Arrow memory (checked allocator) and the Go
// heap are under the bound implied by capacity × batch size.
func TestMemoryBoundedUnderNeverAckingSink(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	frozen := &frozenServer{}
	arrowflight.RegisterFlightServiceServer(g, frozen)
	served := make(chan struct{})
	go func() { defer close(served); _ = g.Serve(lis) }()
	defer func() { g.Stop(); <-served }()

	const capacity, rows, payload = 16, 1000, 512
	lane, err := lanes.New[lanes.NoCommit](lanes.Options{
		Destination: "frozen", Capacity: capacity,
		Dial: func(ctx context.Context) (lanes.Transport, error) {
			return flight.Dial(ctx, flight.Options{Endpoint: lis.Addr().String(), Path: []string{"frozen"},
				Allocator: mem, AckTimeout: -1}) // never give up on the silent server
		},
	})
	if err != nil {
		t.Fatal(err)
	}

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap := ms.HeapInuse

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var maxBatch atomic.Int64
	var emits atomic.Int64
	blocked := make(chan struct{})
	asm, err := batch.NewAssembler(batch.AssemblerOptions{
		Allocator: mem, MaxRows: rows, Linger: time.Hour,
		Emit: func(b *batch.Batch) {
			if emits.Add(1) == capacity+1 {
				close(blocked) // this Submit finds the lane full
			}
			maxBatch.Store(max(maxBatch.Load(), b.BufferBytes()))
			_ = lane.Submit(ctx, b, lanes.NoCommit{}) // blocks while the lane is full
			b.Release()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	src, err := gen.New(gen.Options{Seed: 7, Partitions: 4, Mode: gen.ModeRaw, PayloadSize: payload})
	if err != nil {
		t.Fatal(err)
	}
	var pulled atomic.Uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var rec batch.Record
		for ctx.Err() == nil && src.Next(&rec) {
			pulled.Add(1)
			if err := asm.Add(&rec); err != nil {
				return
			}
		}
	}()

	// Teardown, deferred so that it also runs when an assertion fails:
	// release the producer, drop the assembler's partial batch, and
	// force-stop the lane (nothing was confirmed; a forced stop only means
	// redelivery).
	var closeErr error
	var once sync.Once
	teardown := func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			_ = asm.Close()
			stopCtx, stop := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer stop()
			closeErr = lane.Close(stopCtx)
		})
	}
	defer teardown()

	// The producer is in the Emit whose Submit finds the lane full, and
	// pulls nothing until it returns.
	select {
	case <-blocked:
	case <-time.After(10 * time.Second):
		t.Fatalf("the assembler emitted %d batches, want %d", emits.Load(), capacity+1)
	}
	blockedAt := pulled.Load()
	// Everything the lane holds reached the server: nothing is left in
	// flight that could still grow, so this is the pipeline's peak.
	testenv.WaitFor(t, 10*time.Second, "the server to read the lane's batches", func() bool { return frozen.batches.Load() >= capacity })
	maxArrow := int64(mem.CurrentAlloc())
	runtime.ReadMemStats(&ms)
	maxHeap := ms.HeapInuse

	bb := maxBatch.Load()
	// Retained by the lane: capacity batches; besides, the batch blocked in
	// Emit, the one the assembler is filling (its builders grow by doubling,
	// so up to twice a batch) and the sink's IPC encoding scratch.
	arrowBound := (capacity + 6) * bb
	// The heap adds gRPC frames, IPC encoding scratch and garbage not yet
	// collected (GOGC=100 lets the heap reach twice the live data).
	heapBound := baseHeap + uint64(3*arrowBound) + 32<<20
	t.Logf("batch %d KiB; pulled %d records (blocked at %d); Arrow max %d KiB (bound %d KiB); heap max %d MiB (bound %d MiB, base %d MiB)",
		bb>>10, pulled.Load(), blockedAt, maxArrow>>10, arrowBound>>10, maxHeap>>20, heapBound>>20, baseHeap>>20)
	if lane.Submitted() != capacity || lane.Confirmed() != 0 {
		t.Fatalf("submitted %d, confirmed %d: the lane went past its capacity", lane.Submitted(), lane.Confirmed())
	}
	if p := pulled.Load(); p != blockedAt || p > uint64((capacity+2)*rows) {
		t.Fatalf("the source kept pulling: %d records after blocking at %d (bound %d)", p, blockedAt, (capacity+2)*rows)
	}
	if maxArrow > arrowBound {
		t.Fatalf("Arrow memory reached %d bytes, bound %d", maxArrow, arrowBound)
	}
	if maxHeap > heapBound {
		t.Fatalf("heap in use reached %d bytes, bound %d", maxHeap, heapBound)
	}

	teardown()
	if !errors.Is(closeErr, context.DeadlineExceeded) {
		t.Fatalf("lane Close: %v; want the drain cut short", closeErr)
	}
}
