package server

import (
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/ipcguard"
	"github.com/thalweg/thalweg/internal/limits"
)

// Defaults of the resource limits in Options.
const (
	DefaultMaxStreamsPerPeer = 64
	DefaultMaxPendingBytes   = 1 << 30
	minMaxDecodedBufferSize  = 256 << 20
)

// ErrDecodeLimit is the cause of a Flight batch rejected because decoding
// it would allocate a buffer above Options.MaxDecodedBufferSize.
var ErrDecodeLimit = limits.ErrDecodeLimit

// guardedReader checks every FlightData header with ipcguard before
// arrow-go's reader sees it.
type guardedReader struct {
	flight.FlightService_DoPutServer
	n int
}

func (g *guardedReader) Recv() (*flight.FlightData, error) {
	fd, err := g.FlightService_DoPutServer.Recv()
	if err != nil {
		return nil, err
	}
	g.n++
	if err := ipcguard.CheckMessage(fd.DataHeader, len(fd.DataBody)); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "flight message %d: %v", g.n, err)
	}
	return fd, nil
}
