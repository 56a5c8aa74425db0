package pulsar

import (
	"bytes"
	"testing"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/offsetstore"
)

// StorePositions reads what a pipeline made durable in a real store on
// disk, by partition name across a reopen: the anchor's
// delivered watermark with its message id — not another destination's.
func TestStorePositionsReadsTheAnchorsDurableWatermark(t *testing.T) {
	dir := t.TempDir()
	store, err := offsetstore.Open(dir, offsetstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const id = "persistent://public/default/t-partition-1"
	done := make(chan error, 2)
	store.CommitDelivered("raw", []batch.OffsetSpan{{Partition: id, First: 1, Last: 42, LastID: []byte("id-42")}}, func(err error) { done <- err })
	store.CommitDelivered("other", []batch.OffsetSpan{{Partition: id, First: 1, Last: 99}}, func(err error) { done <- err })
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	store, err = offsetstore.Open(dir, offsetstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	}()
	pos := StorePositions(store, "raw")
	d, err := pos.Delivered()
	if err != nil {
		t.Fatal(err)
	}
	if got := d[id]; got.Seq != 42 || !bytes.Equal(got.ID, []byte("id-42")) {
		t.Fatalf("Delivered()[%q] = %+v, want seq 42 id-42 (the anchor's, not another destination's)", id, got)
	}
}
