package pulsar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/schemaevo"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// indexless is a message as a broker without the entry-index interceptor
// delivers it (index nil), or with one.
type indexless struct {
	pclient.Message
	topic string
	index *uint64
}

func indexed(topic string, index uint64) pclient.ConsumerMessage {
	return pclient.ConsumerMessage{Message: indexless{topic: topic, index: &index}}
}

func (m indexless) Topic() string  { return m.topic }
func (m indexless) Index() *uint64 { return m.index }
func (m indexless) ID() pclient.MessageID {
	if m.index == nil {
		return pclient.NewMessageID(7, 3, -1, 0)
	}
	return pclient.NewMessageID(7, int64(*m.index), -1, 0)
}
func (m indexless) Key() string                   { return "" }
func (m indexless) Payload() []byte               { return []byte("p") }
func (m indexless) Properties() map[string]string { return nil }
func (m indexless) EventTime() time.Time          { return time.Time{} }
func (m indexless) PublishTime() time.Time        { return time.Unix(1, 0) }
func (m indexless) SchemaVersion() []byte         { return []byte{0, 0, 0, 0, 0, 0, 0, 2} }

// chanConsumer is a consumer that only delivers what the test puts on ch
// and records the entries of the ids it is asked to acknowledge.
type chanConsumer struct {
	pclient.Consumer
	ch     chan pclient.ConsumerMessage
	acked  *[]int64
	nacked *[]int64 // nil: not recorded
}

func (c chanConsumer) Chan() <-chan pclient.ConsumerMessage { return c.ch }

func (c chanConsumer) Nack(m pclient.Message) {
	if c.nacked != nil {
		*c.nacked = append(*c.nacked, m.ID().EntryID())
	}
}

// chanAckMu guards the acked slices of chanConsumers: Source.Ack
// acknowledges the partitions of a cumulative subscription concurrently.
var chanAckMu sync.Mutex

func (c chanConsumer) AckIDCumulative(id pclient.MessageID) error {
	if c.acked != nil {
		chanAckMu.Lock()
		*c.acked = append(*c.acked, id.EntryID())
		chanAckMu.Unlock()
	}
	return nil
}

func (c chanConsumer) AckIDList(ids []pclient.MessageID) error {
	for _, id := range ids {
		*c.acked = append(*c.acked, id.EntryID())
	}
	return nil
}

