package lanes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// classErr is a sink error as the sink packages build them: it ends the
// stream (Permanent) and knows its class and gRPC code.
type classErr struct {
	msg       string
	code      string
	retryable bool
}

func (e classErr) Error() string      { return e.msg }
func (e classErr) Permanent() bool    { return true }
func (e classErr) Retryable() bool    { return e.retryable }
func (e classErr) StatusName() string { return e.code }

var (
	errUnavailable = classErr{msg: "rpc error: code = Unavailable desc = connection refused", code: "Unavailable", retryable: true}
	errUnauth      = classErr{msg: "rpc error: code = Unauthenticated desc = bad token", code: "Unauthenticated"}
)

// bubbleCtx bounds a failure test's waits by an hour of the bubble's fake
// clock, longer than any backoff schedule these tests run through.
func bubbleCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
	t.Cleanup(cancel)
	return ctx
}

// dialTimes records when a dialer was called. The failure tests run in a
// synctest bubble where a dial, a refusal and the lane's bookkeeping take no
// time, so the gap between two dials is exactly the backoff the lane waited.
type dialTimes struct {
	mu sync.Mutex
	at []time.Time
}

func (d *dialTimes) record() {
	d.mu.Lock()
	d.at = append(d.at, time.Now())
	d.mu.Unlock()
}

// lastDial returns the time of the latest dial.
func (d *dialTimes) lastDial() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.at[len(d.at)-1]
}

// waits returns the backoffs between consecutive dials.
func (d *dialTimes) waits() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	var w []time.Duration
	for i := 1; i < len(d.at); i++ {
		w = append(w, d.at[i].Sub(d.at[i-1]))
	}
	return w
}

// scriptTransport accepts or refuses by its dialer's current script; a
// healthy one acknowledges whatever was sent at once.
type scriptTransport struct {
	mu      sync.Mutex
	refuse  error // Send fails with it
	dead    error // set by kill: Send and WaitDurable fail with it
	sent    uint64
	changed chan struct{}
	closed  bool
}

func (t *scriptTransport) Send(_ context.Context, off uint64, _ *batch.Batch) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.refuse != nil {
		return t.refuse
	}
	if t.dead != nil {
		return t.dead
	}
	t.sent = off
	close(t.changed)
	t.changed = make(chan struct{})
	return nil
}

func (t *scriptTransport) WaitDurable(ctx context.Context, off uint64) error {
	for {
		t.mu.Lock()
		dead, sent, closed, ch := t.dead, t.sent, t.closed, t.changed
		t.mu.Unlock()
		switch {
		case dead != nil:
			return dead
		case closed:
			return errors.New("script: closed")
		case sent >= off:
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (t *scriptTransport) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		close(t.changed)
		t.changed = make(chan struct{})
	}
	return nil
}

func (t *scriptTransport) kill(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dead = err
	close(t.changed)
	t.changed = make(chan struct{})
}

// scriptDialer dials scriptTransports that refuse every Send with refuse
// (nil: healthy).
type scriptDialer struct {
	dialTimes
	mu     sync.Mutex
	refuse error
	dials  int
	last   *scriptTransport
}

func (d *scriptDialer) set(refuse error) {
	d.mu.Lock()
	d.refuse = refuse
	d.mu.Unlock()
}

func (d *scriptDialer) dial(ctx context.Context) (Transport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.record()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dials++
	d.last = &scriptTransport{refuse: d.refuse, changed: make(chan struct{})}
	return d.last, nil
}

func (d *scriptDialer) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials
}

// changes collects OnStateChange calls.
type changes struct {
	mu  sync.Mutex
	all []StateChange
}

func (c *changes) add(sc StateChange) {
	c.mu.Lock()
	c.all = append(c.all, sc)
	c.mu.Unlock()
}

func (c *changes) to(s State) []StateChange {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []StateChange
	for _, sc := range c.all {
		if sc.To == s && sc.From != s {
			out = append(out, sc)
		}
	}
	return out
}

const (
	testInitial = 50 * time.Millisecond
	testMax     = 5 * time.Second
)

