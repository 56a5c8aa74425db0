package pulsar

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/thalweg/thalweg/internal/testkit/faultproxy"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// clientLines records the messages of the log lines (Info and above) the
// real client writes, so that a contract failure names the line that
// changed and shows what the client wrote instead. Safe for concurrent use.
type clientLines struct {
	mu    sync.Mutex
	lines []string // "LEVEL message", in order
}

// handler is a slog.Handler that records into c.
func (c *clientLines) handler() slog.Handler { return lineRecorder{c} }

type lineRecorder struct{ c *clientLines }

func (r lineRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (r lineRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.c.mu.Lock()
	r.c.lines = append(r.c.lines, rec.Level.String()+" "+rec.Message)
	r.c.mu.Unlock()
	return nil
}
func (r lineRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r lineRecorder) WithGroup(string) slog.Handler      { return r }

// requireSaw fails unless the client wrote a line whose message is msg (or,
// with prefix, starts with it): the line connWatch reads for the situation
// the test just produced.
// count is how many lines with message msg the client logged so far.
func (c *clientLines) count(msg string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.lines {
		if _, m, _ := strings.Cut(l, " "); m == msg {
			n++
		}
	}
	return n
}

// waitCount waits, bounded by d, until the client logged more than n lines
// with message msg.
func (c *clientLines) waitCount(t *testing.T, msg string, n int, d time.Duration) {
	t.Helper()
	testenv.WaitFor(t, d, fmt.Sprintf("the client to log %q again", msg), func() bool { return c.count(msg) > n })
}

func (c *clientLines) requireSaw(t *testing.T, msg string, prefix bool) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.lines {
		_, m, _ := strings.Cut(l, " ")
		if m == msg || (prefix && strings.HasPrefix(m, msg)) {
			return
		}
	}
	t.Fatalf("the client never logged %q, which connwatch.go relies on (a pulsar-client-go upgrade reworded it?); "+
		"it logged:\n%s", msg, strings.Join(c.lines, "\n"))
}

// waitHealth polls s.Health until ok accepts its result, failing after
// timeout with the last result.
func waitHealth(t *testing.T, s *Source, timeout time.Duration, what string, ok func(error) bool) error {
	t.Helper()
	var err error
	defer func() {
		if t.Failed() {
			t.Logf("the last Health: %v", err)
		}
	}()
	testenv.WaitFor(t, timeout, "Health "+what, func() bool {
		err = s.Health()
		return ok(err)
	})
	return err
}

func reconnecting(n int) func(error) bool {
	return func(err error) bool {
		return errors.Is(err, ErrDisconnected) &&
			strings.Contains(err.Error(), fmt.Sprintf("%d partition consumer(s) reconnecting", n))
	}
}

func healthy(err error) bool { return err == nil }

