package pulsar

import (
	"errors"
	"log/slog"
	"testing"
	"time"
)

// TestCloseEndsAckWhileBrokerAway: the broker goes away (the proxy every
// connection of the Source runs through closes: connections cut, new ones
// refused) with records durable and not yet acknowledged. Ack then waits
// for the broker's answer without a deadline (the client holds it while the
// consumers reconnect); Close, called while that Ack is in progress, as the
// pipeline does at its drain deadline, must return within its bound, and
// the client's close, finished in the background, must end the Ack and
// leave no goroutine behind (goleak, TestMain).
func TestCloseEndsAckWhileBrokerAway(t *testing.T) {
	b := newBroker(t)
	px := brokerProxy(t, b)
	short := topicName(t, "away")
	b.CreatePartitioned(t, short, 2)
	b.produce(t, fullTopic(short), 0, 40)
	s := open(t, Options{URL: "pulsar://" + px.Addr(), Topics: []string{short}, Subscription: "sub", Type: Failover,
		Logger: slog.New(slog.DiscardHandler), OperationTimeout: 3 * time.Second, ConnectionTimeout: 2 * time.Second})
	recs := take(t, s, 40, 30*time.Second)

	px.Close()
	waitHealth(t, s, 20*time.Second, "both partition consumers reconnecting", reconnecting(2))
	acked := make(chan error, 1)
	go func() { acked <- s.Ack(spansOf(t, recs)) }()
	select {
	case err := <-acked:
		// The client failed it at once (it had not started waiting): Close
		// must still be bounded, which the rest checks.
		t.Logf("Ack returned before Close: %v", err)
		acked <- err
	case <-time.After(2 * time.Second):
	}

	closed := make(chan struct{})
	start := time.Now()
	go func() { s.Close(); close(closed) }()
	// The consumer is disconnected: Close does not wait for the client.
	const bound = closeFlushWait + closeWait
	select {
	case <-closed:
	case <-time.After(bound):
		t.Fatalf("Close did not return within %v with an Ack waiting for the broker", bound)
	}
	t.Logf("Close returned after %v", time.Since(start).Round(time.Millisecond))
	// The client finishes closing, ending the Ack, within the operation
	// timeout (the lookup the reconnecting consumer is in gives up then).
	select {
	case <-s.Done():
	case <-time.After(3*time.Second + 10*time.Second):
		t.Fatal("the client did not finish closing within the operation timeout")
	}
	t.Logf("client closed after %v", time.Since(start).Round(time.Millisecond))
	select {
	case err := <-acked:
		if err == nil {
			t.Error("Ack returned nil with the broker away")
		}
		t.Logf("Ack: %v", err)
	case <-time.After(time.Second):
		t.Fatal("the client closed with the Ack still in progress")
	}
	if err := s.Ack(spansOf(t, recs)); !errors.Is(err, ErrClosed) {
		t.Errorf("Ack after Close = %v, want ErrClosed", err)
	}
}
