package receiver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/diskstatus"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/ipcguard"
	"github.com/thalweg/thalweg/internal/limits"
	"github.com/thalweg/thalweg/internal/schemaevo"
)

// putReader feeds the DoPut stream to an ipc.Reader and keeps the raw
// FlightData of the latest message, which is what gets stored.
type putReader struct {
	stream flight.FlightService_DoPutServer
	// first is the schema message, kept (never released) for the
	// stream's life; last is the latest message, whose reference put
	// holds until it stored or refused the batch.
	first    *flightwire.ReceivedData
	last     *flightwire.ReceivedData
	n        int
	recvErr  error // transport failure (not io.EOF)
	protoErr error // malformed message
	limitErr error // a limit refused the message (a status)

	budget   *limits.StreamBudget
	maxCost  int64 // Options.MaxDecodedMessageBytes
	decoding int64 // budget held for the latest message's decoding
}

// releaseDecoding gives back the decode reservation of the latest message:
// arrow-go's reader releases a batch before it asks for the next message,
// and DoPut keeps only the raw bytes.
func (r *putReader) releaseDecoding() {
	r.budget.Release(r.decoding)
	r.decoding = 0
}

func (r *putReader) Retain()  {}
func (r *putReader) Release() {}

func (r *putReader) Message() (msg *ipc.Message, err error) {
	r.releaseDecoding()
	fd := new(flightwire.ReceivedData)
	err = r.stream.RecvMsg(fd)
	if err != nil {
		if !errors.Is(err, io.EOF) {
			r.recvErr = err
		}
		return nil, err
	}
	r.n++
	if r.first == nil {
		r.first = fd
	}
	r.last = fd
	if len(fd.DataHeader) == 0 {
		r.protoErr = fmt.Errorf("message %d carries no IPC header (metadata-only FlightData is not accepted)", r.n)
		return nil, r.protoErr
	}
	defer func() {
		if p := recover(); p != nil {
			r.protoErr = fmt.Errorf("message %d: garbled IPC header: %v", r.n, p)
			msg, err = nil, r.protoErr
		}
	}()
	// arrow-go trusts the counts a header declares; check them first so a
	// hostile header is an InvalidArgument, not a fatal out-of-memory.
	if err := ipcguard.CheckMessage(fd.DataHeader, len(fd.DataBody)); err != nil {
		r.protoErr = fmt.Errorf("message %d: %w", r.n, err)
		return nil, r.protoErr
	}
	msg = ipc.NewMessage(memory.NewBufferBytes(fd.DataHeader), memory.NewBufferBytes(fd.DataBody))
	want := ipc.MessageRecordBatch
	if r.n == 1 {
		want = ipc.MessageSchema
	}
	if got := msg.Type(); got != want {
		r.protoErr = fmt.Errorf("message %d is a %v message, want %v", r.n, got, want)
		return nil, r.protoErr
	}
	if bl := msg.BodyLen(); bl != int64(len(fd.DataBody)) {
		r.protoErr = fmt.Errorf("message %d: header declares a %d-byte body, FlightData has %d bytes", r.n, bl, len(fd.DataBody))
		return nil, r.protoErr
	}
	if want == ipc.MessageRecordBatch {
		// Bound what decoding may allocate (decompressed buffers, rows)
		// before the reader allocates any of it.
		cost, err := r.budget.ReserveMessage(fd.DataHeader, fd.DataBody, r.maxCost)
		if err != nil {
			r.limitErr = status.Errorf(status.Code(err), "message %d: %s", r.n, status.Convert(err).Message())
			return nil, r.limitErr
		}
		r.decoding = cost
	}
	return msg, nil
}

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// DoPut stores the stream's batches and acknowledges them cumulatively once
// durable. See the package documentation for the protocol.
//
// The stream is served by put on its own goroutine, so that the handler can
// end the stream while put is blocked receiving: when an acknowledgement is
// not taken by the client within Options.AckSendTimeout, the handler returns
// the acker's status and gRPC cancels the stream's context, which ends
// put's Recv and the blocked Send.
func (s *Server) DoPut(stream flight.FlightService_DoPutServer) error {
	stalled := make(chan error, 1)
	done := make(chan error, 1)
	s.puts.Add(1)
	go func() {
		defer s.puts.Done()
		done <- s.put(stream, stalled)
	}()
	select {
	case err := <-done:
		return err
	case err := <-stalled:
		s.opts.Logger.Warn("receiver: DoPut stream ended: the client does not read its acknowledgements",
			"peer", peerAddr(stream.Context()), "timeout", s.opts.AckSendTimeout)
		return err
	}
}