// submitOne submits a one-record batch to l and releases it.
func submitOne(t *testing.T, ctx context.Context, l *Lane[NoCommit], mem memory.Allocator) {
	t.Helper()
	submitSeq(t, ctx, l, mem, 1)
}

// submitSeq submits a batch of the one record seq to l and releases it.
func submitSeq(t *testing.T, ctx context.Context, l *Lane[NoCommit], mem memory.Allocator, seq uint64) {
	t.Helper()
	b := newBatch(mem, 0, seq, seq)
	defer b.Release()
	if err := l.Submit(ctx, b, NoCommit{}); err != nil {
		t.Fatal(err)
	}
}

func failureLane(t *testing.T, dial func(context.Context) (Transport, error), budget time.Duration, logs *crashtest.LogBuffer, ch *changes) *Lane[NoCommit] {
	t.Helper()
	opts := Options{Destination: "sink", Dial: dial, PermanentBudget: budget,
		Backoff: Backoff{Initial: testInitial, Max: testMax}, MaxRetries: -1,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})), OnStateChange: ch.add}
	l, err := New[NoCommit](opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// inBackoffRange reports whether w is a jittered Backoff.delay(n).
func inBackoffRange(w time.Duration, n int) bool {
	d := testInitial
	for i := 1; i < n && d < testMax; i++ {
		d *= 2
	}
	d = min(d, testMax)
	return w >= d/2 && w <= d
}

// A stream that opens and dies at its first send backs off like a failing
// dial: the waits grow from Initial to Max across incarnations (a count
// reset at every successful dial would rebuild a refused stream at the
// initial backoff forever). Permanent failures
// end the lane after the budget, visibly: StateFailed, Failure naming the
// code, Submit and Flush returning it, Close not waiting for its context.
func TestPermanentFailureBacksOffAndEndsAfterBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		start := time.Now()
		d := &scriptDialer{refuse: errUnauth}
		var logs crashtest.LogBuffer
		var ch changes
		l := failureLane(t, d.dial, time.Minute, &logs, &ch)
		ctx := bubbleCtx(t)
		submitOne(t, ctx, l, mem)

		select {
		case <-l.Failed():
		case <-time.After(time.Hour):
			t.Fatalf("lane did not fail for good; state %v after %d dials", l.State(), d.count())
		}
		now, waits := time.Now(), d.waits()
		for i, w := range waits {
			if !inBackoffRange(w, i+1) {
				t.Errorf("wait %d is %v, want a jittered Initial·2^%d capped at %v (all: %v)", i+1, w, i, testMax, waits)
			}
		}
		elapsed := now.Sub(start)
		if elapsed < time.Minute || elapsed > time.Minute+testMax {
			t.Errorf("failed for good after %v of fake time, want within [budget, budget+Max]", elapsed)
		}
		// With 50ms..5s the minute holds about 15-25 attempts; the old loop
		// made hundreds in a second.
		if n := d.count(); n < 10 || n > 40 {
			t.Errorf("%d dials in a minute of backoff", n)
		}
		t.Logf("%d dials, waits %v, failed after %v", d.count(), waits, elapsed)

		err := l.Failure()
		if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "Unauthenticated") || !strings.Contains(err.Error(), "bad token") {
			t.Fatalf("Failure() = %v, want ErrFailed naming Unauthenticated and the message", err)
		}
		if !errors.Is(err, errUnauth) {
			t.Errorf("Failure() does not wrap the transport error")
		}
		if l.State() != StateFailed {
			t.Errorf("state %v, want failed", l.State())
		}
		if f := ch.to(StateFailed); len(f) != 1 || !errors.Is(f[0].Err, ErrFailed) || f[0].Class != ClassPermanent {
			t.Errorf("OnStateChange to failed: %+v", f)
		}
		b2 := newBatch(mem, 0, 2, 2)
		if err := l.Submit(ctx, b2, NoCommit{}); !errors.Is(err, ErrFailed) {
			t.Errorf("Submit after failure: %v, want ErrFailed", err)
		}
		b2.Release()
		if err := l.Flush(ctx); !errors.Is(err, ErrFailed) {
			t.Errorf("Flush after failure: %v, want ErrFailed", err)
		}
		begin := time.Now()
		if err := l.Close(ctx); !errors.Is(err, ErrFailed) {
			t.Errorf("Close: %v, want an error wrapping ErrFailed", err)
		}
		if d := time.Since(begin); d > 2*time.Second {
			t.Errorf("Close of a failed lane took %v: it waited for its context", d)
		}

		// One line when it started failing, one at the end, summaries every
		// 30s of fake time in between: a handful, not one per attempt.
		warns, errs := logs.Lines("WARN"), logs.Lines("ERROR")
		if len(errs) != 1 || !strings.Contains(errs[0], `msg="lane failed for good"`) || !strings.Contains(errs[0], "code=Unauthenticated") {
			t.Errorf("error lines %q", errs)
		}
		if len(warns) < 2 || len(warns) > 4 || !strings.Contains(warns[0], `msg="lane failing"`) ||
			!strings.Contains(warns[0], "class=permanent") || !strings.Contains(warns[0], "code=Unauthenticated") ||
			!strings.Contains(warns[0], "gives_up_in=") {
			t.Errorf("warn lines (%d attempts):\n%s", d.count(), strings.Join(warns, "\n"))
		}
	})
}

