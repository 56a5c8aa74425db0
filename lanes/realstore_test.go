package lanes

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/offsetstore"
)

// The lanes on the real Pebble offset store (on disk): a raw-anchor lane and
// a coverage lane share one store; the raw lane's stream dies mid-run. Every
// upstream release happens only once the store's durable view covers it, in
// order, and after a reopen recovery reads exactly the delivered watermark.
func TestLanesOnRealOffsetStore(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	st, err := offsetstore.Open(dir, offsetstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rmu sync.Mutex
	rng := rand.New(rand.NewPCG(7, 7))
	delay := randDelay(rng, &rmu, 2*time.Millisecond)

	rawD := newDialer(newFakeServer(), delay)
	covD := newDialer(newFakeServer(), delay)
	opts := Options{Destination: "raw", Capacity: 16, Dial: rawD.dial, Committer: st}
	fastBackoff(&opts)
	raw, err := New[RawAnchor](opts)
	if err != nil {
		t.Fatal(err)
	}
	cov, err := New[Coverage](Options{Destination: "cov", Capacity: 16, Dial: covD.dial, Committer: st})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)

	const n = 300
	var mu sync.Mutex
	next := 1
	var acked uint64
	for i := 1; i <= n; i++ {
		first, last := uint64(i*10-9), uint64(i*10)
		b := newBatch(mem, 4, first, last)
		idx := i
		tok := RawAnchor{OnDurable: func(err error) {
			if err != nil {
				t.Errorf("token %d: %v", idx, err)
				return
			}
			pos, derr := st.Delivered("raw")
			if derr != nil || pos[pname(4)].Seq < last {
				t.Errorf("token %d (seq ..%d) released, durable view %v (%v)", idx, last, pos[pname(4)], derr)
			}
			mu.Lock()
			if idx != next {
				t.Errorf("token %d released, expected %d", idx, next)
			}
			next++
			acked = last
			mu.Unlock()
		}}
		if err := raw.Submit(ctx, b, tok); err != nil {
			t.Fatal(err)
		}
		if err := cov.Submit(ctx, b, Coverage{}); err != nil {
			t.Fatal(err)
		}
		b.Release()
		if i == n/2 {
			rawD.latest().kill()
		}
	}
	if err := raw.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cov.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if raw.Rebuilds() != 1 {
		t.Errorf("raw rebuilds %d, want 1", raw.Rebuilds())
	}
	mu.Lock()
	if next != n+1 || acked != n*10 {
		t.Errorf("released %d tokens up to seq %d, want %d up to %d", next-1, acked, n, n*10)
	}
	mu.Unlock()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = offsetstore.Open(dir, offsetstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := st.Delivered("raw")
	if err != nil || d[pname(4)].Seq != n*10 {
		t.Errorf("recovered delivered %v (%v), want seq %d", d, err, n*10)
	}
	c, err := st.Coverage("cov")
	if err != nil || c[pname(4)].Seq != n*10 {
		t.Errorf("recovered coverage %v (%v), want seq %d", c, err, n*10)
	}
	if d, _ := st.Delivered("cov"); len(d) != 0 {
		t.Errorf("coverage lane wrote a delivered watermark: %v", d)
	}
}
