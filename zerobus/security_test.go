package zerobus_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/testca"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/zerobus"
	"github.com/thalweg/thalweg/zerobus/server"
)

func debugLogger(w *crashtest.LogBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// deliverOne dials, sends one batch and waits for it; it returns the first
// error.
func deliverOne(t *testing.T, opts zerobus.Options, mem memory.Allocator, from int) error {
	t.Helper()
	return deliverBatch(t, opts, mem, from, 5, 8)
}

func TestTLSSinkToServer(t *testing.T) {
	ca := testca.New(t, "thalweg zerobus CA")
	other := testca.New(t, "other CA")
	clientCA := testca.New(t, "zerobus client CA")
	cert, key := clientCA.ClientCert(t, "thalweg worker")
	for _, mode := range []zerobus.Mode{zerobus.ModeEphemeral, zerobus.ModeFlight} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			plain := startServer(t, server.Options{Token: token, Allocator: mem, TLS: ca.ServerTLS(t, nil)})
			mutual := startServer(t, server.Options{Token: token, Allocator: mem, TLS: ca.ServerTLS(t, clientCA)})
			opts := func(h *harness, tls zerobus.TLSOptions) zerobus.Options {
				o := h.options(mode, mem)
				o.Endpoint = "https://" + h.addr
				o.TLS = tls
				o.OpenTimeout = 5 * time.Second
				return o
			}
			require.NoError(t, deliverOne(t, opts(plain, zerobus.TLSOptions{CAFile: ca.CAFile}), mem, 0))
			require.Len(t, storedIDs(t, plain.srv.Dir()), 5)

			err := deliverOne(t, opts(plain, zerobus.TLSOptions{CAFile: other.CAFile}), mem, 0)
			require.Error(t, err)
			require.Contains(t, err.Error(), "certificate signed by unknown authority")
			class, _ := lanes.Classify(err)
			require.Equal(t, lanes.ClassPermanent, class, "a certificate that does not verify is not a server that is down: %v", err)

			require.NoError(t, deliverOne(t, opts(mutual, zerobus.TLSOptions{CAFile: ca.CAFile, CertFile: cert, KeyFile: key}), mem, 0))
			require.Error(t, deliverOne(t, opts(mutual, zerobus.TLSOptions{CAFile: ca.CAFile}), mem, 100),
				"a client without a certificate must be refused by a mutual-TLS server")
			require.Len(t, storedIDs(t, mutual.srv.Dir()), 5, "the refused client stored nothing")

			o := opts(plain, zerobus.TLSOptions{CAFile: ca.CAFile, CertFile: cert})
			_, err = zerobus.Dial(ctxT(t, 5*time.Second), o)
			require.ErrorContains(t, err, "CertFile and KeyFile must be given together")
		})
	}
}

// TestBearerTokenEnforced: missing and wrong tokens end the stream with
// Unauthenticated (permanent), nothing is stored, and no token appears in
// the server's or the sink's logs.
// TestDialRefusesUnusableTLSFilesForGood: a missing TLS file, or a key
// that does not match its certificate, is refused by Dial as not retryable
// (lanes.Classify's ClassPermanent), naming the option, in either mode.
func TestDialRefusesUnusableTLSFilesForGood(t *testing.T) {
	ca := testca.New(t, "thalweg zerobus CA")
	cert, _ := ca.ClientCert(t, "worker")
	_, otherKey := ca.ClientCert(t, "other")
	missing := filepath.Join(t.TempDir(), "absent.pem")
	for _, mode := range []zerobus.Mode{zerobus.ModeEphemeral, zerobus.ModeFlight} {
		for _, tc := range []struct {
			tls  zerobus.TLSOptions
			want string
		}{
			{zerobus.TLSOptions{CAFile: missing}, "TLS.CAFile"},
			{zerobus.TLSOptions{CertFile: missing, KeyFile: otherKey}, "TLS.CertFile"},
			{zerobus.TLSOptions{CertFile: cert, KeyFile: otherKey}, "private key does not match"},
		} {
			_, err := zerobus.Dial(ctxT(t, 10*time.Second), zerobus.Options{Endpoint: "https://127.0.0.1:1", Table: "c.s.t", Mode: mode, TLS: tc.tls})
			require.ErrorIs(t, err, zerobus.ErrInvalidOptions)
			require.ErrorContains(t, err, tc.want)
			class, _ := lanes.Classify(err)
			require.Equal(t, lanes.ClassPermanent, class, "%s: %v", mode, err)
		}
	}
}

