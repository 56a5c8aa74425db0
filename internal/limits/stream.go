package limits

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/ipcguard"
)

// RowOverhead is the bytes a declared row is charged on top of the decoded
// buffers of its message. A row can cost memory that no buffer accounts
// for: a Null column declares any number of rows with no buffer at all, and
// a server that materializes rows (the Zerobus server renders each as a
// JSON line) allocates per row. 32 bytes covers a slice header and the
// smallest rendered line.
const RowOverhead = 32

// MessageCost is the memory one Arrow IPC message declares it will take to
// decode: its decoded buffer sizes plus RowOverhead per declared row, from
// the header and body alone (header must have passed
// ipcguard.CheckMessage). A cost above max is refused with InvalidArgument
// naming the limit, before anything is decompressed or allocated.
func MessageCost(header, body []byte, max int64) (int64, error) {
	c, err := ipcguard.Declared(header, body)
	if err != nil {
		return 0, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	cost := c.DecodedBytes
	if c.Rows > (1<<62)/RowOverhead {
		cost = 1 << 62
	} else if cost += c.Rows * RowOverhead; cost < 0 {
		cost = 1 << 62
	}
	if cost > max {
		return 0, status.Errorf(codes.InvalidArgument,
			"message declares %d rows and %d decoded buffer bytes (%d bytes to decode), above the per-message limit MaxDecodedMessageBytes %d",
			c.Rows, c.DecodedBytes, cost, max)
	}
	return cost, nil
}

// StreamBudget is one stream's share of a server's PendingBudget: bytes it
// holds (received but not yet durable, or being decoded) count against both
// its own Max and the server's. Reserve is called by the stream's receive
// side, Release by it or its ack side; both are safe for concurrent use.
type StreamBudget struct {
	server *PendingBudget
	max    int64
	held   atomic.Int64
}

// NewStreamBudget returns a stream budget of max bytes within server.
func NewStreamBudget(server *PendingBudget, max int64) *StreamBudget {
	return &StreamBudget{server: server, max: max}
}

// Reserve takes n bytes of the stream's and the server's budget, or fails
// with ResourceExhausted naming the limit and takes nothing.
func (b *StreamBudget) Reserve(n int64) error {
	if v := b.held.Add(n); v > b.max {
		b.held.Add(-n)
		return status.Errorf(codes.ResourceExhausted,
			"stream has %d bytes pending durability or decoding; %d more would exceed the per-stream limit MaxStreamPendingBytes %d", v-n, n, b.max)
	}
	if err := b.server.Reserve(n); err != nil {
		b.held.Add(-n)
		return err
	}
	return nil
}

// ReserveMessage reserves what one Arrow IPC record-batch message declares
// it will take to decode (MessageCost, refused above maxCost) and returns
// that cost, to be given back with Release once the batch is decoded and
// stored. The error is a gRPC status (InvalidArgument or ResourceExhausted).
func (b *StreamBudget) ReserveMessage(header, body []byte, maxCost int64) (int64, error) {
	cost, err := MessageCost(header, body, maxCost)
	if err != nil {
		return 0, err
	}
	if err := b.Reserve(cost); err != nil {
		return 0, err
	}
	return cost, nil
}

// Release gives back n bytes taken by Reserve.
func (b *StreamBudget) Release(n int64) {
	b.held.Add(-n)
	b.server.Release(n)
}

// Held is the number of bytes the stream holds.
func (b *StreamBudget) Held() int64 { return b.held.Load() }

// SendWithin runs send (one gRPC Send of a server stream) on its own
// goroutine and waits at most d for it. A Send blocks while the client does
// not read (its HTTP/2 receive window stays closed); past d, SendWithin
// returns DeadlineExceeded without waiting, and the caller must end the
// stream's handler with it: gRPC then cancels the stream's context, which
// ends the blocked Send and its goroutine (wg tracks it). d <= 0 waits
// without bound.
func SendWithin(wg *sync.WaitGroup, d time.Duration, send func() error) error {
	if d <= 0 {
		return send()
	}
	done := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		done <- send()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return Stalled(d)
	}
}

// Stalled is the error of a Send that did not complete within d: a
// DeadlineExceeded status naming AckSendTimeout, recognized by IsStalled.
func Stalled(d time.Duration) error {
	return stallError{status.Newf(codes.DeadlineExceeded,
		"the client did not read its acknowledgements for %v (AckSendTimeout): stream ended", d)}
}

// stallError is SendWithin's timeout: a DeadlineExceeded status that
// IsStalled recognizes.
type stallError struct{ st *status.Status }

func (e stallError) Error() string              { return e.st.Err().Error() }
func (e stallError) GRPCStatus() *status.Status { return e.st }

// IsStalled reports whether err is SendWithin's timeout.
func IsStalled(err error) bool {
	_, ok := err.(stallError)
	return ok
}

// ConnLimiter caps the connections a server has open at once, over every
// listener it wraps: a connection accepted over the limit is closed at once
// (the client sees the connection reset and retries), so idle or hostile
// connections cannot exhaust the server's file descriptors. It is safe for
// concurrent use.
type ConnLimiter struct {
	max     int64
	active  atomic.Int64
	refused atomic.Int64
}

// NewConnLimiter allows max concurrent connections.
func NewConnLimiter(max int) *ConnLimiter { return &ConnLimiter{max: int64(max)} }

// Listener returns lis limited by l.
func (l *ConnLimiter) Listener(lis net.Listener) net.Listener { return &limitedListener{lis, l} }

// Active is the number of open accepted connections.
func (l *ConnLimiter) Active() int64 { return l.active.Load() }

// Refused counts the connections closed because the limit was reached.
func (l *ConnLimiter) Refused() int64 { return l.refused.Load() }

type limitedListener struct {
	net.Listener
	l *ConnLimiter
}

func (ll *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ll.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if ll.l.active.Add(1) > ll.l.max {
			ll.l.active.Add(-1)
			ll.l.refused.Add(1)
			_ = c.Close()
			continue
		}
		return &limitedConn{Conn: c, l: ll.l}, nil
	}
}

type limitedConn struct {
	net.Conn
	l    *ConnLimiter
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.active.Add(-1) })
	return err
}

// handshakeTimeout bounds the TLS and HTTP/2 handshake of a new connection
// (gRPC's default is 120 s): a connection that opens TCP and says nothing
// holds a descriptor only this long.
const handshakeTimeout = 10 * time.Second

// ConnOptions are the gRPC server options that close idle connections:
// after maxIdle without an RPC, after a missed keepalive ping, or when the
// handshake does not complete within min(10 s, maxIdle). Clients may ping
// every 10 s or more rarely, with or without streams.
func ConnOptions(maxIdle time.Duration) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: maxIdle,
			Time:              time.Minute,
			Timeout:           20 * time.Second,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.ConnectionTimeout(min(handshakeTimeout, maxIdle)),
	}
}
