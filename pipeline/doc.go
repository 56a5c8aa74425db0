// Package pipeline wires a source to its destinations:
//
//	Source ─Next─► batch.Assembler ─Emit─► dispatcher ─Submit─► lanes.Lane[RawAnchor] ─► anchor sink
//	                                                   └─enqueue─► forwarder ─Submit─► lanes.Lane[Coverage] ─► secondary sink
//	anchor lane confirm ─► offsetstore.CommitDelivered ─synced─► OnDurable ─► acker ─► Source.Ack (upstream)
//
// # Invariants
//
//   - Upstream after durable: Source.Ack is called only for spans whose
//     delivered watermark the offset store reported synced, in the order the
//     anchor lane confirmed them (the lane's FIFO release), from one acker
//     goroutine, so acks never reorder or skip.
//   - Dead letters before acks: a rejected record is handed to
//     Source.DeadLetter synchronously, before the batch whose spans cover it
//     is even emitted; a dead-letter failure stops the pipeline, so its span
//     is never acknowledged.
//   - Secondaries never gate the source: each secondary lane is fed by its own
//     forwarder through a bounded queue. When the queue is full the secondary
//     is detached (it stops receiving batches, its coverage stays where its
//     last durable confirmation left it: it lags, it never leads) and the
//     anchor lane and the source carry on at full speed.
//
// # Shutdown order (Run, once)
//
//  1. Stop intake: the source loop stops calling Next.
//  2. Flush the assembler; the dispatcher submits the last batch and exits.
//  3. Close the lanes, bounded by Options.DrainTimeout: each waits for its
//     confirmations and their commits, then closes its transport.
//  4. Flush the offset store (a final synced commit, bounded).
//  5. Drain the acker: every durable span is acknowledged upstream.
//  6. Close the source.
//
// A drain that times out loses nothing: whatever was not durably delivered
// is not acknowledged upstream and comes back, as duplicates, after a
// restart. The offset store is not closed: the caller opened it.
package pipeline
