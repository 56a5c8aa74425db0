package lanes

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/flight"
)

// flushAsync runs l.Flush(ctx) in a goroutine; the channel yields its result
// together with the token callbacks seen at the moment it returned.
func flushAsync(ctx context.Context, l *Lane[RawAnchor], tk *tokens) <-chan flushResult {
	out := make(chan flushResult, 1)
	go func() {
		err := l.Flush(ctx)
		calls, _ := tk.snapshot()
		out <- flushResult{err, calls}
	}()
	return out
}

type flushResult struct {
	err   error
	calls map[int][]error
}

// notYet fails the test if the flush already returned.
func notYet(t *testing.T, res <-chan flushResult, what string) {
	t.Helper()
	select {
	case r := <-res:
		t.Fatalf("Flush returned (%v) %s", r.err, what)
	case <-time.After(30 * time.Millisecond):
	}
}

func waitFlush(t *testing.T, res <-chan flushResult) flushResult {
	t.Helper()
	select {
	case r := <-res:
		return r
	case <-time.After(waitBound):
		t.Fatal("Flush did not return")
		return flushResult{}
	}
}

// submitter returns a function that submits a one-partition batch i (seqs
// i*10..i*10+9) with token tk.tok(i), or a NoCommit-like zero token when tk
// is nil.
func submitter(ctx context.Context, t *testing.T, l *Lane[RawAnchor], mem memory.Allocator, tk *tokens) func(i int) {
	return func(i int) {
		t.Helper()
		b := newBatch(mem, 0, uint64(i*10), uint64(i*10+9))
		defer b.Release()
		var tok RawAnchor
		if tk != nil {
			tok = tk.tok(i)
		}
		if err := l.Submit(ctx, b, tok); err != nil {
			t.Fatal(err)
		}
	}
}

