package pulsar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/thalweg/thalweg/internal/testkit/faultproxy"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// syncBuffer is a bytes.Buffer safe for the client's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOpenRetriesUntilTheBrokerIsReachable: a worker started before its
// broker (a whole deployment restarted at once, a broker still opening its
// topics after a crash) keeps trying to subscribe, with growing backoff and
// one log line, instead of failing its start: Open returns once the broker
// answers, and the records are read.
func TestOpenRetriesUntilTheBrokerIsReachable(t *testing.T) {
	b := newBroker(t)
	short := topicName(t, "late")
	b.CreatePartitioned(t, short, 2)
	b.produce(t, fullTopic(short), 0, 20)

	// An address nothing listens on yet: the broker's, through a proxy
	// started later.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	var logs syncBuffer
	type result struct {
		s   *Source
		err error
	}
	opened := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		s, err := Open(ctx, Options{URL: "pulsar://" + addr, Topics: []string{short}, Subscription: "sub", Type: Failover,
			Logger: slog.New(slog.NewTextHandler(&logs, nil)), OperationTimeout: time.Second, ConnectionTimeout: 500 * time.Millisecond})
		opened <- result{s, err}
	}()
	const retrying = "cannot subscribe yet; retrying"
	var early *result
	testenv.WaitFor(t, 30*time.Second, "Open to fail its first attempt", func() bool {
		select {
		case r := <-opened:
			early = &r
			return true
		default:
			return strings.Contains(logs.String(), retrying)
		}
	})
	if early != nil {
		if early.s != nil {
			early.s.Close()
		}
		t.Fatalf("Open returned before the broker was reachable: %v", early.err)
	}

	var px *faultproxy.Proxy
	testenv.WaitFor(t, 10*time.Second, "the proxy to listen on "+addr, func() bool {
		px, err = faultproxy.NewAt(addr, strings.TrimPrefix(b.url, "pulsar://"))
		return err == nil
	})
	defer px.Close()
	r := <-opened
	if r.err != nil {
		t.Fatalf("Open once the broker is reachable: %v\n%s", r.err, logs.String())
	}
	defer r.s.Close()
	take(t, r.s, 20, 30*time.Second)
	if n := strings.Count(logs.String(), retrying+"\""); n != 1 {
		t.Errorf("the failing attempts were logged in %d lines, want 1 (then a summary per interval):\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), retrying+": recovered") {
		t.Errorf("no line says the subscription recovered:\n%s", logs.String())
	}
}

// TestHeals: Open returns a failure that will not heal (credentials or
// TLS refused) at once, and retries the rest.
func TestHeals(t *testing.T) {
	for _, tc := range []struct {
		err   error
		heals bool
	}{
		{fmt.Errorf("%w: the broker refused the connection: connection error", ErrAuthentication), false},
		{fmt.Errorf("%w: x509: certificate signed by unknown authority", ErrTLS), false},
		{errors.New("connection error (last connection failure: dial tcp 127.0.0.1:1: connect: connection refused)"), true},
		{context.DeadlineExceeded, true},
	} {
		if got := heals(tc.err); got != tc.heals {
			t.Errorf("heals(%v) = %v, want %v", tc.err, got, tc.heals)
		}
	}
}