// A Shared Source with other consumers emits a partition's Seqs out of
// order when it takes over another consumer's messages. A span (the
// assembler's: First and Last are the partition's first and last record of
// a batch, in emission order) covers exactly its records, not a lower Seq
// emitted after it; a span whose Last is not outstanding covers nothing.
func TestAckOutOfSeqOrder(t *testing.T) {
	opts := Options{URL: "pulsar://127.0.0.1:1", Topics: []string{"t"}, Subscription: "s", Type: Shared}
	opts.withDefaults()
	s := newSource(opts)
	var acked []int64
	ch := make(chan pclient.ConsumerMessage, 8)
	s.consumer = chanConsumer{ch: ch, acked: &acked}
	const topic = "persistent://public/default/t"
	for _, idx := range []uint64{10, 20, 5, 20, 7} { // 20 again: in flight, not emitted
		ch <- indexed(topic, idx)
	}
	var seqs []uint64
	var spans []batch.OffsetSpan
	for range 4 {
		var rec batch.Record
		if err := s.Next(context.Background(), &rec); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, rec.Seq)
		spans = append(spans, batch.OffsetSpan{Partition: rec.Partition, First: rec.Seq, Last: rec.Seq})
	}
	if fmt.Sprint(seqs) != "[11 21 6 8]" {
		t.Fatalf("seqs %v, want [11 21 6 8] (21 once)", seqs)
	}
	// Batch one: 11 and 21. Not 6, emitted after 21 but below it.
	first := spans[0]
	first.Last = 21
	if err := s.Ack([]batch.OffsetSpan{first}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(acked) != "[10 20]" || s.Stats().Outstanding != 2 {
		t.Fatalf("acknowledged entries %v, outstanding %d; want [10 20], 2", acked, s.Stats().Outstanding)
	}
	if err := s.Ack([]batch.OffsetSpan{{Partition: first.Partition, First: 99, Last: 99}}); err != nil {
		t.Fatal(err)
	}
	if len(acked) != 2 {
		t.Fatalf("a span of nothing outstanding acknowledged %v", acked[2:])
	}
	// Batch two: 6 then 8.
	second := spans[2]
	second.Last = 8
	if err := s.Ack([]batch.OffsetSpan{second}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(acked) != "[10 20 5 7]" || s.Stats().Outstanding != 0 {
		t.Fatalf("acknowledged entries %v, outstanding %d; want [10 20 5 7], 0", acked, s.Stats().Outstanding)
	}
}

// A message without a broker entry index stops the Source for good: Next
// returns ErrNoIndex, naming both broker settings and the topic, again on
// every later call, and takes no further message.
func TestNoIndexIsPermanent(t *testing.T) {
	opts := Options{URL: "pulsar://127.0.0.1:1", Topics: []string{"t"}, Subscription: "s", Type: Exclusive}
	opts.withDefaults()
	s := newSource(opts)
	ch := make(chan pclient.ConsumerMessage, 2)
	s.consumer = chanConsumer{ch: ch}
	const topic = "persistent://public/default/orders-partition-2"
	five := uint64(5)
	ch <- pclient.ConsumerMessage{Message: indexless{topic: topic}}
	ch <- pclient.ConsumerMessage{Message: indexless{topic: topic, index: &five}}

	var rec batch.Record
	err := s.Next(context.Background(), &rec)
	if !errors.Is(err, ErrNoIndex) {
		t.Fatalf("Next = %v, want ErrNoIndex", err)
	}
	for _, want := range []string{
		"brokerEntryMetadataInterceptors=org.apache.pulsar.common.intercept.AppendIndexMetadataInterceptor",
		"exposingBrokerEntryMetadataToClientEnabled=true", topic,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if again := s.Next(context.Background(), &rec); !errors.Is(again, ErrNoIndex) || again.Error() != err.Error() {
		t.Fatalf("second Next = %v, want the same ErrNoIndex", again)
	}
	if len(ch) != 1 {
		t.Fatalf("Next took the message after the refused one")
	}
	if st := s.Stats(); st.Emitted != 0 {
		t.Fatalf("stats %+v: emitted after a message without an index", st)
	}

	// A message with an index gets index + 1.
	s = newSource(opts)
	s.consumer = chanConsumer{ch: ch}
	if err := s.Next(context.Background(), &rec); err != nil || rec.Seq != 6 {
		t.Fatalf("Next = %v, seq %d; want seq 6 for index 5", err, rec.Seq)
	}
}

// warnCounter is a slog.Handler counting the Source's warnings that start
// with prefix (the client's own lines pass through the same logger).
type warnCounter struct {
	prefix string
	n      *atomic.Int32
}

func (w warnCounter) Enabled(context.Context, slog.Level) bool { return true }
func (w warnCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && strings.HasPrefix(r.Message, w.prefix) {
		w.n.Add(1)
	}
	return nil
}
func (w warnCounter) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w warnCounter) WithGroup(string) slog.Handler      { return w }

// produceTo publishes records numbered [first, first+n) to one partition of
// a partitioned topic.
func (b broker) produceTo(t testing.TB, short string, partition, first, n int) {
	t.Helper()
	b.produce(t, fullTopic(short)+"-partition-"+strconv.Itoa(partition), first, n)
}

// An empty store and a Reconcile that knows the anchor's positions: the
// backlog redelivered from a worker that never acknowledged is
// acknowledged up to those positions without being emitted, only what the
// anchor lacks comes out, numbered by the broker's index, and the
// subscription's backlog drains.
func TestReconcileSkipsWhatTheAnchorHas(t *testing.T) {
	b := newBroker(t)
	short := topicName(t, "rc")
	b.CreatePartitioned(t, short, 2)
	p0, p1 := fullTopic(short)+"-partition-0", fullTopic(short)+"-partition-1"
	b.produceTo(t, short, 0, 0, 300)
	b.produceTo(t, short, 1, 300, 300)

	// A worker takes everything, stores nothing here, and dies.
	first := open(t, Options{URL: b.url, Topics: []string{short}, Subscription: "sub", Type: Failover})
	take(t, first, 600, 30*time.Second)
	first.Close()

	var calls atomic.Int32
	s := open(t, Options{URL: b.url, Topics: []string{short}, Subscription: "sub", Type: Failover,
		Positions: newFakePositions(),
		Reconcile: func(context.Context) (map[string]uint64, error) {
			calls.Add(1)
			return map[string]uint64{p0: 200, p1: 300, fullTopic(short) + "-partition-9": 5}, nil
		}})
	recs := take(t, s, 100, 30*time.Second)
	for i, r := range recs {
		if r.partition != p0 || r.n != 200+i || r.seq != uint64(201+i) {
			t.Fatalf("record %d: %s seq %d number %d; want %s seq %d number %d (what the anchor lacks, by index)",
				i, r.partition, r.seq, r.n, p0, 201+i, 200+i)
		}
	}
	expectNothing(t, s, time.Second) // also flushes the duplicates' acknowledgements
	st := s.Stats()
	if st.Deduplicated != 500 || st.Emitted != 100 || st.Reconciled == 0 || calls.Load() == 0 {
		t.Fatalf("stats %+v (%d calls), want 500 deduplicated, 100 emitted, reconciled", st, calls.Load())
	}
	if err := s.Ack(spansOf(t, recs)); err != nil {
		t.Fatal(err)
	}
	b.WaitBacklog(t, short, "sub", true, 0)
}

// A Reconcile that fails: one warning, however many partitions start, and
// every record is still emitted (the own, empty, position).
func TestReconcileFailingWarnsOnce(t *testing.T) {
	b := newBroker(t)
	short := topicName(t, "rf")
	b.CreatePartitioned(t, short, 4)
	var warnings atomic.Int32
	var calls atomic.Int32
	s := open(t, Options{URL: b.url, Topics: []string{short}, Subscription: "sub", Type: Failover,
		Logger: slog.New(warnCounter{prefix: "asking the anchor for its positions failed", n: &warnings}),
		Reconcile: func(context.Context) (map[string]uint64, error) {
			calls.Add(1)
			return nil, errors.New("anchor unreachable")
		}})
	b.produce(t, fullTopic(short), 0, 400)
	recs := take(t, s, 400, 30*time.Second)
	checkExactlyOnce(t, recs, 0, 400, nil)
	if err := s.Ack(spansOf(t, recs)); err != nil {
		t.Fatal(err)
	}
	b.WaitBacklog(t, short, "sub", true, 0)
	st := s.Stats()
	if n := warnings.Load(); n != 1 || st.ReconcileErrors == 0 || st.ReconcileErrors != uint64(calls.Load()) {
		t.Fatalf("%d warnings, %d calls, stats %+v; want one warning and the failures counted", n, calls.Load(), st)
	}
	// Four partitions started within the backoff: one call, not four.
	if calls.Load() > 2 {
		t.Fatalf("%d calls of a failing Reconcile for 4 partitions, want at most 2 (backoff)", calls.Load())
	}
}

// fakeAnchor stands in for the raw anchor of two workers: what they stored,
// and its positions (the highest Seq stored per partition). It stores what
// it is given, twice if given twice: the duplicates the test counts.
type fakeAnchor struct {
	mu       sync.Mutex
	stored   map[int]int         // producer number -> times stored
	identity map[string]int      // "partition/seq" -> producer number
	pos      map[string]uint64   // partition -> highest seq
	seqs     map[string][]uint64 // partition -> seqs in storing order
	clash    []string
}

func newFakeAnchor() *fakeAnchor {
	return &fakeAnchor{stored: map[int]int{}, identity: map[string]int{}, pos: map[string]uint64{},
		seqs: map[string][]uint64{}}
}

func (a *fakeAnchor) store(recs []got) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range recs {
		a.stored[r.n]++
		k := r.partition + "/" + strconv.FormatUint(r.seq, 10)
		if n, ok := a.identity[k]; ok && n != r.n {
			a.clash = append(a.clash, fmt.Sprintf("%s: records %d and %d", k, n, r.n))
		}
		a.identity[k] = r.n
		a.pos[r.partition] = max(a.pos[r.partition], r.seq)
		a.seqs[r.partition] = append(a.seqs[r.partition], r.seq)
	}
}

