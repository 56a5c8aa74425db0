package pulsar

import (
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
)

// wireMsg is a received message as the interceptor and Next see it; only
// Topic is called.
type wireMsg struct {
	pclient.Message
	topic string
	n     int
}

func (m *wireMsg) Topic() string { return m.topic }

// TestActivationTagsInWireOrder replays, in wire order, a takeover that
// loses records if early messages are emitted: A consumes as the
// first consumer (no notification reaches the client), is told another
// consumer is active, receives messages the broker dispatched from its read
// position before telling A it is active again, then the rewound ones. Next
// must see exactly the early ones as early, even though it reads them only
// after the notifications were handled.
func TestActivationTagsInWireOrder(t *testing.T) {
	a := newActivation(slog.New(slog.DiscardHandler), 0, time.Second)
	const p3, p0 = "persistent://public/default/t-partition-3", "persistent://public/default/t-partition-0"
	var wire []*wireMsg
	recv := func(topic string, n int) {
		m := &wireMsg{topic: topic, n: n}
		a.BeforeConsume(pclient.ConsumerMessage{Message: m})
		wire = append(wire, m)
	}
	recv(p3, 1) // first consumer: its notification was dropped by the client
	recv(p0, 2)
	a.BecameInactive(nil, p3, 3)
	recv(p3, 3) // early: dispatched before A is active again
	recv(p3, 4)
	recv(p0, 5) // another partition, still A's
	a.BecameActive(nil, p3, 3)
	recv(p3, 6) // the rewound redelivery
	// Next reads the queue only now.
	var early []int
	for _, m := range wire {
		if isEarly(t, a, m) {
			early = append(early, m.n)
		}
	}
	if len(early) != 2 || early[0] != 3 || early[1] != 4 {
		t.Fatalf("early messages %v, want [3 4]", early)
	}
	if a.pending.Load() != 0 || len(a.mu.tags) != 0 {
		t.Fatalf("%d tags left after Next saw every message", len(a.mu.tags))
	}
	// A tag is consumed once.
	if isEarly(t, a, wire[2]) {
		t.Fatal("message 3 reported early twice")
	}
}

// TestActivationSweepsDiscardedTags: tags of messages the client dropped
// from its queue (a reconnect) never reach Next; they are swept past the
// limit, newest kept.
func TestActivationSweepsDiscardedTags(t *testing.T) {
	const limit = 1024
	a := newActivation(slog.New(slog.DiscardHandler), limit, time.Second)
	a.BecameInactive(nil, "t", 0)
	var last *wireMsg
	for i := range 10 * limit {
		last = &wireMsg{topic: "t", n: i}
		a.BeforeConsume(pclient.ConsumerMessage{Message: last})
	}
	if n := len(a.mu.tags); n > limit {
		t.Fatalf("%d tags kept, limit %d", n, limit)
	}
	if !isEarly(t, a, last) {
		t.Fatal("the newest tag was swept")
	}
}

func isEarly(t *testing.T, a *activation, m pclient.Message) bool {
	t.Helper()
	v, _ := a.judge(m)
	if v == verdictUndecided {
		t.Fatal("judge left the message undecided")
	}
	return v == verdictEarly
}

