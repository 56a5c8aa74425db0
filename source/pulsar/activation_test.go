package pulsar

import (
	"log/slog"
	"testing"

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

// TestActivationTagsInWireOrder replays, in wire order, the sequence of the
// chaos run that lost records (worker A's partition 3): A consumes as the
// first consumer (no notification reaches the client), is told another
// consumer is active, receives messages the broker dispatched from its read
// position before telling A it is active again, then the rewound ones. Next
// must see exactly the early ones as early, even though it reads them only
// after the notifications were handled.
func TestActivationTagsInWireOrder(t *testing.T) {
	a := newActivation(slog.New(slog.DiscardHandler), 0)
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
		if a.early(m) {
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
	if a.early(wire[2]) {
		t.Fatal("message 3 reported early twice")
	}
}

// TestActivationSweepsDiscardedTags: tags of messages the client dropped
// from its queue (a reconnect) never reach Next; they are swept past the
// limit, newest kept.
func TestActivationSweepsDiscardedTags(t *testing.T) {
	const limit = 1024
	a := newActivation(slog.New(slog.DiscardHandler), limit)
	a.BecameInactive(nil, "t", 0)
	var last *wireMsg
	for i := range 10 * limit {
		last = &wireMsg{topic: "t", n: i}
		a.BeforeConsume(pclient.ConsumerMessage{Message: last})
	}
	if n := len(a.mu.tags); n > limit {
		t.Fatalf("%d tags kept, limit %d", n, limit)
	}
	if !a.early(last) {
		t.Fatal("the newest tag was swept")
	}
}
