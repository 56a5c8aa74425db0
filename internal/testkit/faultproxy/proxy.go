// Package faultproxy is a TCP proxy for tests that sits between a client and
// a server on loopback and injects network faults on command: it can stall
// every connection (bytes stop flowing, connections stay open), cut them
// (close both sides), and throttle them to a byte rate.
//
// A Proxy forwards each accepted connection to the target address with two
// copier goroutines (one per direction). Faults apply to every current and
// future connection until lifted. Close stops the listener, closes every
// connection and waits for every goroutine the proxy started, so tests that
// use goleak see none left behind.
//
// All methods are safe for concurrent use.
//
// It stays thalweg's own: toxiproxy, the well-kept proxy of this kind,
// runs as a server of its own with its HTTP API and is not in go.mod.
package faultproxy

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is a fault-injecting TCP proxy listening on a loopback address.
type Proxy struct {
	target string
	lis    net.Listener
	done   chan struct{} // closed by Close
	wg     sync.WaitGroup

	accepted atomic.Int64
	cuts     atomic.Int64

	mu struct {
		sync.Mutex
		conns   map[*link]struct{}
		stalled bool
		resume  chan struct{} // closed by Resume; replaced by Stall
		rate    int           // bytes per second per direction; 0 = unlimited
		closed  bool
	}
}

// link is one proxied connection pair.
type link struct {
	client, server net.Conn
	dead           chan struct{} // closed once, by kill
	once           sync.Once
}

func (l *link) kill() {
	l.once.Do(func() {
		close(l.dead)
		_ = l.client.Close()
		_ = l.server.Close()
	})
}

// New listens on an ephemeral loopback port and forwards every accepted
// connection to target (host:port). The caller must Close the Proxy.
func New(target string) (*Proxy, error) {
	return NewAt("127.0.0.1:0", target)
}

// NewAt is New listening on listen (host:port) instead of an ephemeral
// port: for peers that must be told the proxy's address before it exists,
// such as a broker that advertises it to its clients. The host must be a
// loopback address. A port another listener holds is an error (the caller
// may retry); the port is free again once Close returns.
func NewAt(listen, target string) (*Proxy, error) {
	if _, _, err := net.SplitHostPort(target); err != nil {
		return nil, fmt.Errorf("faultproxy: target %q: %w", target, err)
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen address %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("faultproxy: listen address %q: want a loopback IP", listen)
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	p := &Proxy{target: target, lis: lis, done: make(chan struct{})}
	p.mu.conns = make(map[*link]struct{})
	p.mu.resume = make(chan struct{})
	close(p.mu.resume) // not stalled
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's listening address (127.0.0.1:port): point clients here.
func (p *Proxy) Addr() string { return p.lis.Addr().String() }

// Accepted is the number of client connections accepted so far.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Cuts is the number of connections closed by Cut.
func (p *Proxy) Cuts() int64 { return p.cuts.Load() }

// Conns is the number of live proxied connections.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.conns)
}

// Stall stops forwarding bytes in both directions on every connection, new
// ones included, until Resume. Connections stay open: peers see silence, not
// an error, and their writes block once the socket buffers fill.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.mu.stalled {
		p.mu.stalled = true
		p.mu.resume = make(chan struct{})
	}
}

// Resume lifts a Stall; held bytes flow again in order.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.stalled {
		p.mu.stalled = false
		close(p.mu.resume)
	}
}

// Slow throttles every connection to bytesPerSecond in each direction;
// 0 removes the limit.
func (p *Proxy) Slow(bytesPerSecond int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.rate = max(bytesPerSecond, 0)
}

// Cut closes every current connection on both sides (peers see a reset or
// EOF). New connections are accepted as before. It returns how many were cut.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.mu.conns))
	for l := range p.mu.conns {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.kill()
	}
	p.cuts.Add(int64(len(links)))
	return len(links)
}

// Close stops accepting, closes every connection and waits for the proxy's
// goroutines. It is idempotent and returns nil.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return nil
	}
	p.mu.closed = true
	p.mu.Unlock()
	close(p.done)
	_ = p.lis.Close()
	p.Cut()
	p.wg.Wait()
	return nil
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return // closed
		}
		p.accepted.Add(1)
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve dials the target for one client connection and runs the two
// copiers; it returns when both ended.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	d := net.Dialer{Timeout: 5 * time.Second}
	server, err := d.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	l := &link{client: client, server: server, dead: make(chan struct{})}
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		l.kill()
		return
	}
	p.mu.conns[l] = struct{}{}
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(l, server, client) }()
	go func() { defer wg.Done(); p.pipe(l, client, server) }()
	wg.Wait()
	l.kill()
	p.mu.Lock()
	delete(p.mu.conns, l)
	p.mu.Unlock()
}

// pipe copies src to dst through the fault gates. When either side ends,
// the whole link is killed: a half-open TCP connection is not a fault this
// proxy models.
func (p *Proxy) pipe(l *link, dst, src net.Conn) {
	defer l.kill()
	buf := make([]byte, 32<<10)
	for {
		chunk := buf
		if r := p.rate(); r > 0 {
			// Read at most ~50 ms worth so the pacing stays smooth.
			chunk = buf[:min(len(buf), max(r/20, 1))]
		}
		n, err := src.Read(chunk)
		if n > 0 {
			if !p.gate(l) {
				return
			}
			if r := p.rate(); r > 0 && !p.sleep(l, time.Duration(int64(n)*int64(time.Second)/int64(r))) {
				return
			}
			if _, werr := dst.Write(chunk[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // io.EOF or the link was killed
		}
	}
}

func (p *Proxy) rate() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.rate
}

// gate blocks while the proxy is stalled. It reports false when the link
// died or the proxy closed meanwhile.
func (p *Proxy) gate(l *link) bool {
	for {
		p.mu.Lock()
		stalled, resume := p.mu.stalled, p.mu.resume
		p.mu.Unlock()
		if !stalled {
			return true
		}
		select {
		case <-resume:
		case <-l.dead:
			return false
		case <-p.done:
			return false
		}
	}
}

func (p *Proxy) sleep(l *link, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.dead:
		return false
	case <-p.done:
		return false
	}
}
