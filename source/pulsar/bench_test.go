package pulsar

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// The two benchmarks read identical pre-produced backlogs (b.N records of
// benchPayload bytes, producer batching on, one non-partitioned topic, an
// Exclusive subscription created before producing) and report records/s of
// the consume loop only. BenchmarkBareConsumer is the source's own limit:
// pulsar-client-go's Receive plus Ack per message (grouped by the client).
// BenchmarkSourceNextAck is this package: Next, spans of 1000 records handed
// to an acker goroutine that calls Ack (cumulative, with broker response).
// Both also report cpu-ns/record: the process's CPU time (user + system,
// every goroutine: the client's included) over the consume loop, divided by
// the records; on a shared machine it measures the code where records/s
// measures the neighbours too.
//
//	go test -run '^$' -bench 'BareConsumer|SourceNextAck' -benchtime 200000x -count 5 ./source/pulsar/

const benchPayload = 100

func benchBacklog(b *testing.B) (broker, string) {
	b.Helper()
	br := newBroker(b)
	short := topicName(b, "bench")
	br.CreateTopic(b, short)
	br.CreateSubscription(b, short, "sub")
	c, err := pclient.NewClient(pclient.ClientOptions{URL: br.url, Logger: clientLogger(b),
		MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p, err := c.CreateProducer(pclient.ProducerOptions{Topic: fullTopic(short), SendTimeout: -1,
		BatchingMaxMessages: 1000, BatchingMaxPublishDelay: 5 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	payload := make([]byte, benchPayload)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	var (
		wg   sync.WaitGroup
		once sync.Once
		perr error
	)
	for i := range b.N {
		wg.Add(1)
		p.SendAsync(ctx, &pclient.ProducerMessage{Payload: payload, Key: strconv.Itoa(i % 64)},
			func(_ pclient.MessageID, _ *pclient.ProducerMessage, err error) {
				if err != nil {
					once.Do(func() { perr = err })
				}
				wg.Done()
			})
	}
	if err := p.FlushWithCtx(ctx); err != nil {
		b.Fatal(err)
	}
	wg.Wait()
	if perr != nil {
		b.Fatal(perr)
	}
	return br, short
}

func report(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if cpu := testenv.ProcessCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/record")
	}
}

func BenchmarkBareConsumer(b *testing.B) {
	br, short := benchBacklog(b)
	c, err := pclient.NewClient(pclient.ClientOptions{URL: br.url, Logger: clientLogger(b),
		MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	cons, err := c.Subscribe(pclient.ConsumerOptions{Topic: fullTopic(short), SubscriptionName: "sub",
		Type: pclient.Exclusive, ReceiverQueueSize: DefaultReceiverQueueSize})
	if err != nil {
		b.Fatal(err)
	}
	defer cons.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b.SetBytes(benchPayload)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := testenv.ProcessCPU()
	for range b.N {
		msg, err := cons.Receive(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := cons.Ack(msg); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	report(b, cpu0)
}

func BenchmarkSourceNextAck(b *testing.B) {
	br, short := benchBacklog(b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := Open(ctx, Options{URL: br.url, Topics: []string{short}, Subscription: "sub", Type: Exclusive})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	spans := make(chan []batch.OffsetSpan, 64)
	ackErr := make(chan error, 1)
	go func() {
		var first error
		for sp := range spans {
			if err := s.Ack(sp); err != nil && first == nil {
				first = err
			}
		}
		ackErr <- first
	}()
	b.SetBytes(benchPayload)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := testenv.ProcessCPU()
	var (
		rec  batch.Record
		span *batch.OffsetSpan
	)
	for i := range b.N {
		if err := s.Next(ctx, &rec); err != nil {
			b.Fatal(err)
		}
		if span == nil {
			span = &batch.OffsetSpan{Partition: rec.Partition, First: rec.Seq}
		}
		span.Last = rec.Seq
		if (i+1)%1000 == 0 || i == b.N-1 {
			spans <- []batch.OffsetSpan{*span}
			span = nil
		}
	}
	close(spans)
	if err := <-ackErr; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	report(b, cpu0)
	if st := s.Stats(); st.Emitted != uint64(b.N) || st.Acked != uint64(b.N) {
		b.Fatalf("stats %+v", st)
	}
}
