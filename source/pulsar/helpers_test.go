package pulsar

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/pulsartest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// broker is a running Pulsar broker found through internal/testkit/testenv, with
// its admin API.
type broker struct {
	url string
	pulsartest.Admin
}

func newBroker(t testing.TB) broker {
	t.Helper()
	u, a := testenv.PulsarURL(t)
	return broker{url: u, Admin: pulsartest.Admin{URL: a}}
}

var topicCounter atomic.Uint64

// topicName returns a topic name no other test (or earlier run) uses.
func topicName(t testing.TB, suffix string) string {
	name := regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(t.Name(), "-")
	return fmt.Sprintf("thalweg-%s-%s-%d-%d", strings.ToLower(name), suffix,
		time.Now().UnixNano()%1e9, topicCounter.Add(1))
}

func fullTopic(short string) string { return "persistent://public/default/" + short }

func clientLogger(t testing.TB) plog.Logger {
	return plog.NewLoggerWithSlog(slog.New(slog.DiscardHandler))
}

// client connects a plain client; the caller closes it.
func (b broker) client(t testing.TB) pclient.Client {
	t.Helper()
	c, err := pclient.NewClient(pclient.ClientOptions{
		URL: b.url, Logger: clientLogger(t), MetricsRegisterer: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// produce publishes n records numbered from first to topic: payload "seq=<i>",
// key "k<i%7>", property "n"=<i>. Batching is on, so ids carry batch indexes.
func (b broker) produce(t testing.TB, topic string, first, n int) {
	t.Helper()
	c := b.client(t)
	defer c.Close()
	p, err := c.CreateProducer(pclient.ProducerOptions{
		Topic: topic, BatchingMaxMessages: 50, BatchingMaxPublishDelay: 5 * time.Millisecond,
		SendTimeout: -1, // its goroutine would outlive Close (goleak); ctx bounds the sends
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	for i := first; i < first+n; i++ {
		wg.Add(1)
		p.SendAsync(ctx, &pclient.ProducerMessage{
			Payload:    []byte("seq=" + strconv.Itoa(i)),
			Key:        "k" + strconv.Itoa(i%7),
			Properties: map[string]string{"n": strconv.Itoa(i)},
			EventTime:  time.UnixMilli(1_700_000_000_000 + int64(i)),
		}, func(_ pclient.MessageID, _ *pclient.ProducerMessage, err error) {
			if err != nil {
				select {
				case errc <- err:
				default:
				}
			}
			wg.Done()
		})
	}
	if err := p.FlushWithCtx(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	select {
	case err := <-errc:
		t.Fatalf("produce to %s: %v", topic, err)
	default:
	}
}

// got is one record as a test keeps it.
type got struct {
	partition string
	seq       uint64
	id        []byte
	n         int // the producer's number
	key       string
}

// take calls Next until want records arrived, failing after timeout.
func take(t testing.TB, s *Source, want int, timeout time.Duration) []got {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out := make([]got, 0, want)
	var rec batch.Record
	for len(out) < want {
		if err := s.Next(ctx, &rec); err != nil {
			t.Fatalf("Next after %d of %d records: %v (stats %+v)", len(out), want, err, s.Stats())
		}
		n, err := strconv.Atoi(strings.TrimPrefix(string(rec.Payload), "seq="))
		if err != nil {
			t.Fatalf("payload %q", rec.Payload)
		}
		if rec.Props["n"] != strconv.Itoa(n) {
			t.Fatalf("record %d: property n = %q", n, rec.Props["n"])
		}
		if want := time.UnixMilli(1_700_000_000_000 + int64(n)); !rec.EventTime.Equal(want) {
			t.Fatalf("record %d: event time %v, want %v", n, rec.EventTime, want)
		}
		if rec.PublishTime.IsZero() {
			t.Fatalf("record %d: no publish time", n)
		}
		out = append(out, got{partition: rec.Partition, seq: rec.Seq, id: bytes.Clone(rec.ID), n: n, key: string(rec.Key)})
	}
	return out
}

func bySeqOrder(a, b got) int { return cmp.Compare(a.seq, b.seq) }

// expectNothing asserts that Next has no record within d.
func expectNothing(t testing.TB, s *Source, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var rec batch.Record
	if err := s.Next(ctx, &rec); err == nil {
		t.Fatalf("unexpected record partition %s seq %d payload %q", rec.Partition, rec.Seq, rec.Payload)
	}
}

// spansOf returns the spans the assembler gives a batch of recs (in the
// order Next emitted them): per partition First is the Seq of its first
// record and Last, with LastID, of its last; sorted by partition.
func spansOf(t testing.TB, recs []got) []batch.OffsetSpan {
	t.Helper()
	by := map[string]*batch.OffsetSpan{}
	for _, r := range recs {
		sp := by[r.partition]
		if sp == nil {
			by[r.partition] = &batch.OffsetSpan{Partition: r.partition, First: r.seq, Last: r.seq, LastID: r.id}
			continue
		}
		sp.Last, sp.LastID = r.seq, r.id
	}
	out := make([]batch.OffsetSpan, 0, len(by))
	for _, sp := range by {
		out = append(out, *sp)
	}
	batch.SortSpans(out)
	return out
}

// checkExactlyOnce asserts that recs hold each number of [first, first+n) once
// and that every partition's seqs run from its start without a gap, in the
// order they came (a monotone Source on a topic nothing skipped).
func checkExactlyOnce(t testing.TB, recs []got, first, n int, startSeq map[string]uint64) {
	t.Helper()
	seen := make(map[int]int, len(recs))
	for _, r := range recs {
		seen[r.n]++
	}
	for i := first; i < first+n; i++ {
		if seen[i] != 1 {
			t.Fatalf("record %d received %d times", i, seen[i])
		}
	}
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	next := map[string]uint64{}
	for p, s := range startSeq {
		next[p] = s
	}
	for _, r := range recs {
		want, ok := next[r.partition]
		if !ok {
			want = 1
		}
		if r.seq != want {
			t.Fatalf("partition %s: seq %d, want %d", r.partition, r.seq, want)
		}
		next[r.partition] = want + 1
	}
}

// fakePositions is an in-memory PositionStore whose delivered watermarks the
// test commits explicitly (standing in for the offset store's durable state).
type fakePositions struct {
	mu        sync.Mutex
	delivered map[string]Position
}

func newFakePositions() *fakePositions {
	return &fakePositions{delivered: map[string]Position{}}
}

func (f *fakePositions) Delivered() (map[string]Position, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]Position, len(f.delivered))
	for k, v := range f.delivered {
		out[k] = Position{Seq: v.Seq, ID: bytes.Clone(v.ID)}
	}
	return out, nil
}

// commit records spans as durably delivered.
func (f *fakePositions) commit(spans []batch.OffsetSpan) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, sp := range spans {
		if sp.Last > f.delivered[sp.Partition].Seq {
			f.delivered[sp.Partition] = Position{Seq: sp.Last, ID: bytes.Clone(sp.LastID)}
		}
	}
}

// partitionNames returns, sorted, the distinct partitions of recs.
func partitionNames(recs []got) []string {
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.partition] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

func open(t testing.TB, opts Options) *Source {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Open(ctx, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// waitConsumers waits until every partition of the partitioned topic
// persistent://public/default/<short> has, on subscription sub, a connected
// consumer of each of the names, as the broker's admin API reports them.
func (b broker) waitConsumers(t testing.TB, short, sub string, partitions int, names ...string) {
	t.Helper()
	what := fmt.Sprintf("consumers %v on every partition of %s/%s", names, short, sub)
	testenv.WaitFor(t, 30*time.Second, what, func() bool {
		for i := range partitions {
			connected := map[string]bool{}
			for _, c := range b.Consumers(t, fmt.Sprintf("%s-partition-%d", fullTopic(short), i), sub) {
				connected[c] = true
			}
			for _, n := range names {
				if !connected[n] {
					return false
				}
			}
		}
		return true
	})
}
