package lanes_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
)

// Embedding an ack lane without the pipeline: a Flight sink behind a
// raw-anchor lane whose confirmations are committed to a Pebble offset store.
// Submit returns as soon as the sink accepted a batch; each token's
// OnDurable fires, in submit order, once the batch is durable at the receiver
// and its delivered offsets are synced in the store — the moment a source may
// acknowledge the records upstream.
func Example() {
	dir, err := os.MkdirTemp("", "thalweg-lanes-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A durable Arrow Flight receiver on loopback. In production this is
	// `thalweg receive` or any Flight server that speaks package flight's
	// app_metadata encoding.
	srv, err := receiver.New(receiver.Options{Dir: filepath.Join(dir, "flight")})
	if err != nil {
		log.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	defer func() { _ = srv.Stop(); <-served }()

	store, err := offsetstore.Open(filepath.Join(dir, "offsets"), offsetstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// A checked allocator shows, at the end, that every Arrow buffer was
	// returned: the lane Releases what it retained, the example its own.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())

	lane, err := lanes.New[lanes.RawAnchor](lanes.Options{
		Destination: "raw", // the offset-store key and the metric attribute
		Capacity:    16,
		Committer:   store,
		Dial: func(ctx context.Context) (lanes.Transport, error) {
			// The lane dials again, and replays what was not confirmed,
			// whenever the stream is poisoned.
			return flight.Dial(ctx, flight.Options{
				Endpoint: lis.Addr().String(), Path: []string{"events"}, Allocator: mem})
		},
	})
	if err != nil {
		log.Fatal(err)
	}

	// Three batches of partition 0, seqs 1..250, from an assembler.
	var batches []*batch.Batch
	asm, err := batch.NewAssembler(batch.AssemblerOptions{
		Allocator: mem, MaxRows: 100,
		Emit: func(b *batch.Batch) { batches = append(batches, b) },
	})
	if err != nil {
		log.Fatal(err)
	}
	for seq := uint64(1); seq <= 250; seq++ {
		if err := asm.Add(&batch.Record{Partition: "persistent://public/default/events-partition-0", Seq: seq, Payload: []byte("hello")}); err != nil {
			log.Fatal(err)
		}
	}
	asm.Close()

	durable := make(chan string, len(batches))
	for _, b := range batches {
		spans := b.Spans
		tok := lanes.RawAnchor{OnDurable: func(err error) {
			// Called once, from the store's callback goroutine; must not block.
			if err != nil {
				durable <- fmt.Sprintf("%v not durable: %v", spans, err)
				return
			}
			durable <- fmt.Sprintf("%v durable: ack upstream", spans)
		}}
		if err := lane.Submit(ctx, b, tok); err != nil {
			log.Fatal(err)
		}
		b.Release() // the lane took its own reference
	}
	for range batches {
		fmt.Println(<-durable)
	}

	// Close drains (bounded by ctx) and closes the transport.
	if err := lane.Close(ctx); err != nil {
		log.Fatal(err)
	}
	delivered, err := store.Delivered("raw")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("delivered watermark: partition 0 at seq", delivered["persistent://public/default/events-partition-0"].Seq)
	// One durable wait may confirm several batches (the coalesce ratio).
	fmt.Println("batches confirmed:", lane.Confirmed(), "with at most one durable wait each:", lane.Bursts() <= lane.Confirmed())
	fmt.Println("arrow bytes still allocated:", mem.CurrentAlloc())
	// Output:
	// [persistent://public/default/events-partition-0[1..100]] durable: ack upstream
	// [persistent://public/default/events-partition-0[101..200]] durable: ack upstream
	// [persistent://public/default/events-partition-0[201..250]] durable: ack upstream
	// delivered watermark: partition 0 at seq 250
	// batches confirmed: 3 with at most one durable wait each: true
	// arrow bytes still allocated: 0
}
