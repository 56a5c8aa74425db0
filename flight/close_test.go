package flight_test

import (
	"testing"
	"time"

	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
)

// hungServer's DoPut handler blocks without reading or answering until
// the test ends.
type hungServer struct {
	arrowflight.BaseFlightServer
	release chan struct{}
}

func (h *hungServer) DoPut(arrowflight.FlightService_DoPutServer) error {
	<-h.release
	return nil
}

// TestCloseBoundedWhenServerHangs: against a server whose handler never
// reads, answers or returns, with a batch outstanding, Close returns within
// Options.CloseTimeout (and the scheduling slack of a loaded machine) and
// gives every buffer back.
func TestCloseBoundedWhenServerHangs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	h := &hungServer{release: make(chan struct{})}
	addr := serveGRPC(t, h)
	t.Cleanup(func() { close(h.release) }) // before serveGRPC's Stop, which waits for the handler
	const closeTimeout = 300 * time.Millisecond
	s, err := flight.Dial(flighttest.Ctx(t, 10*time.Second), flight.Options{Endpoint: addr, Path: []string{"hung"},
		CloseTimeout: closeTimeout, Allocator: mem})
	require.NoError(t, err)
	b := flighttest.MakeBatch(mem, 0, 1, 100, 100)
	require.NoError(t, s.Send(flighttest.Ctx(t, 10*time.Second), 1, b))
	b.Release()

	start := time.Now()
	require.NoError(t, s.Close())
	took := time.Since(start)
	require.GreaterOrEqual(t, took, closeTimeout, "Close waits CloseTimeout for the server to end the stream")
	require.Less(t, took, closeTimeout+2*time.Second, "Close against a hung server")
}
