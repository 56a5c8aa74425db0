package flight_test

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
)

// TestRebuildJoinsSplitBatches: a batch the Flight sink split into parts
// (it exceeded MaxMessageSize) comes back from Rebuild as one
// batch with its spans once and all its rows, and the seq range selects
// only the batches that intersect it. The receiver requires a token, which
// BearerToken supplies.
func TestRebuildJoinsSplitBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const token = "s3cret"
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), MaxMessageSize: 64 << 10, Token: token})
	ctx := flighttest.Ctx(t, 30*time.Second)
	sink, err := flight.Dial(ctx, flight.Options{Endpoint: addr, Path: []string{"raw"}, Allocator: mem, MaxMessageSize: 64 << 10, Token: token})
	require.NoError(t, err)
	var want []string
	for i, n := range []int{100, 2000, 100} { // the second batch is ~200 KB: split
		first := uint64(1 + 100*min(i, 1) + 2000*max(i-1, 0))
		b := flighttest.MakeBatch(mem, 3, first, n, 100)
		if i == 1 {
			want = flighttest.Rows(b.Rec)
		}
		require.NoError(t, sink.Send(ctx, uint64(i+1), b))
		b.Release()
	}
	require.NoError(t, sink.WaitDurable(ctx, 3))
	require.NoError(t, sink.Close())

	c := flighttest.Client(t, addr)
	stored, err := flight.ReadAll(ctx, c, []string{"raw"}, mem, flight.BearerToken(token))
	require.NoError(t, err)
	require.Greater(t, len(stored), 3, "the big batch was not split; the test proves nothing")
	flight.ReleaseAll(stored)

	_, err = flight.Rebuild(c, []string{"raw"}, mem)(ctx, flighttest.Partition(3), 1, 10)
	require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)

	rebuild := flight.Rebuild(c, []string{"raw"}, mem, flight.BearerToken(token))
	got, err := rebuild(ctx, flighttest.Partition(3), 500, 600) // inside the split batch only
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, []batch.OffsetSpan{{Partition: flighttest.Partition(3), First: 101, Last: 2100}}, got[0].Spans)
	require.Equal(t, want, flighttest.Rows(got[0].Rec))
	got[0].Release()

	got, err = rebuild(ctx, flighttest.Partition(3), 1, 2200)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for _, b := range got {
		b.Release()
	}
	got, err = rebuild(ctx, flighttest.Partition(4), 1, 2200) // another partition: nothing
	require.NoError(t, err)
	require.Empty(t, got)
}
