package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/thalweg/thalweg/internal/limits"
	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

// EphemeralStream implements the Zerobus ingest RPC. Every violation ends
// the stream with a status naming the offending field: InvalidArgument for
// malformed requests and records, Unauthenticated for the token, NotFound
// for unknown tables, Unimplemented for AVRO streams.
func (s *Server) EphemeralStream(stream zerobuspb.Zerobus_EphemeralStreamServer) error {
	ctx := stream.Context()
	table, err := s.authorize(ctx)
	if err != nil {
		return err
	}
	// Clients (tonic) may wait for the response headers before they send
	// create_stream: send them now.
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	req, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return nil // the client closed without creating a stream
	}
	if err != nil {
		return err
	}
	cs := req.GetCreateStream()
	if cs == nil {
		return status.Error(codes.InvalidArgument, "first message must be create_stream")
	}
	if cs.TableName == nil || cs.GetTableName() == "" {
		return status.Error(codes.InvalidArgument, "create_stream.table_name is required")
	}
	if cs.GetTableName() != table {
		return status.Errorf(codes.InvalidArgument, "create_stream.table_name %q does not match the %s header %q", cs.GetTableName(), HeaderTableName, table)
	}
	dec, err := newRecordDecoder(cs)
	if err != nil {
		return err
	}
	t, err := s.openTable(table)
	if err != nil {
		return err
	}
	if err := dec.bind(t, table, s.opts.Logger); err != nil {
		return err
	}
	ss := s.newSession(t)
	s.opts.Logger.Info("zerobus server: stream opened", "stream", ss.id, "table", table, "record_type", dec.kind.String())
	hello := func() error {
		return stream.Send(&zerobuspb.EphemeralStreamResponse{
			Payload: &zerobuspb.EphemeralStreamResponse_CreateStreamResponse{
				CreateStreamResponse: &zerobuspb.CreateIngestStreamResponse{StreamId: &ss.id},
			},
		})
	}
	return ss.serve(ctx, hello, ephemeralAcker{stream}, func() error { return s.receiveEphemeral(ss, stream, dec) })
}

// receiveEphemeral stores every ingest message until the client half-closes
// (io.EOF) or something is wrong (a status error).
func (s *Server) receiveEphemeral(ss *session, stream zerobuspb.Zerobus_EphemeralStreamServer, dec *recordDecoder) error {
	next := int64(0)
	var records uint64
	for {
		req, err := stream.Recv()
		if err != nil {
			return err
		}
		// Bound what decoding the message takes before decoding it.
		cost, err := dec.cost(req, s.opts.MaxDecodedRecordBytes)
		if err != nil {
			return err
		}
		release, err := ss.decoding(cost)
		if err != nil {
			return err
		}
		err = s.ingest(ss, req, dec, &next, &records)
		release()
		if err != nil {
			return err
		}
		if s.dropNow(int(records)) {
			s.opts.Logger.Info("zerobus server: dropping stream (fault injection)", "stream", ss.id, "records", records)
			return status.Errorf(codes.Unavailable, "fault injection: stream dropped after %d records", records)
		}
	}
}

// ingest decodes and stores one request of an EphemeralStream; next and
// records are the stream's expected offset_id and record count so far.
func (s *Server) ingest(ss *session, req *zerobuspb.EphemeralStreamRequest, dec *recordDecoder, next *int64, records *uint64) error {
	var (
		off   *int64
		lines [][]byte
		err   error
	)
	switch p := req.Payload.(type) {
	case *zerobuspb.EphemeralStreamRequest_IngestRecord:
		off = p.IngestRecord.OffsetId
		line, err := dec.single(p.IngestRecord)
		if err != nil {
			return err
		}
		lines = [][]byte{line}
	case *zerobuspb.EphemeralStreamRequest_IngestRecordBatch:
		off = p.IngestRecordBatch.OffsetId
		if lines, err = dec.batch(p.IngestRecordBatch); err != nil {
			return err
		}
	case *zerobuspb.EphemeralStreamRequest_CreateStream:
		return status.Error(codes.InvalidArgument, "create_stream sent twice on one stream")
	default:
		return status.Error(codes.InvalidArgument, "empty request: payload is not set")
	}
	if off == nil {
		return status.Error(codes.InvalidArgument, "offset_id is required")
	}
	if *off != *next {
		return status.Errorf(codes.InvalidArgument, "offset_id %d out of sequence: want %d", *off, *next)
	}
	*next++
	*records += uint64(len(lines))
	return ss.store(lines, *off, *records)
}

type ephemeralAcker struct {
	stream zerobuspb.Zerobus_EphemeralStreamServer
}

