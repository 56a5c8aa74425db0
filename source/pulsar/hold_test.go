package pulsar

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"

	"github.com/thalweg/thalweg/batch"
)

// holdSource is a Failover Source on chanConsumer whose activation the
// test drives: deliver passes a message through the interceptor (in wire
// order, as the client does) and onto the consumer's channel.
func holdSource(t *testing.T, maxUnacked int) (s *Source, deliver func(topic string, index uint64), nacked *[]int64) {
	t.Helper()
	opts := Options{URL: "pulsar://127.0.0.1:1", Topics: []string{"t"}, Subscription: "s", Type: Failover, MaxUnacked: maxUnacked}
	opts.withDefaults()
	s = newSource(opts)
	nacked = new([]int64)
	ch := make(chan pclient.ConsumerMessage, 64)
	s.consumer = chanConsumer{ch: ch, nacked: nacked}
	s.activation = newActivation(slog.New(slog.DiscardHandler), 0, opts.FailoverHold)
	return s, func(topic string, index uint64) {
		cm := indexed(topic, index)
		s.activation.BeforeConsume(cm)
		ch <- cm
	}, nacked
}

// next is Source.Next as "partition/seq", failing the test on an error.
func next(t *testing.T, s *Source) string {
	t.Helper()
	var rec batch.Record
	if err := s.Next(context.Background(), &rec); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s/%d", rec.Partition[len(rec.Partition)-1:], rec.Seq)
}

// TestHoldIsPerPartition: while the Source waits for the active-consumer
// notification the client dropped for one partition, the messages of its
// other partitions are emitted at once; the held partition's messages are
// emitted in order when the hold ends without a notification, or dropped
// for the broker's redelivery when the notification comes.
func TestHoldIsPerPartition(t *testing.T) {
	const held, other = "persistent://public/default/t-partition-0", "persistent://public/default/t-partition-1"
	t.Run("hold ends", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, deliver, _ := holdSource(t, 0)
			s.activation.lost(held)
			start := time.Now()
			deliver(held, 10)
			deliver(held, 11)
			deliver(other, 20)
			deliver(other, 21)
			var got []string
			for range 2 {
				got = append(got, next(t, s))
			}
			if fmt.Sprint(got) != "[1/21 1/22]" || time.Since(start) != 0 {
				t.Fatalf("emitted %v after %v; want [1/21 1/22] at once, while partition 0 waits for its notification", got, time.Since(start))
			}
			deliver(held, 12) // behind the held ones
			deliver(other, 22)
			if got := next(t, s); got != "1/23" {
				t.Fatalf("emitted %s, want 1/23", got)
			}
			for _, want := range []string{"0/11", "0/12", "0/13"} {
				if got := next(t, s); got != want {
					t.Fatalf("emitted %s, want %s", got, want)
				}
			}
			if el := time.Since(start); el != s.opts.FailoverHold {
				t.Fatalf("held partition emitted after %v, want the hold, %v", el, s.opts.FailoverHold)
			}
			if st := s.Stats(); st.Emitted != 6 || st.Early != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	})
	t.Run("notification comes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, deliver, nacked := holdSource(t, 0)
			s.activation.lost(held)
			deliver(held, 10)
			deliver(other, 20)
			if got := next(t, s); got != "1/21" {
				t.Fatalf("emitted %s, want 1/21 while partition 0 waits", got)
			}
			time.Sleep(time.Second)
			s.activation.BecameActive(nil, held, 0)
			deliver(held, 10) // the broker's rewind
			if got := next(t, s); got != "0/11" {
				t.Fatalf("emitted %s, want the rewound 0/11", got)
			}
			if fmt.Sprint(*nacked) != "[10]" || s.Stats().Early != 1 {
				t.Fatalf("nacked %v, stats %+v; want the early 10 dropped and nacked", *nacked, s.Stats())
			}
		})
	})
	t.Run("held messages count against MaxUnacked", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, deliver, _ := holdSource(t, 3)
			s.activation.lost(held)
			start := time.Now()
			deliver(held, 10)
			deliver(held, 11)
			deliver(other, 20)
			deliver(other, 21)
			deliver(other, 22)
			if got := next(t, s); got != "1/21" || time.Since(start) != 0 {
				t.Fatalf("emitted %s after %v, want 1/21 at once", got, time.Since(start))
			}
			// One outstanding and two aside fill the bound: 1/22 waits for
			// an Ack or the end of the hold (the held messages are then
			// emitted first, as the Ack that follows makes room).
			go func() {
				time.Sleep(time.Second)
				if err := s.Ack([]batch.OffsetSpan{{Partition: other, First: 21, Last: 21}}); err != nil {
					t.Error(err)
				}
			}()
			if got := next(t, s); got != "1/22" || time.Since(start) != time.Second {
				t.Fatalf("emitted %s after %v; want 1/22 after the Ack, 1s", got, time.Since(start))
			}
			if n := s.consumer.Chan(); len(n) != 1 {
				t.Fatalf("%d messages left in the channel, want 1: the held ones count against the bound", len(n))
			}
		})
	})
}
