package harness

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"
)

// PayloadSize is the size of every payload Producer writes.
const PayloadSize = 100

// Producer writes sequence-numbered records to a topic: record N (from 1)
// has the payload {"id":N,"pad":"..."} of PayloadSize bytes. Sends are
// asynchronous and batched by the client; a record counts as produced once
// the broker confirmed it, and a failed send is remembered so the check can
// leave it out (none is expected).
//
// Send and Stream may be used from different goroutines; Close once, last.
type Producer struct {
	client pclient.Client
	prod   pclient.Producer

	mu struct {
		sync.Mutex
		next   uint64 // last id handed to SendAsync
		failed map[uint64]error
		// where records the broker's message id of every confirmed send,
		// so that a gap can be traced to the entry and partition that
		// held it.
		where map[uint64]pclient.MessageID
	}
	inflight sync.WaitGroup // SendAsync calls whose callback has not run

	streamMu   sync.Mutex
	streamStop context.CancelFunc
	streamDone chan struct{}
}

// NewProducer connects to the broker at url and creates a producer on
// topic (a partitioned topic is written round-robin).
func NewProducer(url, topic string) (*Producer, error) {
	c, err := pclient.NewClient(pclient.ClientOptions{
		URL:               url,
		OperationTimeout:  30 * time.Second,
		Logger:            plog.DefaultNopLogger(),
		MetricsRegisterer: prometheus.NewRegistry(),
	})
	if err != nil {
		return nil, fmt.Errorf("harness: pulsar client: %w", err)
	}
	prod, err := c.CreateProducer(pclient.ProducerOptions{
		Topic: topic,
		// No send timeout: its goroutine would outlive Close; a stuck
		// broker shows up as a test timeout instead.
		SendTimeout:             -1,
		BatchingMaxPublishDelay: 5 * time.Millisecond,
	})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("harness: producer on %s: %w", topic, err)
	}
	p := &Producer{client: c, prod: prod}
	p.mu.failed = map[uint64]error{}
	p.mu.where = map[uint64]pclient.MessageID{}
	return p, nil
}

// Payload returns the payload of record id.
func Payload(id uint64) []byte {
	b := make([]byte, 0, PayloadSize)
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"pad":"`...)
	for len(b) < PayloadSize-2 {
		b = append(b, 'x')
	}
	return append(b, `"}`...)
}

// Send writes the next n records asynchronously, stopping early when ctx
// ends; Flush waits for them.
func (p *Producer) Send(ctx context.Context, n int) {
	for range n {
		if ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		p.mu.next++
		id := p.mu.next
		p.mu.Unlock()
		p.inflight.Add(1)
		// Not ctx: a send cancelled half-way may or may not have reached
		// the broker, and every id handed out must be settled one way.
		p.prod.SendAsync(context.Background(), &pclient.ProducerMessage{Payload: Payload(id)},
			func(mid pclient.MessageID, _ *pclient.ProducerMessage, err error) {
				p.mu.Lock()
				if err != nil {
					p.mu.failed[id] = err
				} else {
					p.mu.where[id] = mid
				}
				p.mu.Unlock()
				p.inflight.Done()
			})
	}
}

// FlushTimeout bounds Flush: a broker that accepts nothing for this long
// has gone away, and the test should say so instead of hanging.
const FlushTimeout = 60 * time.Second

// Flush waits until the broker confirmed (or refused) every record sent so
// far, at most FlushTimeout.
func (p *Producer) Flush() error {
	ctx, cancel := context.WithTimeout(context.Background(), FlushTimeout)
	defer cancel()
	if err := p.prod.FlushWithCtx(ctx); err != nil {
		return fmt.Errorf("harness: producer flush: %w", err)
	}
	settled := make(chan struct{})
	go func() { p.inflight.Wait(); close(settled) }()
	select {
	case <-settled:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("harness: producer flush: sends unsettled after %v", FlushTimeout)
	}
}

// Stream writes about rate records per second, in 10ms steps, until
// StopStream. Only one stream runs at a time.
func (p *Producer) Stream(rate int) {
	p.streamMu.Lock()
	defer p.streamMu.Unlock()
	if p.streamStop != nil {
		panic("harness: Producer.Stream while a stream runs")
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.streamStop, p.streamDone = cancel, make(chan struct{})
	go func() {
		defer close(p.streamDone)
		const step = 10 * time.Millisecond
		tick := time.NewTicker(step)
		defer tick.Stop()
		start := time.Now()
		var sent int
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				due := int(now.Sub(start).Seconds()*float64(rate)) - sent
				if due > 0 {
					p.Send(ctx, due)
					sent += due
				}
			}
		}
	}()
}

// StopStream stops a running stream and waits for its goroutine.
func (p *Producer) StopStream() {
	p.streamMu.Lock()
	defer p.streamMu.Unlock()
	if p.streamStop == nil {
		return
	}
	p.streamStop()
	<-p.streamDone
	p.streamStop, p.streamDone = nil, nil
}

// Last is the highest id sent so far.
func (p *Producer) Last() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.next
}

// Where returns the message id the broker gave record id ("" when the send
// failed or is not confirmed yet): partition, ledger, entry and batch index.
func (p *Producer) Where(id uint64) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	mid, ok := p.mu.where[id]
	if !ok {
		return ""
	}
	return fmt.Sprintf("partition %d %d:%d:%d", mid.PartitionIdx(), mid.LedgerID(), mid.EntryID(), mid.BatchIdx())
}

// Failed returns the ids whose send the broker refused, with the reasons.
func (p *Producer) Failed() map[uint64]error {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[uint64]error, len(p.mu.failed))
	for id, err := range p.mu.failed {
		out[id] = err
	}
	return out
}

// Close stops a stream, flushes and closes the producer and the client.
func (p *Producer) Close() {
	p.StopStream()
	_ = p.Flush()
	p.prod.Close()
	p.client.Close()
}
