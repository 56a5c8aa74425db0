package flight_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testca"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/lanes"
)

func debugLogger(w *crashtest.LogBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// sendOne sends one batch and waits for it: the error of whichever step
// failed first.
func sendOne(t *testing.T, s *flight.Sink, mem memory.Allocator) error {
	t.Helper()
	ctx := flighttest.Ctx(t, 10*time.Second)
	b := flighttest.MakeBatch(mem, 0, 0, 5, 16)
	defer b.Release()
	if err := s.Send(ctx, 1, b); err != nil {
		return err
	}
	return s.WaitDurable(ctx, 1)
}

func TestTLSSinkToReceiver(t *testing.T) {
	ca := testca.New(t, "thalweg flight CA")
	other := testca.New(t, "some other CA")
	clientCA := testca.New(t, "thalweg client CA")
	certFile, keyFile := clientCA.ClientCert(t, "thalweg worker")
	strangerCert, strangerKey := other.ClientCert(t, "stranger")

	cases := []struct {
		name     string
		mtls     bool
		tls      *flight.TLSOptions
		fail     bool
		wantErr  string // substring of the error, when the client can know why
		wantCode codes.Code
	}{
		{"trusted CA", false, &flight.TLSOptions{CAFile: ca.CAFile}, false, "", codes.OK},
		{"wrong CA", false, &flight.TLSOptions{CAFile: other.CAFile}, true, "certificate signed by unknown authority", codes.Unavailable},
		{"mTLS with client cert", true, &flight.TLSOptions{CAFile: ca.CAFile, CertFile: certFile, KeyFile: keyFile}, false, "", codes.OK},
		// With TLS 1.3 the server rejects a client certificate after the
		// client finished its side of the handshake: the client sees the
		// alert or just a reset, depending on timing.
		{"mTLS without client cert", true, &flight.TLSOptions{CAFile: ca.CAFile}, true, "", codes.Unavailable},
		{"mTLS with untrusted client cert", true, &flight.TLSOptions{CAFile: ca.CAFile, CertFile: strangerCert, KeyFile: strangerKey}, true, "", codes.Unavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var clients *testca.CA
			if tc.mtls {
				clients = clientCA
			}
			_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem, TLSConfig: ca.ServerTLS(t, clients)})
			ctx := flighttest.Ctx(t, 10*time.Second)
			s, err := flight.Dial(ctx, flight.Options{Endpoint: addr, Path: []string{"tls"}, TLS: tc.tls, Allocator: mem, AckTimeout: 5 * time.Second})
			if err == nil {
				defer s.Close()
				err = sendOne(t, s, mem)
			}
			if !tc.fail {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.wantErr)
			var fe *flight.Error
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tc.wantCode, fe.Code, "%v", err)
			if tc.wantErr != "" {
				// A certificate that does not verify is not a server that
				// is down: retrying with the same files repeats it.
				require.False(t, fe.Retryable(), "%v", err)
			}
		})
	}
	// A plaintext client against a TLS receiver fails too.
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), TLSConfig: ca.ServerTLS(t, nil)})
	s, err := flight.Dial(flighttest.Ctx(t, 10*time.Second), flight.Options{Endpoint: addr, Path: []string{"p"}})
	if err == nil {
		defer s.Close()
		err = sendOne(t, s, memory.NewGoAllocator())
	}
	require.Error(t, err)
}

// TestBearerTokenEnforced: missing and wrong tokens are Unauthenticated,
// nothing is stored for them, and neither the server's token nor the one a
// client presented ever appears in the receiver's or the sink's logs.
// TestDialRefusesUnusableTLSFilesForGood: TLS files that are missing, or
// hold no certificate, or a key that does not match its certificate, are
// refused by Dial as permanent and not retryable: dialling again does not
// heal them (lanes.Classify's ClassPermanent), and the error names the
// option.
func TestDialRefusesUnusableTLSFilesForGood(t *testing.T) {
	ca := testca.New(t, "thalweg flight CA")
	certFile, keyFile := ca.ClientCert(t, "worker")
	_, otherKey := ca.ClientCert(t, "other")
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600))
	missing := filepath.Join(t.TempDir(), "absent.pem")
	for name, tc := range map[string]struct {
		tls  flight.TLSOptions
		want string
	}{
		"missing CA":         {flight.TLSOptions{CAFile: missing}, "TLS.CAFile"},
		"CA not PEM":         {flight.TLSOptions{CAFile: notPEM}, "no PEM certificates"},
		"missing cert":       {flight.TLSOptions{CertFile: missing, KeyFile: keyFile}, "TLS.CertFile"},
		"key of another one": {flight.TLSOptions{CertFile: certFile, KeyFile: otherKey}, "private key does not match"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := flight.Dial(flighttest.Ctx(t, 10*time.Second), flight.Options{Endpoint: "127.0.0.1:1", Path: []string{"p"}, TLS: &tc.tls})
			require.ErrorIs(t, err, flight.ErrInvalidOptions)
			require.ErrorContains(t, err, tc.want)
			var fe *flight.Error
			require.ErrorAs(t, err, &fe)
			require.True(t, fe.Permanent())
			require.False(t, fe.Retryable(), "a TLS file that does not work is not retried as if the server were down")
			class, _ := lanes.Classify(err)
			require.Equal(t, lanes.ClassPermanent, class)
		})
	}
}

