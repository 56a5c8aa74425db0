package server

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/ipcguard"
	"github.com/thalweg/thalweg/internal/limits"
)

// Defaults of the resource limits in Options.
const (
	DefaultMaxStreamsPerPeer = 64
	DefaultMaxPendingBytes   = limits.DefaultMaxPendingBytes // 1 GiB
	// DefaultAckSendTimeout bounds how long one acknowledgement may wait
	// for the client to read.
	DefaultAckSendTimeout = 30 * time.Second
	// DefaultMaxConnections bounds the open connections, server-wide.
	DefaultMaxConnections = 1024
	// DefaultMaxConnectionIdle closes a connection without streams.
	DefaultMaxConnectionIdle = 2 * time.Minute
)

// ErrDecodeLimit is the cause of a Flight batch rejected because decoding
// it would allocate a buffer above Options.MaxDecodedBufferSize.
var ErrDecodeLimit = limits.ErrDecodeLimit

// guardedReader checks every FlightData header with ipcguard before
// arrow-go's reader sees it, and reserves what the message declares it
// will take to decode (limits.MessageCost) from the stream's budget. The
// reservation is held until the next Recv: arrow-go's reader releases a
// batch before it reads the next message, and by then the batch's rows are
// stored (and hold their own reservation). Call release when done.
type guardedReader struct {
	flight.FlightService_DoPutServer
	budget   *limits.StreamBudget
	maxCost  int64
	n        int
	decoding int64
}

func (g *guardedReader) Recv() (*flight.FlightData, error) {
	g.release()
	fd, err := g.FlightService_DoPutServer.Recv()
	if err != nil {
		return nil, err
	}
	g.n++
	if err := ipcguard.CheckMessage(fd.DataHeader, len(fd.DataBody)); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "flight message %d: %v", g.n, err)
	}
	cost, err := g.budget.ReserveMessage(fd.DataHeader, fd.DataBody, g.maxCost)
	if err != nil {
		return nil, status.Errorf(status.Code(err), "flight message %d: %s", g.n, status.Convert(err).Message())
	}
	g.decoding = cost
	return fd, nil
}

func (g *guardedReader) release() {
	g.budget.Release(g.decoding)
	g.decoding = 0
}
