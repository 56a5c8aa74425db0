package iceberg_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/faultproxy"
	"github.com/thalweg/thalweg/internal/testkit/s3test"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// TestCloseBoundedWhenStoreHangs: with the object store stalled (every
// connection to it open, no byte flowing) while a batch waits for its
// commit and its data file is open, Close returns within CloseTimeout,
// and once the store answers again every retained batch is released.
func TestCloseBoundedWhenStoreHangs(t *testing.T) {
	srv := s3test.Start(t)
	srv.CreateBucket(t, "lake")
	px, err := faultproxy.New(strings.TrimPrefix(srv.Endpoint, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Resume(); _ = px.Close() })
	o := s3Options(t, srv, "lake")
	o.S3.Endpoint = "http://" + px.Addr()
	o.Ordered = true             // the sink retains each batch's rows until its commit
	o.CommitInterval = time.Hour // the first commit is at once; the next batch waits in its open data file
	_, mem, _, s := newSink(t, o)
	// Longer than newSink's minute: moto on a loaded machine is slow.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	send(t, ctx, s, 1, rawBatch(mem, 0, 1, 100))
	if err := s.WaitDurable(ctx, 1); err != nil { // one commit through the proxy
		t.Fatal(err)
	}
	px.Stall()
	send(t, ctx, s, 2, rawBatch(mem, 0, 101, 100))

	closed := make(chan error, 1)
	start := time.Now()
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if took := time.Since(start); took > iceberg.CloseTimeout+2*time.Second {
			t.Fatalf("Close took %v against a stalled store, bound %v (err %v)", took, iceberg.CloseTimeout, err)
		}
		t.Logf("Close against a stalled store: %v after %v", err, time.Since(start))
	case <-time.After(iceberg.CloseTimeout + 10*time.Second):
		px.Resume() // let Close finish so that the test ends
		t.Fatalf("Close still blocked %v after it was called against a stalled store (bound %v)",
			time.Since(start), iceberg.CloseTimeout)
	}
	px.Resume()
	checked := mem.(*memory.CheckedAllocator)
	testenv.WaitFor(t, 30*time.Second, "the retained batches released", func() bool { return checked.CurrentAlloc() == 0 })
}
