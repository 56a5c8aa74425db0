package flight_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/lanes"
)

// The sink's errors carry their class structurally (lanes.Classified): a
// sink that is down, restarting, overloaded or slow heals; one that refuses
// the stream as it is does not.
func TestErrorClass(t *testing.T) {
	retryable := []codes.Code{codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted,
		codes.Canceled, codes.Internal, codes.Unknown}
	permanent := []codes.Code{codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument, codes.NotFound,
		codes.FailedPrecondition, codes.Unimplemented, codes.OutOfRange}
	for _, c := range retryable {
		err := fmt.Errorf("lane: %w", &flight.Error{Op: "ack", Code: c, Err: status.Error(c, "x")})
		class, code := lanes.Classify(err)
		require.Equal(t, lanes.ClassRetryable, class, "%v", c)
		require.Equal(t, c.String(), code)
	}
	for _, c := range permanent {
		class, code := lanes.Classify(&flight.Error{Op: "ack", Code: c, Err: status.Error(c, "x")})
		require.Equal(t, lanes.ClassPermanent, class, "%v", c)
		require.Equal(t, c.String(), code)
	}
	for err, want := range map[error]lanes.Class{
		flight.ErrStreamEnded: lanes.ClassRetryable, flight.ErrAckTimeout: lanes.ClassRetryable,
		flight.ErrClosed: lanes.ClassRetryable, flight.ErrSchemaChanged: lanes.ClassRetryable,
		flight.ErrBadAck: lanes.ClassPermanent, flight.ErrUnsupportedSchema: lanes.ClassPermanent,
		flight.ErrRowTooLarge: lanes.ClassPermanent, flight.ErrOffsetOrder: lanes.ClassPermanent,
	} {
		class, code := lanes.Classify(&flight.Error{Op: "send", Err: fmt.Errorf("%w: detail", err)})
		require.Equal(t, want, class, "%v", err)
		require.Empty(t, code, "a local failure has no status")
	}
}

// Against the real receiver: a wrong token is permanent (Unauthenticated),
// a receiver that stops under the stream and comes back is retryable — it
// ends the stream (Permanent: rebuild) but heals.
func TestReceiverFailuresAreClassified(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := flighttest.Ctx(t, 20*time.Second)
	b := flighttest.MakeBatch(mem, 0, 0, 5, 5)
	defer b.Release()

	_, authAddr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem, Token: "right"})
	s := dial(t, flight.Options{Endpoint: authAddr, Path: []string{"t"}, Token: "wrong", Allocator: mem})
	_ = s.Send(ctx, 1, b)
	err := s.WaitDurable(ctx, 1)
	class, code := lanes.Classify(err)
	require.Equal(t, lanes.ClassPermanent, class, "%v", err)
	require.Equal(t, "Unauthenticated", code)

	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem})
	live := dial(t, flight.Options{Endpoint: addr, Path: []string{"die"}, Allocator: mem})
	require.NoError(t, live.Send(ctx, 1, b))
	require.NoError(t, live.WaitDurable(ctx, 1))
	require.NoError(t, srv.Stop())
	err = live.WaitDurable(ctx, 2)
	require.True(t, lanes.IsPermanent(err), "the stream is dead: %v", err)
	class, _ = lanes.Classify(err)
	require.Equal(t, lanes.ClassRetryable, class, "a stopped receiver heals: %v", err)
	_, err = flight.Dial(flighttest.Ctx(t, 5*time.Second), flight.Options{Endpoint: addr, Path: []string{"die"}})
	require.Error(t, err)
	class, _ = lanes.Classify(err)
	require.Equal(t, lanes.ClassRetryable, class, "dialling a stopped receiver: %v", err)
	require.False(t, errors.Is(err, flight.ErrBadAck))
}