func (a *fakeAnchor) positions(context.Context) (map[string]uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]uint64, len(a.pos))
	for k, v := range a.pos {
		out[k] = v
	}
	return out, nil
}

func (a *fakeAnchor) distinct() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.stored)
}

// worker runs s like a pipeline with batches of size records: it stores a
// full batch at the anchor, then makes it durable in its own store and
// acknowledges it — with lag batches stored but not yet acknowledged.
// After stopAfter records stored (0: never) it takes up to extra more
// records into a batch it never stores and returns without acknowledging
// the lagging ones: the caller closes s, as a killed worker's would be.
func worker(ctx context.Context, s *Source, pos *fakePositions, a *fakeAnchor, size, lag, stopAfter, extra int) error {
	var (
		cur     []got
		pending [][]got
		stored  int
		rec     batch.Record
	)
	take := func(timeout time.Duration) (got, error) {
		nctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := s.Next(nctx, &rec); err != nil {
			return got{}, err
		}
		n, err := strconv.Atoi(strings.TrimPrefix(string(rec.Payload), "seq="))
		if err != nil {
			return got{}, fmt.Errorf("payload %q", rec.Payload)
		}
		return got{partition: rec.Partition, seq: rec.Seq,
			id: append([]byte(nil), rec.ID...), n: n}, nil
	}
	flush := func() error {
		a.store(cur)
		stored += len(cur)
		pending = append(pending, cur)
		cur = nil
		for len(pending) > lag {
			spans := spansOfRecs(pending[0])
			pos.commit(spans)
			if err := s.Ack(spans); err != nil {
				return err
			}
			pending = pending[1:]
		}
		return nil
	}
	for {
		if stopAfter > 0 && stored >= stopAfter {
			for range extra {
				if _, err := take(500 * time.Millisecond); err != nil {
					break
				}
			}
			return nil
		}
		r, err := take(200 * time.Millisecond)
		switch {
		case err == nil:
			cur = append(cur, r)
			if len(cur) < size {
				continue
			}
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, context.DeadlineExceeded):
			if len(cur) == 0 {
				continue
			}
		default:
			return err
		}
		if err := flush(); err != nil {
			return err
		}
	}
}

