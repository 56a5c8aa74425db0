package pulsar

import (
	"context"
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

func TestMain(m *testing.M) {
	if os.Getenv(holderEnv) != "" {
		os.Exit(runHolder())
	}
	goleak.VerifyTestMain(m, testenv.LeakOptions()...)
}

func TestOptionsValidate(t *testing.T) {
	ok := Options{URL: "pulsar://127.0.0.1:6650", Topics: []string{"t"}, Subscription: "s"}
	if err := ok.validate(); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(*Options)
		field string
	}{
		{"no url", func(o *Options) { o.URL = "" }, "Options.URL"},
		{"http url", func(o *Options) { o.URL = "http://x:8080" }, "Options.URL"},
		{"no topics", func(o *Options) { o.Topics = nil }, "Options.Topics"},
		{"both topics and pattern", func(o *Options) { o.TopicsPattern = "x.*" }, "mutually exclusive"},
		{"empty topic", func(o *Options) { o.Topics = []string{"a", " "} }, "Options.Topics[1]"},
		{"bad pattern", func(o *Options) { o.Topics = nil; o.TopicsPattern = "(" }, "Options.TopicsPattern"},
		{"no subscription", func(o *Options) { o.Subscription = "" }, "Options.Subscription"},
		{"bad type", func(o *Options) { o.Type = 9 }, "Options.Type"},
		{"token and file", func(o *Options) { o.Token, o.TokenFile = "a", "b" }, "Options.TokenFile"},
		{"tls ca without tls", func(o *Options) { o.TLSTrustCertsFile = "/ca.pem" }, "Options.TLSTrustCertsFile"},
		{"bad listener name", func(o *Options) { o.ListenerName = "a b" }, "Options.ListenerName"},
		{"listener name with a scheme", func(o *Options) { o.ListenerName = "pulsar://x" }, "Options.ListenerName"},
		{"negative queue", func(o *Options) { o.ReceiverQueueSize = -1 }, "Options.ReceiverQueueSize"},
		{"negative unacked", func(o *Options) { o.MaxUnacked = -1 }, "Options.MaxUnacked"},
		{"negative channel", func(o *Options) { o.ChannelSize = -1 }, "Options.ChannelSize"},
		{"negative timeout", func(o *Options) { o.OperationTimeout = -time.Second }, "Options.OperationTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			o.Topics = append([]string(nil), ok.Topics...)
			tc.edit(&o)
			err := o.validate()
			if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("validate = %v, want ErrInvalidOptions naming %s", err, tc.field)
			}
			if _, err := Open(context.Background(), o); !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("Open = %v, want ErrInvalidOptions", err)
			}
		})
	}
	o := ok
	o.withDefaults()
	if o.Type != Failover || o.MaxUnacked != DefaultMaxUnacked || o.ReceiverQueueSize != DefaultReceiverQueueSize ||
		o.ChannelSize != DefaultChannelSize || o.AckBatch != DefaultAckBatch || o.Logger == nil {
		t.Fatalf("defaults not applied: %+v", o)
	}
}

func TestParseSubscriptionType(t *testing.T) {
	for in, want := range map[string]SubscriptionType{
		"exclusive": Exclusive, "Failover": Failover, "shared": Shared, "key_shared": KeyShared, "KeyShared": KeyShared,
	} {
		got, err := ParseSubscriptionType(in)
		if err != nil || got != want {
			t.Errorf("ParseSubscriptionType(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, _ := ParseSubscriptionType(got.String()); back != got {
			t.Errorf("%v does not round-trip through String", got)
		}
	}
	if _, err := ParseSubscriptionType("fanout"); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("ParseSubscriptionType(fanout) = %v", err)
	}
}