// Flush returns only once every batch submitted before it is durable at the
// transport and its commit synced (all OnDurable callbacks fired), and a
// batch submitted after the call does not hold it up.
func TestFlushWaitsForDurableCommit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDialer(newFakeServer(), nil) // manual acks
	com := newFakeCommitter(nil)         // manual commits
	l, err := New[RawAnchor](Options{Destination: "raw", Capacity: 16, Dial: d.dial, Committer: com})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if err := l.Flush(ctx); err != nil {
		t.Fatalf("Flush of an empty lane: %v", err)
	}
	tk := newTokens()
	submit := submitter(ctx, t, l, mem, tk)
	for i := 1; i <= 5; i++ {
		submit(i)
	}
	res := flushAsync(ctx, l, tk)
	notYet(t, res, "before the transport acknowledged anything")

	tr := d.nth(t, 1)
	tr.ackAll()
	eventually(t, "5 commits", func() bool { return com.commits() == 5 })
	submit(6) // after Flush was called: not waited for
	notYet(t, res, "before any commit was synced")
	for i := range 4 {
		com.completeCommit(i)
	}
	notYet(t, res, "with the 5th commit still pending")
	com.completeCommit(4)
	r := waitFlush(t, res)
	if r.err != nil {
		t.Fatalf("Flush: %v", r.err)
	}
	for i := 1; i <= 5; i++ {
		if errs := r.calls[i]; len(errs) != 1 || errs[0] != nil {
			t.Errorf("when Flush returned, token %d had %v, want one nil OnDurable", i, errs)
		}
	}
	if _, ok := r.calls[6]; ok {
		t.Errorf("token 6 (submitted after Flush, never acked) was released: %v", r.calls[6])
	}

	// Batch 6 is the target of the next Flush.
	res = flushAsync(ctx, l, tk)
	notYet(t, res, "with batch 6 unacknowledged")
	tr.ackAll()
	eventually(t, "6 commits", func() bool { return com.commits() == 6 })
	com.completeCommit(5)
	if r := waitFlush(t, res); r.err != nil {
		t.Fatalf("second Flush: %v", r.err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// After Close, everything was durable: Flush still says so.
	if err := l.Flush(ctx); err != nil {
		t.Fatalf("Flush after a clean Close: %v", err)
	}
}

// A cancelled Flush returns the context's error and leaves the batches in
// the lane's custody; a later Flush sees them through.
func TestFlushCancellation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDialer(newFakeServer(), nil)
	com := newFakeCommitter(func() time.Duration { return time.Millisecond })
	l, err := New[RawAnchor](Options{Destination: "raw", Dial: d.dial, Committer: com})
	if err != nil {
		t.Fatal(err)
	}
	defer com.shutdown()
	ctx := ctxT(t)
	tk := newTokens()
	submitter(ctx, t, l, mem, tk)(1)

	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = l.Flush(short)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 of 1 batches not done") {
		t.Fatalf("Flush on an expired context: %v, want DeadlineExceeded naming the batch", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("cancelled Flush took %v", el)
	}
	l.mu.Lock()
	waiting := len(l.mu.flushers)
	l.mu.Unlock()
	if waiting != 0 {
		t.Fatalf("%d flush waiters left behind by a cancelled Flush", waiting)
	}

	d.nth(t, 1).ackAll()
	if err := l.Flush(ctx); err != nil {
		t.Fatalf("Flush after the ack: %v", err)
	}
	if calls, _ := tk.snapshot(); len(calls[1]) != 1 || calls[1][0] != nil {
		t.Fatalf("token after Flush: %v", calls[1])
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// Flush waits through a poisoning: the supervisor rebuilds, replays the
// unconfirmed batches, and Flush returns once the replayed ones are durable.
func TestFlushAcrossRebuild(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDialer(newFakeServer(), nil)
	com := newFakeCommitter(func() time.Duration { return time.Millisecond })
	defer com.shutdown()
	var (
		smu     sync.Mutex
		changes []StateChange
	)
	opts := Options{Destination: "raw", Capacity: 8, Dial: d.dial, Committer: com,
		OnStateChange: func(c StateChange) { smu.Lock(); changes = append(changes, c); smu.Unlock() }}
	fastBackoff(&opts)
	l, err := New[RawAnchor](opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	tk := newTokens()
	submit := submitter(ctx, t, l, mem, tk)
	submit(1)
	submit(2)
	tr1 := d.nth(t, 1)
	tr1.ackAll()
	eventually(t, "2 delivered", func() bool { return l.Delivered() == 2 })
	submit(3)
	submit(4)

	res := flushAsync(ctx, l, tk)
	d.failNext(2) // the rebuild needs three dials
	tr1.kill()
	tr2 := d.nth(t, 2)
	notYet(t, res, "before the replayed batches were acknowledged")
	eventually(t, "replay of 3 and 4", func() bool { return slices.Equal(tr2.sentOffsets(), []uint64{3, 4}) })
	tr2.ackAll()
	if r := waitFlush(t, res); r.err != nil {
		t.Fatalf("Flush across a rebuild: %v", r.err)
	} else {
		for i := 1; i <= 4; i++ {
			if errs := r.calls[i]; len(errs) != 1 || errs[0] != nil {
				t.Errorf("token %d at Flush: %v", i, errs)
			}
		}
	}
	if l.Rebuilds() != 1 {
		t.Fatalf("rebuilds %d, want 1", l.Rebuilds())
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// The state callback saw the whole story, in order, chained.
	smu.Lock()
	defer smu.Unlock()
	var story []string
	for i, c := range changes {
		if i > 0 && c.From != changes[i-1].To {
			t.Errorf("change %d %v follows one ending in %v", i, c, changes[i-1].To)
		}
		s := c.From.String() + ">" + c.To.String()
		if c.Attempt > 0 {
			s += "#" + string(rune('0'+c.Attempt))
		}
		story = append(story, s)
	}
	want := []string{"connecting>open", "open>poisoned", "poisoned>rebuilding",
		// The failed dials are failures 2 and 3 of the streak the poisoning began.
		"rebuilding>rebuilding#2", "rebuilding>rebuilding#3", "rebuilding>open", "open>closing", "closing>closed"}
	if !slices.Equal(story, want) {
		t.Fatalf("state changes %v, want %v", story, want)
	}
	if changes[1].Err == nil || !IsPermanent(changes[1].Err) {
		t.Errorf("poisoning change carries %v, want the permanent transport error", changes[1].Err)
	}
	if changes[3].Err == nil || !strings.Contains(changes[3].Err.Error(), "dial refused") {
		t.Errorf("failed dial change carries %v, want the dial error", changes[3].Err)
	}
}

// After a commit failure Flush does not claim durability.
func TestFlushReportsCommitFailure(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDialer(newFakeServer(), func() time.Duration { return time.Millisecond })
	com := newFakeCommitter(func() time.Duration { return time.Millisecond })
	defer com.shutdown()
	l, err := New[RawAnchor](Options{Destination: "raw", Dial: d.dial, Committer: com})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	submit := submitter(ctx, t, l, mem, nil)
	submit(1)
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	com.failFrom(1)
	submit(2)
	if err := l.Flush(ctx); !errors.Is(err, ErrCommitFailed) {
		t.Fatalf("Flush after a failed commit: %v, want ErrCommitFailed", err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// A Close that gives up on unconfirmed batches ends a waiting Flush with
// ErrClosed.
func TestFlushEndsWithForcedClose(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDialer(newFakeServer(), nil) // never acks
	l, err := New[NoCommit](Options{Destination: "raw", Dial: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	b := newBatch(mem, 0, 1, 10)
	if err := l.Submit(ctx, b, NoCommit{}); err != nil {
		t.Fatal(err)
	}
	b.Release()
	errc := make(chan error, 1)
	go func() { errc <- l.Flush(ctx) }()
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := l.Close(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Flush ended by a forced Close: %v, want ErrClosed", err)
		}
	case <-time.After(waitBound):
		t.Fatal("Flush still waiting after Close returned")
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close()
	return addr
}

// A real Flight sink pointed at a port nobody listens on: the lane keeps
// dialling, and the embedding program sees it — through OnStateChange, and
// through the default logger (slog.Default) when it configured none —
// instead of a Submit that blocks without a word.
func TestUnreachableEndpointIsVisible(t *testing.T) {
	addr := closedPort(t)
	// Read only after Close, which waits for every lane goroutine; the
	// handler serialises its own writes.
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	defer slog.SetDefault(prev)

	fails := make(chan StateChange, 100)
	opts := Options{
		Destination: "unreachable",
		Dial: func(ctx context.Context) (Transport, error) {
			return flight.Dial(ctx, flight.Options{Endpoint: addr, Path: []string{"x"}})
		},
		OnStateChange: func(c StateChange) {
			if c.Err != nil {
				select {
				case fails <- c:
				default:
				}
			}
		},
		// No Logger: the default must not discard.
	}
	fastBackoff(&opts)
	l, err := New[NoCommit](opts)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := newBatch(mem, 0, 1, 1)
	defer b.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := l.Submit(ctx, b, NoCommit{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Submit to an unreachable endpoint: %v, want DeadlineExceeded", err)
	}
	select {
	case c := <-fails:
		if c.From != StateConnecting || c.To != StateConnecting || c.Attempt != 1 || c.Err == nil {
			t.Fatalf("first failure reported as %+v", c)
		}
		if !strings.Contains(c.Err.Error(), addr) && !strings.Contains(strings.ToLower(c.Err.Error()), "refused") {
			t.Errorf("dial error %q names neither the endpoint nor the refusal", c.Err)
		}
	default:
		t.Fatal("OnStateChange never reported the failing dial")
	}
	if len(fails) == 0 {
		t.Error("only one failed attempt in 300ms with a 1-4ms backoff")
	}
	if l.State() != StateConnecting {
		t.Errorf("state %v, want connecting", l.State())
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ccancel()
	if err := l.Close(cctx); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if !strings.Contains(out, `msg="lane failing"`) || !strings.Contains(out, "destination=unreachable") ||
		!strings.Contains(out, "step=dial ") || !strings.Contains(out, "class=retryable ") || !strings.Contains(out, "code=Unavailable ") {
		t.Fatalf("default logger output lacks the failed dial with its destination, class and code:\n%s", out)
	}
	// One line when the lane starts failing, then one per
	// FailureLogInterval (30s): one line in 300ms, however many attempts.
	if warns := strings.Count(out, "level=WARN"); warns != 1 {
		t.Errorf("%d Warn lines in 300ms of failing dials, want 1:\n%s", warns, out)
	}
}

// Flush under load: batches are submitted while transports die at random
// and acks and commits arrive after random delays; every Flush, concurrent
// with the submitter, returns only after the OnDurable of every batch whose
// Submit returned before the Flush started fired nil.
func TestFlushConcurrentWithSubmitsAndRebuilds(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(7, 11))
	var rmu sync.Mutex
	d := newDialer(newFakeServer(), randDelay(r, &rmu, 300*time.Microsecond))
	com := newFakeCommitter(randDelay(r, &rmu, 300*time.Microsecond))
	defer com.shutdown()
	opts := Options{Destination: "raw", Capacity: 32, Dial: d.dial, Committer: com}
	fastBackoff(&opts)
	l, err := New[RawAnchor](opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	tk := newTokens()
	const n = 400
	var returned atomic.Int64 // batches whose Submit returned
	subDone := make(chan struct{})
	go func() {
		defer close(subDone)
		for i := 1; i <= n; i++ {
			b := newBatch(mem, 0, uint64(i*10), uint64(i*10+9))
			if err := l.Submit(ctx, b, tk.tok(i)); err != nil {
				t.Error(err)
				b.Release()
				return
			}
			b.Release()
			returned.Store(int64(i))
			if i%50 == 0 { // a dying stream every 50 batches
				if tr := d.latest(); tr != nil {
					tr.kill()
				}
			}
		}
	}()
	flushes := 0
	for done := false; !done; {
		select {
		case <-subDone:
			done = true
		default:
		}
		before := int(returned.Load())
		if err := l.Flush(ctx); err != nil {
			t.Fatalf("Flush: %v", err)
		}
		flushes++
		calls, _ := tk.snapshot()
		for i := 1; i <= before; i++ {
			if errs := calls[i]; len(errs) != 1 || errs[0] != nil {
				t.Fatalf("Flush returned with batch %d (submitted before it) at %v", i, errs)
			}
		}
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	calls, order := tk.snapshot()
	if len(calls) != n || !slices.IsSorted(order) {
		t.Fatalf("%d tokens released, order sorted %v", len(calls), slices.IsSorted(order))
	}
	if l.Rebuilds() == 0 {
		t.Fatal("no rebuild happened: the test did not exercise Flush across one")
	}
	t.Logf("%d flushes, %d rebuilds, %d bursts for %d batches", flushes, l.Rebuilds(), l.Bursts(), n)
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
