package pulsar

import (
	"log/slog"
	"sync"
	"sync/atomic"

	pclient "github.com/apache/pulsar-client-go/pulsar"
)

// activation tells, for a Failover subscription, which received messages
// were dispatched to this consumer before the broker made it the active
// consumer of their partition, so that Next can leave them alone.
//
// Why: when the active consumer of a partition changes, the broker makes
// the new consumer active at once but rewinds the cursor to the
// acknowledged position, and tells the consumers, only after
// activeConsumerFailoverDelayTimeMillis (1 s by default). Meanwhile a read
// that completes for the partition is dispatched to the new consumer from
// the cursor's read position, which is past every message the old consumer
// had been sent but not acknowledged. A consumer that emitted such "early"
// messages and then acknowledged them cumulatively would acknowledge the old
// consumer's unacknowledged messages too, which nobody delivered — the loss
// that chaos.TestSIGKILL_FailoverTakeover_NoGap found (51 records of one
// partition, dispatched to a worker that was killed).
//
// Early messages are safe to drop: they are not acknowledged, and the rewind
// that follows redelivers them, after the notification that this consumer
// is active. So a message is early when it arrives after a notification
// that another consumer is active and before the next one naming this
// consumer. The order that counts is the order on the wire: the client
// handles a partition's messages and its ActiveConsumerChange notifications
// on one connection goroutine, calling BeforeConsume (interceptor) and
// BecameActive / BecameInactive (event listener) in wire order, while Next
// sees the messages later, through the client's queues. The interceptor
// therefore tags early messages as they arrive, and Next looks the tag up.
//
// A partition with no notification yet counts as active. pulsar-client-go
// v0.19 registers a consumer with its connection only after the broker
// answered the subscription, so it drops ("Consumer not found while active
// consumer change") the notification the broker sends while adding the
// consumer: the one that makes the first consumer of a subscription active
// at once (its cursor rewound, nothing early), and the one that tells a
// consumer joining an active one that it is not active. Counting the
// unknown as inactive would drop the first consumer's messages for good
// (the chaos suite's restarts showed it: a backlog that never drained).
//
// Not covered (documented in the package doc): a consumer that joined
// while another was active, whose "not active" notification the client
// dropped, and that takes over from it later, looks active throughout; and
// a consumer that reconnects while it stays active gets no "not active" in
// between. Early dispatches to either are not recognised.
type activation struct {
	log *slog.Logger
	// limit bounds mu.tags: tagged messages that the client dropped from
	// its queue on a reconnect never reach Next and are swept past it.
	limit int

	pending atomic.Int64 // len(mu.tags), read by Next without the lock

	mu struct {
		sync.Mutex
		active map[string]bool // per topic-partition: the last notification named this consumer (absent: none yet)
		tags   map[pclient.Message]uint64
		added  uint64 // tags ever added: the age of a tag
	}
}

func newActivation(log *slog.Logger, limit int) *activation {
	a := &activation{log: log, limit: max(limit, 1024)}
	a.mu.active = map[string]bool{}
	a.mu.tags = map[pclient.Message]uint64{}
	return a
}

// BecameActive implements pclient.ConsumerEventListener.
func (a *activation) BecameActive(_ pclient.Consumer, topic string, partition int32) {
	a.mu.Lock()
	a.mu.active[topic] = true
	a.mu.Unlock()
	a.log.Info("became the active consumer", "topic", topic, "partition", partition)
}

// BecameInactive implements pclient.ConsumerEventListener.
func (a *activation) BecameInactive(_ pclient.Consumer, topic string, partition int32) {
	a.mu.Lock()
	a.mu.active[topic] = false
	a.mu.Unlock()
	a.log.Info("no longer the active consumer", "topic", topic, "partition", partition)
}

// BeforeConsume implements pclient.ConsumerInterceptor: it tags a message
// that arrives while the last notification for its partition named another
// consumer.
func (a *activation) BeforeConsume(cm pclient.ConsumerMessage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if active, known := a.mu.active[cm.Message.Topic()]; active || !known {
		return
	}
	a.mu.added++
	a.mu.tags[cm.Message] = a.mu.added
	if len(a.mu.tags) > a.limit {
		a.sweepLocked()
	}
	a.pending.Store(int64(len(a.mu.tags)))
}

// sweepLocked forgets the older half of the tags. A tag that old belongs to
// a message the client discarded (the queue holds far fewer than limit).
func (a *activation) sweepLocked() {
	floor := a.mu.added - uint64(a.limit/2)
	for m, at := range a.mu.tags {
		if at <= floor {
			delete(a.mu.tags, m)
		}
	}
}

// OnAcknowledge implements pclient.ConsumerInterceptor.
func (a *activation) OnAcknowledge(pclient.Consumer, pclient.MessageID) {}

// OnNegativeAcksSend implements pclient.ConsumerInterceptor.
func (a *activation) OnNegativeAcksSend(pclient.Consumer, []pclient.MessageID) {}

// early reports (once) whether msg was tagged on arrival. Next's goroutine.
func (a *activation) early(msg pclient.Message) bool {
	if a.pending.Load() == 0 {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.mu.tags[msg]
	if ok {
		delete(a.mu.tags, msg)
		a.pending.Store(int64(len(a.mu.tags)))
	}
	return ok
}
