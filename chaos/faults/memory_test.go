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
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/source/gen"
)

// frozenServer reads every DoPut message and discards it, never
// acknowledging: the sink's batches are all accepted and none is ever
// durable.
type frozenServer struct {
	arrowflight.BaseFlightServer
}

func (*frozenServer) DoPut(s arrowflight.FlightService_DoPutServer) error {
	for {
		if _, err := s.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// TestMemoryBoundedUnderNeverAckingSink runs generator → assembler → lane →
// Flight sink against a server that never acknowledges, with the producer
// pulling as fast as it can. Within the run (about 8 s) the lane fills to
// its capacity, Submit blocks (the assembler's Emit and so the producer's
// pull block with it: the generator stops producing), and both the Arrow
// memory (checked allocator) and the Go heap stay under the bound implied
// by capacity × batch size.
func TestMemoryBoundedUnderNeverAckingSink(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	arrowflight.RegisterFlightServiceServer(g, &frozenServer{})
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
	asm, err := batch.NewAssembler(batch.AssemblerOptions{
		Allocator: mem, MaxRows: rows, Linger: time.Hour,
		Emit: func(b *batch.Batch) {
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

	deadline := time.Now().Add(10 * time.Second)
	for lane.Submitted() < capacity && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if lane.Submitted() != capacity {
		t.Fatalf("lane accepted %d batches, want its capacity %d", lane.Submitted(), capacity)
	}
	time.Sleep(200 * time.Millisecond) // the producer reaches its blocked Emit
	blockedAt := pulled.Load()
	var maxArrow int64
	var maxHeap uint64
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		maxArrow = max(maxArrow, int64(mem.CurrentAlloc()))
		runtime.ReadMemStats(&ms)
		maxHeap = max(maxHeap, ms.HeapInuse)
	}

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
