package pulsar

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// mintToken returns an HS256 JWT for subject sub signed with key: what
// `bin/pulsar tokens create --secret-key` makes.
func mintToken(key []byte, sub string) string {
	enc := base64.RawURLEncoding
	unsigned := enc.EncodeToString([]byte(`{"alg":"HS256"}`)) + "." + enc.EncodeToString([]byte(`{"sub":"`+sub+`"}`))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(unsigned))
	return unsigned + "." + enc.EncodeToString(mac.Sum(nil))
}

// openErr opens a Source that must fail and returns the error, bounded by a
// short OperationTimeout (the client retries a refused connection until then).
func openErr(t *testing.T, opts Options) error {
	t.Helper()
	opts.Topics = []string{topicName(t, "x")}
	opts.Subscription = "sub"
	opts.OperationTimeout = 3 * time.Second
	opts.ConnectionTimeout = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t0 := time.Now()
	s, err := Open(ctx, opts)
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded")
	}
	if d := time.Since(t0); d > 15*time.Second {
		t.Fatalf("Open took %v to fail", d)
	}
	return err
}

// Over TLS, verified against the test CA, with a token the broker accepts
// (from a file, as Options.TokenFile, and inline, as Options.Token): records
// arrive and their acknowledgement drains the backlog.
func TestTLSWithTokenConsumesAndAcks(t *testing.T) {
	b := newBroker(t)
	tlsURL, ca := testenv.PulsarTLS(t)
	tokenFile := testenv.PulsarTokenFile(t)
	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		auth func(*Options)
	}{
		{"token file", func(o *Options) { o.TokenFile = tokenFile }},
		{"token", func(o *Options) { o.Token = strings.TrimSpace(string(raw)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const n = 200
			short := topicName(t, "tls")
			b.CreatePartitioned(t, short, 2)
			o := Options{URL: tlsURL, TLSTrustCertsFile: ca, Topics: []string{short}, Subscription: "sub"}
			tc.auth(&o)
			s := open(t, o)
			b.produce(t, fullTopic(short), 0, n)
			recs := take(t, s, n, 30*time.Second)
			checkExactlyOnce(t, recs, 0, n, nil)
			if err := s.Ack(spansOf(t, recs)); err != nil {
				t.Fatalf("Ack: %v", err)
			}
			b.WaitBacklog(t, short, "sub", true, 0)
			if st := s.Stats(); st.Acked != n || st.AckErrors != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// A token the broker did not issue is refused, although the broker admits
// clients without any token: presenting credentials means they are checked.
// The error says it was authentication, not a generic connection error.
func TestWrongTokenIsRefused(t *testing.T) {
	b := newBroker(t)
	tlsURL, ca := testenv.PulsarTLS(t)
	good, err := os.ReadFile(testenv.PulsarTokenFile(t))
	if err != nil {
		t.Fatal(err)
	}
	otherKey := make([]byte, 32)
	_, _ = rand.Read(otherKey)
	parts := strings.Split(strings.TrimSpace(string(good)), ".")
	if len(parts) != 3 {
		t.Fatalf("PULSAR_TOKEN_FILE does not hold a JWT")
	}
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"other key over TLS", Options{URL: tlsURL, TLSTrustCertsFile: ca, Token: mintToken(otherKey, "thalweg")}},
		{"other key", Options{URL: b.url, Token: mintToken(otherKey, "thalweg")}},
		{"tampered signature", Options{URL: b.url, Token: parts[0] + "." + parts[1] + "." + mintToken(otherKey, "x")[len(parts[0])+1+len(parts[1])+1:]}},
		{"not a JWT", Options{URL: b.url, Token: "not-a-token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := openErr(t, tc.opts)
			if !errors.Is(err, ErrAuthentication) || !strings.Contains(err.Error(), "authenticat") {
				t.Fatalf("Open = %v, want ErrAuthentication", err)
			}
			if strings.Contains(err.Error(), tc.opts.Token) {
				t.Fatalf("the error shows the token: %v", err)
			}
		})
	}
	// The control: the same broker admits a client without a token.
	t.Run("no token", func(t *testing.T) {
		t.Parallel()
		short := topicName(t, "anon")
		s := open(t, Options{URL: b.url, Topics: []string{short}, Subscription: "sub"})
		b.produce(t, fullTopic(short), 0, 10)
		take(t, s, 10, 30*time.Second)
	})
}

// A token file that is missing or empty fails Open at once with
// ErrAuthentication naming the file. No broker is needed.
func TestUnreadableTokenFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(dir, "no-token"), empty} {
		_, err := Open(context.Background(), Options{URL: "pulsar://127.0.0.1:1", TokenFile: f, Topics: []string{"t"}, Subscription: "s"})
		if !errors.Is(err, ErrAuthentication) || !strings.Contains(err.Error(), f) {
			t.Fatalf("Open = %v, want ErrAuthentication naming %s", err, f)
		}
	}
}

// Without the CA that signs the broker's certificate (the system roots do
// not), or with an unreadable CA file, Open fails with ErrTLS saying why.
func TestUntrustedBrokerIsTLSError(t *testing.T) {
	tlsURL, _ := testenv.PulsarTLS(t)
	token := testenv.PulsarTokenFile(t)
	for _, tc := range []struct {
		name, ca, want string
	}{
		{"system roots", "", "certificate signed by unknown authority"},
		{"no such CA file", filepath.Join(t.TempDir(), "ca.pem"), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := openErr(t, Options{URL: tlsURL, TLSTrustCertsFile: tc.ca, TokenFile: token})
			if !errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, want ErrTLS saying %q", err, tc.want)
			}
		})
	}
}

// ListenerName reaches the broker's lookups: its internal listener serves
// as usual, and a name it does not advertise is refused (the broker answers
// the lookup with ServiceNotReady). Routing through another listener's
// address is tested end to end in package pipeline (TestPulsarConnectionFaults).
func TestListenerName(t *testing.T) {
	b := newBroker(t)
	short := topicName(t, "l")
	s := open(t, Options{URL: b.url, ListenerName: "internal", Topics: []string{short}, Subscription: "sub"})
	b.produce(t, fullTopic(short), 0, 20)
	checkExactlyOnce(t, take(t, s, 20, 30*time.Second), 0, 20, nil)

	err := openErr(t, Options{URL: b.url, ListenerName: "no_such_listener"})
	if !strings.Contains(err.Error(), "ServiceNotReady") || !strings.Contains(err.Error(), `listener named "no_such_listener"`) {
		t.Fatalf("Open with an unknown listener = %v, want the broker's ServiceNotReady naming the listener", err)
	}
}