func TestBearerTokenEnforced(t *testing.T) {
	const right, wrong = "rcv-token-7f3a9b1c", "guess-token-0d4e2a"
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var logs crashtest.LogBuffer
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem, Token: right, Logger: debugLogger(&logs)})
	for _, tok := range []string{"", wrong, "bearer-but-" + right} {
		s, err := flight.Dial(flighttest.Ctx(t, 10*time.Second), flight.Options{
			Endpoint: addr, Path: []string{"auth"}, Token: tok, Allocator: mem, Logger: debugLogger(&logs),
		})
		require.NoError(t, err)
		err = sendOne(t, s, mem)
		s.Close()
		var fe *flight.Error
		require.ErrorAs(t, err, &fe, "token %q", tok)
		require.Equal(t, codes.Unauthenticated, fe.Code, "token %q: %v", tok, err)
		require.True(t, fe.Permanent())
	}
	// Non-Bearer schemes and the unary RPCs are refused the same way.
	c := flighttest.Client(t, addr)
	for _, md := range []metadata.MD{
		metadata.Pairs("authorization", "Basic "+right),
		metadata.Pairs("authorization", right),
	} {
		_, err := c.GetFlightInfo(metadata.NewOutgoingContext(flighttest.Ctx(t, 5*time.Second), md),
			&arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"auth"}})
		require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
	}
	// Nothing was stored: the dataset does not even exist.
	authed := metadata.AppendToOutgoingContext(flighttest.Ctx(t, 5*time.Second), "authorization", "Bearer "+right)
	_, err := c.GetFlightInfo(authed, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: []string{"auth"}})
	require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
	require.NoError(t, srv.Stop())

	out := logs.String()
	require.Contains(t, out, "unauthenticated request", "auth failures are logged")
	require.NotContains(t, out, right)
	require.NotContains(t, out, wrong)
}

// TestStreamsPerPeerLimit: a client host cannot hold more than
// MaxStreamsPerPeer streams; a freed slot is usable again.
func TestStreamsPerPeerLimit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem, MaxStreamsPerPeer: 2})
	var sinks []*flight.Sink
	for i := range 2 {
		s := dial(t, flight.Options{Endpoint: addr, Path: []string{"peer", string(rune('a' + i))}, Allocator: mem})
		require.NoError(t, sendOne(t, s, mem))
		sinks = append(sinks, s)
	}
	third := dial(t, flight.Options{Endpoint: addr, Path: []string{"peer", "c"}, Allocator: mem})
	err := sendOne(t, third, mem)
	var fe *flight.Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, codes.ResourceExhausted, fe.Code, "%v", err)
	require.Contains(t, err.Error(), "too many concurrent streams")

	sinks[0].Close()
	testenv.WaitFor(t, 10*time.Second, "a stream to be accepted once a slot is free", func() bool {
		s, err := flight.Dial(flighttest.Ctx(t, 5*time.Second), flight.Options{Endpoint: addr, Path: []string{"peer", "d"}, Allocator: mem})
		if err != nil {
			return false
		}
		defer s.Close()
		return sendOne(t, s, mem) == nil
	})
}

// TestPendingBytesLimit: with acknowledgements held back, a stream that
// pushes more than MaxPendingBytes is ended with ResourceExhausted instead
// of the server accumulating without bound; once durable, the budget is
// given back and a new stream delivers.
func TestPendingBytesLimit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{
		Dir: t.TempDir(), Allocator: mem, MaxMessageSize: 64 << 10, MaxPendingBytes: 128 << 10,
		AckDelay: time.Second, // the first group sync waits: nothing becomes durable meanwhile
	})
	ctx := flighttest.Ctx(t, 20*time.Second)
	s := dial(t, flight.Options{Endpoint: addr, Path: []string{"pending"}, Allocator: mem, MaxMessageSize: 64 << 10})
	// Before AssertSize (t.Cleanup runs after it): gRPC may keep batches
	// queued on the refused stream, which only Close gives back.
	defer s.Close()
	var err error
	for i := uint64(1); i <= 40 && err == nil; i++ {
		b := flighttest.MakeBatch(mem, 0, i*100, 40, 500) // ~20 KiB
		err = s.Send(ctx, i, b)
		b.Release()
	}
	if err == nil {
		err = s.WaitDurable(ctx, 40)
	}
	var fe *flight.Error
	require.ErrorAs(t, err, &fe, "40 × 20 KiB against a 128 KiB budget must fail")
	require.Equal(t, codes.ResourceExhausted, fe.Code, "%v", err)
	require.Contains(t, err.Error(), "pending durability")

	testenv.WaitFor(t, 15*time.Second, "a send to be accepted once the pending bytes are given back", func() bool {
		s, err := flight.Dial(flighttest.Ctx(t, 5*time.Second), flight.Options{Endpoint: addr, Path: []string{"pending"}, Allocator: mem, MaxMessageSize: 64 << 10})
		if err != nil {
			return false
		}
		defer s.Close()
		return sendOne(t, s, mem) == nil
	})
}
