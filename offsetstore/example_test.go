package offsetstore_test

import (
	"fmt"
	"log"
	"os"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/offsetstore"
)

// Committing delivered positions and recovering them after a restart.
// CommitDelivered only enqueues; its callback runs once the synced group
// commit made the position durable, and only then may the records be
// acknowledged upstream. A reopened store reads back exactly the durable
// state: that is where a restarted source resumes.
func Example() {
	dir, err := os.MkdirTemp("", "thalweg-offsetstore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := offsetstore.Open(dir, offsetstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// Positions are kept by partition name, seqs are the source's global
	// positions (for Pulsar the broker's entry index plus one).
	const (
		p0 = "persistent://public/default/events-partition-0"
		p1 = "persistent://public/default/events-partition-1"
	)

	durable := make(chan string, 3)
	commit := func(spans ...batch.OffsetSpan) {
		store.CommitDelivered("raw", spans, func(err error) {
			// On the store's notifier goroutine, in commit order.
			if err != nil {
				durable <- fmt.Sprint(spans, " failed: ", err)
				return
			}
			durable <- fmt.Sprint(spans, " durable")
		})
	}
	commit(batch.OffsetSpan{Partition: p0, First: 1, Last: 100, LastID: []byte("msg-100")})
	commit(batch.OffsetSpan{Partition: p0, First: 101, Last: 180, LastID: []byte("msg-180")},
		batch.OffsetSpan{Partition: p1, First: 1, Last: 42, LastID: []byte("msg-42")})
	// Coverage is a secondary destination's own watermark; recovery never reads it.
	store.CommitCoverage("zerobus", []batch.OffsetSpan{{Partition: p0, First: 1, Last: 100}}, nil)
	commit(batch.OffsetSpan{Partition: p0, First: 50, Last: 60}) // below the watermark: a no-op
	for range 3 {
		fmt.Println(<-durable)
	}
	if err := store.Close(); err != nil { // a final synced commit
		log.Fatal(err)
	}

	// After a restart.
	store, err = offsetstore.Open(dir, offsetstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	delivered, _ := store.Delivered("raw")
	for _, p := range []string{p0, p1} {
		fmt.Printf("%s: resume after seq %d (upstream id %s)\n", p, delivered[p].Seq, delivered[p].ID)
	}
	coverage, _ := store.Coverage("zerobus")
	dests, _ := store.Destinations()
	fmt.Println("zerobus coverage of", p0, "at", coverage[p0].Seq, "; destinations:", dests)
	// Output:
	// [persistent://public/default/events-partition-0[1..100]] durable
	// [persistent://public/default/events-partition-0[101..180] persistent://public/default/events-partition-1[1..42]] durable
	// [persistent://public/default/events-partition-0[50..60]] durable
	// persistent://public/default/events-partition-0: resume after seq 180 (upstream id msg-180)
	// persistent://public/default/events-partition-1: resume after seq 42 (upstream id msg-42)
	// zerobus coverage of persistent://public/default/events-partition-0 at 100 ; destinations: [raw zerobus]
}