// brokerProxy is a fault proxy in front of the broker's service URL: on the
// standalone test broker every connection of a client that dials it goes
// through it (scripts/pulsar.sh, advertised listeners).
func brokerProxy(t *testing.T, b broker) *faultproxy.Proxy {
	t.Helper()
	px, err := faultproxy.New(strings.TrimPrefix(b.url, "pulsar://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	return px
}

// TestConnWatchContract runs the real pulsar-client-go against the real
// broker and produces, for real, every situation connWatch recognises from
// the client's log lines: a connection being established and ready, a
// connection cut (through a fault proxy) and the consumers' reconnection,
// credentials that cannot be read at a reconnect, a refused token, an
// untrusted certificate, an unusable TLS configuration, and the
// active-consumer notifications the client drops on a Failover
// subscription. Each case asserts connWatch's verdict (Health, Open's error,
// the lost notifications Failover activation is told of) and that the
// client wrote the very line connwatch.go matches, so a client upgrade that
// rewords one fails here, naming it, instead of silently breaking /readyz,
// Open's errors or failover.
func TestConnWatchContract(t *testing.T) {
	b := newBroker(t)

	t.Run("connect, cut, reconnect", func(t *testing.T) {
		t.Parallel()
		px := brokerProxy(t, b)
		// The proxy that replaces px; closed after the Source (cleanups
		// run last first), so that the client does not retry meanwhile.
		var back *faultproxy.Proxy
		t.Cleanup(func() {
			if back != nil {
				back.Close()
			}
		})
		var lines clientLines
		short := topicName(t, "cut")
		b.CreatePartitioned(t, short, 2)
		s := open(t, Options{URL: "pulsar://" + px.Addr(), Topics: []string{short}, Subscription: "sub",
			Logger: slog.New(lines.handler()), OperationTimeout: 3 * time.Second, ConnectionTimeout: 2 * time.Second})
		lines.requireSaw(t, lineConnecting, false)
		lines.requireSaw(t, lineConnReady, false)
		lines.requireSaw(t, lineConsumerConnected, false)
		if err := s.Health(); err != nil {
			t.Fatalf("Health after Open = %v", err)
		}

		// Stalled, then cut: the client opens a new connection at once,
		// and its handshake hangs.
		established := lines.count("TCP connection established")
		px.Stall()
		if px.Cut() == 0 {
			t.Fatal("no connection went through the proxy")
		}
		waitHealth(t, s, 10*time.Second, "ErrDisconnected, connecting to the proxy", func(err error) bool {
			return errors.Is(err, ErrDisconnected) && strings.Contains(err.Error(), "connecting to pulsar://"+px.Addr())
		})
		// The new connection must be up (TCP) with its handshake hanging
		// before the proxy goes, or the close only fails a dial and the
		// handshake line below is never written (a race CI lost once).
		lines.waitCount(t, "TCP connection established", established, 10*time.Second)
		// Gone: the hanging handshake ends, new connections are refused,
		// and the consumers' reconnection attempts fail.
		px.Close()
		cut := time.Now()
		err := waitHealth(t, s, 20*time.Second, "ErrDisconnected naming both partition consumers, refused", func(err error) bool {
			return reconnecting(2)(err) && strings.Contains(err.Error(), "connection refused")
		})
		t.Logf("Health %v after the proxy closed: %v", time.Since(cut).Round(time.Millisecond), err)
		lines.requireSaw(t, prefixHandshake, true) // the hanging handshake the close ended
		lines.requireSaw(t, prefixConnect, true)   // the refused dials: the reason Health gives
		lines.requireSaw(t, lineReconnectFailed, false)
		lines.requireSaw(t, lineReconnecting, false)

		// Back on the same address: the consumers reconnect.
		testenv.WaitFor(t, 10*time.Second, "the proxy back on "+px.Addr(), func() bool {
			back, err = faultproxy.NewAt(px.Addr(), strings.TrimPrefix(b.url, "pulsar://"))
			return err == nil
		})
		resumed := time.Now()
		waitHealth(t, s, 30*time.Second, "healthy once the proxy is back", healthy)
		t.Logf("healthy %v after the proxy came back", time.Since(resumed).Round(time.Millisecond))
		lines.requireSaw(t, lineReconnected, false)
		b.produce(t, fullTopic(short), 0, 20)
		checkExactlyOnce(t, take(t, s, 20, 30*time.Second), 0, 20, nil)
	})

	t.Run("unreadable credentials at a reconnect", func(t *testing.T) {
		t.Parallel()
		px := brokerProxy(t, b)
		var lines clientLines
		raw, err := os.ReadFile(testenv.PulsarTokenFile(t))
		if err != nil {
			t.Fatal(err)
		}
		tokenFile := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(tokenFile, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		short := topicName(t, "cred")
		b.CreatePartitioned(t, short, 2)
		s := open(t, Options{URL: "pulsar://" + px.Addr(), TokenFile: tokenFile, Topics: []string{short}, Subscription: "sub",
			Logger: slog.New(lines.handler()), OperationTimeout: 3 * time.Second, ConnectionTimeout: 2 * time.Second})
		if err := os.Remove(tokenFile); err != nil {
			t.Fatal(err)
		}
		px.Cut()
		err = waitHealth(t, s, 30*time.Second, "reconnecting, the last failure the unreadable token", func(err error) bool {
			return reconnecting(2)(err) && strings.Contains(err.Error(), "cannot read the token")
		})
		lines.requireSaw(t, prefixCredential, true)
		t.Logf("Health while the token is missing: %v", err)

		if err := os.WriteFile(tokenFile, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		waitHealth(t, s, 30*time.Second, "healthy once the token is back", healthy)
	})

	// Open fails within the operation timeout; the error's kind and reason
	// come from the line connwatch read.
	failures := []struct {
		name string
		opts func(t *testing.T) Options
		kind error
		want string // in Open's error
		line string // the line connwatch reads, by prefix
	}{
		{
			name: "refused token",
			opts: func(*testing.T) Options {
				key := make([]byte, 32)
				_, _ = rand.Read(key)
				return Options{URL: b.url, Token: mintToken(key, "thalweg")}
			},
			kind: ErrAuthentication, want: "the broker refused the connection", line: prefixRefused,
		},
		{
			name: "untrusted certificate",
			opts: func(t *testing.T) Options {
				u, _ := testenv.PulsarTLS(t)
				return Options{URL: u}
			},
			kind: ErrTLS, want: "x509", line: prefixConnect, // the TLS handshake is part of the dial
		},
		{
			name: "unusable TLS configuration",
			opts: func(t *testing.T) Options {
				u, _ := testenv.PulsarTLS(t)
				return Options{URL: u, TLSTrustCertsFile: filepath.Join(t.TempDir(), "no-ca.pem")}
			},
			kind: ErrTLS, want: "TLS configuration", line: prefixTLSConfig,
		},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var lines clientLines
			o := tc.opts(t)
			o.Logger = slog.New(lines.handler())
			err := openErr(t, o)
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v; want %v saying %q", err, tc.kind, tc.want)
			}
			lines.requireSaw(t, tc.line, true)
		})
	}

	t.Run("failover notifications dropped at subscribe", func(t *testing.T) {
		t.Parallel()
		short := topicName(t, "fo")
		b.CreatePartitioned(t, short, 2)
		parts := []string{fullTopic(short) + "-partition-0", fullTopic(short) + "-partition-1"}
		// Two workers on one Failover subscription, each its own client
		// (connection): the first subscribes alone, the second joins while
		// the first is active. The broker notifies the second of each
		// partition's active consumer while adding it, before its client
		// has registered it.
		for i, name := range []string{"first", "second"} {
			var lines clientLines
			w := newConnWatch(lines.handler())
			var mu sync.Mutex
			var lost []string
			w.setOnLost(func(topic string) {
				mu.Lock()
				lost = append(lost, topic)
				mu.Unlock()
			})
			c, err := pclient.NewClient(pclient.ClientOptions{URL: b.url,
				Logger: plog.NewLoggerWithSlog(slog.New(w)), MetricsRegisterer: prometheus.NewRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			cons, err := c.Subscribe(pclient.ConsumerOptions{Topic: fullTopic(short), SubscriptionName: "sub",
				Type: pclient.Failover, Name: fmt.Sprintf("w%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(cons.Close)
			if i == 0 {
				continue // alone: the broker makes it active without a notification
			}
			lines.requireSaw(t, lineNotificationLost, false)
			lines.requireSaw(t, lineConsumerConnected, false)
			mu.Lock()
			slices.Sort(lost)
			got := slices.Clone(lost)
			mu.Unlock()
			// At least the partition the first consumer stays active on
			// (the broker's notification names it); each once.
			if len(got) == 0 || len(slices.Compact(slices.Clone(got))) != len(got) ||
				slices.ContainsFunc(got, func(p string) bool { return !slices.Contains(parts, p) }) {
				t.Fatalf("%s consumer: lost notifications reported for %q, want some of %q, each once", name, got, parts)
			}
			t.Logf("%s consumer: lost notifications reported for %q", name, got)
		}
	})
}
