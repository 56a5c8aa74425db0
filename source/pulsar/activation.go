package pulsar

import (
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
)

// activation tells, for a Failover subscription, which received messages
// were dispatched to this consumer before the broker made it the active
// consumer of their partition ("early"), so that Next can leave them alone.
//
// Why: when a partition's active consumer changes, the broker makes the new
// consumer active at once but rewinds the cursor to the acknowledged
// position, and notifies the consumers, only after
// activeConsumerFailoverDelayTimeMillis (1 s by default). A read completing
// meanwhile is dispatched to the new consumer from the read position, past
// the old consumer's unacknowledged messages; acknowledging such early
// messages cumulatively would acknowledge those too, which nobody delivered
// (chaos.TestSIGKILL_FailoverTakeover_NoGap). Early messages are safe to
// drop: they are not acknowledged, and the rewind redelivers them after the
// notification that this consumer is active.
//
// A message is early when it arrives after a notification naming another
// consumer and before the next one naming this one, in wire order: the
// client calls BeforeConsume (interceptor) and BecameActive /
// BecameInactive (event listener) for a partition on one connection
// goroutine, in wire order, while Next sees the messages later, through
// the client's queues. So the interceptor tags early messages as they
// arrive, and Next looks the tag up.
//
// pulsar-client-go v0.19 registers a consumer with its connection only
// after the broker answered the subscription, so it drops the notification
// the broker sends while adding the consumer ("Consumer not found while
// active consumer change", which connWatch ties to the topic). Such a
// partition is stateLost and its messages are uncertain until decided
// (uncertainRun): a notification that follows means they were early; none
// within hold means they are this consumer's. Next sets them aside
// meanwhile and goes on with the other partitions (Source.take). Lost
// cannot count as inactive (a restarted worker would drop its own messages
// for good, and its backlog would never drain) nor as active (a standby
// taking over would emit the early dispatch).
//
// A partition with no notification at all (none sent, none dropped) counts
// as active: the broker notifies every consumer of a Failover subscription.
//
// Not covered (documented in the package doc): a consumer that reconnects
// while it stays active gets no "not active" in between, so an early
// dispatch to its new connection is not recognised.
type activation struct {
	log *slog.Logger
	// limit bounds mu.tags: tagged messages that the client dropped from
	// its queue on a reconnect never reach Next and are swept past it.
	limit int

	pending atomic.Int64 // len(mu.tags), read by Next without the lock

	// states is a copy of mu.state, replaced (never modified) under mu
	// whenever mu.state changes, so that BeforeConsume, on the client's
	// goroutine for every message, reads its partition's state without
	// the lock that Next and the notifications take: a message of a
	// partition that is active or was never notified, the steady state,
	// costs one atomic load and one map lookup. Notifications are rare (a
	// handful per partition per failover), so the copies are cheap.
	states atomic.Pointer[stateView]

	// hold is how long a message of a partition whose notification the
	// client dropped waits for one before it counts as this consumer's
	// (Options.FailoverHold).
	hold time.Duration

	// onActive, when set, is told (under mu, on the client's goroutine or
	// Next's) each time a partition becomes this consumer's: a notification
	// naming it, or an uncertain run decided as its own. It must not block.
	onActive func(topic string)

	// decided (capacity 1) is signalled whenever an uncertain run is
	// decided, so that a Next waiting with messages set aside (see
	// Source.aside) looks at them again. A stale token costs one look.
	decided chan struct{}

	mu struct {
		sync.Mutex
		state map[string]partState // per topic-partition; absent: no notification yet
		// uncertain is, per topic-partition in stateLost, the run of
		// messages received since the notification was lost, open until
		// a notification or the hold decides it.
		uncertain map[string]*uncertainRun
		tags      map[pclient.Message]tag
		added     uint64 // tags ever added: the age of a tag
	}
}

// partState is what the notifications said of a partition.
type partState uint8

