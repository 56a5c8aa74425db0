// Package receiver is thalweg's durable Arrow Flight server (`thalweg
// receive`). It accepts DoPut streams in the encoding documented by package
// flight, appends every batch to Arrow IPC segment files, syncs them and only
// then acknowledges, cumulatively, per stream. DoGet replays stored batches
// by partition/seq range (for rebuilds from the raw anchor) or by stored
// position; ListFlights and GetFlightInfo describe datasets.
//
// # Storage layout
//
//	Dir/LOCK                       held while a Server runs
//	Dir/<name>/DATASET             {"version":1,"path":[...]}
//	Dir/<name>/00000001.arrows     Arrow IPC stream: schema message, then
//	                               record batch messages exactly as received
//	Dir/<name>/00000001.idx        one frame per stored batch
//
// <name> is the descriptor path with bytes outside [A-Za-z0-9_-] escaped as
// %XX and elements joined by '.'. A segment file is a valid Arrow IPC stream
// (without end-of-stream marker) that any Arrow implementation can read. An
// index frame is [u32 payload length][u32 CRC-32C of payload][JSON payload]
// with the batch's offset_id, spans, rows, byte position, header and body
// lengths and the CRC-32C of its framed message. Stored positions number
// the batches of a dataset from 0 across segments; they never change.
//
// # Durability
//
// All streams of a dataset append, under the dataset's lock, to its active
// segment; a committer goroutine per dataset syncs the segment and its index
// and publishes the durable count (group fsync: one sync covers every batch
// appended before it started). Each stream's ack goroutine sends one
// cumulative PutResult whenever the durable count passes more of its
// batches. Nothing is acknowledged or served before it is synced, and a
// batch is appended only after it decoded against the schema with valid
// metadata, so nothing half-written is ever acknowledged or served.
//
// A segment is sealed (synced, closed) before the next one is created, and
// a new segment's schema message and directory entry are synced before any
// batch goes into it. After a crash, therefore, only the last segment can
// have a torn tail: recovery verifies its index frames and message
// checksums, keeps the longest valid prefix (dropping a split batch that
// lost parts), rewrites the files to that prefix and starts a new segment.
// Every acknowledged batch was synced, so it is in that prefix.
//
// # Protocol violations
//
// A schema change mid-stream or against the dataset's schema, non-increasing
// offset_ids, missing or garbled app_metadata, malformed IPC messages and
// inconsistent split parts end the stream with InvalidArgument; messages
// over MaxMessageSize with ResourceExhausted; a missing or wrong token with
// Unauthenticated before anything is read. Batches of that stream stored
// before the violation stay stored (they were valid); other streams are not
// affected. Storage failures poison the dataset until restart: the stream
// ends with ResourceExhausted when the disk is full (free space, then
// restart) and Internal otherwise, the message saying a restart is needed
// (internal/diskstatus).
package receiver
