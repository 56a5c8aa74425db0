package pipeline

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/instruments"
)

// heldAck is a Source whose first Ack waits until release is closed, and
// which records the spans of every call.
type heldAck struct {
	nopSource
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	calls   [][]batch.OffsetSpan
}

func (h *heldAck) Ack(spans []batch.OffsetSpan) error {
	h.mu.Lock()
	first := len(h.calls) == 0
	h.calls = append(h.calls, append([]batch.OffsetSpan(nil), spans...))
	h.mu.Unlock()
	if first {
		h.entered <- struct{}{}
		<-h.release
	}
	return nil
}

// TestAckerCoalescesWhileAnAckRuns: the batches that become durable while
// an upstream Ack runs are acknowledged together by the next Ack, in
// release order, so a cumulative source acknowledges each partition once
// for all of them rather than once per batch.
func TestAckerCoalescesWhileAnAckRuns(t *testing.T) {
	pm, err := instruments.NewPipelineMetrics(noop.NewMeterProvider())
	require.NoError(t, err)
	src := &heldAck{entered: make(chan struct{}), release: make(chan struct{})}
	a := newAcker(src, pm, slog.New(slog.NewTextHandler(io.Discard, nil)))
	go a.run()

	span := func(i uint64) []batch.OffsetSpan {
		return []batch.OffsetSpan{{Partition: "p0", First: 10*i + 1, Last: 10*i + 10}, {Partition: "p1", First: 10*i + 1, Last: 10*i + 10}}
	}
	a.enqueue(span(0), 20)
	<-src.entered
	for i := uint64(1); i <= 5; i++ {
		a.enqueue(span(i), 20)
	}
	close(src.release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.True(t, a.close(ctx), "the acker drains its queue")

	require.Len(t, src.calls, 2, "one Ack for the first batch, one for the five queued behind it")
	var want []batch.OffsetSpan
	for i := uint64(1); i <= 5; i++ {
		want = append(want, span(i)...)
	}
	require.Equal(t, want, src.calls[1], "the queued batches' spans, in release order")
	require.EqualValues(t, 120, a.acked.Load())
	require.EqualValues(t, 120, a.released.Load())
}
