package zerobus_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/internal/testkit/testca"
	"github.com/thalweg/thalweg/zerobus"
	"github.com/thalweg/thalweg/zerobus/server"
)

// Compression reaches the wire in Flight mode: a batch of compressible rows
// larger than the server's message limit is refused uncompressed and
// accepted with lz4 or zstd (the server decodes it back to the same rows).
// Ephemeral mode, which sends no Arrow IPC, refuses it.
func TestCompressionReachesTheWire(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := startServer(t, server.Options{Token: token, Allocator: mem, MaxMessageBytes: 256 << 10})
	send := func(c zerobus.Compression, from int) error {
		o := h.options(zerobus.ModeFlight, mem)
		o.Compression = c
		o.MaxPayload = 4 << 20 // one message for the whole batch
		o.OpenTimeout = 5 * time.Second
		return deliverBatch(t, o, mem, from, 200, 4<<10) // ~800 KiB of 'x'
	}
	require.Error(t, send(zerobus.CompressionNone, 0), "uncompressed, the batch exceeds the server's 256 KiB limit")
	require.NoError(t, send(zerobus.CompressionZstd, 1000))
	require.NoError(t, send(zerobus.CompressionLZ4, 2000))
	ids := storedIDs(t, h.srv.Dir())
	require.Len(t, ids, 400)
	require.Equal(t, 1, ids[1000])
	require.Equal(t, 1, ids[2199])

	o := h.options(zerobus.ModeEphemeral, mem)
	o.Compression = zerobus.CompressionZstd
	_, err := zerobus.Dial(ctxT(t, 5*time.Second), o)
	require.ErrorContains(t, err, "needs ModeFlight")
}

// MaxMessageSize bounds every request: with it at the server's limit, a
// batch several times that size is split and stored; with the default
// (10 MiB) the same batch goes as one message and is refused.
func TestMaxMessageSizeSplits(t *testing.T) {
	for _, mode := range []zerobus.Mode{zerobus.ModeEphemeral, zerobus.ModeFlight} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			h := startServer(t, server.Options{Token: token, Allocator: mem, MaxMessageBytes: 256 << 10})
			o := h.options(mode, mem)
			o.OpenTimeout = 5 * time.Second
			require.Error(t, deliverBatch(t, o, mem, 0, 200, 4<<10))
			o.MaxMessageSize = 256 << 10
			require.NoError(t, deliverBatch(t, o, mem, 1000, 200, 4<<10))
			requireAllFrom(t, storedIDs(t, h.srv.Dir()), 1000, 200)
		})
	}
	_, err := zerobus.Dial(ctxT(t, time.Second), zerobus.Options{Endpoint: "127.0.0.1:1", Table: table,
		TLS: zerobus.TLSOptions{Insecure: true}, MaxMessageSize: 128 << 10, MaxPayload: 100 << 10})
	require.ErrorContains(t, err, "leaves less than 64 KiB")
}

// InsecureSkipVerify accepts a server certificate no configured CA signs.
func TestInsecureSkipVerify(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ca := testca.New(t, "thalweg zerobus CA")
	h := startServer(t, server.Options{Token: token, Allocator: mem, TLS: ca.ServerTLS(t, nil)})
	o := h.options(zerobus.ModeEphemeral, mem)
	o.Endpoint = "https://" + h.addr
	o.OpenTimeout = 5 * time.Second
	o.TLS = zerobus.TLSOptions{}
	require.ErrorContains(t, deliverOne(t, o, mem, 0), "certificate signed by unknown authority")
	o.TLS = zerobus.TLSOptions{InsecureSkipVerify: true}
	require.NoError(t, deliverOne(t, o, mem, 0))
}

// deliverBatch is deliverOne with n rows of payloadBytes each.
func deliverBatch(t *testing.T, opts zerobus.Options, mem memory.Allocator, from, n, payloadBytes int) error {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	s, err := zerobus.Dial(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	b := makeBatch(mem, from, n, payloadBytes)
	defer b.Release()
	if err := s.Send(ctx, 1, b); err != nil {
		return err
	}
	return s.WaitDurable(ctx, 1)
}

func requireAllFrom(t *testing.T, ids map[int64]int, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		require.Positive(t, ids[int64(i)], "id %d never stored", i)
	}
}

// TestOptionsEveryProblem: Dial validates the caller's Options before any
// default and reports every problem at once, each once, naming its field
// and the value it got, all wrapped in ErrInvalidOptions.
func TestOptionsEveryProblem(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    zerobus.Options
		want []string
		once string
	}{
		{"every field", zerobus.Options{
			Endpoint: "example.com", Table: "events", Mode: 7, Encoding: 9, MaxMessageSize: -1, MaxPayload: -3,
			Compression: "snappy", AckTimeout: -time.Second, OpenTimeout: -time.Minute, MaxRotationWait: -time.Millisecond,
			TLS: zerobus.TLSOptions{CertFile: "a.pem"},
		}, []string{
			`Options.Endpoint "example.com"`, `Options.Table "events"`, "Options.Mode 7", "Options.Encoding 9",
			"Options.MaxMessageSize -1", "Options.MaxPayload -3", `Options.Compression "snappy"`,
			"Options.AckTimeout -1s", "Options.OpenTimeout -1m0s", "Options.MaxRotationWait -1ms", "Options.TLS.CertFile",
		}, "Options.MaxPayload"},
		{"relations", zerobus.Options{Endpoint: "127.0.0.1:1", Table: table, TLS: zerobus.TLSOptions{Insecure: true},
			MaxMessageSize: payloadHeadroomPlus(500), Encoding: zerobus.EncodingProto, Compression: zerobus.CompressionLZ4,
		}, []string{
			"Options.MaxPayload 0 (default 500) is below 1 KiB", "Options.Schema is required for EncodingProto",
			`Options.Compression "lz4" needs ModeFlight`,
		}, "Options.MaxPayload"},
		{"too large a payload", zerobus.Options{Endpoint: "127.0.0.1:1", Table: table, TLS: zerobus.TLSOptions{Insecure: true},
			MaxMessageSize: 128 << 10, MaxPayload: 100 << 10,
		}, []string{"Options.MaxPayload 102400 leaves less than 64 KiB of Options.MaxMessageSize 131072"}, "Options.MaxPayload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := zerobus.Dial(context.Background(), tc.o)
			require.ErrorIs(t, err, zerobus.ErrInvalidOptions)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
			require.Equal(t, 1, strings.Count(err.Error(), tc.once), "each problem once: %v", err)
		})
	}
}

// payloadHeadroomPlus is a MaxMessageSize whose default MaxPayload is n.
func payloadHeadroomPlus(n int) int { return 64<<10 + n }