// Every subscription type on a partitioned topic: each produced record comes
// out once with per-partition contiguous seqs, acknowledging the spans drains
// the backlog to zero.
func TestConsumeAckEachType(t *testing.T) {
	b := newBroker(t)
	for _, typ := range []SubscriptionType{Exclusive, Failover, Shared, KeyShared} {
		t.Run(typ.String(), func(t *testing.T) {
			t.Parallel()
			const n = 300
			short := topicName(t, "p")
			b.CreatePartitioned(t, short, 3)
			pos := newFakePositions()
			s := open(t, Options{
				URL: b.url, Topics: []string{short}, Subscription: "sub", Type: typ, Positions: pos,
				AckBatch: 64,
			})
			b.produce(t, fullTopic(short), 0, n)
			recs := take(t, s, n, 30*time.Second)
			checkExactlyOnce(t, recs, 0, n, nil)
			if names := partitionNames(recs); len(names) != 3 || names[2] != fullTopic(short)+"-partition-2" {
				t.Fatalf("partition names %q", names)
			}
			// Acknowledge in a few slices, as durable callbacks would.
			for i := 0; i < n; i += 70 {
				if err := s.Ack(spansOf(t, recs[i:min(i+70, n)])); err != nil {
					t.Fatalf("Ack: %v", err)
				}
			}
			b.WaitBacklog(t, short, "sub", true, 0)
			st := s.Stats()
			if st.Emitted != n || st.Acked != n || st.Outstanding != 0 || st.AckErrors != 0 || st.Deduplicated != 0 {
				t.Fatalf("stats %+v", st)
			}
			expectNothing(t, s, 300*time.Millisecond)
		})
	}
}

// ChannelSize is the room of the channel in front of Next (subscribe): the
// client's own holds 10 messages.
func TestChannelSizeSizesTheChannel(t *testing.T) {
	b := newBroker(t)
	short := topicName(t, "q")
	b.CreatePartitioned(t, short, 2)
	s := open(t, Options{URL: b.url, Topics: []string{short}, Subscription: "sub", Positions: newFakePositions(),
		ChannelSize: 77})
	if got := cap(s.consumer.Chan()); got != 77 {
		t.Fatalf("the channel in front of Next holds %d messages, want ChannelSize 77", got)
	}
}

// Acknowledgements are sent with response, which bypasses the client's
// grouping tracker; the tracker is sized to nothing, so that no partition
// runs its ticker (a goroutine waking every 100 ms per partition, 2 560
// wake-ups a second at 256 partitions) for acknowledgements it never sees.
func TestNoAckGroupingTickerPerPartition(t *testing.T) {
	const partitions = 8
	b := newBroker(t)
	short := topicName(t, "g")
	b.CreatePartitioned(t, short, partitions)
	before := ackGroupingTickers()
	s := open(t, Options{URL: b.url, Topics: []string{short}, Subscription: "sub", Type: Failover, ConsumerName: "c"})
	b.waitConsumers(t, short, "sub", partitions, "c")
	b.produce(t, fullTopic(short), 0, 40)
	recs := take(t, s, 40, 30*time.Second)
	if n := ackGroupingTickers() - before; n != 0 {
		t.Fatalf("%d ack-grouping tickers run for a consumer of %d partitions, want none", n, partitions)
	}
	if err := s.Ack(spansOf(t, recs)); err != nil {
		t.Fatal(err)
	}
	b.WaitBacklog(t, short, "sub", true, 0)
}

// ackGroupingTickers counts the goroutines running pulsar-client-go's
// grouping tracker's ticker loop.
func ackGroupingTickers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return strings.Count(string(buf), "pulsar.newAckGroupingTracker.func")
}

// A non-partitioned topic and a list of two topics with one consumer.
func TestTopicList(t *testing.T) {
	b := newBroker(t)
	a, c := topicName(t, "a"), topicName(t, "c")
	b.CreatePartitioned(t, c, 2)
	s := open(t, Options{URL: b.url, Topics: []string{a, fullTopic(c)}, Subscription: "sub", Type: Exclusive})
	b.produce(t, fullTopic(a), 0, 100)
	b.produce(t, fullTopic(c), 100, 100)
	recs := take(t, s, 200, 30*time.Second)
	checkExactlyOnce(t, recs, 0, 200, nil)
	parts := map[string]bool{}
	for _, r := range recs {
		parts[r.partition] = true
	}
	if len(parts) != 3 {
		t.Fatalf("records came from %d partitions, want 3 (1 + 2)", len(parts))
	}
	if err := s.Ack(spansOf(t, recs)); err != nil {
		t.Fatal(err)
	}
	b.WaitBacklog(t, a, "sub", false, 0)
	b.WaitBacklog(t, c, "sub", true, 0)
}

