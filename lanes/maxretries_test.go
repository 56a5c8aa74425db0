package lanes

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A negative MaxRetries (the configuration's lane.max_retries: 0) poisons
// the stream on the first transient error instead of retrying it: one
// transient durable wait costs one rebuild, and the batch is still
// delivered, on the new stream.
func TestNegativeMaxRetriesRebuildsAtOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDialer(newFakeServer(), func() time.Duration { return 0 })
	opts := Options{Destination: "raw", Dial: d.dial, Committer: newFakeCommitter(func() time.Duration { return 0 }), MaxRetries: -1}
	fastBackoff(&opts)
	l, err := New[RawAnchor](opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	tk := newTokens()
	b := newBatch(mem, 0, 1, 1)
	if err := l.Submit(ctx, b, tk.tok(1)); err != nil {
		t.Fatal(err)
	}
	b.Release()
	eventually(t, "delivered 1", func() bool { return l.Delivered() == 1 })
	d.nth(t, 1).with(func(t *fakeTransport) { t.mu.transientWait = 1 })
	b = newBatch(mem, 0, 2, 2)
	if err := l.Submit(ctx, b, tk.tok(2)); err != nil {
		t.Fatal(err)
	}
	b.Release()
	eventually(t, "delivered 2", func() bool { return l.Delivered() == 2 })
	if d.count() != 2 || l.Rebuilds() != 1 {
		t.Errorf("dials %d rebuilds %d after one transient error, want 2/1 (no retry)", d.count(), l.Rebuilds())
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
