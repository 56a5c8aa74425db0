// Package flight is thalweg's Arrow Flight client: the sink — one
// long-lived DoPut stream per lane that sends record batches
// fire-and-forget and turns the server's cumulative durable
// acknowledgements into a watermark the lane waits on — and the reader that
// gets stored batches back by DoGet (Get, ReadAll with a Ticket) and
// Rebuild, the pipeline's rebuild from the raw anchor. *Sink satisfies
// lanes.Transport and Rebuild's result pipeline.RebuildFunc structurally;
// this package imports nothing of thalweg but batch (and internal wire and
// bearer-token helpers). The durable server side is flight/receiver.
//
// # Wire encoding
//
// Both sides of thalweg speak this encoding; any Flight peer that follows it
// interoperates (the tests use pyarrow on both sides).
//
// DoPut, client to server:
//
//   - The first FlightData carries the IPC schema message and a PATH
//     FlightDescriptor; the path names the dataset. It carries no
//     app_metadata.
//
//   - Every following FlightData carries one IPC record batch message and
//     app_metadata, a JSON object:
//
//     {"offset_id":N, "spans":[{"partition":P,"first":F,"last":L},...]}
//
//     offset_id (uint64, required) is the lane's logical offset: strictly
//     increasing within one DoPut stream, not necessarily starting at 0 nor
//     contiguous. spans (optional; pyarrow clients may omit it) are the
//     batch's batch.OffsetSpans: inclusive per-partition seq ranges.
//     Unknown fields are ignored.
//
//   - A batch whose encoding exceeds the gRPC message limit is split by rows
//     (RecordBatch.NewSlice) into n consecutive messages that share
//     offset_id and spans and add "part":i,"parts":n (i = 0..n-1). The
//     receiver acknowledges offset_id only when all n parts are durable;
//     a stream that ends inside a split batch has it discarded.
//
//   - One stream carries one schema. A batch with another schema needs a new
//     stream (Send fails with ErrSchemaChanged); dictionary-encoded fields
//     are not supported.
//
// DoPut, server to client: PutResult.app_metadata is a JSON object
//
//	{"ack_up_to_offset":N, "ack_up_to_records":R}
//
// meaning that every batch sent on this stream with offset_id <= N is
// durable, and R rows of this stream are durable in total. Acks are
// cumulative and monotonic, so a server may coalesce them: one ack after a
// group fsync covers every batch it made durable. A negative
// ack_up_to_offset (the Zerobus "ready" ack) is tolerated and ignored. The
// field names are those of the Zerobus Arrow Flight variant.
//
// Authentication is a bearer token in the "authorization" request metadata.
//
// # Stream lifecycle and errors
//
// Dial opens the stream; Send writes and returns once gRPC accepted the
// message (bounded by HTTP/2 flow control, never by acks); a reader
// goroutine consumes PutResults. WaitDurable waits for the watermark. Every
// failure that ends the stream — the server ending it (any status or EOF),
// a malformed ack, the ack timeout, a schema change, offset disorder — is
// recorded once as the stream's terminal *Error, which is permanent: the
// lane poisons, Closes the Sink, and its supervisor Dials a new one and
// replays what was not confirmed. The ack timeout measures silence: it
// fires when batches are outstanding and the watermark has not moved for
// AckTimeout, so a server that stays connected but stops acknowledging is
// detected however slowly it acknowledged before.
package flight