func (a ephemeralAcker) ack(offset int64, _ uint64) error {
	return a.stream.Send(&zerobuspb.EphemeralStreamResponse{
		Payload: &zerobuspb.EphemeralStreamResponse_IngestRecordResponse{
			IngestRecordResponse: &zerobuspb.IngestRecordResponse{DurabilityAckUpToOffset: &offset},
		},
	})
}

func (a ephemeralAcker) closeSignal(grace time.Duration, _ int64, _ uint64) error {
	return a.stream.Send(&zerobuspb.EphemeralStreamResponse{
		Payload: &zerobuspb.EphemeralStreamResponse_CloseStreamSignal{
			CloseStreamSignal: &zerobuspb.CloseStreamSignal{Duration: durationpb.New(grace)},
		},
	})
}

// recordDecoder validates and converts the records of one stream into the
// JSON lines the table stores.
type recordDecoder struct {
	kind  zerobuspb.RecordType
	proto *protoRows   // for PROTO streams
	json  *jsonChecker // for JSON streams, once bound to the table
}

// bind checks the stream's declared schema against the table's (see
// tableSchemas): the descriptor of a PROTO stream at once, the fields of a
// JSON stream's records as they come.
func (d *recordDecoder) bind(t *table, name string, log *slog.Logger) error {
	switch d.kind {
	case zerobuspb.RecordType_PROTO:
		if err := t.schemas.mergeProto(d.proto.md); err != nil {
			return refusal(log, name, "", err)
		}
	case zerobuspb.RecordType_JSON:
		c, err := t.schemas.newJSONChecker(log, name)
		if err != nil {
			return err
		}
		d.json = c
	}
	return nil
}

// jsonRecord is jsonLine plus the table's JSON field kinds check, in one
// pass (jsonChecker.line).
func (d *recordDecoder) jsonRecord(rec []byte, field string) ([]byte, error) {
	if d.json != nil {
		return d.json.line(rec, field)
	}
	return jsonLine(rec, field)
}

func newRecordDecoder(cs *zerobuspb.CreateIngestStreamRequest) (*recordDecoder, error) {
	kind := zerobuspb.RecordType_PROTO // the service's default when absent
	if cs.RecordType != nil {
		kind = cs.GetRecordType()
	}
	d := &recordDecoder{kind: kind}
	switch kind {
	case zerobuspb.RecordType_JSON:
	case zerobuspb.RecordType_PROTO:
		if len(cs.GetDescriptorProto()) == 0 {
			return nil, status.Error(codes.InvalidArgument, "create_stream.descriptor_proto is required for record_type PROTO")
		}
		pr, err := newProtoRows(cs.GetDescriptorProto())
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "create_stream.descriptor_proto: %v", err)
		}
		d.proto = pr
	case zerobuspb.RecordType_AVRO:
		return nil, status.Error(codes.Unimplemented, "create_stream.record_type AVRO is not supported by this server")
	case zerobuspb.RecordType_RECORD_TYPE_UNSPECIFIED:
		return nil, status.Error(codes.InvalidArgument, "create_stream.record_type must not be RECORD_TYPE_UNSPECIFIED")
	default:
		return nil, status.Errorf(codes.InvalidArgument, "create_stream.record_type %d is unknown", int32(kind))
	}
	return d, nil
}

func (d *recordDecoder) single(r *zerobuspb.IngestRecordRequest) ([]byte, error) {
	switch rec := r.Record.(type) {
	case *zerobuspb.IngestRecordRequest_JsonRecord:
		if d.kind != zerobuspb.RecordType_JSON {
			return nil, status.Errorf(codes.InvalidArgument, "ingest_record.json_record on a %s stream", d.kind)
		}
		return d.jsonRecord([]byte(rec.JsonRecord), "ingest_record.json_record")
	case *zerobuspb.IngestRecordRequest_ProtoEncodedRecord:
		if d.kind != zerobuspb.RecordType_PROTO {
			return nil, status.Errorf(codes.InvalidArgument, "ingest_record.proto_encoded_record on a %s stream", d.kind)
		}
		return d.proto.line(rec.ProtoEncodedRecord, "ingest_record.proto_encoded_record")
	case *zerobuspb.IngestRecordRequest_AvroEncodedRecord:
		return nil, status.Errorf(codes.InvalidArgument, "ingest_record.avro_encoded_record on a %s stream", d.kind)
	default:
		return nil, status.Error(codes.InvalidArgument, "ingest_record: record is not set")
	}
}

