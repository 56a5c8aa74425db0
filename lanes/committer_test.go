package lanes

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
)

// heldCommitter breaks the Committer contract on purpose: it keeps every
// callback and lets the test fire them in any order, as a Committer that
// ignores the contract's order would.
type heldCommitter struct {
	mu  sync.Mutex
	cbs []func(error)
}

func (c *heldCommitter) CommitDelivered(_ string, _ []batch.OffsetSpan, cb func(error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cbs = append(c.cbs, cb)
}

func (c *heldCommitter) CommitCoverage(d string, s []batch.OffsetSpan, cb func(error)) {
	c.CommitDelivered(d, s, cb)
}

func (c *heldCommitter) fire(i int, err error) {
	c.mu.Lock()
	cb := c.cbs[i]
	c.mu.Unlock()
	cb(err)
}

func (c *heldCommitter) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cbs)
}

// A Committer that calls back out of order (or twice) is caught: the lane
// cannot tell which of its commits are durable, so from the break on no
// token is released with nil, every token is still released exactly once
// and in offset order, and Err reports ErrCommitterContract.
func TestCommitterOrderIsChecked(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDialer(newFakeServer(), func() time.Duration { return 0 })
	com := &heldCommitter{}
	l, err := New[RawAnchor](Options{Destination: "raw", Dial: d.dial, Committer: com})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	tk := newTokens()
	for i := 1; i <= 4; i++ {
		b := newBatch(mem, 1, uint64(i*10), uint64(i*10+9))
		if err := l.Submit(ctx, b, tk.tok(i)); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	eventually(t, "4 commits", func() bool { return com.len() == 4 })

	com.fire(0, nil) // in order: released with nil
	com.fire(2, nil) // out of order: commit 1 is next
	com.fire(1, nil)
	com.fire(1, nil) // twice
	com.fire(3, nil)
	calls, order := tk.snapshot()
	if !slices.Equal(order, []int{1, 2, 3, 4}) {
		t.Fatalf("released %v, want [1 2 3 4]", order)
	}
	for i := 1; i <= 4; i++ {
		if len(calls[i]) != 1 {
			t.Fatalf("token %d called %d times", i, len(calls[i]))
		}
	}
	if calls[1][0] != nil {
		t.Errorf("token 1 (in order): %v", calls[1][0])
	}
	for i := 2; i <= 4; i++ {
		if !errors.Is(calls[i][0], ErrCommitterContract) || !errors.Is(calls[i][0], ErrCommitFailed) {
			t.Errorf("token %d: %v, want ErrCommitFailed wrapping ErrCommitterContract", i, calls[i][0])
		}
	}
	if !errors.Is(l.Err(), ErrCommitterContract) {
		t.Errorf("Err %v, want ErrCommitterContract", l.Err())
	}
	if err := l.Flush(ctx); !errors.Is(err, ErrCommitFailed) {
		t.Errorf("Flush %v, want ErrCommitFailed", err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