// Retryable failures never end a lane: after ten budgets of fake time the
// lane is still trying, its waits capped at Max; a log line per
// FailureLogInterval, each bounded even when the server's message is huge;
// the first progress ends the streak ("lane recovered").
func TestRetryableFailureRetriesForeverAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		huge := classErr{msg: "rpc error: code = Unavailable desc = " + strings.Repeat("schema field x: int64; ", 500), code: "Unavailable", retryable: true}
		d := &scriptDialer{refuse: huge}
		var logs crashtest.LogBuffer
		var ch changes
		l := failureLane(t, d.dial, time.Second, &logs, &ch)
		ctx := bubbleCtx(t)
		submitOne(t, ctx, l, mem)
		time.Sleep(10 * time.Minute) // ten minutes of failures on the fake clock
		if l.Failure() != nil || l.State() == StateFailed {
			t.Fatalf("a retryable failure ended the lane: %v", l.Failure())
		}
		d.set(nil)
		eventually(t, "delivered after healing", func() bool { return l.Delivered() == 1 })
		waits := d.waits()
		for i, w := range waits {
			if w > testMax {
				t.Fatalf("wait %d is %v, above Max", i+1, w)
			}
		}
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
		warns := logs.Lines("WARN")
		// 10 min / 30 s = 20 summaries, plus the first line.
		if len(warns) < 10 || len(warns) > 24 {
			t.Errorf("%d Warn lines for %d attempts over 10 minutes", len(warns), len(waits))
		}
		for _, w := range warns {
			if len(w) > 800 {
				t.Fatalf("a %d-byte log line: the error is not truncated:\n%s", len(w), w)
			}
			if !strings.Contains(w, "class=retryable") || !strings.Contains(w, "code=Unavailable") {
				t.Errorf("line lacks class or code: %s", w)
			}
		}
		if !strings.Contains(warns[1], `msg="lane still failing"`) || !strings.Contains(warns[1], "attempts=") {
			t.Errorf("second line is not a summary: %s", warns[1])
		}
		if !strings.Contains(logs.String(), `msg="lane recovered"`) {
			t.Errorf("no recovery line:\n%s", logs.String())
		}
		t.Logf("%d attempts, %d Warn lines", len(waits), len(warns))
	})
}