const (
	stateActive   partState = iota + 1 // the last notification named this consumer
	stateInactive                      // it named another consumer
	stateLost                          // the client dropped it (direction unknown)
)

// tag marks a message received while its partition was not known active:
// early (run nil), or uncertain (run open until decided).
type tag struct {
	at  uint64
	run *uncertainRun
}

// uncertainRun is the messages of one partition received after the client
// dropped its notification. The broker sends a consumer that joins while
// another is active a notification naming the other; when the partition
// later moves to this consumer, the broker dispatches early and then
// notifies within its failover delay — so a notification soon after the
// run began means the run was early. A consumer whose dropped notification
// made it active (the broker rewound at once, as when a read for a
// consumer it had just dropped completed) is not notified again: after
// hold without a notification the run is this consumer's.
type uncertainRun struct {
	started time.Time
	done    chan struct{} // closed once decided
	early   bool          // the decision; read after done is closed
	// held and released: judge (under mu) logged that Next sets the run's
	// messages aside, and that it let them go.
	held, released bool
}

func newActivation(log *slog.Logger, limit int, hold time.Duration) *activation {
	a := &activation{log: log, limit: max(limit, 1024), hold: hold, decided: make(chan struct{}, 1)}
	a.mu.state = map[string]partState{}
	a.mu.uncertain = map[string]*uncertainRun{}
	a.mu.tags = map[pclient.Message]tag{}
	a.publishLocked()
	return a
}

// stateView is a published copy of activation.mu.state.
type stateView struct {
	state map[string]partState
	// allActive: no partition is inactive or lost, the state of a sole
	// consumer and of every consumer between failovers of a
	// non-partitioned topic; BeforeConsume then skips the lookup.
	allActive bool
}

// publishLocked makes the current mu.state what BeforeConsume reads.
func (a *activation) publishLocked() {
	v := &stateView{state: maps.Clone(a.mu.state), allActive: true}
	for _, st := range v.state {
		v.allActive = v.allActive && st == stateActive
	}
	a.states.Store(v)
}

// BecameActive implements pclient.ConsumerEventListener.
func (a *activation) BecameActive(_ pclient.Consumer, topic string, partition int32) {
	a.notified(topic, stateActive)
	a.log.Info("became the active consumer", "topic", topic, "partition", partition)
}

// BecameInactive implements pclient.ConsumerEventListener.
func (a *activation) BecameInactive(_ pclient.Consumer, topic string, partition int32) {
	a.notified(topic, stateInactive)
	a.log.Info("no longer the active consumer", "topic", topic, "partition", partition)
}

func (a *activation) notified(topic string, st partState) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mu.state[topic] = st
	a.publishLocked()
	if run := a.mu.uncertain[topic]; run != nil {
		// Messages before a notification that follows a dropped one were
		// dispatched before the broker's rewind.
		a.decideLocked(topic, run, true)
	}
	if st == stateActive && a.onActive != nil {
		a.onActive(topic)
	}
}

// lost records that the client dropped a notification for topic (see
// connWatch): which consumer it named is unknown.
func (a *activation) lost(topic string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if run := a.mu.uncertain[topic]; run != nil {
		a.decideLocked(topic, run, true)
	}
	a.mu.state[topic] = stateLost
	a.publishLocked()
}

func (a *activation) decideLocked(topic string, run *uncertainRun, early bool) {
	run.early = early
	close(run.done)
	delete(a.mu.uncertain, topic)
	select {
	case a.decided <- struct{}{}:
	default: // a wake-up is pending already
	}
	if !early && a.mu.state[topic] == stateLost {
		a.mu.state[topic] = stateActive
		a.publishLocked()
		if a.onActive != nil {
			a.onActive(topic)
		}
	}
}

