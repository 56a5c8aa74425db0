// Package receiver is thalweg's durable Arrow Flight server (`thalweg
// receive`). It accepts DoPut streams in the encoding documented by package
// flight, appends every batch to Arrow IPC segment files, syncs them and only
// then acknowledges, cumulatively, per stream. DoGet replays stored batches
// by partition/seq range (for rebuilds from the raw anchor) or by stored
// position, selected by a flight.Ticket (the client side is package flight:
// flight.Get, flight.ReadAll, flight.Rebuild); ListFlights and GetFlightInfo
// describe datasets. DoAction "positions" returns the highest seq stored
// per partition of a dataset (flight.Positions), and ordered batches are
// appended idempotently (see Positions and idempotent append).
//
// # Invariants
//
//   - Durable before acknowledged: a batch is acknowledged only after its
//     sync, and every acknowledged batch is served intact after a crash
//     at any point ("Durability"; TestGroupCommit,
//     TestSIGKILLRecoversAcknowledged, TestCrashCloneRecovers).
//   - Nothing half-written is served: recovery cuts a torn tail back to the
//     last complete batch (TestTornTailDiscarded, TestTornTailAtEveryOffset).
//   - Ordered batches are stored once: rows at or below their partition's
//     stored position are acknowledged and not stored, whichever stream
//     sends them and across crashes (TestOrderedDuplicateAcknowledgedNotStored,
//     TestConcurrentOrderedStreamsStoreOnce, TestCrashOrderedReplayExactlyOnce).
//   - Budgets before decoding: a message's declared size is checked against
//     the limits before it is decompressed or decoded
//     (TestMessageDecodedSizeBounded, TestDecompressionBombRejected).
//   - A protocol violation ends that stream with a gRPC status, never the
//     server or another stream (TestProtocolViolations).
//
// # Storage layout
//
//	Dir/LOCK                       held while a Server runs
//	Dir/<name>/DATASET             {"version":2,"path":[...]}
//	Dir/<name>/00000001.arrows     Arrow IPC stream: schema message, then
//	                               record batch messages as received
//	Dir/<name>/00000001.idx        one frame per stored batch
//	Dir/<name>/quarantine/         copies of bytes recovery could not verify
//
// <name> is the descriptor path with bytes outside [A-Za-z0-9_-] escaped as
// %XX and elements joined by '.'. A segment file is a valid Arrow IPC stream
// (without end-of-stream marker) that any Arrow implementation can read.
// Each message's metadata ends, inside the length its IPC prefix declares,
// with a trailer (the flatbuffer is unchanged; readers ignore what follows
// it): for a batch, the JSON of its index record (offset_id, spans, rows,
// lengths, position) and a footer with the CRC-32C of the frame after its
// 8-byte prefix and a magic. A segment therefore describes and verifies
// itself; the index is an accelerator that can be rebuilt from it. An index
// frame is [u32 payload length][u32 CRC-32C of payload][JSON payload] with
// the same record plus the batch's CRC. Stored positions number the
// batches of a dataset from 0 across segments; they never change (unless a
// segment and its index both lost the same batches, see Recovery).
//
// # Positions and idempotent append
//
// A dataset's positions are the highest seq per partition name over the
// spans of its stored batches. They are not stored apart: they are derived
// from the batches themselves (their index frames and segment trailers),
// so they are synced in the same step as the rows they describe, and after
// a crash recovery derives them from exactly the batches it kept, never
// from rows a crash lost. The positions action serves those of durable
// batches only. A position recovery set aside as damaged counts when its
// spans come from its index (it was stored and acknowledged), not when
// they were inferred from its neighbours.
//
// An ordered batch ("ordered":true, package flight documents the rules)
// is checked, under the dataset's lock, against the positions of every
// batch appended so far, durable or not, by any stream: all its spans at
// or below the positions, it is not stored and is acknowledged once every
// batch appended before the decision is durable (one of them holds its
// rows); all above, it is stored as sent; otherwise (or without spans) it
// is decoded and only the rows above their partition's position (by the
// identity columns) are stored, re-encoded without compression (unchanged
// when every row is new), with spans narrowed to them (without spans: the
// spans of the rows kept).
// The parts of a split batch are filtered one by one and stay parts (a
// part may have no row left). Server.Stats counts the rows and batches
// dropped, the batches filtered, and the ordered batches stored whole
// because they had no identity columns to filter by. Nothing
// is logged per batch.
//
// Datasets written before record identity (DATASET version 1) named
// partitions by ids local to one worker's offset store and cannot be
// compared with anything written now: New refuses them with an error
// (ErrV1Dataset) naming `thalweg receiver migrate --dir D`, which runs
// Migrate: it moves them, unchanged, to D/v1~<UTC time>/ (their segments
// stay plain Arrow IPC streams) and the receiver starts without them. A
// version 1 dataset whose DATASET file is lost is recognised by the
// numeric partitions of its index.
//
// # Schemas
//
// A dataset takes the schema of its first stream, and later streams'
// schemas when they are compatible with the union of those it has
// (internal/schemaevo; package flight documents the rules and the refusal);
// a new schema joins the dataset with its first stored batch, so the union
// is always that of stored batches, which is what recovery rebuilds.
// A segment holds batches of one schema, the one its schema message
// declares: a batch whose schema differs from the active segment's (a
// field more, less, or only other metadata) seals that segment and starts
// a new one. The segment files therefore say which schema each batch has;
// recovery reads every segment's schema message and rebuilds the list of
// schemas and their union, so nothing else is stored and datasets written
// before (one schema, versions 1 and 2) read as they did. Streams of two
// schemas writing a dataset at the same time work, at the cost of a
// segment per switch. DoGet serves one schema per stream and points to the
// next run with "next"; GetFlightInfo returns one endpoint per run (see
// package flight, DoGet).
//
// Segments written before the trailer existed (version 1: no trailer, the
// CRC covers the whole framed message) are still read; their batches can
// only be verified through their index.
//
// # Durability
//
// All streams of a dataset append, under the dataset's lock, to its active
// segment; a committer goroutine per dataset writes and syncs the segment,
// then writes and syncs the index frames of the same batches, and publishes
// the durable count (group fsync: one sync covers every batch appended
// before it started). Because the index is written only after the segment
// bytes it describes are synced, a batch with an index frame on disk was
// synced. Each stream's ack goroutine sends one cumulative PutResult
// whenever the durable count passes more of its batches. Nothing is acknowledged or served before it is synced, and a
// batch is appended only after it decoded against the schema with valid
// metadata, so nothing half-written is ever acknowledged or served.
// One committer per dataset also means a dataset receives no faster than
// its committer writes: Server.SyncStats counts the rounds and the time
// spent in them, and a committer busy nearly all the time says the disk,
// not the network or the senders, set the rate.
//
// The server decodes each DoPut FlightData in place over one copy of the
// gRPC message, gathered into a buffer of a pool (internal/flightwire:
// ServerCodec, ReceivedData; gRPC's own buffers come from a pool that does
// not zero them either), keeps the body it decoded from, and the committer
// writes a body of 16 KiB or more to the segment from there rather than
// copying it into its write buffer; the frame's CRC covers the same bytes
// either way. The buffer goes back to the pool when nothing reads it any
// more: once the batch was appended (its frame head and small body copied)
// or found stored before, and, for a body written from where it is, once
// the committer wrote it. A fresh 8 MB buffer per message, zeroed by the
// runtime and collected again, cost a receiver of default-sized batches
// more than the copy into it. Test builds (race detector) overwrite every
// buffer given back, so a read after its release shows up as corrupted
// data in the tests.
//
// On Linux, with the operating system's file system (Options.FS left at
// vfs.Default), the committer writes a segment's whole 4 KiB blocks with
// O_DIRECT, from one aligned staging buffer shared by the datasets, and
// its last partial block through the page cache; the next round writes
// that block again, whole. The file holds the same bytes as a buffered
// write would give (no padding), and the sync that follows is the same
// fsync, which also flushes the device cache the direct writes reached.
// At the worker's default 8 MiB batches, copying every byte into freshly
// allocated page-cache pages and writing them back cost more CPU than the
// rest of the receiver together (BENCHMARKS.md, "The receiver's writes and
// buffers"). A file system that refuses direct writes gets every write
// through the page cache. Reads stay
// buffered: should a reader hold the cached page of a block while a direct
// write rewrites it, the kernel may keep that page as it was; a read that
// fails its checksum therefore drops the cached pages of its range and
// reads once more from the disk before it reports damage, and recovery
// drops a segment's cached pages before it reads it.
//
// A segment is sealed (synced, closed) before the next one is created, and
// a new segment's schema message and directory entry are synced before any
// batch goes into it. After a crash, therefore, only the last segment can
// have a torn tail.
//
// # Recovery
//
// New recovers every dataset before it serves. A torn tail is the expected
// result of a crash and nothing in it was acknowledged; it is handled with a
// warning:
//
//   - bytes at the end of the last segment that are the beginning of a
//     frame (its declared length runs past the end of the file) are trimmed;
//   - an index cut short, or ending in zeros, is rebuilt from the segment;
//   - batches at the end of the last segment that no index frame describes
//     were written after the last completed sync; from the first of them
//     that does not verify (a crash keeps any part of unsynced data, and
//     may leave zeros) to the end, the bytes are copied to quarantine/ and
//     trimmed; batches before it that verify by their trailers are kept;
//   - the parts of a split batch whose last part is missing are copied to
//     quarantine/ and trimmed;
//   - an empty index after the last segment, whose segment file is missing,
//     is a segment creation the crash interrupted (both files are created
//     and their directory entries synced before a batch is appended): the
//     index is removed (TestSealedSegmentRecovery, TestCrashCloneRecovers).
//
// Anything else is corruption, logged at error level with the file, the
// byte range and the position, and never repaired by deleting data:
//
//   - Every batch of the last segment, and of a sealed segment whose index
//     does not match it, is verified (by the index's CRC or its own
//     trailer). A batch that fails although an index frame describes it (or
//     a later batch; or the index is missing, or the segment is sealed) was
//     synced and damaged afterwards. It keeps its position: its bytes are
//     copied to quarantine/<segment>.arrows.<from>-<to>, the segment is left
//     as it is, and DoGet of that position, or of a range or partition seq
//     range that includes it, fails before sending anything with DataLoss
//     naming every such position it selects. Every other batch, before and
//     after it, is served. The frames after a damaged one are found by their
//     trailers, so one damaged batch costs one position.
//   - A missing, truncated or damaged index is rebuilt from the segment; a
//     damaged one is first copied to quarantine/<segment>.idx.<time>. When
//     index and segment are both damaged at the same place, the lost bytes
//     become one damaged position whose spans are inferred from the nearest
//     intact batches of each partition.
//   - Bytes at the end of a segment that are neither a torn frame nor a
//     verifiable batch (for example zeros) are moved to quarantine/ (copied,
//     then cut) so that the segment ends at a batch boundary.
//   - A segment shorter than its index lost synced batches: the one the
//     end cuts through keeps its position (DataLoss); those wholly past the
//     end are logged by offset_id.
//   - A segment file that is gone while its index is there keeps its
//     positions (as damaged ones); a gap in the segment numbers with
//     neither file is logged.
//   - A missing or damaged DATASET file of a directory that has segments is
//     rewritten from the directory name (which encodes the path); a damaged
//     one is first copied to quarantine/.
//   - A damaged schema frame prefix is recovered from the trailer or from
//     the index and reported; the segment is served as it is. Only a schema
//     that cannot be recovered from the segment, its index or an earlier
//     segment stops New, with an error naming the file.
//
// The index records the positions set aside (their index frames carry the
// damaged extent), and every start logs them again. Reads of sealed
// segments verify each batch's CRC; a batch damaged after recovery fails
// its read with DataLoss, and is logged and copied to quarantine/ once.
//
// # Protocol violations
//
// A schema change mid-stream or an incompatible one against the dataset's
// schemas (InvalidArgument naming the field, never a schema dump), non-increasing
// offset_ids, missing or garbled app_metadata, malformed IPC messages and
// inconsistent split parts end the stream with InvalidArgument; messages
// over MaxMessageSize with ResourceExhausted; a missing or wrong token with
// Unauthenticated before anything is read. Batches of that stream stored
// before the violation stay stored (they were valid); other streams are not
// affected. Storage failures poison the dataset until restart: the stream
// ends with ResourceExhausted when the disk is full (free space, then
// restart) and Internal otherwise, the message saying a restart is needed
// (internal/diskstatus).
//
// # Limits
//
// No message, stream or client can make the server allocate without bound
// (docs/operations.md, "Server limits", lists them with their defaults):
//
//   - Before a record batch is decoded, what its header declares is
//     checked: the sum of its buffers' decoded sizes (a compressed buffer's
//     declared uncompressed length) plus 32 bytes per declared row must not
//     exceed MaxDecodedMessageBytes (InvalidArgument), and is reserved from
//     the stream's MaxStreamPendingBytes and the server's MaxPendingBytes
//     (ResourceExhausted) until the batch is decoded and stored. Each
//     buffer is also bounded by MaxDecodedBufferSize.
//   - A decoded batch is validated in full before it is stored: buffer
//     sizes, offsets (non-negative, monotonic, inside their data), child
//     lengths, null counts and UTF-8 of string columns (InvalidArgument).
//   - An acknowledgement the client does not read within AckSendTimeout
//     (its HTTP/2 receive window stays closed once the stream's 64 KiB send
//     buffer is full) ends the stream with DeadlineExceeded and gives back
//     its budget; the client sees the status once it reads again.
//   - At most MaxStreamsPerPeer streams per client host
//     (ResourceExhausted), at most MaxConnections connections (more are
//     closed as they are accepted); a connection without RPCs for
//     MaxConnectionIdle, or whose handshake takes longer than min(10 s,
//     MaxConnectionIdle), is closed.
package receiver
