package flight_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testca"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// TestPositionsFromReceiver: Positions over TLS with a bearer token returns
// the highest seq the receiver stored per partition; a missing token is
// the server's Unauthenticated, not ErrNoPositions.
func TestPositionsFromReceiver(t *testing.T) {
	ca := testca.New(t, "thalweg flight CA")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Token: "tok", TLSConfig: ca.ServerTLS(t, nil)})
	tlsOpts := &flight.TLSOptions{CAFile: ca.CAFile}
	ctx := flighttest.Ctx(t, 20*time.Second)
	s, err := flight.Dial(ctx, flight.Options{Endpoint: addr, Path: []string{"raw"}, TLS: tlsOpts, Token: "tok", Allocator: mem})
	require.NoError(t, err)
	var want = map[string]uint64{}
	for i := range 6 {
		b := flighttest.MakeBatch(mem, int32(i%3), uint64(100*i+1), 10, 8)
		for _, sp := range b.Spans {
			want[sp.Partition] = max(want[sp.Partition], sp.Last)
		}
		require.NoError(t, s.Send(ctx, uint64(i+1), b))
		b.Release()
	}
	require.NoError(t, s.WaitDurable(ctx, 6))
	require.NoError(t, s.Close())

	cfg, err := tlsOpts.Config()
	require.NoError(t, err)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	require.NoError(t, err)
	defer conn.Close()
	c := arrowflight.NewFlightServiceClient(conn)
	got, err := flight.Positions(ctx, c, []string{"raw"}, flight.BearerToken("tok"))
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Len(t, got, 3)

	_, err = flight.Positions(ctx, c, []string{"raw"})
	require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
	require.NotErrorIs(t, err, flight.ErrNoPositions)
}

// TestPositionsWithoutAction: a Flight server that does not offer the
// action — arrow-go's base server and an independent pyarrow server —
// gives an error wrapping ErrNoPositions.
func TestPositionsWithoutAction(t *testing.T) {
	t.Run("arrow-go", func(t *testing.T) {
		addr := serveGRPC(t, &silentServer{})
		c := flighttest.Client(t, addr)
		_, err := flight.Positions(flighttest.Ctx(t, 10*time.Second), c, []string{"raw"})
		require.ErrorIs(t, err, flight.ErrNoPositions)
		require.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)
	})
	t.Run("pyarrow", func(t *testing.T) {
		py := testenv.Python(t)
		cmd := exec.Command(py, filepath.Join(testenv.RepoRoot(), "testdata", "flight", "ack_server.py"), "--out", filepath.Join(t.TempDir(), "x"))
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err)
		port, ok := strings.CutPrefix(strings.TrimSpace(line), "READY ")
		require.True(t, ok, "ack_server.py said %q", line)
		c := flighttest.Client(t, "127.0.0.1:"+port)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err = flight.Positions(ctx, c, []string{"raw"})
		require.ErrorIs(t, err, flight.ErrNoPositions)
		t.Logf("pyarrow server: %v", err)
	})
}