// BeforeConsume implements pclient.ConsumerInterceptor: it tags a message
// that arrives while the last notification for its partition named another
// consumer, or whose notification the client dropped.
//
// A message of a partition that is active or was never notified, the
// steady state, takes no lock (see states) and, while no partition is
// inactive or lost, no lookup either: the state it reads was
// published before the notification's callback returned, on this same
// goroutine, so the wire order holds without it. Only a message that may
// be tagged takes the lock, and reads the state again under it.
func (a *activation) BeforeConsume(cm pclient.ConsumerMessage) {
	v := a.states.Load()
	if v.allActive {
		return
	}
	topic := cm.Message.Topic()
	switch v.state[topic] {
	case stateInactive, stateLost:
	default:
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var run *uncertainRun
	switch a.mu.state[topic] {
	case stateInactive:
	case stateLost:
		if run = a.mu.uncertain[topic]; run == nil {
			run = &uncertainRun{started: time.Now(), done: make(chan struct{})}
			a.mu.uncertain[topic] = run
		}
	default: // active, or no notification yet
		return
	}
	a.mu.added++
	a.mu.tags[cm.Message] = tag{at: a.mu.added, run: run}
	if len(a.mu.tags) > a.limit {
		a.sweepLocked()
	}
	a.pending.Store(int64(len(a.mu.tags)))
}

// sweepLocked forgets the older half of the tags. A tag that old belongs to
// a message the client discarded (the queue holds far fewer than limit).
func (a *activation) sweepLocked() {
	floor := a.mu.added - uint64(a.limit/2)
	for m, tg := range a.mu.tags {
		if tg.at <= floor {
			delete(a.mu.tags, m)
		}
	}
}

// OnAcknowledge implements pclient.ConsumerInterceptor.
func (a *activation) OnAcknowledge(pclient.Consumer, pclient.MessageID) {}

// OnNegativeAcksSend implements pclient.ConsumerInterceptor.
func (a *activation) OnNegativeAcksSend(pclient.Consumer, []pclient.MessageID) {}

// verdict is what judge says of a received message.
type verdict uint8

const (
	verdictOurs      verdict = iota // this consumer's: emit it
	verdictEarly                    // dispatched before this consumer was active: drop it
	verdictUndecided                // its partition's notification was dropped: set it aside
)

// judge tells whether msg arrived before this consumer was active on its
// partition. It never waits: a message of an undecided uncertain run is
// verdictUndecided, with the time its run is decided as this consumer's
// unless a notification comes first (deadline). Asked again once the run
// is decided (a notification, or the end of hold, which judge itself
// applies), it answers early or ours and forgets the message's tag. Next's
// goroutine.
func (a *activation) judge(msg pclient.Message) (v verdict, deadline time.Time) {
	if a.pending.Load() == 0 {
		return verdictOurs, time.Time{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	tg, ok := a.mu.tags[msg]
	if !ok {
		return verdictOurs, time.Time{}
	}
	v = verdictEarly
	if run := tg.run; run != nil {
		deadline = run.started.Add(a.hold)
		select {
		case <-run.done:
		default:
			if now := time.Now(); now.Before(deadline) {
				if !run.held {
					run.held = true
					a.log.Info("holding the partition's messages: the Pulsar client dropped the broker's active-consumer notification; waiting for one",
						"topic", msg.Topic(), "at_most", deadline.Sub(now).Round(time.Millisecond))
				}
				return verdictUndecided, deadline
			}
			a.decideLocked(msg.Topic(), run, false)
			a.log.Info("no active-consumer notification arrived; taking the partition's messages as this consumer's",
				"topic", msg.Topic(), "after", a.hold)
			run.released = true
		}
		if run.held && run.early && !run.released {
			run.released = true
			a.log.Info("released the partition's held messages: the notification came, they were dispatched before this consumer was active",
				"topic", msg.Topic(), "after", time.Since(run.started).Round(time.Millisecond))
		}
		if !run.early {
			v = verdictOurs
		}
	}
	delete(a.mu.tags, msg)
	a.pending.Store(int64(len(a.mu.tags)))
	return v, time.Time{}
}
