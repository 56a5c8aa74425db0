package flight_test

import (
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testca"
)

// TestDatasetOneOptions: one Options (TLS, token, max message size) serves
// the dataset's sink and its reads: what Dial wrote (a batch split at the
// message size) comes back whole from Rebuild and ReadAll, and Positions
// names its partition. A Dataset with the wrong token is refused on every
// read; one closed reads nothing.
func TestDatasetOneOptions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ca := testca.New(t, "thalweg dataset CA")
	const token = "d4taset"
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), MaxMessageSize: 64 << 10, Token: token,
		TLSConfig: ca.ServerTLS(t, nil)})
	ctx := flighttest.Ctx(t, 30*time.Second)
	opts := flight.Options{Endpoint: addr, Path: []string{"ds"}, TLS: &flight.TLSOptions{CAFile: ca.CAFile},
		Token: token, MaxMessageSize: 64 << 10, Allocator: mem}
	ds, err := flight.Open(opts)
	require.NoError(t, err)
	defer ds.Close()

	sink, err := ds.Dial(ctx)
	require.NoError(t, err)
	b := flighttest.MakeBatch(mem, 2, 1, 2000, 100) // ~200 KB: split in parts
	want := flighttest.Rows(b.Rec)
	require.NoError(t, sink.Send(ctx, 1, b))
	b.Release()
	require.NoError(t, sink.WaitDurable(ctx, 1))
	require.NoError(t, sink.Close())

	pos, err := ds.Positions(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]uint64{flighttest.Partition(2): 2000}, pos)

	got, err := ds.Rebuild(ctx, flighttest.Partition(2), 1, 2000)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, want, flighttest.Rows(got[0].Rec))
	got[0].Release()

	stored, err := ds.ReadAll(ctx, mem)
	require.NoError(t, err)
	require.Greater(t, len(stored), 1, "the batch was not split; the test proves nothing")
	flight.ReleaseAll(stored)

	wrong := opts
	wrong.Token = "nope"
	bad, err := flight.Open(wrong)
	require.NoError(t, err)
	defer bad.Close()
	_, err = bad.Positions(ctx)
	require.Equal(t, codes.Unauthenticated, status.Code(errors.Unwrap(err)), "%v", err)
	_, err = bad.Rebuild(ctx, flighttest.Partition(2), 1, 2000)
	require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)

	require.NoError(t, ds.Close())
	_, err = ds.Positions(ctx)
	require.ErrorIs(t, err, flight.ErrDatasetClosed)

	_, err = flight.Open(flight.Options{Endpoint: addr})
	require.ErrorIs(t, err, flight.ErrInvalidOptions)
}
