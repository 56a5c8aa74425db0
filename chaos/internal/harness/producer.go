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

// partitionProperty is the message property that tells the producer's
// router which partition a record goes to; it is also stored with the
// record (the raw schema's properties column).
const partitionProperty = "chaos-partition"

// Producer writes sequence-numbered records to a partitioned topic: record
// N (from 1) goes to partition (N-1) mod partitions, chosen by the
// producer's own router, and its payload {"id":N,"p":P,"pad":"..."} of
// PayloadSize bytes names both. Sends are asynchronous and batched by the
// client; a record counts as produced once the broker confirmed it (the
// producer then knows its message id and partition), and a failed send is
// remembered so the check can leave it out (none is expected).
//
// Send and Stream may be used from different goroutines; Close once, last.
type Producer struct {
	client     pclient.Client
	prod       pclient.Producer
	partitions int

	mu struct {
		sync.Mutex
		next   uint64 // last id handed to SendAsync
		failed map[uint64]error
		// where records the broker's message id of every confirmed send,
		// so that stored rows can be joined to the broker's positions and
		// a gap traced to the entry and partition that held it.
		where map[uint64]pclient.MessageID
		// misrouted counts confirmed sends whose message id names another
		// partition than the payload: the expected partition is then
		// unknown, and the test must say so.
		misrouted map[uint64]int32
		// unsettled holds the ids whose SendAsync callback has not run.
		// (Not a WaitGroup: Flush may run while a stream keeps sending.)
		unsettled map[uint64]struct{}
	}

	streamMu   sync.Mutex
	streamStop context.CancelFunc
	streamDone chan struct{}
}

// NewProducer connects to the broker at url and creates a producer on the
// partitioned topic tp that routes record N to partition (N-1) mod
// tp.Partitions.
func NewProducer(url string, tp Topic) (*Producer, error) {
	if tp.Partitions < 1 {
		return nil, fmt.Errorf("harness: producer on %s: %d partitions, want a partitioned topic", tp.Name, tp.Partitions)
	}
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
		Topic: tp.Name,
		// No send timeout: its goroutine would outlive Close; a stuck
		// broker shows up as a test timeout instead.
		SendTimeout:             -1,
		BatchingMaxPublishDelay: 5 * time.Millisecond,
		// The record's partition is the producer's decision, made before
		// the payload is written, so that the payload can name it.
		MessageRouter: func(m *pclient.ProducerMessage, md pclient.TopicMetadata) int {
			p, err := strconv.Atoi(m.Properties[partitionProperty])
			if err != nil || p < 0 || uint32(p) >= md.NumPartitions() {
				panic(fmt.Sprintf("harness: record without a valid %s property: %v", partitionProperty, m.Properties))
			}
			return p
		},
	})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("harness: producer on %s: %w", tp.Name, err)
	}
	p := &Producer{client: c, prod: prod, partitions: tp.Partitions}
	p.mu.failed = map[uint64]error{}
	p.mu.where = map[uint64]pclient.MessageID{}
	p.mu.misrouted = map[uint64]int32{}
	p.mu.unsettled = map[uint64]struct{}{}
	return p, nil
}

// PartitionOf is the partition record id is routed to.
func (p *Producer) PartitionOf(id uint64) int32 { return int32((id - 1) % uint64(p.partitions)) }

// Payload returns the payload of record id routed to partition.
func Payload(id uint64, partition int32) []byte {
	b := make([]byte, 0, PayloadSize)
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"p":`...)
	b = strconv.AppendInt(b, int64(partition), 10)
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
		p.mu.unsettled[id] = struct{}{}
		p.mu.Unlock()
		part := p.PartitionOf(id)
		// Not ctx: a send cancelled half-way may or may not have reached
		// the broker, and every id handed out must be settled one way.
		p.prod.SendAsync(context.Background(), &pclient.ProducerMessage{
			Payload:    Payload(id, part),
			Properties: map[string]string{partitionProperty: strconv.Itoa(int(part))},
		}, func(mid pclient.MessageID, _ *pclient.ProducerMessage, err error) {
			p.mu.Lock()
			switch {
			case err != nil:
				p.mu.failed[id] = err
			case mid.PartitionIdx() != part:
				p.mu.misrouted[id] = mid.PartitionIdx()
			default:
				p.mu.where[id] = mid
			}
			delete(p.mu.unsettled, id)
			p.mu.Unlock()
		})
	}
}

// FlushTimeout bounds Flush: a broker that accepts nothing for this long
// has gone away, and the test should say so instead of hanging.
const FlushTimeout = 60 * time.Second

// Flush waits until the broker confirmed (or refused) every record sent
// before the call, at most FlushTimeout. A stream may go on meanwhile.
func (p *Producer) Flush() error {
	ctx, cancel := context.WithTimeout(context.Background(), FlushTimeout)
	defer cancel()
	target := p.Last()
	if err := p.prod.FlushWithCtx(ctx); err != nil {
		return fmt.Errorf("harness: producer flush: %w", err)
	}
	for {
		if !p.unsettledUpTo(target) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("harness: producer flush: sends unsettled after %v", FlushTimeout)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// unsettledUpTo reports whether a send of an id <= target is unsettled.
func (p *Producer) unsettledUpTo(target uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id := range p.mu.unsettled {
		if id <= target {
			return true
		}
	}
	return false
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

// Failed returns the ids whose send the broker refused, with the reasons,
// and those the broker stored in another partition than the router chose
// (as an error naming both): for neither is the expected row known.
func (p *Producer) Failed() map[uint64]error {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[uint64]error, len(p.mu.failed)+len(p.mu.misrouted))
	for id, err := range p.mu.failed {
		out[id] = err
	}
	for id, got := range p.mu.misrouted {
		out[id] = fmt.Errorf("harness: record %d routed to partition %d, stored in partition %d", id, p.PartitionOf(id), got)
	}
	return out
}

// MessageID returns the message id the broker gave record id (false when
// the send failed or is not confirmed yet).
func (p *Producer) MessageID(id uint64) (pclient.MessageID, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	mid, ok := p.mu.where[id]
	return mid, ok
}

// Close stops a stream, flushes and closes the producer and the client.
func (p *Producer) Close() {
	p.StopStream()
	_ = p.Flush()
	p.prod.Close()
	p.client.Close()
}
