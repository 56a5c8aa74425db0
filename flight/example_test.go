package flight_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
)

// Using the Flight sink directly, as a lane does: Send never waits for an
// acknowledgement, and one WaitDurable on the highest offset covers every
// batch sent before it (the receiver's acks are cumulative). Normally a
// lanes.Lane drives the Sink; see the lanes package example.
func ExampleSink() {
	dir, err := os.MkdirTemp("", "thalweg-flight-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	srv, err := receiver.New(receiver.Options{Dir: dir})
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

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	sink, err := flight.Dial(ctx, flight.Options{
		Endpoint:    lis.Addr().String(),
		Path:        []string{"events"},
		Compression: flight.CompressionZstd,
		Allocator:   mem,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer sink.Close()

	var batches []*batch.Batch
	asm, err := batch.NewAssembler(batch.AssemblerOptions{
		Allocator: mem, MaxRows: 40,
		Emit: func(b *batch.Batch) { batches = append(batches, b) },
	})
	if err != nil {
		log.Fatal(err)
	}
	for seq := uint64(1); seq <= 100; seq++ {
		if err := asm.Add(&batch.Record{Partition: "persistent://public/default/orders-partition-3", Seq: seq, Payload: []byte(`{"n":1}`)}); err != nil {
			log.Fatal(err)
		}
	}
	asm.Close()

	// Offsets are the caller's: strictly increasing on one stream.
	var last uint64
	for i, b := range batches {
		last = uint64(10 * (i + 1))
		if err := sink.Send(ctx, last, b); err != nil { // does not keep b
			log.Fatal(err)
		}
		b.Release()
	}
	if err := sink.WaitDurable(ctx, last); err != nil {
		log.Fatal(err)
	}
	offset, rows, _ := sink.Acked()
	fmt.Printf("sent %d batches; durable up to offset %d (%d rows)\n", len(batches), offset, rows)
	_ = sink.Close()
	fmt.Println("arrow bytes still allocated:", mem.CurrentAlloc())
	// Output:
	// sent 3 batches; durable up to offset 30 (100 rows)
	// arrow bytes still allocated: 0
}