// spansOfRecs is spansOf without a testing.TB, for worker goroutines.
func spansOfRecs(recs []got) []batch.OffsetSpan {
	by := map[string]*batch.OffsetSpan{}
	var order []string
	for _, r := range recs {
		sp := by[r.partition]
		if sp == nil {
			by[r.partition] = &batch.OffsetSpan{Partition: r.partition, First: r.seq, Last: r.seq, LastID: r.id}
			order = append(order, r.partition)
			continue
		}
		sp.Last, sp.LastID = r.seq, r.id
	}
	out := make([]batch.OffsetSpan, 0, len(order))
	for _, p := range order {
		out = append(out, *by[p])
	}
	batch.SortSpans(out)
	return out
}

// indexes reads every message of topic with a plain reader: producer
// number -> the broker's entry index.
func (b broker) indexes(t testing.TB, topic string, n int) map[int]uint64 {
	t.Helper()
	c := b.client(t)
	defer c.Close()
	r, err := c.CreateReader(pclient.ReaderOptions{Topic: topic, StartMessageID: pclient.EarliestMessageID()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[int]uint64{}
	for len(out) < n {
		m, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("reading %s after %d of %d: %v", topic, len(out), n, err)
		}
		k, _ := strconv.Atoi(strings.TrimPrefix(string(m.Payload()), "seq="))
		if m.Index() == nil {
			t.Fatalf("%s: message %d without a broker index", topic, k)
		}
		out[k] = *m.Index()
	}
	return out
}

// Two workers on one Failover subscription of a 4-partition topic, each
// with its own empty store and a Reconcile that asks the shared anchor.
// One dies (closed with a stored batch not yet acknowledged and a batch in
// flight); the other takes its partitions over. Every record is stored
// exactly once across both, under the real topic-partition name and the
// Seq its broker index gives it.
func TestFailoverTwoWorkersReconcile(t *testing.T) {
	b := newBroker(t)
	short := topicName(t, "tw")
	const parts, n = 4, 2000
	b.CreatePartitioned(t, short, parts)
	anchor := newFakeAnchor()
	opts := func(name string, pos *fakePositions) Options {
		return Options{URL: b.url, Topics: []string{short}, Subscription: "sub", Type: Failover,
			ConsumerName: name, Positions: pos, Reconcile: anchor.positions, ReceiverQueueSize: 100}
	}
	posA, posB := newFakePositions(), newFakePositions()
	a := open(t, opts("a-worker", posA))
	bw := open(t, opts("b-worker", posB))
	// Both subscribed before anything is produced: the broker's first
	// assignment moves no record.
	b.waitConsumers(t, short, "sub", parts, "a-worker", "b-worker")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	errs := make(chan error, 2)
	go func() {
		err := worker(ctx, a, posA, anchor, 50, 1, 400, 20)
		a.Close() // killed: nothing more stored or acknowledged
		errs <- err
	}()
	bctx, bcancel := context.WithCancel(ctx)
	defer bcancel()
	go func() { errs <- worker(bctx, bw, posB, anchor, 50, 0, 0, 0) }()
	b.produce(t, fullTopic(short), 0, n)

	if err := <-errs; err != nil {
		t.Fatalf("worker a: %v", err)
	}
	testenv.WaitFor(t, 60*time.Second, "every record stored", func() bool { return anchor.distinct() >= n })
	// Every record acknowledged: the broker has nothing left to deliver,
	// so no duplicate can come after this.
	b.WaitBacklog(t, short, "sub", true, 0)
	bcancel()
	if err := <-errs; err != nil {
		t.Fatalf("worker b: %v", err)
	}

	anchor.mu.Lock()
	defer anchor.mu.Unlock()
	missing, twice := 0, 0
	for i := range n {
		switch anchor.stored[i] {
		case 0:
			missing++
		case 1:
		default:
			twice++
		}
	}
	sa, sb := a.Stats(), bw.Stats()
	if missing > 0 || twice > 0 || len(anchor.clash) > 0 {
		t.Fatalf("%d missing, %d stored twice, identity clashes %v; worker a %+v, worker b %+v",
			missing, twice, anchor.clash, sa, sb)
	}
	if sb.Deduplicated == 0 || sb.Reconciled == 0 {
		t.Errorf("worker b %+v: took over a's stored, unacknowledged batch without reconciling it", sb)
	}
	idx := map[string]map[int]uint64{}
	for name := range anchor.seqs {
		want := false
		for p := range parts {
			want = want || name == fullTopic(short)+"-partition-"+strconv.Itoa(p)
		}
		if !want {
			t.Fatalf("stored under partition %q, not a partition of %s", name, short)
		}
		idx[name] = b.indexes(t, name, len(anchor.seqs[name]))
	}
	for k, num := range anchor.identity {
		i := strings.LastIndexByte(k, '/')
		name := k[:i]
		s, _ := strconv.ParseUint(k[i+1:], 10, 64)
		if got, ok := idx[name][num]; !ok || s-1 != got {
			t.Fatalf("record %d stored as %s seq %d; the broker's index of it is %d (found %v)", num, name, s, got, ok)
		}
	}
	t.Logf("worker a %+v; worker b %+v", sa, sb)
}

// Shared, two consumers, one of them closed with records in flight and
// replaced by a new Source with an empty store: records may come twice
// (at-least-once), never is one (partition, seq) given to two records.
func TestSharedIdentityNeverCollides(t *testing.T) {
	b := newBroker(t)
	short := topicName(t, "si")
	const n = 1000
	b.CreatePartitioned(t, short, 2)
	anchor := newFakeAnchor()
	opts := Options{URL: b.url, Topics: []string{short}, Subscription: "sub", Type: Shared, ReceiverQueueSize: 50}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	run := func(s *Source, pos *fakePositions, stopAfter int) chan error {
		errs := make(chan error, 1)
		go func() { errs <- worker(ctx, s, pos, anchor, 25, 2, stopAfter, 10) }()
		return errs
	}
	o1, o2 := opts, opts
	o1.Positions, o2.Positions = newFakePositions(), newFakePositions()
	s1, s2 := open(t, o1), open(t, o2)
	e1 := run(s1, o1.Positions.(*fakePositions), 200)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	e2 := make(chan error, 1)
	go func() { e2 <- worker(wctx, s2, o2.Positions.(*fakePositions), anchor, 25, 0, 0, 0) }()
	b.produce(t, fullTopic(short), 0, n)
	if err := <-e1; err != nil {
		t.Fatal(err)
	}
	s1.Close() // in-flight records go to the others
	o3 := opts
	o3.Positions = newFakePositions()
	s3 := open(t, o3)
	e3 := make(chan error, 1)
	go func() { e3 <- worker(wctx, s3, o3.Positions.(*fakePositions), anchor, 25, 0, 0, 0) }()
	testenv.WaitFor(t, 60*time.Second, "every record stored", func() bool { return anchor.distinct() >= n })
	// Everything, taken over out of Seq order or not, is acknowledged.
	b.WaitBacklog(t, short, "sub", true, 0)
	wcancel()
	for _, e := range []chan error{e2, e3} {
		if err := <-e; err != nil {
			t.Fatal(err)
		}
	}
	anchor.mu.Lock()
	defer anchor.mu.Unlock()
	dups := 0
	for i := range n {
		if anchor.stored[i] == 0 {
			t.Fatalf("record %d never stored", i)
		}
		dups += anchor.stored[i] - 1
	}
	if len(anchor.clash) > 0 {
		t.Fatalf("%d (partition, seq) pairs given to two records, e.g. %v", len(anchor.clash), anchor.clash[:min(5, len(anchor.clash))])
	}
	t.Logf("%d duplicates (allowed for Shared); stats %+v %+v %+v", dups, s1.Stats(), s2.Stats(), s3.Stats())
}

// The Reconcile schedule without a broker: one call serves the partitions
// that asked before it; a failure means no call, for any partition, before
// the backoff; an activation asks again; a call cut by Next's ctx is not a
// failure and the partition still asks.
func TestReconcileSchedule(t *testing.T) {
	// The backoff runs on the bubble's clock: nothing here touches the network.
	synctest.Test(t, func(t *testing.T) {
		var (
			calls  int
			fail   bool
			block  bool
			answer = map[string]uint64{}
		)
		opts := Options{URL: "pulsar://127.0.0.1:1", Topics: []string{"t"}, Subscription: "s", Type: Exclusive,
			Logger: slog.New(slog.DiscardHandler),
			Reconcile: func(ctx context.Context) (map[string]uint64, error) {
				calls++
				if block {
					<-ctx.Done()
					return nil, ctx.Err()
				}
				if fail {
					return nil, errors.New("down")
				}
				return answer, nil
			}}
		opts.withDefaults()
		s := newSource(opts)
		ch := make(chan pclient.ConsumerMessage, 16)
		var acked []int64
		s.consumer = chanConsumer{ch: ch, acked: &acked}
		next := func() uint64 {
			t.Helper()
			var rec batch.Record
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := s.Next(ctx, &rec); err != nil {
				t.Fatal(err)
			}
			return rec.Seq
		}
		// activateAfter lets d pass on the bubble's clock, then the broker
		// makes this consumer active on topic: an activation is after the
		// answer or failure before it.
		activateAfter := func(d time.Duration, topic string) {
			time.Sleep(d) // advances the bubble's fake clock; no real wait
			s.markActivated(topic)
		}
		const a, b = "persistent://public/default/t-partition-0", "persistent://public/default/t-partition-1"
		answer[a], answer[b] = 10, 3
		ch <- indexed(a, 4)  // seq 5 <= 10: acknowledged, not emitted
		ch <- indexed(a, 10) // seq 11: emitted
		if got := next(); got != 11 || calls != 1 {
			t.Fatalf("seq %d after %d calls, want 11 after 1", got, calls)
		}
		ch <- indexed(b, 3) // seq 4 > 3; the answer from the first call serves b too
		if got := next(); got != 4 || calls != 1 {
			t.Fatalf("seq %d after %d calls, want 4 after 1", got, calls)
		}

		// A takeover of a: a new call, which fails; b's takeover right after
		// finds the backoff running and makes no call.
		fail = true
		activateAfter(time.Millisecond, a)
		ch <- indexed(a, 11)
		if got := next(); got != 12 || calls != 2 || s.Stats().ReconcileErrors != 1 {
			t.Fatalf("seq %d after %d calls (%+v), want 12 after a failed second call", got, calls, s.Stats())
		}
		activateAfter(time.Millisecond, b)
		ch <- indexed(b, 4)
		if got := next(); got != 5 || calls != 2 {
			t.Fatalf("seq %d after %d calls, want 5 with no call during the backoff", got, calls)
		}

		// After the backoff, the next activation calls again and raises a.
		fail = false
		answer[a] = 30
		activateAfter(reconcileBackoffMin, a)
		ch <- indexed(a, 29) // seq 30 <= 30
		ch <- indexed(a, 30)
		if got := next(); got != 31 || calls != 3 {
			t.Fatalf("seq %d after %d calls, want 31 after a third call", got, calls)
		}

		// Next's ctx ends during the call: not a failure, and a still asks.
		block = true
		activateAfter(time.Millisecond, a)
		ch <- indexed(a, 31)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		var rec batch.Record
		err := s.Next(ctx, &rec)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || s.Stats().ReconcileErrors != 1 {
			t.Fatalf("Next = %v, stats %+v; want the deadline, no failure counted", err, s.Stats())
		}
		block = false
		if got := next(); got != 32 || calls != 5 {
			t.Fatalf("seq %d after %d calls, want 32 after the call is made again", got, calls)
		}
		// The messages at or below the anchor's positions were acknowledged,
		// cumulatively: the newest covers the older.
		s.flushDedup()
		if fmt.Sprint(acked) != "[29]" || s.Stats().Deduplicated != 2 {
			t.Fatalf("acknowledged entries %v (stats %+v), want a cumulative acknowledgement of entry 29", acked, s.Stats())
		}
	})
}

// A monotone Source judges by Seq alone: a jump (messages the broker
// skipped) is emitted as it is, a Seq at or below the newest emitted is in
// flight and not emitted, one at or below the durable position is
// acknowledged again.
func TestMonotoneJudgesBySeq(t *testing.T) {
	opts := Options{URL: "pulsar://127.0.0.1:1", Topics: []string{"t"}, Subscription: "s", Type: Failover}
	opts.withDefaults()
	pos := newFakePositions()
	const topic = "persistent://public/default/t-partition-0"
	pos.delivered[topic] = Position{Seq: 3}
	opts.Positions = pos
	s := newSource(opts)
	s.mu.parts[topic] = &partition{name: topic, durable: 3} // as Open reads it
	var acked, nacked []int64
	ch := make(chan pclient.ConsumerMessage, 16)
	s.consumer = chanConsumer{ch: ch, acked: &acked, nacked: &nacked}
	// Seqs 2 and 3 are at or below the durable 3: acknowledged again,
	// cumulatively with the newer (entry 2, seq 3). 4 is next. 10 and 11
	// come past a hole (5..9 missing): dropped and negatively acknowledged
	// (the rewind they cause sends 3 and 5 again, as a broker does). Then
	// 10 past the hole 6..9, twice: sent again after the rewind, it proves
	// the broker has nothing there, and the seqs go on from it.
	for _, idx := range []uint64{1, 3, 9, 10, 2, 4, 9, 9, 10} {
		ch <- indexed(topic, idx)
	}
	var seqs []uint64
	for range 4 {
		var rec batch.Record
		if err := s.Next(context.Background(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Partition != topic {
			t.Fatalf("partition %q, want %q", rec.Partition, topic)
		}
		seqs = append(seqs, rec.Seq)
	}
	s.flushDedup()
	st := s.Stats()
	if fmt.Sprint(seqs) != "[4 5 10 11]" || fmt.Sprint(acked) != "[2]" || st.Deduplicated != 2 || st.Holes != 3 || fmt.Sprint(nacked) != "[9 10 9]" {
		t.Fatalf("seqs %v, acknowledged entries %v, negatively %v, stats %+v; want [4 5 10 11], [2], [9 10 9], 2 deduplicated, 3 held at holes",
			seqs, acked, nacked, st)
	}
}

// TestIncompatibleSchemaIsPermanent: a schema version that Options.Schemas
// finds incompatible with the topic's earlier ones (schemaevo.ErrIncompatible)
// ends Next at once and for good, naming the field, rather than being
// retried like an unreachable registry or emitted.
func TestIncompatibleSchemaIsPermanent(t *testing.T) {
	opts := Options{URL: "pulsar://127.0.0.1:1", Topics: []string{"t"}, Subscription: "s", Type: Exclusive}
	var calls int
	opts.Schemas = func(context.Context, string, []byte) (batch.RowSchema, error) {
		calls++
		return nil, fmt.Errorf("topic t/n/orders schema version 2: %w: field \"id\": type int64 -> utf8", schemaevo.ErrIncompatible)
	}
	opts.withDefaults()
	s := newSource(opts)
	ch := make(chan pclient.ConsumerMessage, 2)
	s.consumer = chanConsumer{ch: ch}
	one, two := uint64(0), uint64(1)
	ch <- pclient.ConsumerMessage{Message: indexless{topic: "persistent://t/n/orders", index: &one}}
	ch <- pclient.ConsumerMessage{Message: indexless{topic: "persistent://t/n/orders", index: &two}}

	var rec batch.Record
	err := s.Next(context.Background(), &rec)
	if !errors.Is(err, schemaevo.ErrIncompatible) || !strings.Contains(err.Error(), `field "id"`) {
		t.Fatalf("Next = %v, want the permanent incompatible-schema error naming the field", err)
	}
	if again := s.Next(context.Background(), &rec); !errors.Is(again, schemaevo.ErrIncompatible) || calls != 1 || len(ch) != 1 {
		t.Fatalf("second Next = %v after %d resolutions, %d messages left: want the same error, no retry, nothing more read", again, calls, len(ch))
	}
	if st := s.Stats(); st.Emitted != 0 {
		t.Fatalf("stats %+v: emitted a record of an incompatible version", st)
	}
}

// TestAckSeveralSpansOfOnePartition: an unordered batch (batch.AssemblerOptions.Unordered)
// may carry several spans of one partition, in emission order — here
// 11..21 then the late 6 — and Ack of that batch acknowledges exactly its
// records: not the 8 emitted after it into the next batch.
func TestAckSeveralSpansOfOnePartition(t *testing.T) {
	opts := Options{URL: "pulsar://127.0.0.1:1", Topics: []string{"t"}, Subscription: "s", Type: Shared}
	opts.withDefaults()
	s := newSource(opts)
	var acked []int64
	ch := make(chan pclient.ConsumerMessage, 8)
	s.consumer = chanConsumer{ch: ch, acked: &acked}
	const topic = "persistent://public/default/t"
	for _, idx := range []uint64{10, 20, 5, 7} {
		ch <- indexed(topic, idx)
	}
	for range 4 {
		var rec batch.Record
		if err := s.Next(context.Background(), &rec); err != nil {
			t.Fatal(err)
		}
	}
	one := []batch.OffsetSpan{{Partition: topic, First: 11, Last: 21}, {Partition: topic, First: 6, Last: 6}}
	if err := s.Ack(one); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(acked) != "[10 20 5]" || s.Stats().Outstanding != 1 {
		t.Fatalf("acknowledged entries %v, outstanding %d; want [10 20 5], 1 (8 is the next batch's)", acked, s.Stats().Outstanding)
	}
	if err := s.Ack([]batch.OffsetSpan{{Partition: topic, First: 8, Last: 8}}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(acked) != "[10 20 5 7]" || s.Stats().Outstanding != 0 {
		t.Fatalf("acknowledged entries %v, outstanding %d; want [10 20 5 7], 0", acked, s.Stats().Outstanding)
	}
}

// barrierConsumer answers no cumulative acknowledgement before all n of
// them have been asked for, as a broker a round trip away answers none
// before it has them.
type barrierConsumer struct {
	chanConsumer
	n     int
	mu    *sync.Mutex
	asked *int
	all   chan struct{}
}

func (c barrierConsumer) AckIDCumulative(id pclient.MessageID) error {
	c.mu.Lock()
	if *c.asked++; *c.asked == c.n {
		close(c.all)
	}
	c.mu.Unlock()
	<-c.all
	return nil
}

// A cumulative Source acknowledges its partitions all at once: one after
// another, each waiting for its answer, an Ack over P partitions holds
// the records of the last one for P round trips. Acknowledged one by one,
// the first acknowledgement waits for the others forever, and the bubble
// deadlocks.
func TestAckAcknowledgesPartitionsConcurrently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := Options{URL: "pulsar://127.0.0.1:1", Topics: []string{"t"}, Subscription: "s", Type: Failover}
		opts.withDefaults()
		s := newSource(opts)
		const parts = 3
		ch := make(chan pclient.ConsumerMessage, parts)
		var asked int
		s.consumer = barrierConsumer{chanConsumer: chanConsumer{ch: ch}, n: parts, mu: &sync.Mutex{}, asked: &asked, all: make(chan struct{})}
		var spans []batch.OffsetSpan
		for i := range parts {
			ch <- indexed(fmt.Sprintf("persistent://public/default/t-partition-%d", i), 4)
			var rec batch.Record
			if err := s.Next(context.Background(), &rec); err != nil {
				t.Fatal(err)
			}
			spans = append(spans, batch.OffsetSpan{Partition: rec.Partition, First: rec.Seq, Last: rec.Seq})
		}
		if err := s.Ack(spans); err != nil {
			t.Fatal(err)
		}
		if asked != parts || s.Stats().Outstanding != 0 {
			t.Fatalf("%d cumulative acknowledgements, %d records outstanding; want %d, 0", asked, s.Stats().Outstanding, parts)
		}
	})
}
