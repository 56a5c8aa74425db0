// Package zerobus is thalweg's Zerobus sink: a lanes.Transport (satisfied
// structurally; of the project it imports batch, and flight for its Flight
// mode) that
// streams Arrow batches to a Zerobus-compatible service, either over the
// EphemeralStream gRPC protocol (zerobuspb, generated from
// zerobus_service.proto) or over its Arrow Flight DoPut variant.
//
// # Invariants
//
//   - A logical offset is durable only when the cumulative ack covers the
//     last message of its batch, split or not, and a batch without messages
//     with the batch before it ("Offsets"; TestSinkEndToEnd,
//     TestMaxMessageSizeSplits).
//   - Rotations and dropped streams lose nothing: a stream that ends with
//     batches unacknowledged fails the Sink, and the lane replays them on a
//     new one (TestRotationAndRecoveryLoseNothing,
//     TestEphemeralRotationWithUnackedBatchesFailsTheSink).
//   - No private copy: once written, a batch costs the Sink only its
//     offsets until the ack; the lane keeps the batch for a replay
//     (TestEphemeralKeepsNoCopyOfWrittenBatches).
//   - Close never waits for the server: against a stream handler that
//     never reads, answers or returns it ends at once and gives every
//     buffer back (TestCloseBoundedWhenServerHangs).
//
// # Offsets
//
// The lane numbers batches with logical offsets (strictly increasing, not
// necessarily contiguous). On the wire every physical message carries a
// physical offset that restarts at 0 on every stream; one batch may become
// several messages (each under Options.MaxMessageSize, by default the
// service's 10 MiB limit) or
// none (a batch of rejected records only). The sink keeps, per unacknowledged
// batch, the physical offset of its last message on the current stream;
// a cumulative ack for physical offset P retires, in order, every batch whose
// last message is <= P and makes its logical offset durable. A batch without
// messages is retired together with the batch before it.
//
// # Flight mode
//
// The Flight mode is the flight sink (package flight) speaking the Zerobus
// variant of the one Flight wire encoding (internal/flightwire.Variant):
// the table and bearer headers, the ready signal each stream must send
// first, offset_ids numbering a stream's messages 0, 1, 2, ... (mapped back
// to the lane's offsets), and the close-stream signal, after which the next
// batch goes on a new DoPut stream of the same Sink once the old stream
// acknowledged everything. A batch with another schema also goes on a new
// stream. The Flight mode keeps no copy of a batch: a stream that ends
// with batches unacknowledged fails the Sink, and the lane, which retains
// every unconfirmed batch, replays them on a new one. Its errors are this
// package's *Error and sentinels (ErrAckTimeout, ErrProtocol, ...), as in
// ephemeral mode.
//
// # State machine (ephemeral mode)
//
//	open ──close signal──► paused ──everything written acked──► rotate ──► open
//	  │                       │                                    │
//	  │                       │ stream ended or grace over,        │ open
//	  │                       │ written batches unacked            │ failure
//	  │                       ▼                                    │
//	  └──stream error, ack──► failed ◄─────────────────────────────┘
//	     timeout, protocol
//	     violation
//
// open: Send encodes the batch on the caller's goroutine, queues it and
// returns; a writer goroutine writes queued batches in order and then drops
// their encoding, keeping only the offsets the acks are mapped back with.
// paused: the server sent close_stream_signal; nothing more is written,
// acks are still collected. rotate: once everything written is
// acknowledged, a new stream is opened and the writer goes on with the
// batches still queued, from physical offset 0: a rotation loses nothing
// and the lane sees no failure. If the stream ends, or the announced
// duration (capped by Options.MaxRotationWait) runs out, while written
// batches are unacknowledged, the Sink fails (ErrStreamEnded, stream dead):
// like the Flight mode, the ephemeral mode keeps no copy of what it wrote,
// and the lane, which retains every unconfirmed batch, replays them on a
// new Sink. failed: terminal.
//
// # Schema changes (ephemeral mode)
//
// A batch's schema may differ from the one before it (a new nullable field,
// say, when a secondary catches up across a worker restart). In PROTO mode
// the stream's descriptor is derived from one schema, so a batch with
// another schema goes on a new stream: the writer pauses before it, and
// once everything written on the old stream is acknowledged the rotation
// above opens a stream whose descriptor is derived from that batch's
// schema, with no grace deadline (Options.AckTimeout bounds the wait).
// Options.Schema is the first stream's schema only; offsets stay the
// lane's. A JSON stream's setup carries no schema, so JSON batches of any
// schema share one stream and the server checks each record's fields. The
// server decides what is compatible (see zerobus/server): an incompatible
// change is refused with InvalidArgument naming the field, which fails the
// Sink with a permanent error. Send and WaitDurable return the *Error, whose
// Permanent method reports true (the stream is dead); the owner closes this
// Sink and Dials a new one, replaying from its durable watermark.
//
// The lack-of-ack timeout (Options.AckTimeout) measures time since the ack
// watermark last moved while something is outstanding; sending more does not
// reset it.
//
// # Goroutines and ownership
//
// In ephemeral mode a Sink runs a writer, a supervisor (rotation, ack
// timeout) and one reader per live stream; Close stops and waits for all of
// them. Send keeps its own encoding of the records until the writer has
// written them (or the Sink is closed), then only the batch's offsets until
// it is acknowledged; the caller keeps ownership of the batch it passed. In Flight
// mode the flight sink's contract holds: one reader per stream, nothing
// kept after Send returns.
package zerobus
