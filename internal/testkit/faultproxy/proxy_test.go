package faultproxy

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echoServer echoes every connection until the listener closes.
func echoServer(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	t.Cleanup(func() { lis.Close(); <-done })
	return lis.Addr().String()
}

func newProxy(t *testing.T) *Proxy {
	t.Helper()
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dial(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func roundTrip(t *testing.T, c net.Conn, msg []byte, deadline time.Duration) ([]byte, error) {
	t.Helper()
	if _, err := c.Write(msg); err != nil {
		return nil, err
	}
	_ = c.SetReadDeadline(time.Now().Add(deadline))
	got := make([]byte, len(msg))
	_, err := io.ReadFull(c, got)
	return got, err
}

func TestForwards(t *testing.T) {
	p := newProxy(t)
	c := dial(t, p)
	msg := bytes.Repeat([]byte("thalweg"), 10000)
	got, err := roundTrip(t, c, msg, 5*time.Second)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo through proxy: %v", err)
	}
	if p.Accepted() != 1 || p.Conns() != 1 {
		t.Fatalf("accepted %d, live %d; want 1, 1", p.Accepted(), p.Conns())
	}
}

func TestStallHoldsBytesUntilResume(t *testing.T) {
	p := newProxy(t)
	c := dial(t, p)
	if _, err := roundTrip(t, c, []byte("warm"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Stall()
	_, err := roundTrip(t, c, []byte("held"), 200*time.Millisecond)
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("stalled read: %v, want a timeout", err)
	}
	p.Resume()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "held" {
		t.Fatalf("after resume got %q, %v", got, err)
	}
}

func TestCutClosesConnections(t *testing.T) {
	p := newProxy(t)
	c := dial(t, p)
	if _, err := roundTrip(t, c, []byte("warm"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := p.Cut(); n != 1 {
		t.Fatalf("Cut closed %d connections, want 1", n)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read on a cut connection succeeded")
	}
	// The proxy keeps accepting.
	c2 := dial(t, p)
	if _, err := roundTrip(t, c2, []byte("again"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Cuts() != 1 {
		t.Fatalf("Cuts %d, want 1", p.Cuts())
	}
}

func TestSlowThrottles(t *testing.T) {
	p := newProxy(t)
	c := dial(t, p)
	p.Slow(32 << 10) // 32 KiB/s each way
	msg := bytes.Repeat([]byte{'x'}, 32<<10)
	start := time.Now()
	got, err := roundTrip(t, c, msg, 10*time.Second)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatal(err)
	}
	// 32 KiB at 32 KiB/s is ~1 s per direction; the echo overlaps them.
	if el := time.Since(start); el < 700*time.Millisecond {
		t.Fatalf("32 KiB through a 32 KiB/s proxy took %v", el)
	}
	p.Slow(0)
	start = time.Now()
	if _, err := roundTrip(t, c, msg, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Fatalf("unthrottled round trip took %v", el)
	}
}

func TestCloseIsIdempotentAndStopsAccepting(t *testing.T) {
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.Stall() // a stalled copier must still exit on Close
	_, _ = c.Write([]byte("x"))
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if c2, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		c2.Close()
		t.Fatal("dial after Close succeeded")
	}
}

func TestNewRejectsBadTarget(t *testing.T) {
	if _, err := New("no-port"); err == nil {
		t.Fatal("New accepted a target without a port")
	}
}

// NewAt listens exactly where it is told, refuses an address in use and a
// non-loopback one, and frees the port on Close so a later proxy can take it.
func TestNewAtListensOnTheGivenAddress(t *testing.T) {
	target := echoServer(t)
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := probe.Addr().String()
	probe.Close()

	p, err := NewAt(addr, target)
	if err != nil {
		t.Fatal(err)
	}
	if p.Addr() != addr {
		t.Fatalf("Addr = %s, want %s", p.Addr(), addr)
	}
	c := dial(t, p)
	if got, err := roundTrip(t, c, []byte("ping"), 5*time.Second); err != nil || string(got) != "ping" {
		t.Fatalf("round trip = %q, %v", got, err)
	}
	if q, err := NewAt(addr, target); err == nil {
		q.Close()
		t.Fatal("a second NewAt on the same address succeeded")
	}
	p.Close()

	again, err := NewAt(addr, target)
	if err != nil {
		t.Fatalf("NewAt after Close: %v", err)
	}
	again.Close()

	for _, bad := range []string{"0.0.0.0:0", "example.com:1", "no-port"} {
		if q, err := NewAt(bad, target); err == nil {
			q.Close()
			t.Fatalf("NewAt(%q) succeeded", bad)
		}
	}
}