// A pattern picks the matching topics of the namespace and no other.
func TestTopicsPattern(t *testing.T) {
	b := newBroker(t)
	prefix := topicName(t, "pat")
	x, y, other := prefix+"-x", prefix+"-y", topicName(t, "other")
	// Create the topics (and the subscription at their start) before the
	// pattern consumer exists, so the first discovery finds them.
	b.CreatePartitioned(t, y, 2)
	for _, tp := range []string{x, other} {
		b.CreateTopic(t, tp)
	}
	for _, tp := range []string{x, y, other} {
		b.CreateSubscription(t, tp, "sub")
	}
	b.produce(t, fullTopic(x), 0, 50)
	b.produce(t, fullTopic(y), 50, 50)
	b.produce(t, fullTopic(other), 1000, 10)
	s := open(t, Options{
		URL: b.url, TopicsPattern: "persistent://public/default/" + prefix + "-.*", Subscription: "sub",
		Type: Failover,
	})
	recs := take(t, s, 100, 30*time.Second)
	checkExactlyOnce(t, recs, 0, 100, nil)
	expectNothing(t, s, 500*time.Millisecond)
	if err := s.Ack(spansOf(t, recs)); err != nil {
		t.Fatal(err)
	}
	b.WaitBacklog(t, x, "sub", false, 0)
	b.WaitBacklog(t, y, "sub", true, 0)
	// The backlog counts entries; the producer batched the 10 records.
	if got := b.Backlog(t, other, "sub", false); got == 0 {
		t.Fatal("the unmatched topic's backlog was consumed")
	}
}

// A crash between the offset store's commit of the delivered position and
// the upstream acknowledgement. The broker
// delivers everything again; the restarted Source recognises what the store
// holds as delivered, acknowledges it without emitting it and numbers the
// rest after the stored Seq.
func TestRestartDedupe(t *testing.T) {
	b := newBroker(t)
	for _, tc := range []struct {
		typ  SubscriptionType
		sole bool
	}{{Exclusive, false}, {Failover, false}, {Shared, true}, {KeyShared, true}} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			t.Parallel()
			const n, durable = 400, 250
			short := topicName(t, "r")
			b.CreatePartitioned(t, short, 2)
			pos := newFakePositions()
			opts := Options{
				URL: b.url, Topics: []string{short}, Subscription: "sub", Type: tc.typ, Positions: pos,
				SoleConsumer: tc.sole,
			}
			s1 := open(t, opts)
			b.produce(t, fullTopic(short), 0, n)
			first := take(t, s1, n, 30*time.Second)
			// The store made the first 250 records durable; nothing was
			// acknowledged upstream before the "crash".
			pos.commit(spansOf(t, first[:durable]))
			start := map[string]uint64{}
			delivered := map[int]bool{}
			for _, r := range first[:durable] {
				start[r.partition] = r.seq + 1
				delivered[r.n] = true
			}
			s1.Close()

			s2 := open(t, opts)
			rest := take(t, s2, n-durable, 30*time.Second)
			for _, r := range rest {
				if delivered[r.n] {
					t.Fatalf("record %d emitted again after restart", r.n)
				}
			}
			seen := map[int]bool{}
			for _, r := range rest {
				seen[r.n] = true
			}
			for _, r := range first[durable:] {
				if !seen[r.n] {
					t.Fatalf("record %d, not durable before the crash, missing after restart", r.n)
				}
			}
			// Seqs continue after the stored watermark, without a gap.
			next := map[string]uint64{}
			for p, s := range start {
				next[p] = s
			}
			for _, r := range rest {
				want := next[r.partition]
				if want == 0 {
					want = 1
				}
				if r.seq != want {
					t.Fatalf("partition %s: seq %d after restart, want %d", r.partition, r.seq, want)
				}
				next[r.partition] = want + 1
			}
			expectNothing(t, s2, 300*time.Millisecond) // also flushes the duplicates' acks
			if st := s2.Stats(); st.Deduplicated != durable || st.Emitted != n-durable {
				t.Fatalf("stats after restart %+v, want %d deduplicated", st, durable)
			}
			if err := s2.Ack(spansOf(t, rest)); err != nil {
				t.Fatal(err)
			}
			b.WaitBacklog(t, short, "sub", true, 0)
		})
	}
}

