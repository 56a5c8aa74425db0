package limits

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/testkit/hostileclient"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStreamBudget(t *testing.T) {
	server := &PendingBudget{Max: 100}
	a, b := NewStreamBudget(server, 60), NewStreamBudget(server, 60)
	if err := a.Reserve(50); err != nil {
		t.Fatal(err)
	}
	err := a.Reserve(20)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "MaxStreamPendingBytes 60") {
		t.Fatalf("over the stream limit: %v", err)
	}
	if err := b.Reserve(51); status.Code(err) != codes.ResourceExhausted || a.Held() != 50 || b.Held() != 0 || server.Pending() != 50 {
		t.Fatalf("over the server limit: %v; held %d/%d, server %d", err, a.Held(), b.Held(), server.Pending())
	}
	a.Release(50)
	if err := b.Reserve(51); err != nil || server.Pending() != 51 {
		t.Fatalf("after release: %v, server %d", err, server.Pending())
	}
}

func TestMessageCost(t *testing.T) {
	nulls := hostileclient.NullRows(300_000_000)
	_, err := MessageCost(nulls.Header, nulls.Body, 256<<20)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "300000000 rows") || !strings.Contains(err.Error(), "MaxDecodedMessageBytes") {
		t.Fatalf("row bomb: %v", err)
	}
	if c, err := MessageCost(nulls.Header, nulls.Body, 1<<40); err != nil || c != 300_000_000*RowOverhead {
		t.Fatalf("row bomb under a high limit: %d, %v", c, err)
	}
	huge := hostileclient.NullRows(1 << 62)
	if _, err := MessageCost(huge.Header, huge.Body, 1<<62-1); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("overflowing row count: %v", err)
	}
}

func TestSendWithin(t *testing.T) {
	var wg sync.WaitGroup
	release := make(chan struct{})
	err := SendWithin(&wg, 50*time.Millisecond, func() error { <-release; return nil })
	if !IsStalled(err) || status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "AckSendTimeout") {
		t.Fatalf("blocked send: %v", err)
	}
	close(release) // gRPC cancelling the stream ends the blocked send
	wg.Wait()
	if err := SendWithin(&wg, time.Second, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if IsStalled(status.Error(codes.DeadlineExceeded, "other")) {
		t.Fatal("IsStalled must recognize only SendWithin's timeout")
	}
}

func TestConnLimiter(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	l := NewConnLimiter(2)
	ll := l.Listener(lis)
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ll.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	s1, s2 := <-accepted, <-accepted
	testenv.WaitFor(t, 5*time.Second, "the third connection to be refused", func() bool { return l.Refused() >= 1 })
	if l.Active() != 2 || l.Refused() != 1 {
		t.Fatalf("active %d refused %d; want 2 and 1", l.Active(), l.Refused())
	}
	s1.Close()
	s1.Close() // a second Close does not count twice
	if l.Active() != 1 {
		t.Fatalf("active %d after a close", l.Active())
	}
	c, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s3 := <-accepted
	if l.Active() != 2 {
		t.Fatalf("active %d; a freed slot must admit a connection", l.Active())
	}
	s2.Close()
	s3.Close()
	lis.Close()
	for range accepted {
	}
}