func (d *recordDecoder) batch(r *zerobuspb.IngestRecordBatchRequest) ([][]byte, error) {
	var lines [][]byte
	switch b := r.Batch.(type) {
	case *zerobuspb.IngestRecordBatchRequest_JsonBatch:
		if d.kind != zerobuspb.RecordType_JSON {
			return nil, status.Errorf(codes.InvalidArgument, "ingest_record_batch.json_batch on a %s stream", d.kind)
		}
		recs := b.JsonBatch.GetRecords()
		if len(recs) == 0 {
			return nil, status.Error(codes.InvalidArgument, "ingest_record_batch.json_batch.records is empty")
		}
		lines = make([][]byte, len(recs))
		for i, rec := range recs {
			l, err := d.jsonRecord([]byte(rec), fmt.Sprintf("ingest_record_batch.json_batch.records[%d]", i))
			if err != nil {
				return nil, err
			}
			lines[i] = l
		}
	case *zerobuspb.IngestRecordBatchRequest_ProtoEncodedBatch:
		if d.kind != zerobuspb.RecordType_PROTO {
			return nil, status.Errorf(codes.InvalidArgument, "ingest_record_batch.proto_encoded_batch on a %s stream", d.kind)
		}
		recs := b.ProtoEncodedBatch.GetRecords()
		if len(recs) == 0 {
			return nil, status.Error(codes.InvalidArgument, "ingest_record_batch.proto_encoded_batch.records is empty")
		}
		lines = make([][]byte, len(recs))
		for i, rec := range recs {
			l, err := d.proto.line(rec, fmt.Sprintf("ingest_record_batch.proto_encoded_batch.records[%d]", i))
			if err != nil {
				return nil, err
			}
			lines[i] = l
		}
	case *zerobuspb.IngestRecordBatchRequest_AvroBatch:
		return nil, status.Errorf(codes.InvalidArgument, "ingest_record_batch.avro_batch on a %s stream", d.kind)
	default:
		return nil, status.Error(codes.InvalidArgument, "ingest_record_batch: batch is not set")
	}
	return lines, nil
}

// cost estimates the memory decoding req's records takes, checking each
// record against maxRecord (InvalidArgument naming the record). Records of
// the wrong type cost nothing here: decoding rejects them.
func (d *recordDecoder) cost(req *zerobuspb.EphemeralStreamRequest, maxRecord int64) (int64, error) {
	var total int64
	one := func(field string, json string, proto []byte) error {
		var c int64
		switch {
		case d.kind == zerobuspb.RecordType_JSON:
			// The record, and its compacted copy when it spans lines.
			c = 2*int64(len(json)) + limits.RowOverhead
		case d.kind == zerobuspb.RecordType_PROTO && proto != nil:
			var err error
			if c, err = d.proto.cost(proto, field); err != nil {
				return err
			}
		}
		if c > maxRecord {
			return status.Errorf(codes.InvalidArgument,
				"%s: decoding would take about %d bytes, above the per-record limit MaxDecodedRecordBytes %d", field, c, maxRecord)
		}
		total += c
		return nil
	}
	switch p := req.Payload.(type) {
	case *zerobuspb.EphemeralStreamRequest_IngestRecord:
		f := "ingest_record.proto_encoded_record"
		if d.kind == zerobuspb.RecordType_JSON {
			f = "ingest_record.json_record"
		}
		if err := one(f, p.IngestRecord.GetJsonRecord(), p.IngestRecord.GetProtoEncodedRecord()); err != nil {
			return 0, err
		}
	case *zerobuspb.EphemeralStreamRequest_IngestRecordBatch:
		for i, r := range p.IngestRecordBatch.GetJsonBatch().GetRecords() {
			if err := one(fmt.Sprintf("ingest_record_batch.json_batch.records[%d]", i), r, nil); err != nil {
				return 0, err
			}
		}
		for i, r := range p.IngestRecordBatch.GetProtoEncodedBatch().GetRecords() {
			if err := one(fmt.Sprintf("ingest_record_batch.proto_encoded_batch.records[%d]", i), "", r); err != nil {
				return 0, err
			}
		}
	}
	return total, nil
}

// jsonLine checks that rec is one JSON object in valid UTF-8 and returns it
// on one line.
func jsonLine(rec []byte, field string) ([]byte, error) {
	if !utf8.Valid(rec) {
		return nil, status.Errorf(codes.InvalidArgument, "%s: invalid UTF-8", field)
	}
	if !json.Valid(rec) {
		var v any
		err := json.Unmarshal(rec, &v) // for the message only
		return nil, status.Errorf(codes.InvalidArgument, "%s: invalid JSON: %v", field, err)
	}
	rec = bytes.TrimSpace(rec)
	if len(rec) == 0 || rec[0] != '{' {
		return nil, status.Errorf(codes.InvalidArgument, "%s: a record must be a JSON object", field)
	}
	if bytes.ContainsAny(rec, "\n\r") {
		var buf bytes.Buffer
		_ = json.Compact(&buf, rec) // valid JSON: cannot fail
		rec = buf.Bytes()
	}
	return rec, nil
}
