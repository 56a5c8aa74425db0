// Package flight is thalweg's Arrow Flight client: the sink — one
// long-lived DoPut stream per lane (a new one when the batch schema
// changes) that sends record batches fire-and-forget and turns the server's
// cumulative durable acknowledgements into a watermark the lane waits on —
// and the reader that gets stored batches back by DoGet (Get, ReadAll with
// a Ticket) and Rebuild, the pipeline's rebuild from the raw anchor, and
// Positions, the anchor's highest stored seq per partition. *Sink
// satisfies lanes.Transport and Rebuild's result pipeline.RebuildFunc
// structurally; this package imports nothing of thalweg but batch and
// internal packages (internal/flightwire: the wire encoding it shares with
// the receiver and Zerobus; internal/bearer). The durable server side is
// flight/receiver.
//
// # Invariants
//
//   - The watermark moves only with the server's durable acknowledgements,
//     over every stream of the Sink, a schema change included
//     (TestSinkDeliversEverything, TestSchemaChangeStartsNewStream).
//   - A dead stream is one terminal, permanent error, and silence with
//     batches outstanding ends it after AckTimeout ("Stream lifecycle and
//     errors"; TestStreamDeathIsPermanent, TestAckTimeoutDetectsSilentServer).
//   - The wire bytes are arrow-go's Flight writer's, byte for byte, and
//     after Close the allocator holds nothing of the Sink's ("The
//     transport's copies and memory ownership";
//     TestSinkWireBytesAreFlightWriterBytes).
//   - Close returns within Options.CloseTimeout against a server whose
//     handler never reads, answers or returns
//     (TestCloseBoundedWhenServerHangs).
//
// # Wire encoding
//
// Every thalweg Flight speaker — this sink, flight/receiver, the Zerobus
// sink's Flight mode and the Zerobus server's Flight endpoint — speaks this
// encoding through one implementation, internal/flightwire; any Flight peer
// that follows it interoperates (the tests use pyarrow on both sides).
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
//     {"offset_id":N, "ordered":true, "spans":[{"partition":"P","first":F,"last":L},...]}
//
//     offset_id (uint64, required) is the lane's logical offset: strictly
//     increasing within one DoPut stream, not necessarily starting at 0 nor
//     contiguous. spans (optional; pyarrow clients may omit it) are the
//     batch's batch.OffsetSpans: inclusive seq ranges of one partition
//     each, the partition a JSON string naming it as batch.Record.Partition
//     does (for Pulsar the topic-partition,
//     "persistent://public/default/orders-partition-2"), seqs its global
//     positions (for Pulsar the broker's entry index plus one), so a range
//     means the same records whichever worker sent it. ordered (bool,
//     optional, sent only when true: Options.Ordered) says the batch comes
//     from an ordered subscription (Exclusive, Failover), where a record at
//     or below a partition's highest stored seq has been stored already: the
//     server may then acknowledge such rows without storing them again
//     (idempotent append, see Positions and idempotent append below).
//     Absent or false: store every row. Unknown fields are ignored.
//
//   - A batch whose encoding exceeds the gRPC message limit is split by rows
//     (RecordBatch.NewSlice) into n consecutive messages that share
//     offset_id and spans and add "part":i,"parts":n (i = 0..n-1). The
//     receiver acknowledges offset_id only when all n parts are durable;
//     a stream that ends inside a split batch has it discarded.
//
//   - One stream carries one schema. A batch with another schema goes on a
//     new DoPut stream of the same Sink and connection: the sink half-closes
//     the old stream, waits until the server has acknowledged everything
//     sent on it and ended it, and opens the new one with the new schema
//     message. offset_ids keep increasing across the streams (they are the
//     lane's), so the server sees the old schema's batches stored before the
//     new schema's; whether it accepts the changed schema for the dataset is
//     its rule (flight/receiver documents its own). Dictionary-encoded
//     fields are not supported.
//
//   - A dataset may change its schema from one stream to the next when the
//     change is compatible (internal/schemaevo): fields are matched by name
//     at every level of nesting; fields may be added anywhere if nullable,
//     and nullable fields may be left out; a kept field keeps its type
//     (its nullability may change). A type change, a non-nullable field
//     added or removed, or two fields of one name end the stream at its
//     schema with InvalidArgument and a short message naming the field:
//     `dataset "raw": incompatible schema change: field "amount": type
//     int64 -> float64`. Metadata never counts. Such a refusal is
//     permanent: the same stream will never be accepted.
//
// DoPut, server to client: PutResult.app_metadata is a JSON object
//
//	{"ack_up_to_offset":N, "ack_up_to_records":R}
//
// meaning that every batch sent on this stream with offset_id <= N is
// durable, and R rows of this stream are durable in total (rows of an
// ordered batch that the server did not store again because it held them
// already count: they are durable). Acks are
// cumulative and monotonic, so a server may coalesce them: one ack after a
// group fsync covers every batch it made durable. An ack_up_to_offset of -1
// (the Zerobus "ready" ack) is tolerated and ignored, as is a Zerobus
// close_stream_duration_ms; unknown fields are ignored. The field names are
// those of the Zerobus Arrow Flight variant.
//
// A server must send this ack, and only once the batches are durable: a
// generic Flight server that answers with empty PutResults (receipt, not
// durability) or with JSON of its own gives the sink nothing to advance
// the watermark by. The first such PutResult ends the stream with one
// permanent ErrBadAck that says what the server must send.
//
// DoGet, server to client (flight/receiver): the ticket is the JSON
// flight.Ticket; every FlightData after the schema carries one stored
// batch and app_metadata {"position":i,"offset_id":N,"spans":[...]} (plus
// "part"/"parts" for split batches). An Arrow IPC stream has one schema, so
// a DoGet stream serves the selected batches of one schema only: from the
// first selected batch, those that share its schema, stopping before the
// first selected batch of another schema. The last batch served then also
// carries "next":P, the position of that batch; the same ticket with
// "from":P serves the next run. Get follows "next" and returns
// every batch with its own schema. GetFlightInfo/ListFlights give a dataset
// of one schema one endpoint (ticket {"path":[...]}), and a dataset of
// several one endpoint per run of positions with one schema (ticket
// {"path":[...],"from":a,"to":b}), in stored order; FlightInfo.schema is
// the latest schema, app_metadata "schemas" counts them. A plain Flight
// client (pyarrow) reads every batch by reading every endpoint; the tables
// concatenate into the merged schema (pyarrow.concat_tables with
// promote_options="default").
//
// Authentication is a bearer token in the "authorization" request metadata.
//
// # Positions and idempotent append
//
// A server that stores batches durably (flight/receiver) keeps, per dataset
// and partition name, the highest seq of the rows it stored (the Last of
// their spans), synced with those rows: after a crash it reports exactly
// what it kept. It serves them through one Flight call, which a third-party
// server can offer too:
//
//   - DoAction with Action.type "positions" and Action.body the JSON object
//     {"path":["<element>",...]}, the dataset's descriptor path (the DoPut
//     PATH descriptor). Unknown fields in the body, a missing, empty or
//     malformed path, or trailing data: InvalidArgument.
//
//   - The server answers exactly one Result whose body is the JSON object
//
//     {"positions":[{"partition":"<name>","seq":N},...]}
//
//     one element per partition that has stored rows, each partition once
//     (flight/receiver sorts them by name), seq (uint64) the highest seq
//     stored, counting only what is durable. A dataset that does not exist
//     or holds no spans answers {"positions":[]}, not an error.
//
//   - ListActions lists an ActionType with type "positions".
//
//   - A server without the call answers DoAction "positions" with
//     Unimplemented (what arrow-go's and pyarrow's base servers do); the
//     client, Positions, then returns an error wrapping ErrNoPositions,
//     which callers take as "the anchor cannot say".
//
// For a batch whose app_metadata says "ordered":true, the server does not
// store rows whose seq is at or below the stored position of their
// partition; it still acknowledges the batch (its offset_id, and its rows
// in ack_up_to_records), once what holds those rows is durable. The
// decision is taken from the spans when every span lies above its
// partition's position (stored as sent) or every span at or below it
// (nothing stored). A batch that overlaps a position is filtered row by
// row by its identity columns: topic (utf8), partition (int32, -1 when the
// topic is not partitioned) and seq (uint64) of the raw schema, or
// _topic/_partition/_seq of JSON rows with metadata; a row's partition
// name is the topic, or "<topic>-partition-<partition>". Only the new rows
// are stored (re-encoded, uncompressed) with the spans narrowed to them.
// An ordered batch without spans is decided row by row the same way and
// stored with the spans of the rows it keeps. An overlapping batch, or
// one without spans, that has no identity columns cannot be checked: it
// is stored whole (and counted).
// The check and the append are atomic per dataset, across all its DoPut
// streams: a dead worker's stream and its successor's sending the same
// rows store them once. Batches without "ordered" are always stored whole;
// they advance the positions too (to the highest seq stored).
//
// # Stream lifecycle and errors
//
// Dial opens the stream; Send writes and returns once gRPC accepted the
// message (bounded by HTTP/2 flow control; by acks only at a schema change,
// above); a reader goroutine per stream consumes PutResults. WaitDurable
// waits for the watermark, one over every stream of the Sink
// (internal/flightwire.Watermark). Every failure that ends the stream — the
// server ending it (any status or EOF) or refusing a new schema, a
// malformed ack, the ack timeout, offset disorder — is recorded once as
// the Sink's terminal *Error, which is permanent: the
// lane poisons, Closes the Sink, and its supervisor Dials a new one and
// replays what was not confirmed. The ack timeout measures silence: it
// fires when batches are outstanding and the watermark has not moved for
// AckTimeout, so a server that stays connected but stops acknowledging is
// detected however slowly it acknowledged before.
//
// # The transport's copies and memory ownership
//
// The sink does not serialise a batch into one buffer. It encodes the IPC
// record batch message itself (internal/flightwire.EncodeBatch: arrow-go's
// IPC payload, the FlightData protobuf framing written by hand) and hands
// gRPC a message whose body is the batch's own Arrow buffers (pieces under
// 1 KiB, and the framing, are copied into one small pooled buffer), through
// a codec selected for the DoPut call (grpc.ForceCodecV2). grpc-go's HTTP/2
// writer copies those buffers into its connection write buffer (256 KiB)
// and writes that to the socket: between the Arrow buffers and the socket
// the body is copied once in user space. The bytes are exactly those of
// arrow-go's Flight writer and the standard proto codec.
//
// Ownership: Send returns once gRPC queued the message, before it is
// written. The message holds its own references to the batch's Arrow
// buffers (the IPC payload's), so the caller may release the batch when
// Send returns; gRPC releases the references once its writer copied the
// last byte, or when it drops the message with a failed stream. With an
// Allocator that tracks memory (memory.CheckedAllocator) the buffers are
// therefore counted a little past Send, and past the end of a failed
// stream until gRPC's goroutines let them go. grpc-go does not give back a
// message queued for a stream it has just cleaned up (a stream the server
// refused while the sink wrote), so the sink tracks every message and Close,
// once the connection is closed, releases those gRPC kept: after Close the
// allocator holds nothing of the Sink's. The stream is committed with its
// first message (no gRPC retry buffer), so nothing is kept for a
// transparent retry.
//
// Both ends use a gRPC buffer pool that does not zero buffers
// (flightwire.DirtyPool; gRPC's default zeroes a whole size class for
// every message), and flight/receiver decodes each FlightData in place over
// one copy of the message, in a pooled buffer it gives back once the batch
// is written (flightwire.ServerCodec, flightwire.ReceivedData), and writes
// large bodies to its segment files from there.
package flight
