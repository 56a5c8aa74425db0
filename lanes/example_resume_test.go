package lanes_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"time"

	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
)

// deliver is the library example of the README, which quotes it verbatim
// (TestReadmeQuotesLibraryExample): it sends records to an Arrow Flight
// endpoint through a raw-anchor lane, resumes after what an earlier run made
// durable, and returns once everything it submitted is durable.
func deliver(ctx context.Context, storeDir, endpoint string, records []batch.Record) (err error) {
	store, err := offsetstore.Open(storeDir, offsetstore.Options{})
	if err != nil {
		return err
	}
	// Deferred first, so it runs last: the lane's final commits need the store.
	defer func() { err = errors.Join(err, store.Close()) }()

	// Resume: the delivered watermark is what an earlier run made durable.
	delivered, err := store.Delivered("raw")
	if err != nil {
		return err
	}
	from := delivered["persistent://public/default/events-partition-0"].Seq // 0 on the first run
	fmt.Println("resuming after seq", from)

	lane, err := lanes.New[lanes.RawAnchor](lanes.Options{
		Destination: "raw", // the offset-store key and the metric attribute
		Capacity:    256,
		Committer:   store,
		Dial: func(ctx context.Context) (lanes.Transport, error) {
			return flight.Dial(ctx, flight.Options{Endpoint: endpoint, Path: []string{"raw"}})
		},
		// The lane redials (and replays) by itself; this makes a failing
		// endpoint visible. Logs go to slog.Default() unless Options.Logger.
		OnStateChange: func(c lanes.StateChange) {
			if c.Err != nil {
				log.Printf("lane %s -> %s (attempt %d): %v", c.From, c.To, c.Attempt, c.Err)
			}
		},
	})
	if err != nil {
		return err
	}
	defer func() {
		// Close drains what is still in flight, bounded, even when ctx is done.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err = errors.Join(err, lane.Close(cctx))
	}()

	var submitErr error
	asm, err := batch.NewAssembler(batch.AssemblerOptions{
		MaxRows: 100,
		// Emit owns b; the lane takes its own reference. Emit calls are
		// serialised by the assembler, and Close waits for them.
		Emit: func(b *batch.Batch) {
			defer b.Release()
			if submitErr != nil {
				return
			}
			submitErr = lane.Submit(ctx, b, lanes.RawAnchor{OnDurable: func(err error) {
				// Fires in order once b's offsets are synced in the store:
				// acknowledge upstream here if err == nil. Must not block.
			}})
		},
	})
	if err != nil {
		return err
	}
	for i := range records {
		if records[i].Seq <= from {
			continue // durable in an earlier run
		}
		if err := asm.Add(&records[i]); err != nil {
			return errors.Join(err, asm.Close())
		}
	}
	if err := errors.Join(asm.Close(), submitErr); err != nil { // Close emits the last batch
		return err
	}
	// Wait until everything submitted is durable at the sink and in the store.
	return lane.Flush(ctx)
}

// Example_resume runs the README's library example twice against a durable
// Flight receiver on loopback: the first run delivers 150 records, the
// second, given all 250, resumes from the store's delivered watermark and
// sends only the 100 new ones — the receiver ends with each record once.
func Example_resume() {
	dir, err := os.MkdirTemp("", "thalweg-resume-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

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

	records := make([]batch.Record, 250)
	for i := range records {
		records[i] = batch.Record{Partition: "persistent://public/default/events-partition-0", Seq: uint64(i + 1), Payload: []byte("hello")}
	}
	storeDir := filepath.Join(dir, "offsets")
	for _, n := range []int{150, 250} {
		if err := deliver(ctx, storeDir, lis.Addr().String(), records[:n]); err != nil {
			log.Fatal(err)
		}
	}

	info, err := srv.GetFlightInfo(ctx, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"raw"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("records at the receiver:", info.TotalRecords)
	// Output:
	// resuming after seq 0
	// resuming after seq 150
	// records at the receiver: 250
}