// Redeliveries within one run (the consumer reconnects after the topic is
// unloaded) are recognised while the records are still in flight.
func TestRedeliveryInFlight(t *testing.T) {
	b := newBroker(t)
	for _, typ := range []SubscriptionType{Exclusive, Shared} {
		t.Run(typ.String(), func(t *testing.T) {
			t.Parallel()
			short := topicName(t, "u")
			s := open(t, Options{URL: b.url, Topics: []string{short}, Subscription: "sub", Type: typ})
			b.produce(t, fullTopic(short), 0, 100)
			recs := take(t, s, 100, 30*time.Second)
			b.Unload(t, short)
			b.produce(t, fullTopic(short), 100, 20)
			more := take(t, s, 20, 30*time.Second)
			checkExactlyOnce(t, append(recs, more...), 0, 120, nil)
			if err := s.Ack(spansOf(t, append(recs, more...))); err != nil {
				t.Fatal(err)
			}
			b.WaitBacklog(t, short, "sub", false, 0)
			if st := s.Stats(); st.Deduplicated != 100 || st.Emitted != 120 {
				t.Fatalf("stats %+v, want the 100 redelivered records deduplicated", st)
			}
		})
	}
}

// Next blocks at MaxUnacked outstanding records; a record received while the
// caller gave up is handed out by the next call, not skipped.
func TestBackpressure(t *testing.T) {
	b := newBroker(t)
	short := topicName(t, "bp")
	s := open(t, Options{URL: b.url, Topics: []string{short}, Subscription: "sub", Type: Shared, MaxUnacked: 10})
	b.produce(t, fullTopic(short), 0, 30)
	recs := take(t, s, 10, 30*time.Second)
	expectNothing(t, s, 500*time.Millisecond)
	if st := s.Stats(); st.Outstanding != 10 || st.Received != 11 {
		t.Fatalf("stats at the limit %+v", st)
	}
	if err := s.Ack(spansOf(t, recs[:4])); err != nil {
		t.Fatal(err)
	}
	recs = append(recs, take(t, s, 4, 10*time.Second)...)
	expectNothing(t, s, 200*time.Millisecond)
	if err := s.Ack(spansOf(t, recs[4:])); err != nil {
		t.Fatal(err)
	}
	recs = append(recs, take(t, s, 10, 10*time.Second)...)
	expectNothing(t, s, 200*time.Millisecond)
	if err := s.Ack(spansOf(t, recs[14:])); err != nil {
		t.Fatal(err)
	}
	recs = append(recs, take(t, s, 6, 10*time.Second)...)
	checkExactlyOnce(t, recs, 0, 30, nil)
	if err := s.Ack(spansOf(t, recs[24:])); err != nil {
		t.Fatal(err)
	}
	b.WaitBacklog(t, short, "sub", false, 0)
}