func TestBearerTokenEnforced(t *testing.T) {
	const right, wrong = "zb-token-5c1e77aa", "zb-guess-93b0d2"
	for _, mode := range []zerobus.Mode{zerobus.ModeEphemeral, zerobus.ModeFlight} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var logs crashtest.LogBuffer
			h := startServer(t, server.Options{Token: right, Allocator: mem, Logger: debugLogger(&logs)})
			for _, tok := range []string{"", wrong} {
				o := h.options(mode, mem)
				o.Token, o.Logger = tok, debugLogger(&logs)
				err := deliverOne(t, o, mem, 0)
				var ze *zerobus.Error
				require.ErrorAs(t, err, &ze, "token %q", tok)
				require.Equal(t, codes.Unauthenticated, ze.Code, "%v", err)
				require.True(t, ze.Permanent())
			}
			ids, err := server.ReadTable(h.srv.Dir(), table)
			require.NoError(t, err)
			require.Empty(t, ids, "unauthenticated streams stored records")
			require.Zero(t, h.srv.Stats().Streams)

			o := h.options(mode, mem)
			o.Token = right
			require.NoError(t, deliverOne(t, o, mem, 0))

			out := logs.String()
			require.Contains(t, out, "stream rejected")
			require.NotContains(t, out, right)
			require.NotContains(t, out, wrong)
		})
	}
}

func TestStreamsPerPeerLimit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := startServer(t, server.Options{Token: token, Allocator: mem, MaxStreamsPerPeer: 1})
	ctx := ctxT(t, 20*time.Second)
	first, err := zerobus.Dial(ctx, h.options(zerobus.ModeEphemeral, mem))
	require.NoError(t, err)
	_, err = zerobus.Dial(ctx, h.options(zerobus.ModeFlight, mem))
	var ze *zerobus.Error
	require.ErrorAs(t, err, &ze)
	require.Equal(t, codes.ResourceExhausted, ze.Code, "%v", err)
	require.False(t, ze.Permanent(), "a busy server is worth retrying later")
	require.NoError(t, first.Close())
	require.Eventually(t, func() bool { return deliverOne(t, h.options(zerobus.ModeFlight, mem), mem, 0) == nil },
		10*time.Second, 50*time.Millisecond)
}

// TestPendingBytesLimit: a server that is not syncing refuses more than
// MaxPendingBytes of unacknowledged records (ResourceExhausted) instead of
// buffering them without bound.
func TestPendingBytesLimit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := startServer(t, server.Options{Token: token, Allocator: mem,
		SyncInterval: time.Hour, MaxMessageBytes: 64 << 10, MaxPendingBytes: 64 << 10})
	ctx := ctxT(t, 20*time.Second)
	o := h.options(zerobus.ModeEphemeral, mem)
	o.MaxPayload = 16 << 10
	s, err := zerobus.Dial(ctx, o)
	require.NoError(t, err)
	defer s.Close()
	for i := 0; i < 30 && err == nil; i++ {
		b := makeBatch(mem, i*20, 20, 200) // ~5 KiB of JSON
		err = s.Send(ctx, uint64(i+1), b)
		b.Release()
	}
	if err == nil { // the refusal had not reached Send yet
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = s.WaitDurable(wctx, 30)
		cancel()
	}
	var ze *zerobus.Error
	require.ErrorAs(t, err, &ze)
	require.Equal(t, codes.ResourceExhausted, ze.Code, "%v", err)
	require.Contains(t, err.Error(), "pending durability")
}
