package receiver

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/diskstatus"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/limits"
)

// acker is a DoPut stream's ack goroutine: it watches the dataset's durable
// count and sends one cumulative PutResult whenever it covers more of the
// stream's batches.
type acker struct {
	ds       *dataset
	stream   flight.FlightService_DoPutServer
	budget   *limits.StreamBudget
	timeout  time.Duration // Options.AckSendTimeout
	stalled  chan<- error  // receives the status when a send times out (cap 1, sent once)
	released atomic.Int64  // bytes of acknowledged batches given back to budget
	kick     chan struct{}
	done     chan struct{}
	err      error // set before done is closed

	mu struct {
		sync.Mutex
		pending []ackItem
		ended   bool
	}
}

type ackItem struct {
	idx     int // dataset index of the batch's last entry
	offset  uint64
	records uint64 // cumulative rows on this stream through this batch
	bytes   int64  // pending-budget bytes the batch holds until durable
}

func newAcker(ds *dataset, stream flight.FlightService_DoPutServer, budget *limits.StreamBudget,
	timeout time.Duration, stalled chan<- error) *acker {
	return &acker{ds: ds, stream: stream, budget: budget, timeout: timeout, stalled: stalled,
		kick: make(chan struct{}, 1), done: make(chan struct{})}
}

// push queues the ack of a batch whose last entry is idx, and wakes the
// acker: the entry may have become durable (and its notification been
// consumed by the acker, with nothing pending yet) between the append and
// this push, and no later sync would come for the last batch of a stream.
func (a *acker) push(idx int, offset, records uint64, bytes int64) {
	a.mu.Lock()
	a.mu.pending = append(a.mu.pending, ackItem{idx, offset, records, bytes})
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// finish tells the acker no more batches come; it returns once everything
// pushed is acknowledged.
func (a *acker) finish() {
	a.mu.Lock()
	a.mu.ended = true
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

func (a *acker) run(ctx context.Context) {
	defer close(a.done)
	for {
		durable, notify, dsErr := a.ds.durableState()
		a.mu.Lock()
		n := 0
		var freed int64
		for n < len(a.mu.pending) && a.mu.pending[n].idx < durable {
			freed += a.mu.pending[n].bytes
			n++
		}
		if freed > 0 {
			a.budget.Release(freed)
			a.released.Add(freed)
		}
		var top ackItem
		if n > 0 {
			top = a.mu.pending[n-1]
			a.mu.pending = a.mu.pending[n:]
		}
		ended, left := a.mu.ended, len(a.mu.pending)
		a.mu.Unlock()
		if n > 0 {
			if err := a.send(flightwire.AppendAck(nil, top.offset, top.records)); err != nil {
				a.err = err
				return
			}
		}
		if left == 0 && ended {
			return
		}
		if dsErr != nil && left > 0 {
			a.err = diskstatus.Error("dataset storage", dsErr)
			return
		}
		select {
		case <-notify:
		case <-a.kick:
		case <-ctx.Done():
			a.err = status.FromContextError(ctx.Err()).Err()
			return
		}
	}
}

// send sends one ack. A send blocks while the client does not read (its
// HTTP/2 receive window closed); if it has not completed within a.timeout
// the watchdog hands DoPut's handler the Stalled status, the handler
// returns it, and gRPC cancels the stream, which ends this send.
func (a *acker) send(md []byte) error {
	if a.timeout <= 0 {
		return a.stream.Send(&flight.PutResult{AppMetadata: md})
	}
	stall := limits.Stalled(a.timeout)
	w := time.AfterFunc(a.timeout, func() { a.stalled <- stall })
	err := a.stream.Send(&flight.PutResult{AppMetadata: md})
	if !w.Stop() {
		return stall
	}
	return err
}
