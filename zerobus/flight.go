package zerobus

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	flightpb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc/codes"
)

// flightAck is the server's PutResult app_metadata in the Flight variant.
type flightAck struct {
	AckUpToOffset         *int64  `json:"ack_up_to_offset"`
	AckUpToRecords        *uint64 `json:"ack_up_to_records"`
	CloseStreamDurationMs *int64  `json:"close_stream_duration_ms"`
}

func parseFlightAck(raw []byte) (flightAck, error) {
	var a flightAck
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, protocolError("PutResult app_metadata %q: %v", raw, err)
	}
	if a.AckUpToOffset == nil || a.AckUpToRecords == nil {
		return a, protocolError("PutResult app_metadata %q lacks ack_up_to_offset or ack_up_to_records", raw)
	}
	return a, nil
}

// flightConn is one DoPut call. The IPC writer is created on the first
// frame, from that frame's schema.
type flightConn struct {
	s      *Sink
	stream flightpb.FlightService_DoPutClient
	cancel context.CancelFunc
	w      *flight.Writer // writer goroutine only
	meta   []byte
}

func (s *Sink) openFlight(ctx context.Context) (physConn, error) {
	sctx, cancel := context.WithCancel(s.ctx)
	stop := context.AfterFunc(ctx, cancel)
	stream, err := flightpb.NewFlightServiceClient(s.cc).DoPut(s.outgoing(sctx))
	var pr *flight.PutResult
	if err == nil {
		pr, err = stream.Recv()
	}
	if !stop() || err != nil {
		cancel()
		if err == nil || ctx.Err() != nil {
			return nil, &Error{Op: "create_stream", Code: codes.DeadlineExceeded, Err: fmt.Errorf("no ready signal: %w", context.Cause(ctx))}
		}
		return nil, wireError("create_stream", err, false)
	}
	a, err := parseFlightAck(pr.GetAppMetadata())
	if err != nil {
		cancel()
		return nil, err
	}
	if *a.AckUpToOffset != -1 || *a.AckUpToRecords != 0 || a.CloseStreamDurationMs != nil {
		cancel()
		return nil, protocolError("first PutResult %q is not the ready signal", pr.GetAppMetadata())
	}
	return &flightConn{s: s, stream: stream, cancel: cancel}, nil
}

func (c *flightConn) send(f *frame, phys int64) error {
	if c.w == nil {
		opts := []ipc.Option{ipc.WithSchema(f.rec.Schema()), ipc.WithAllocator(c.s.opts.Allocator)}
		switch c.s.opts.Compression {
		case CompressionLZ4:
			opts = append(opts, ipc.WithLZ4())
		case CompressionZstd:
			opts = append(opts, ipc.WithZstd())
		}
		c.w = flight.NewRecordWriter(c.stream, opts...)
		c.w.SetFlightDescriptor(&flight.FlightDescriptor{
			Type: flight.DescriptorPATH,
			Path: strings.Split(c.s.opts.Table, "."),
		})
	}
	c.meta = append(c.meta[:0], `{"offset_id":`...)
	c.meta = strconv.AppendInt(c.meta, phys, 10)
	c.meta = append(c.meta, '}')
	return c.w.WriteWithAppMetadata(f.rec, c.meta)
}

func (c *flightConn) recv() (event, error) {
	pr, err := c.stream.Recv()
	if err != nil {
		return event{}, err
	}
	return flightEvent(pr.GetAppMetadata())
}

// maxCloseAfter caps the grace a close-stream signal may announce: a larger
// value (or one that overflows time.Duration) is treated as this.
const maxCloseAfter = 24 * time.Hour

// flightEvent turns one PutResult app_metadata into an event. An
// ack_up_to_offset below -1 (-1 is the ready signal) or a negative
// close_stream_duration_ms is a protocol violation.
func flightEvent(raw []byte) (event, error) {
	a, err := parseFlightAck(raw)
	if err != nil {
		return event{}, err
	}
	var ev event
	switch off := *a.AckUpToOffset; {
	case off >= 0:
		ev.ack, ev.hasAck = off, true
	case off < -1:
		return event{}, protocolError("PutResult app_metadata: ack_up_to_offset %d is negative", off)
	}
	if a.CloseStreamDurationMs != nil {
		ms := *a.CloseStreamDurationMs
		if ms < 0 {
			return event{}, protocolError("PutResult app_metadata: close_stream_duration_ms %d is negative", ms)
		}
		ev.close, ev.closeAfter = true, maxCloseAfter
		if ms < int64(maxCloseAfter/time.Millisecond) {
			ev.closeAfter = time.Duration(ms) * time.Millisecond
		}
	}
	return ev, nil
}

func (c *flightConn) abort() { c.cancel() }

func (c *flightConn) finish() {
	if c.w != nil {
		_ = c.w.Close() // the call is cancelled: only frees the writer
		c.w = nil
	}
}
