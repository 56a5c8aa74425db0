package zerobus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/zerobus"
	"github.com/thalweg/thalweg/zerobus/server"
)

// The sink's errors carry their class structurally (lanes.Classified),
// independent of StreamDead: a dead stream of a restarting server heals, a
// refusal does not.
func TestErrorClass(t *testing.T) {
	for _, tc := range []struct {
		err  *zerobus.Error
		want lanes.Class
	}{
		{&zerobus.Error{Op: "recv", Code: codes.Unavailable, StreamDead: true, Err: fmt.Errorf("x")}, lanes.ClassRetryable},
		{&zerobus.Error{Op: "recv", Code: codes.Internal, StreamDead: true, Err: fmt.Errorf("reset")}, lanes.ClassRetryable},
		{&zerobus.Error{Op: "ack", Code: codes.DeadlineExceeded, StreamDead: true, Err: zerobus.ErrAckTimeout}, lanes.ClassRetryable},
		{&zerobus.Error{Op: "recv", StreamDead: true, Err: zerobus.ErrStreamEnded}, lanes.ClassRetryable},
		{&zerobus.Error{Op: "dial", Code: codes.ResourceExhausted, Err: fmt.Errorf("busy")}, lanes.ClassRetryable},
		{&zerobus.Error{Op: "create_stream", Code: codes.Unauthenticated, Err: fmt.Errorf("x")}, lanes.ClassPermanent},
		{&zerobus.Error{Op: "create_stream", Code: codes.NotFound, Err: fmt.Errorf("x")}, lanes.ClassPermanent},
		{&zerobus.Error{Op: "send", Code: codes.InvalidArgument, Err: fmt.Errorf("x")}, lanes.ClassPermanent},
		{&zerobus.Error{Op: "send", Code: codes.FailedPrecondition, Err: fmt.Errorf("x")}, lanes.ClassPermanent},
		{&zerobus.Error{Op: "recv", Code: codes.Internal, StreamDead: true, Err: fmt.Errorf("%w: bad ack", zerobus.ErrProtocol)}, lanes.ClassPermanent},
		{&zerobus.Error{Op: "encode", Err: zerobus.ErrRecordTooLarge}, lanes.ClassPermanent},
	} {
		class, code := lanes.Classify(fmt.Errorf("lane: %w", tc.err))
		require.Equal(t, tc.want, class, "%v", tc.err)
		if tc.err.Code != codes.OK {
			require.Equal(t, tc.err.Code.String(), code)
		}
	}
}

// Against the real server: a wrong token and an unknown table are
// permanent, nobody listening is retryable.
func TestDialErrorsHaveClass(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := startServer(t, server.Options{Token: token, Tables: []string{table}})
	for _, tc := range []struct {
		name string
		mut  func(*zerobus.Options)
		want lanes.Class
		code string
	}{
		{"bad token", func(o *zerobus.Options) { o.Token = "nope" }, lanes.ClassPermanent, "Unauthenticated"},
		{"unknown table", func(o *zerobus.Options) { o.Table = "main.thalweg.other" }, lanes.ClassPermanent, "NotFound"},
		{"nobody listening", func(o *zerobus.Options) { o.Endpoint = "127.0.0.1:1"; o.OpenTimeout = 2 * time.Second }, lanes.ClassRetryable, "Unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := h.options(zerobus.ModeEphemeral, mem)
			tc.mut(&opts)
			_, err := zerobus.Dial(context.Background(), opts)
			class, code := lanes.Classify(err)
			require.Equal(t, tc.want, class, "%v", err)
			require.Equal(t, tc.code, code)
		})
	}
}
