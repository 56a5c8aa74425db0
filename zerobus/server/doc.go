// Package server is a Zerobus-compatible ingest server (thalweg
// zerobus-server): the EphemeralStream gRPC service of package
// databricks.zerobus and its Arrow Flight DoPut variant, on one endpoint.
// The official databricks-zerobus-ingest-sdk works against it (see
// TestOfficialSDKInterop) as does thalweg's own sink.
//
// # Invariants
//
//   - Synced before acknowledged: every acknowledged record is in its
//     table, intact, after a SIGKILL at any moment ("Durability and acks";
//     TestSIGKILLNoMergedRecords).
//   - One record is one line: a torn last line is set aside before
//     anything is appended, never merged with a new record ("Recovery";
//     TestTornLastLineRepairedAtEveryOffset, TestZeroedTailRepaired).
//   - Budgets before decoding: a message's or record's decoded size is
//     bounded before it is decompressed or rendered ("Limits";
//     TestFlightDecodedSizeBounded, TestProtoCostBoundsDecoding).
//   - A failed write or sync leaves the table unwritable until restart,
//     reported once, with a status that says so
//     (TestWriteFailureReportedOnce, TestFullDiskEndsTheStreamWithResourceExhausted).
//
// # Validation
//
// Every stream must present the x-databricks-zerobus-table-name header (a
// catalog.schema.table name; NotFound when Options.Tables is set and does
// not list it) and, when Options.Token is set, "authorization: Bearer
// <token>" (compared in constant time; Unauthenticated otherwise). An
// EphemeralStream starts with create_stream (table_name equal to the
// header; record_type JSON, or PROTO with a DescriptorProto; AVRO is
// Unimplemented), then carries ingest messages whose offset_id counts 0, 1,
// 2, ...; Flight batches carry {"offset_id":N} in app_metadata with the same
// rule (the encoding of internal/flightwire, shared with the flight sink and
// receiver: other fields are ignored, but part/parts are refused since the
// variant numbers every message), and the acks are flightwire's too (ready
// signal, cumulative acks, close-stream). JSON records must be JSON objects; PROTO records must decode with the
// descriptor; JSON records and PROTO string fields must be valid UTF-8. Any
// violation ends the stream with InvalidArgument and a message naming the
// field; messages above Options.MaxMessageBytes end it with
// ResourceExhausted.
//
// # Proto descriptors
//
// A PROTO stream's descriptor_proto is the record message's DescriptorProto
// alone, as the official SDK sends it for a generated class: protoc's form,
// without the file, so without its package, with type names qualified by
// the package (".acme.orders.Order.Item"). The server recovers the package
// from those names and resolves nested messages, enums and map entries in
// it; names in no package (".Order.Item") and relative ones resolve as
// well. A type the descriptor does not hold (a sibling message of the
// .proto file, an imported type) cannot be decoded: create_stream ends with
// InvalidArgument naming the field. A proto3 message with explicit
// optional fields is read as proto3, any other as proto2 (the same wire
// form).
//
// # Schemas
//
// A table remembers, per record kind, the union of the schemas its streams
// brought (internal/schemaevo: fields matched by name; nullable fields may
// be added anywhere or left out; a kept field keeps its type; a type
// change or a non-nullable field added or removed is incompatible): the
// DescriptorProto of PROTO streams (a field is non-nullable only when
// proto2 required; field numbers do not count, records are stored by
// name), the Arrow schema of Flight streams, and for JSON streams the JSON
// kind (string, number, bool, object, array) of each top-level field of
// each record (null, and "NaN"/"Infinity"/"-Infinity", fit any kind; nested
// objects are not compared). A stream whose schema is incompatible is
// refused at create_stream (PROTO) or its schema message (Flight), a JSON
// record at its message, with InvalidArgument naming the field: `table
// "main.s.t": incompatible schema change: field "id": type int64 ->
// string`, and logged (WARN "stream refused: incompatible schema change",
// as some clients, such as the official SDK's Arrow variant, do not show
// the status). The unions are kept in <Dir>/<table>.schema.json, rewritten
// atomically when they grow, so the rules hold across restarts; a damaged
// file refuses the table's streams (Internal) until it is moved aside.
// Stored records stay as they were (JSON lines): records of every
// compatible schema read back with ReadTable.
//
// # Limits
//
// No message, stream or client can make the server allocate without bound
// (docs/operations.md, "Server limits", lists them with their defaults).
// Before a message is decoded, what it will take is estimated and checked:
// for a Flight batch, its buffers' decoded sizes (a compressed buffer's
// declared uncompressed length) plus 32 bytes per declared row; for an
// EphemeralStream message, each record's estimated decoded size (a PROTO
// record's from its wire form: a packed repeated int32 takes ~140× its size; a
// JSON record's length). A record over MaxDecodedRecordBytes or a message
// over MaxDecodedMessageBytes ends the stream with InvalidArgument; the
// estimate is reserved from the stream's MaxStreamPendingBytes and the
// server's MaxPendingBytes (ResourceExhausted) until the records are
// stored. Flight batches are validated in full (offsets, lengths, UTF-8)
// before their rows are rendered, and rendering is bounded by
// MaxDecodedMessageBytes too; JSON records and PROTO string fields must be
// valid UTF-8 (InvalidArgument). An acknowledgement the client does not
// read within AckSendTimeout ends the stream with DeadlineExceeded and
// gives back its budget. Streams per client host (MaxStreamsPerPeer),
// connections (MaxConnections) and idle connections (MaxConnectionIdle)
// are bounded as in package flight/receiver.
//
// # Durability and acks
//
// Records are appended to <Dir>/<table>.jsonl, one JSON object per line
// (Flight rows and PROTO records are rendered as JSON by the same rules as
// the sink's JSON encoding). A sync loop fsyncs dirty tables every
// Options.SyncInterval; only then does each stream's ack loop acknowledge,
// cumulatively, the highest offset whose records are synced. ReadTable
// returns what is stored. A failed write or sync makes the table unwritable
// until restart; its streams end with ResourceExhausted when the disk is
// full (free space, then restart) and Internal otherwise, the message saying
// a restart is needed (internal/diskstatus); a new stream on that table is
// refused at once with the same status, without a session or a log line.
//
// # Recovery
//
// A write interrupted by a kill, a crash or a full disk can leave a table
// file ending in a torn line: part of a record, never synced, so never
// acknowledged. New repairs every table file before anything is appended:
// the bytes after the last newline, with any complete lines just before
// them that are not JSON (a power loss can leave unsynced blocks as zeros;
// the first valid line ends the search, so no record is moved), are copied
// durably (internal/atomicfile: a temporary file, synced, renamed, the
// directory synced) to
// <Dir>/quarantine/<table>.jsonl.<from>-<to>.torn, cut from the file, and
// the repair is logged (warning). One record is therefore always one line:
// a new record is never merged into a torn one.
//
// # Goroutines
//
// Each stream has a receive goroutine (decode, validate, append) and runs its
// ack loop on the handler goroutine, the only sender after setup. Stop ends
// every stream, waits for all of them, then syncs and closes the files.
//
// # Fault injection
//
// RotateEvery sends a close-stream signal (EphemeralStream close_stream_signal,
// Flight close_stream_duration_ms) and ends the stream RotateGrace later;
// AckDelay holds acks back; DropStreamAfter aborts streams with Unavailable
// after that many records without acknowledging the last ones.
package server