// TestActivationLostNotification: the client dropped the notification of a
// partition (it arrived before the consumer was registered), so which
// consumer it named is unknown.
//   - A standby that later takes the partition over: the broker's early
//     dispatch is followed, within its failover delay, by "active": the
//     messages before it were early.
//   - The first consumer of the subscription: active at once and never
//     notified again; after the hold its messages are its own, and the
//     partition counts as active from then on.
func TestActivationLostNotification(t *testing.T) {
	const topic = "persistent://public/default/t"
	recv := func(a *activation, n int) *wireMsg {
		m := &wireMsg{topic: topic, n: n}
		a.BeforeConsume(pclient.ConsumerMessage{Message: m})
		return m
	}
	t.Run("takeover", func(t *testing.T) {
		a := newActivation(slog.New(slog.DiscardHandler), 0, time.Minute)
		a.lost(topic)
		m1, m2 := recv(a, 1), recv(a, 2)
		a.BecameActive(nil, topic, 0)
		m3 := recv(a, 3)
		if !isEarly(t, a, m1) || !isEarly(t, a, m2) || isEarly(t, a, m3) {
			t.Fatal("messages before the notification that followed the lost one must be early, after it not")
		}
	})
	t.Run("first consumer", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const hold = 3 * time.Second
			a := newActivation(slog.New(slog.DiscardHandler), 0, hold)
			a.lost(topic)
			start := time.Now()
			m1 := recv(a, 1)
			time.Sleep(hold / 2)
			if v, deadline := a.judge(m1); v != verdictUndecided || !deadline.Equal(start.Add(hold)) {
				t.Fatalf("within the hold: verdict %d, deadline %v; want undecided until %v", v, deadline, start.Add(hold))
			}
			time.Sleep(hold / 2)
			if isEarly(t, a, m1) {
				t.Fatal("no notification within the hold: the message is this consumer's")
			}
			m2 := recv(a, 2)
			if isEarly(t, a, m2) || len(a.mu.tags) != 0 {
				t.Fatal("after the hold the partition counts as active")
			}
		})
	})
	t.Run("undecided until a notification", func(t *testing.T) {
		a := newActivation(slog.New(slog.DiscardHandler), 0, time.Minute)
		a.lost(topic)
		m1 := recv(a, 1)
		if v, _ := a.judge(m1); v != verdictUndecided {
			t.Fatalf("verdict %d before any notification, want undecided", v)
		}
		a.BecameInactive(nil, topic, 0)
		select {
		case <-a.decided:
		default:
			t.Fatal("the decision did not signal decided")
		}
		if !isEarly(t, a, m1) {
			t.Fatal("asked again after the notification: early")
		}
	})
}

// TestActivationActivePathTakesNoLock: BeforeConsume runs on the client's
// goroutine for every message, and Next takes the activation's lock for
// every message that may be early; a message of a partition that is active
// or was never notified must not wait for that lock, while one of an
// inactive partition is still tagged (under it).
func TestActivationActivePathTakesNoLock(t *testing.T) {
	a := newActivation(slog.New(slog.DiscardHandler), 0, time.Second)
	const active, inactive, quiet = "t-partition-0", "t-partition-1", "t-partition-2"
	a.BecameActive(nil, active, 0)
	a.BecameInactive(nil, inactive, 1)

	a.mu.Lock() // Next, or a notification, holding it
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 1000 {
			a.BeforeConsume(pclient.ConsumerMessage{Message: &wireMsg{topic: active, n: i}})
			a.BeforeConsume(pclient.ConsumerMessage{Message: &wireMsg{topic: quiet, n: i}})
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		a.mu.Unlock()
		<-done
		t.Fatal("BeforeConsume of an active partition's message waited for the activation's lock")
	}
	a.mu.Unlock()
	if n := a.pending.Load(); n != 0 {
		t.Fatalf("%d tags for messages of active partitions", n)
	}
	m := &wireMsg{topic: inactive}
	a.BeforeConsume(pclient.ConsumerMessage{Message: m})
	if !isEarly(t, a, m) {
		t.Fatal("a message of an inactive partition was not tagged early")
	}
}

// BenchmarkActivationBeforeConsume is the interceptor's cost per message
// of an active partition, from parallel connection goroutines (one per
// broker connection in the client):
//
//	go test -run '^$' -bench ActivationBeforeConsume -count 5 ./source/pulsar/
func BenchmarkActivationBeforeConsume(b *testing.B) {
	a := newActivation(slog.New(slog.DiscardHandler), 0, time.Second)
	topics := make([]string, 16)
	for i := range topics {
		topics[i] = "persistent://public/default/bench-partition-" + strconv.Itoa(i)
		a.BecameActive(nil, topics[i], int32(i))
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		m := &wireMsg{topic: topics[next.Add(1)%int64(len(topics))]}
		cm := pclient.ConsumerMessage{Message: m}
		for pb.Next() {
			a.BeforeConsume(cm)
		}
	})
}