// The streak resets only on progress: after a durable confirmation the next
// failure backs off from Initial again, not from where the last streak was.
func TestBackoffResetsOnProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		d := &scriptDialer{refuse: errUnavailable}
		var logs crashtest.LogBuffer
		var ch changes
		l := failureLane(t, d.dial, -1, &logs, &ch)
		ctx := bubbleCtx(t)
		submitOne(t, ctx, l, mem)
		testenv.WaitFor(t, time.Minute, "eight failures", func() bool { return len(d.waits()) >= 8 })
		d.set(nil)
		eventually(t, "delivered 1", func() bool { return l.Delivered() == 1 })
		before := d.waits()
		if !inBackoffRange(before[len(before)-1], len(before)) || before[len(before)-1] < testInitial*8 {
			t.Fatalf("waits before progress did not grow: %v", before)
		}
		d.mu.Lock()
		tr := d.last
		d.mu.Unlock()
		killed := time.Now()
		tr.kill(errUnavailable)
		submitSeq(t, ctx, l, mem, 2)
		eventually(t, "delivered 2", func() bool { return l.Delivered() == 2 })
		if after := d.waits(); len(after) != len(before)+1 {
			t.Fatalf("waits after the second failure: %v (before %v)", after, before)
		}
		if w := d.lastDial().Sub(killed); !inBackoffRange(w, 1) {
			t.Errorf("first wait after progress is %v, want Initial-range (streak reset)", w)
		}
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A retryable failure between permanent ones restarts the budget: only an
// uninterrupted run of refusals ends the lane.
func TestPermanentBudgetRestartsOnRetryable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		d := &flipDialer{}
		var logs crashtest.LogBuffer
		var ch changes
		l := failureLane(t, d.dial, 20*time.Second, &logs, &ch)
		ctx := bubbleCtx(t)
		submitOne(t, ctx, l, mem)
		time.Sleep(5 * time.Minute) // five minutes of alternating failures on the fake clock
		if l.Failure() != nil {
			t.Fatalf("alternating refusals and outages ended the lane: %v", l.Failure())
		}
		// Class changes are state changes: each is one line.
		if n := strings.Count(logs.String(), `msg="lane failing"`); n < 10 {
			t.Errorf("%d 'lane failing' lines for alternating classes, want one per change", n)
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = l.Close(cctx) // may end on a permanent failure while closing
	})
}

// flipDialer's streams fail alternately with a refusal and an outage.
type flipDialer struct {
	mu sync.Mutex
	n  int
}

func (d *flipDialer) dial(ctx context.Context) (Transport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.n++
	refuse := error(errUnavailable)
	if d.n%2 == 0 {
		refuse = errUnauth
	}
	return &scriptTransport{refuse: refuse, changed: make(chan struct{})}, nil
}

// Close while the lane keeps being refused ends the lane at once, with the
// real cause, instead of waiting out the drain: nothing can be delivered.
// synctest.Wait leaves the supervisor in its backoff wait, the state a
// SIGINT finds it in.
func TestCloseWhilePermanentlyFailingEndsPromptly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		d := &scriptDialer{refuse: errUnauth}
		var logs crashtest.LogBuffer
		var ch changes
		l := failureLane(t, d.dial, -1, &logs, &ch)
		ctx := bubbleCtx(t)
		submitOne(t, ctx, l, mem)
		eventually(t, "the first refusal", func() bool { return l.State() == StateRebuilding })
		synctest.Wait() // the supervisor sleeps out its backoff
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		begin := time.Now()
		err := l.Close(cctx)
		if took := time.Since(begin); took >= testInitial/2 {
			t.Fatalf("Close took %v: it waited out a backoff or the drain", took)
		}
		if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "Unauthenticated") || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Close: %v, want the lane's failure naming Unauthenticated", err)
		}
		// A retryable streak, by contrast, is given the drain: it may heal.
		d2 := &scriptDialer{refuse: errUnavailable}
		l2 := failureLane(t, d2.dial, -1, &logs, &ch)
		submitOne(t, ctx, l2, mem)
		eventually(t, "the first outage", func() bool { return l2.State() == StateRebuilding })
		synctest.Wait()
		short, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel2()
		if err := l2.Close(short); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrFailed) {
			t.Fatalf("Close of a retryable lane: %v, want the drain's deadline", err)
		}
	})
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err   error
		class Class
		code  string
	}{
		{errors.New("plain"), ClassRetryable, ""},
		{context.DeadlineExceeded, ClassRetryable, ""},
		{permErr{"stream dead"}, ClassRetryable, ""},
		{errUnavailable, ClassRetryable, "Unavailable"},
		{errUnauth, ClassPermanent, "Unauthenticated"},
		{fmt.Errorf("wrapped: %w", errUnauth), ClassPermanent, "Unauthenticated"},
	} {
		c, code := Classify(tc.err)
		if c != tc.class || code != tc.code {
			t.Errorf("Classify(%v) = %v %q, want %v %q", tc.err, c, code, tc.class, tc.code)
		}
	}
	if s := brief(errors.New(strings.Repeat("é", 1000))); len(s) > maxErrText+40 || !strings.Contains(s, "more bytes") {
		t.Errorf("brief of 2000 bytes: %d bytes %q", len(s), s[len(s)-30:])
	}
}