func (s *Server) put(stream flight.FlightService_DoPutServer, stalled chan<- error) (err error) {
	ctx := stream.Context()
	budget := limits.NewStreamBudget(&s.pending, s.opts.MaxStreamPendingBytes)
	pr := &putReader{stream: stream, budget: budget, maxCost: s.opts.MaxDecodedMessageBytes}
	defer pr.releaseDecoding()
	rdr, err := ipc.NewReaderFromMessageReader(pr, ipc.WithAllocator(s.decodeMem))
	if err != nil {
		switch {
		case pr.recvErr != nil:
			return pr.recvErr
		case pr.protoErr != nil:
			return invalid("%v", pr.protoErr)
		case pr.n == 0:
			return nil // the client closed without sending anything
		default:
			return invalid("first message: not a valid schema: %v", err)
		}
	}
	defer rdr.Release()

	desc := pr.first.GetFlightDescriptor()
	if desc == nil || desc.Type != flight.DescriptorPATH {
		return invalid("the first message must carry a PATH FlightDescriptor naming the dataset")
	}
	schema := rdr.Schema()
	if flightwire.HasDictionary(schema) {
		return invalid("dictionary-encoded fields are not supported")
	}
	ds, err := s.dataset(desc.Path, true)
	if err != nil {
		return err
	}
	claim, err := ds.claimSchema(schema, pr.first.DataHeader)
	if err != nil {
		if errors.Is(err, schemaevo.ErrIncompatible) {
			// Logged here, as the deferred log below is not set up yet: the
			// client may not show the status, and this line is then the
			// operator's only one naming the field (docs/operations.md).
			err = schemaRefused(desc.Path, err)
			ds.log.Warn("receiver: DoPut stream ended with an error", "peer", peerAddr(ctx), "err", err)
			return err
		}
		return diskstatus.Error("dataset storage", err)
	}
	log := ds.log.With("peer", peerAddr(ctx))

	ack := newAcker(ds, stream, budget, s.opts.AckSendTimeout, stalled)
	ackCtx, cancelAck := context.WithCancel(ctx)
	go ack.run(ackCtx)
	// reserved counts this stream's bytes taken from s.pending; the acker
	// gives back those of acknowledged batches, the rest is given back when
	// the stream ends (stored batches are no longer held in memory, and a
	// discarded split batch never will be).
	var reserved int64
	defer func() {
		<-ack.done
		budget.Release(reserved - ack.released.Load())
	}()
	defer func() {
		if err != nil {
			cancelAck()
			<-ack.done
			log.Warn("receiver: DoPut stream ended with an error", "err", err)
			return
		}
		ack.finish()
		<-ack.done
		cancelAck()
		err = ack.err
	}()

	var (
		last       uint64
		any        bool
		group      []pendingBatch
		groupBytes int64 // reserved bytes of group
		n          int
		records    uint64
	)
	for rdr.Next() {
		n++
		fd := pr.last
		rec := rdr.RecordBatch()
		m, err := flightwire.ParseBatchMeta(fd.AppMetadata)
		if err != nil {
			return invalid("batch %d: %v", n, err)
		}
		if err := ipcguard.ValidateBatch(rec); err != nil {
			return invalid("batch %d: %v", n, err)
		}
		size := int64(len(fd.DataHeader) + len(fd.DataBody))
		if err := budget.Reserve(size); err != nil {
			return status.Errorf(codes.ResourceExhausted, "batch %d: %s", n, status.Convert(err).Message())
		}
		reserved += size
		if len(group) > 0 {
			g := group[0]
			if m.OffsetID != g.offset || m.Parts != int(g.parts) || m.Part != len(group) {
				return invalid("batch %d: expected part %d of %d of offset %d, got part %d of %d of offset %d",
					n, len(group), g.parts, g.offset, m.Part, m.Parts, m.OffsetID)
			}
		} else {
			if any && m.OffsetID <= last {
				return invalid("batch %d: offset_id %d is not greater than the previous %d", n, m.OffsetID, last)
			}
			if m.Parts > 1 && m.Part != 0 {
				return invalid("batch %d: split batch offset %d starts at part %d", n, m.OffsetID, m.Part)
			}
		}
		groupBytes += size
		group = append(group, pendingBatch{
			meta: fd.DataHeader, body: fd.DataBody, ref: fd, rows: rec.NumRows(), offset: m.OffsetID,
			spans: m.Spans, part: int32(m.Part), parts: int32(m.Parts),
		})
		if m.Parts > 1 && m.Part < m.Parts-1 {
			continue
		}
		last, any = m.OffsetID, true
		var rows uint64
		for _, b := range group {
			rows += uint64(b.rows)
		}
		var ord *order
		if m.Ordered {
			ord = &order{schemaMsg: pr.first.DataHeader, mem: s.decodeMem}
		}
		res, err := ds.append(group, &claim, ord)
		if err != nil {
			if errors.Is(err, schemaevo.ErrIncompatible) {
				return schemaRefused(desc.Path, err) // another stream stored an incompatible schema first
			}
			if errors.Is(err, errFilter) {
				return status.Errorf(codes.Internal, "batch %d: %v", n, err)
			}
			return diskstatus.Error(fmt.Sprintf("storing batch %d", n), err)
		}
		// The messages are stored (append copied them or holds its own
		// references) or were stored before; rec, which aliases the last
		// one, is not read again. (On the error returns above, a message's
		// buffer is left to the garbage collector.)
		for _, b := range group {
			b.ref.Release()
		}
		s.count(res)
		// Rows not stored count as acknowledged: they are durable, stored
		// by an earlier batch (package flight documents ack_up_to_records).
		records += rows
		group = group[:0]
		ack.push(res.last, m.OffsetID, records, groupBytes)
		groupBytes = 0
		select {
		case <-ack.done:
			if ack.err != nil {
				return ack.err
			}
		default:
		}
	}
	switch {
	case pr.recvErr != nil:
		return pr.recvErr
	case pr.limitErr != nil:
		return pr.limitErr
	case pr.protoErr != nil:
		return invalid("%v", pr.protoErr)
	case rdr.Err() != nil:
		return invalid("batch %d: %v", n+1, rdr.Err())
	case len(group) > 0:
		return invalid("stream ended inside split batch offset %d: %d of %d parts received", group[0].offset, len(group), group[0].parts)
	}
	return nil
}

// schemaRefused is the status of a stream whose schema is incompatible
// with the dataset's: permanent (the stream will never be accepted as it
// is), naming the field, never the schemas.
func schemaRefused(path []string, err error) error {
	return invalid("dataset %q: %v", strings.Join(path, "/"), err)
}

func peerAddr(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}
