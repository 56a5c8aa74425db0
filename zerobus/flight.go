package zerobus

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"
	flightpb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc/codes"

	"github.com/thalweg/thalweg/internal/flightwire"
)

// parseFlightAck decodes a PutResult with flightwire.ParseAck; the Zerobus
// variant also requires ack_up_to_records on every PutResult.
func parseFlightAck(raw []byte) (flightwire.Ack, error) {
	a, err := flightwire.ParseAck(raw)
	if err != nil {
		return a, protocolError("%v; %s", err, flightwire.AckEncoding)
	}
	if !a.HasRecords {
		return a, protocolError("PutResult app_metadata %q lacks ack_up_to_records", raw)
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
	if !a.Ready || a.Records != 0 || a.Close {
		cancel()
		return nil, protocolError("first PutResult %q is not the ready signal", pr.GetAppMetadata())
	}
	return &flightConn{s: s, stream: stream, cancel: cancel}, nil
}

func (c *flightConn) send(f *frame, phys int64) error {
	if c.w == nil {
		c.w = flight.NewRecordWriter(c.stream, append([]ipc.Option{ipc.WithSchema(f.rec.Schema())}, c.s.ipcOpts...)...)
		c.w.SetFlightDescriptor(&flight.FlightDescriptor{
			Type: flight.DescriptorPATH,
			Path: strings.Split(c.s.opts.Table, "."),
		})
	}
	c.meta = flightwire.AppendBatchMeta(c.meta[:0], uint64(phys), nil, 0, 0)
	return c.w.WriteWithAppMetadata(f.rec, c.meta)
}

func (c *flightConn) recv() (event, error) {
	pr, err := c.stream.Recv()
	if err != nil {
		return event{}, err
	}
	return flightEvent(pr.GetAppMetadata())
}

// maxCloseAfter caps the grace a close-stream signal may announce.
const maxCloseAfter = flightwire.MaxCloseAfter

// flightEvent turns one PutResult app_metadata into an event. The ready
// signal after the first PutResult carries nothing; an ack_up_to_offset
// below -1 or a negative close_stream_duration_ms is a protocol violation
// (flightwire.ParseAck).
func flightEvent(raw []byte) (event, error) {
	a, err := parseFlightAck(raw)
	if err != nil {
		return event{}, err
	}
	var ev event
	if !a.Ready {
		if a.Offset > math.MaxInt64 {
			return event{}, protocolError("PutResult app_metadata: ack_up_to_offset %d overflows a physical offset", a.Offset)
		}
		ev.ack, ev.hasAck = int64(a.Offset), true
	}
	if a.Close {
		ev.close, ev.closeAfter = true, a.CloseAfter
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
