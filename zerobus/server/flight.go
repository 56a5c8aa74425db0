package server

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/ipcguard"
	"github.com/thalweg/thalweg/internal/limits"
	"github.com/thalweg/thalweg/zerobus/internal/rowjson"
)

// flightService is the Arrow Flight variant of the ingest protocol: DoPut
// on the same endpoint with the same headers. The client's FlightData
// app_metadata is JSON {"offset_id":N} with N = 0, 1, 2, ... per call; the
// server's PutResult app_metadata is JSON {"ack_up_to_offset":N,
// "ack_up_to_records":R[,"close_stream_duration_ms":D]} where R counts the
// rows of every batch <= N. The first PutResult, sent once the headers are
// accepted, is the ready signal {"ack_up_to_offset":-1,"ack_up_to_records":0}.
// Both are internal/flightwire's encoding, the one every thalweg Flight
// speaker uses; unknown app_metadata fields are ignored, as there.
type flightService struct {
	flight.BaseFlightServer
	srv *Server
}

func (f *flightService) DoPut(stream flight.FlightService_DoPutServer) error {
	s := f.srv
	ctx := stream.Context()
	table, err := s.authorize(ctx)
	if err != nil {
		return err
	}
	t, err := s.openTable(table)
	if err != nil {
		return err
	}
	ss := s.newSession(t)
	s.opts.Logger.Info("zerobus server: flight stream opened", "stream", ss.id, "table", table)
	a := flightAcker{stream}
	return ss.serve(ctx, func() error { return a.ack(-1, 0) }, a, func() error { return s.receiveFlight(ss, table, stream) })
}

func (s *Server) receiveFlight(ss *session, table string, stream flight.FlightService_DoPutServer) error {
	g := &guardedReader{FlightService_DoPutServer: stream, budget: ss.budget, maxCost: s.opts.MaxDecodedMessageBytes}
	defer g.release()
	rdr, err := flight.NewRecordReader(g, ipc.WithAllocator(s.decodeMem))
	if err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return flightErr("reading the schema message", err)
	}
	defer rdr.Release()
	if d := rdr.LatestFlightDescriptor(); d != nil && len(d.Path) > 0 && strings.Join(d.Path, ".") != table {
		return status.Errorf(codes.InvalidArgument, "flight descriptor path %q does not match the %s header %q", strings.Join(d.Path, "."), HeaderTableName, table)
	}
	if err := ss.table.schemas.mergeArrow(rdr.Schema()); err != nil {
		return refusal(s.opts.Logger, table, "", err)
	}
	next := int64(0)
	var records uint64
	for rdr.Next() {
		rec := rdr.RecordBatch()
		meta, err := flightwire.ParseBatchMeta(rdr.LatestAppMetadata())
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "batch %d: %v", next, err)
		}
		if meta.Parts > 1 {
			return status.Errorf(codes.InvalidArgument, "batch %d: app_metadata part/parts: the Zerobus Flight variant numbers every message with its own offset_id", next)
		}
		if meta.OffsetID != uint64(next) {
			return status.Errorf(codes.InvalidArgument, "app_metadata.offset_id %d out of sequence: want %d", meta.OffsetID, next)
		}
		if err := ipcguard.ValidateBatch(rec); err != nil {
			return status.Errorf(codes.InvalidArgument, "batch %d: %v", next, err)
		}
		lines, err := renderRows(rec, s.opts.MaxDecodedMessageBytes)
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "batch %d: %v", next, err)
		}
		records += uint64(len(lines))
		if err := ss.store(lines, next, records); err != nil {
			return err
		}
		next++
		if s.dropNow(int(records)) {
			s.opts.Logger.Info("zerobus server: dropping flight stream (fault injection)", "stream", ss.id, "records", records)
			return status.Errorf(codes.Unavailable, "fault injection: stream dropped after %d records", records)
		}
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return flightErr("decoding Arrow IPC", err)
	}
	return io.EOF
}

// renderRows renders every row of rec as a JSON object, at most maxBytes
// in total (a row's JSON can be several times its Arrow size: escaped
// strings, numbers as text, field names repeated per row).
//
// The batch has passed ipcguard.ValidateBatch; a panic while reading it
// would still be contained to this batch and reported as malformed input:
// one client's bad batch must end its stream, not the server.
func renderRows(rec arrow.RecordBatch, maxBytes int64) (lines [][]byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			lines, err = nil, fmt.Errorf("malformed Arrow data: %v", p)
		}
	}()
	rows, err := rowjson.New(rec)
	if err != nil {
		return nil, err
	}
	// The row count was charged against the budget (limits.RowOverhead per
	// row) before the batch was decoded, so this slice is bounded.
	lines = make([][]byte, rows.NumRows())
	var total int64
	for i := range lines {
		lines[i] = rows.AppendRow(nil, i)
		if total += int64(len(lines[i])) + limits.RowOverhead; total > maxBytes {
			return nil, fmt.Errorf("rows %d..%d render to more than MaxDecodedMessageBytes %d bytes of JSON", 0, i, maxBytes)
		}
	}
	return lines, nil
}

// flightErr keeps the status of transport errors (the client went away)
// and reports anything else as malformed input.
func flightErr(what string, err error) error {
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		return err
	}
	return status.Errorf(codes.InvalidArgument, "%s: %v", what, err)
}

type flightAcker struct {
	stream flight.FlightService_DoPutServer
}

// ack sends a cumulative ack; offset -1 is the ready signal.
func (a flightAcker) ack(offset int64, records uint64) error {
	if offset < 0 {
		return a.stream.Send(&flight.PutResult{AppMetadata: flightwire.AppendReady(nil)})
	}
	return a.stream.Send(&flight.PutResult{AppMetadata: flightwire.AppendAck(nil, uint64(offset), records)})
}

func (a flightAcker) closeSignal(grace time.Duration, offset int64, records uint64) error {
	return a.stream.Send(&flight.PutResult{AppMetadata: flightwire.AppendCloseStream(nil, offset, records, grace)})
}