// ackRefuser's streams accept every Send (as a gRPC stream buffers it) and
// fail the durable wait: the refusal a Flight receiver sends on the
// response side, after the stream opened and the replay went out.
type ackRefuser struct {
	dialTimes
	mu    sync.Mutex
	dials int
}

type ackRefusedTransport struct{}

func (ackRefusedTransport) Send(context.Context, uint64, *batch.Batch) error { return nil }
func (ackRefusedTransport) WaitDurable(context.Context, uint64) error        { return errUnauth }
func (ackRefusedTransport) Close() error                                     { return nil }

func (d *ackRefuser) dial(ctx context.Context) (Transport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.record()
	d.mu.Lock()
	d.dials++
	d.mu.Unlock()
	return ackRefusedTransport{}, nil
}

func (d *ackRefuser) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials
}

// The user's loop: every dial and replay succeeds and the stream dies at
// its first durable wait. Each rebuild still waits, and the waits grow
// (a successful dial must not reset the attempt count, or the lane
// rebuilds hundreds of times a second without waiting).
func TestStreamDyingAtAckBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		d := &ackRefuser{}
		var logs crashtest.LogBuffer
		l, err := New[NoCommit](Options{Destination: "sink", Dial: d.dial, MaxRetries: -1,
			Backoff: Backoff{Initial: testInitial, Max: testMax},
			Logger:  slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		ctx := bubbleCtx(t)
		submitOne(t, ctx, l, mem)
		// 20 backoffs of 25ms..5s take under two minutes.
		testenv.WaitFor(t, 2*time.Minute, "20 dials", func() bool { return d.count() >= 20 })
		waits := d.waits()
		if len(waits) < 19 {
			t.Fatalf("%d backoff waits for %d dials: rebuilds do not back off", len(waits), d.count())
		}
		for i, w := range waits[:19] {
			if !inBackoffRange(w, i+1) {
				t.Fatalf("wait %d is %v, want a jittered Initial·2^%d capped at %v (all: %v)", i+1, w, i, testMax, waits)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = l.Close(cctx)
	})
}

// Drain, the owner's "stopping" without Close, ends a refused lane at once
// and wakes a Submit blocked on it: the pipeline's dispatcher is such a
// Submit when a stop begins, and Close comes only after it returns.
func TestDrainEndsARefusedLaneAndWakesSubmit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		d := &scriptDialer{refuse: errUnauth}
		var logs crashtest.LogBuffer
		var ch changes
		l := failureLane(t, d.dial, -1, &logs, &ch)
		ctx := bubbleCtx(t)
		b := newBatch(mem, 0, 1, 1)
		defer b.Release()
		if err := l.Submit(ctx, b, NoCommit{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the first refusal", func() bool { return l.State() == StateRebuilding })
		blocked := make(chan error, 1)
		go func() { blocked <- l.Submit(ctx, b, NoCommit{}) }()
		select {
		case err := <-blocked:
			t.Fatalf("Submit on a rebuilding lane returned %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		l.Drain()
		select {
		case err := <-blocked:
			if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "Unauthenticated") {
				t.Fatalf("blocked Submit after Drain: %v", err)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("Drain did not end the refused lane")
		}
		if err := l.Close(ctx); !errors.Is(err, ErrFailed) {
			t.Fatalf("Close: %v", err)
		}
	})
}
