package zerobus_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/thalweg/thalweg/zerobus"
	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

// hungZerobus's stream handler reads the create-stream request, answers
// it, then blocks without reading or answering until the test ends.
type hungZerobus struct {
	zerobuspb.UnimplementedZerobusServer
	release chan struct{}
}

func (h *hungZerobus) EphemeralStream(st grpc.BidiStreamingServer[zerobuspb.EphemeralStreamRequest, zerobuspb.EphemeralStreamResponse]) error {
	if _, err := st.Recv(); err != nil {
		return err
	}
	if err := st.Send(&zerobuspb.EphemeralStreamResponse{Payload: &zerobuspb.EphemeralStreamResponse_CreateStreamResponse{
		CreateStreamResponse: &zerobuspb.CreateIngestStreamResponse{StreamId: proto.String("hung")}}}); err != nil {
		return err
	}
	<-h.release
	return nil
}

// TestCloseBoundedWhenServerHangs: against a server whose stream handler
// answers the stream's creation and then never reads, answers or returns, with a batch outstanding, Close does not
// wait for the server: it returns at once (within the scheduling slack of
// a loaded machine) and gives every buffer back.
func TestCloseBoundedWhenServerHangs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h := &hungZerobus{release: make(chan struct{})}
	g := grpc.NewServer()
	zerobuspb.RegisterZerobusServer(g, h)
	done := make(chan struct{})
	go func() { defer close(done); _ = g.Serve(lis) }()
	t.Cleanup(func() { close(h.release); g.Stop(); <-done })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := zerobus.Dial(ctx, zerobus.Options{Endpoint: "http://" + lis.Addr().String(), Table: table, Token: token,
		TLS: zerobus.TLSOptions{Insecure: true}, Mode: zerobus.ModeEphemeral, Schema: schema, Allocator: mem})
	require.NoError(t, err)
	b := makeBatch(mem, 0, 100, 100)
	require.NoError(t, s.Send(ctx, 1, b))
	b.Release()

	start := time.Now()
	require.NoError(t, s.Close())
	require.Less(t, time.Since(start), 2*time.Second, "Close against a hung server")
}
