package zerobus

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/thalweg/thalweg/internal/bearer"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

// Header names of the Zerobus protocol.
const (
	headerAuthorization = bearer.Header
	headerTableName     = "x-databricks-zerobus-table-name"
)

func (s *Sink) outgoing(ctx context.Context) context.Context {
	md := metadata.Pairs(headerTableName, s.opts.Table)
	if s.opts.Token != "" {
		md.Set(headerAuthorization, bearer.Value(s.opts.Token))
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// setupEphemeral prepares the encoder and the create_stream request of
// each stream. A PROTO stream's descriptor is derived from the schema of
// the batches it carries (see Sink.Send); a JSON stream's setup does not
// depend on the schema.
func (s *Sink) setupEphemeral() error {
	client := zerobuspb.NewZerobusClient(s.cc)
	switch s.opts.Encoding {
	case EncodingProto:
		pe, err := newProtoEncoder(s.opts.Schema)
		if err != nil {
			return &Error{Op: "encode", Code: codes.InvalidArgument, Err: err}
		}
		s.enc.schema, s.enc.proto = s.opts.Schema, pe
		s.encode = func(rec arrow.RecordBatch) ([]frame, error) {
			if !s.enc.schema.Equal(rec.Schema()) {
				pe, err := newProtoEncoder(rec.Schema())
				if err != nil {
					return nil, err
				}
				s.enc.schema, s.enc.proto = rec.Schema(), pe
			}
			return s.enc.proto.encode(rec, s.opts.MaxPayload)
		}
		s.open = func(ctx context.Context, sc *arrow.Schema) (physConn, error) {
			pe, err := newProtoEncoder(sc)
			if err != nil {
				return nil, &Error{Op: "encode", Code: codes.InvalidArgument, Err: err}
			}
			return openEphemeral(ctx, s, client, &zerobuspb.CreateIngestStreamRequest{
				TableName:       proto.String(s.opts.Table),
				RecordType:      zerobuspb.RecordType_PROTO.Enum(),
				DescriptorProto: pe.descriptor,
			})
		}
	default:
		create := &zerobuspb.CreateIngestStreamRequest{TableName: proto.String(s.opts.Table), RecordType: zerobuspb.RecordType_JSON.Enum()}
		s.encode = func(rec arrow.RecordBatch) ([]frame, error) { return encodeJSON(rec, s.opts.MaxPayload) }
		s.open = func(ctx context.Context, _ *arrow.Schema) (physConn, error) {
			return openEphemeral(ctx, s, client, create)
		}
	}
	return nil
}

// ephemeralConn is one EphemeralStream call.
type ephemeralConn struct {
	stream zerobuspb.Zerobus_EphemeralStreamClient
	cancel context.CancelFunc
	id     string
	req    zerobuspb.EphemeralStreamRequest // reused by send (writer only)
	batch  zerobuspb.IngestRecordBatchRequest
}

// openEphemeral starts the call and completes the create_stream handshake
// within ctx; the call itself lives until abort or Close.
func openEphemeral(ctx context.Context, s *Sink, client zerobuspb.ZerobusClient, create *zerobuspb.CreateIngestStreamRequest) (physConn, error) {
	sctx, cancel := context.WithCancel(s.ctx)
	stop := context.AfterFunc(ctx, cancel) // a handshake past its deadline kills the call
	stream, err := client.EphemeralStream(s.outgoing(sctx))
	if err != nil {
		cancel()
		return nil, wireError("create_stream", err, false)
	}
	err = stream.Send(&zerobuspb.EphemeralStreamRequest{
		Payload: &zerobuspb.EphemeralStreamRequest_CreateStream{CreateStream: create},
	})
	var resp *zerobuspb.EphemeralStreamResponse
	if err == nil || errors.Is(err, io.EOF) {
		// io.EOF from Send: the server ended the call; Recv has its status.
		resp, err = stream.Recv()
	}
	if !stop() || err != nil {
		cancel()
		if err == nil || ctx.Err() != nil {
			return nil, &Error{Op: "create_stream", Code: codes.DeadlineExceeded, Err: fmt.Errorf("no create_stream_response: %w", context.Cause(ctx))}
		}
		return nil, wireError("create_stream", err, false)
	}
	cr := resp.GetCreateStreamResponse()
	if cr == nil || cr.GetStreamId() == "" {
		cancel()
		return nil, protocolError("first response is %T without a stream_id, want create_stream_response", resp.GetPayload())
	}
	c := &ephemeralConn{stream: stream, cancel: cancel, id: cr.GetStreamId()}
	c.req.Payload = &zerobuspb.EphemeralStreamRequest_IngestRecordBatch{IngestRecordBatch: &c.batch}
	s.opts.Logger.Debug("zerobus: ephemeral stream created", "stream_id", c.id)
	return c, nil
}

func (c *ephemeralConn) send(f *frame, phys int64) error {
	c.batch.OffsetId = &phys
	switch {
	case f.json != nil:
		c.batch.Batch = &zerobuspb.IngestRecordBatchRequest_JsonBatch{JsonBatch: &zerobuspb.JsonRecordBatch{Records: f.json}}
	default:
		c.batch.Batch = &zerobuspb.IngestRecordBatchRequest_ProtoEncodedBatch{ProtoEncodedBatch: &zerobuspb.ProtoEncodedRecordBatch{Records: f.proto}}
	}
	return c.stream.Send(&c.req)
}

func (c *ephemeralConn) recv() (event, error) {
	resp, err := c.stream.Recv()
	if err != nil {
		return event{}, err
	}
	return ephemeralEvent(resp)
}

// ephemeralEvent turns one response after create_stream into an event. A
// negative durability_ack_up_to_offset, an invalid or negative
// close_stream_signal duration, and any other payload are protocol
// violations.
func ephemeralEvent(resp *zerobuspb.EphemeralStreamResponse) (event, error) {
	switch p := resp.Payload.(type) {
	case *zerobuspb.EphemeralStreamResponse_IngestRecordResponse:
		if p.IngestRecordResponse.DurabilityAckUpToOffset == nil {
			return event{}, protocolError("ingest_record_response without durability_ack_up_to_offset")
		}
		off := p.IngestRecordResponse.GetDurabilityAckUpToOffset()
		if off < 0 {
			return event{}, protocolError("ingest_record_response.durability_ack_up_to_offset %d is negative", off)
		}
		return event{ack: off, hasAck: true}, nil
	case *zerobuspb.EphemeralStreamResponse_CloseStreamSignal:
		d := p.CloseStreamSignal.GetDuration()
		if d != nil {
			if err := d.CheckValid(); err != nil {
				return event{}, protocolError("close_stream_signal.duration: %v", err)
			}
		}
		after := d.AsDuration()
		if after < 0 {
			return event{}, protocolError("close_stream_signal.duration %v is negative", after)
		}
		return event{close: true, closeAfter: min(after, flightwire.MaxCloseAfter)}, nil
	default:
		return event{}, protocolError("unexpected response %T", resp.GetPayload())
	}
}

func (c *ephemeralConn) abort()  { c.cancel() }
func (c *ephemeralConn) finish() {}
