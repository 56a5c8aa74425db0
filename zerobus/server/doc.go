// Package server is a Zerobus-compatible ingest server (thalweg
// zerobus-server): the EphemeralStream gRPC service of package
// databricks.zerobus and its Arrow Flight DoPut variant, on one endpoint.
// The official databricks-zerobus-ingest-sdk works against it (see
// TestOfficialSDKInterop) as does thalweg's own sink.
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
// rule. JSON records must be JSON objects; PROTO records must decode with the
// descriptor. Any violation ends the stream with InvalidArgument and a
// message naming the field; messages above Options.MaxMessageBytes end it
// with ResourceExhausted.
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
// a restart is needed (internal/diskstatus).
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