// DeadLetter publishes the record with its reason and origin before it
// returns.
func TestDeadLetter(t *testing.T) {
	b := newBroker(t)
	short, dlq := topicName(t, "in"), topicName(t, "dlq")
	c, err := pclient.NewClient(pclient.ClientOptions{URL: b.url, Logger: clientLogger(t),
		MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	reader, err := c.Subscribe(pclient.ConsumerOptions{Topic: dlq, SubscriptionName: "check",
		SubscriptionInitialPosition: pclient.SubscriptionPositionEarliest})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()

	s := open(t, Options{URL: b.url, Topics: []string{short}, Subscription: "sub", DeadLetterTopic: dlq})
	b.produce(t, fullTopic(short), 0, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rec batch.Record
	for range 2 {
		if err := s.Next(ctx, &rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeadLetter(ctx, &rec, "invalid_json: unexpected end"); err != nil {
		t.Fatalf("DeadLetter: %v", err)
	}
	msg, err := reader.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := msg.Properties()
	if string(msg.Payload()) != "seq=1" || msg.Key() != "k1" || p["n"] != "1" ||
		p[PropReason] != "invalid_json: unexpected end" || p[PropSourceSeq] != strconv.FormatUint(rec.Seq, 10) || rec.Seq != 2 ||
		p[PropSourcePartition] != "-1" || rec.Partition != fullTopic(short) || p[PropSourceTopic] != fullTopic(short) ||
		p[PropSourceID] == "" || !msg.EventTime().Equal(rec.EventTime) {
		t.Fatalf("dead letter payload %q key %q props %v event time %v", msg.Payload(), msg.Key(), p, msg.EventTime())
	}
	if st := s.Stats(); st.DeadLettered != 1 {
		t.Fatalf("stats %+v", st)
	}

	noDLQ := open(t, Options{URL: b.url, Topics: []string{short}, Subscription: "other"})
	if err := noDLQ.DeadLetter(ctx, &rec, "x"); !errors.Is(err, ErrNoDeadLetterTopic) {
		t.Fatalf("DeadLetter without a topic = %v", err)
	}
}

// Close wakes a blocked Next; later calls fail with ErrClosed.
func TestCloseWakesNext(t *testing.T) {
	b := newBroker(t)
	s := open(t, Options{URL: b.url, Topics: []string{topicName(t, "c")}, Subscription: "sub"})
	done := make(chan error, 1)
	go func() {
		var rec batch.Record
		done <- s.Next(context.Background(), &rec)
	}()
	waitBlockedIn(t, "pulsar.(*Source).Next")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Next = %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next still blocked after Close")
	}
	var rec batch.Record
	if err := s.Next(context.Background(), &rec); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close = %v", err)
	}
	if err := s.Ack(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ack after Close = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
}

// Several consumers on a Shared subscription: messages another consumer
// held come to this Source after records with higher ids. Without
// SoleConsumer they are emitted, not mistaken for redeliveries.
func TestSharedTakesOverAnotherConsumersMessages(t *testing.T) {
	b := newBroker(t)
	short := topicName(t, "sh")
	c, err := pclient.NewClient(pclient.ClientOptions{URL: b.url, Logger: clientLogger(t),
		MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	other, err := c.Subscribe(pclient.ConsumerOptions{Topic: fullTopic(short), SubscriptionName: "sub",
		Type: pclient.Shared, ReceiverQueueSize: 5, SubscriptionInitialPosition: pclient.SubscriptionPositionEarliest})
	if err != nil {
		t.Fatal(err)
	}
	b.produce(t, fullTopic(short), 0, 200)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 3 { // the other consumer holds the oldest messages, unacknowledged
		if _, err := other.Receive(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := open(t, Options{URL: b.url, Topics: []string{short}, Subscription: "sub", Type: Shared})
	recs := take(t, s, 100, 30*time.Second)
	other.Close() // its messages go to s now, below ids s already emitted
	recs = append(recs, take(t, s, 100, 30*time.Second)...)
	// The other consumer's messages came last, with the lowest Seqs: their
	// broker indexes, not the order this Source saw them in.
	if lowLater, highBefore := slices.MinFunc(recs[100:], bySeqOrder).seq, slices.MaxFunc(recs[:100], bySeqOrder).seq; lowLater > highBefore {
		t.Errorf("the other consumer's messages were not taken over after higher ones: seq %d came after %d", lowLater, highBefore)
	}
	bySeq := slices.Clone(recs)
	slices.SortFunc(bySeq, bySeqOrder)
	checkExactlyOnce(t, bySeq, 0, 200, nil)
	if err := s.Ack(spansOf(t, recs)); err != nil {
		t.Fatal(err)
	}
	b.WaitBacklog(t, short, "sub", false, 0)
}

// waitBlockedIn waits until a goroutine is blocked (on a channel, a select
// or a lock) with fn on its stack: a call that has nothing to return yet.
func waitBlockedIn(t *testing.T, fn string) {
	t.Helper()
	testenv.WaitFor(t, 10*time.Second, "a goroutine blocked in "+fn, func() bool {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		for g := range strings.SplitSeq(string(buf), "\n\n") {
			header, _, _ := strings.Cut(g, "\n")
			blocked := strings.Contains(header, "[select") || strings.Contains(header, "[chan receive") ||
				strings.Contains(header, "[sync.Mutex.Lock") || strings.Contains(header, "[sync.Cond.Wait")
			if blocked && strings.Contains(g, fn+"(") {
				return true
			}
		}
		return false
	})
}
