// Package pipeline wires a source to its destinations:
//
//	Source ─Next─► batch.Assembler ─Emit─► dispatcher ─Submit─► lanes.Lane[RawAnchor] ─► anchor sink (raw)
//	                                                   └─offer─► queue ─► forwarder ─Submit─► lanes.Lane[Coverage] ─► secondary sink
//	                                                                          ▲
//	                                                  Options.Rebuild ────────┘ (catch-up: ranges read back from the raw anchor)
//	anchor lane confirm ─► offsetstore.CommitDelivered ─synced─► OnDurable ─┬─► acker ─► Source.Ack (upstream)
//	                                                                        └─► coverage gates (anchor watermark)
//	secondary lane confirm ─► coverage gate ─clamped─► offsetstore.CommitCoverage
//
// The pipeline knows no transport: a Destination brings a Dial that returns
// a lanes.Transport (flight.Dial, zerobus.Dial, ...) and the tunable part of
// its lane (LaneOptions; the pipeline sets the rest), and Options.Rebuild is
// a RebuildFunc (flight.Rebuild for a thalweg Flight receiver anchor).
//
// # Invariants
//
//   - Upstream after durable: Source.Ack is called only for spans whose
//     delivered watermark the offset store reported synced, in the order the
//     anchor lane confirmed them (the lane releases tokens in the store's
//     callback order, FIFO by the lanes.Committer contract), from one acker
//     goroutine, so acks never reorder or skip
//     (TestFullDiskPausesThePipelineAndRecovers, TestCancelWhileTheDiskIsFull).
//   - Dead letters before acks: a rejected record is handed to
//     Source.DeadLetter synchronously, before the batch whose spans cover it
//     is even emitted; a dead-letter failure stops the pipeline, so its span
//     is never acknowledged (TestRejectedRecordsGoToDeadLetterAndAreCovered).
//   - Exactly one raw anchor gates the source; secondaries never do. The
//     dispatcher offers each batch to every secondary's bounded queue
//     without blocking (a full queue drops it for that secondary) and only
//     then submits it to the anchor lane. A secondary's forwarder, lane,
//     queue, gate and metrics are its own; the anchor's release path only
//     takes a secondary's gate lock for an in-memory update and enqueues a
//     commit. A stalled, failed or switched-off secondary therefore costs
//     the anchor lane and the upstream acks nothing
//     (TestFrozenSecondaryNeverGatesTheAnchor).
//   - Bounded shutdown: the lanes' drain and the upstream acks end within
//     one DrainTimeout of the stop, even when a sink or the upstream never
//     answers ("Shutdown order" below; TestCancelStopsARunWhoseAnchorIsDown,
//     TestDrainTimeoutCountsFromTheStop, TestStopIsBoundedWhenUpstreamAcksHang).
//   - At-least-once after any crash: a record acknowledged upstream is
//     durable at the raw anchor, whenever the worker is killed
//     (chaos.TestSIGKILL_PruningUpstream_NoGap,
//     chaos.TestSIGKILL_RetainingUpstream_NoGap).
//
// # Backpressure: max_unacked and the offset store
//
//   - Options.MaxUnacked bounds, for every source, the records taken from it
//     (counted as records, the batches' NumRecords, never as span widths:
//     seqs are global, and a span covers positions other consumers took)
//     and not yet released by the acker (acknowledged upstream, or given up
//     after a failed Ack): at the bound the source loop stops calling Next,
//     after flushing the assembler's partial batch so that it can be
//     acknowledged at all, and resumes as acks come back. The time it waits
//     is thalweg.source.unacked_wait{bound="pipeline"}.
//   - While the offset store waits for space (offsetstore, "Full disk") the
//     dispatcher sends nothing — not to the anchor, not to the secondaries'
//     queues — and the source loop stops behind it: nothing sent now could be
//     committed. Ready says why. When the store recovers the held commits
//     complete and the dispatcher goes on; a stop request meanwhile ends the
//     run within DrainTimeout, acknowledging nothing that was not durable.
//   - A store that failed for good (offsetstore.ErrFailed) stops the
//     pipeline: Run returns an error wrapping it.
//   - An anchor lane that failed for good (lanes.ErrFailed: its destination
//     kept refusing the stream for its PermanentBudget) stops the pipeline
//     at once: Run returns an error wrapping lanes.ErrFailed that names the
//     gRPC status and message; nothing undelivered was acknowledged.
//   - A secondary whose lane failed for good is detached for the run (see
//     below): the anchor keeps delivering, Ready names the secondary and
//     the cause, thalweg.lane.detached is 1, and the stop stays clean.
//
// # Coverage: lag, never lead (docs/design.md#coverage-lag-never-lead)
//
// A secondary's coverage in the offset store, per partition, is
//
//	coverage = min(confirmed, anchor)
//
// per partition name, where confirmed is the gap-free prefix of seqs the
// secondary durably acknowledged (a confirmed span extends it only if it
// starts at or below the seq after it: seqs are global positions from 1 —
// for Pulsar the broker's entry index plus one — so an empty prefix
// continues at seq 1), and anchor is the raw anchor's durable delivered
// watermark. Seqs the source skipped (see "Rebuild from raw") are confirmed
// by the zero-row batch that covers them. Coverage only moves up. So it
// never passes what the destination acknowledged, never passes what the
// raw anchor made durable, and never skips a seq the anchor holds. The anchor confirms asynchronously, so a secondary
// is often ahead of it in wall time: its coverage is then held at the
// anchor's watermark and released (committed) as the anchor's delivered
// commits become durable. Coverage commits issued after a delivered commit
// are synced after it (one ordered WAL), so durable coverage ≤ durable
// delivered holds after a crash too. The coverage gate (a lanes.Committer
// between the secondary lane and the store) enforces this; coverage_lag is
// anchor − coverage, summed over partitions.
//
// Unordered sources (Options.Unordered: several consumers of a Shared or
// KeyShared subscription) have no gap-free prefix: this worker's spans have
// holes at every other consumer's seq, and a takeover hands it a record
// below seqs it already emitted (the assembler starts a new span for it,
// batch.AssemblerOptions.Unordered). Their gates hold every batch the
// dispatcher emits — before it is offered to the secondary or submitted to
// the anchor — until the secondary confirms a batch with the same spans
// (the live batch, or the zero-row marker after its read-back), and hold
// the startup range (coverage, anchor] until its read-back's marker is
// confirmed. Per partition
//
//	coverage = min(anchor, lowest First held − 1)
//
// and a hold below what was already committed first lowers the committed
// coverage (offsetstore.Store.LowerCoverage, in the store's FIFO before the
// batch's delivered commit, and the gate issues its store writes under its
// lock so a raise decided earlier cannot overtake it). So after a crash
// every record this worker emitted that the anchor made durable is
// confirmed at the secondary or inside (coverage, anchor], which the next
// start reads back (TestUnorderedCoverageModel). A late record's batch
// dropped from the queue holds its partition's coverage until it is read
// back, or, if the anchor never made it durable, until the next start
// (the source redelivers it).
//
// # Rebuild from raw (docs/design.md#rebuild-from-raw) and the seam
//
// The forwarder keeps fed, the gap-free prefix it has submitted to the
// secondary lane (same rule as confirmed; the lane confirms in submission
// order, so confirmed follows fed). A hole in fed is filled from the raw
// anchor with Options.Rebuild, in chunks of Options.RebuildChunk seqs, and
// only up to the anchor's durable delivered watermark — anything above it
// may not be stored at the anchor yet. Holes come from:
//
//   - startup (a restart, or a secondary added to a deployment): for every
//     partition where the anchor's delivered watermark is above the
//     secondary's coverage (or the secondary has none);
//   - overflow: batches dropped from the full queue; their highest seq per
//     partition is remembered and filled once the anchor has it;
//   - a live batch that does not touch fed: the hole before it is filled
//     first (waiting for the anchor to make it durable), then the batch is
//     submitted;
//   - shutdown: after the anchor lane closed, whatever the anchor delivered
//     and the secondary was not fed (an overflowed tail).
//
// For an unordered source (see "Coverage") there is no seam (unordered.go):
// every live batch is submitted as it is; the startup range of each
// partition is read back from the raw anchor whole, every served batch
// submitted (any worker's: duplicates are fine), then a marker; a batch
// dropped from the queue (or refused by the lane) is owed, and once the
// anchor made that batch durable (its own token: the watermark is a
// maximum and says nothing of a lower late batch) its partitions' ranges
// are read back and submitted, then a zero-row marker with its spans. Holes
// between this worker's own spans are other consumers' records and never
// rebuilt; the gap and loss judgement below applies to ordered sources only.
//
// Ranges are asked by (partition name, seq), positions that mean the same
// on every worker: a worker with an empty or lost store rebuilds its
// secondaries from what every worker delivered to the anchor (other
// workers of a Failover subscription, its own earlier incarnations).
//
// Seqs are global, so a partition's records at the anchor may have gaps the
// source skipped (a broker's TTL expiry, a cursor reset forward; a range
// another worker delivered before a takeover is no gap: the anchor holds
// it). A gap is complete — nothing will ever be stored in it — when
// the anchor holds a span of the partition beyond it: the anchor lane
// delivers each worker's batches in order, and under an ordered
// subscription the receiver stores a partition's records in seq order
// (idempotent append), so nothing lands below a stored span later. The
// forwarder then submits a zero-row batch (of the next served batch's
// schema) whose only span is the gap, so fed, and once the lane confirms
// it, confirmed and coverage, advance over it (Stats Skipped counts those
// seqs). A chunk served short is followed by the next (a probe, still only
// up to the anchor's watermark) until a span shows the gap is complete.
// The anchor holds a span reaching every seq it acknowledged (the last seq
// of each delivered span is a record it stored, or, with idempotent
// append, one another worker stored): a range served short up to the
// anchor's watermark itself is a real loss, and detaches the secondary
// (below). So is a gap that would cover the anchor's watermark at start
// (a seq an earlier run's delivered span ended at): the anchor lost what
// it acknowledged, and new records after it do not make that a skip.
//
// The seam between catch-up and the live stream: a live batch is submitted
// only when each of its spans touches fed; one that fed already includes
// (the catch-up read past it) is skipped; one that overlaps it is submitted
// whole (duplicates at the seam, never gaps). Batches read back from raw
// are submitted in seq order of the partition being filled, skipping those
// already included, a gap before one covered as above, each narrowed to its
// rows of that partition above fed (partitionRows; by the identity columns,
// batch.IdentityOf — a schema without them is submitted whole): a
// batch holds rows of several partitions, and each partition's catch-up
// reads it, so the whole batch would reach the secondary once per partition. Live batches keep arriving
// during a catch-up; if the queue overflows again the new drops become a
// new hole, and the forwarder catches up again — holes alone never detach
// a secondary while a Rebuild is configured; its lane failing for good does. Without Options.Rebuild, a
// secondary that would need a catch-up is detached for the run instead;
// likewise, if the raw anchor serves nothing up to its watermark for a
// range (its tail is lost).
//
// # The ack path, file by file
//
// From a Pulsar message to its upstream acknowledgement, the path reads in
// eight files; the transport sits behind lanes.Transport (for Flight:
// flight/sink.go on internal/flightwire's watermark) and the store's group
// commit behind CommitDelivered:
//
//  1. source/pulsar/source.go: Next numbers the record (partition, seq,
//     message id).
//  2. pipeline/pipeline.go: the assembled batch gets its RawAnchor token
//     (onAnchorDurable) and is submitted to the anchor lane.
//  3. lanes/lane.go: Submit assigns the lane offset, takes custody, sends,
//     and queues the pending ack.
//  4. lanes/ack.go: one WaitDurable per burst, confirms in offset order,
//     then CommitDelivered.
//  5. offsetstore/store.go: CommitDelivered enqueues the spans with a ticket.
//  6. offsetstore/commit.go: group commit, one sync, callbacks in ticket
//     order (the Committer contract).
//  7. lanes/release.go: the callback becomes the token's OnDurable, with
//     the order check and the first-failure latch.
//  8. pipeline/acker.go: OnDurable reaches the acker goroutine, which calls
//     Source.Ack (source/pulsar/source.go again: cumulative or individual
//     acknowledgements).
//
// # Shutdown order (Run, once)
//
//  1. Stop intake: the source loop stops calling Next.
//  2. Flush the assembler; the dispatcher submits the last batch and exits.
//  3. Close the anchor lane, bounded by Options.DrainTimeout: it waits for
//     its confirmations and their delivered commits, then closes its
//     transport.
//  4. Flush the offset store (a final synced commit, bounded).
//  5. Drain the acker: every durable span is acknowledged upstream, within
//     the same drain deadline. An acknowledgement that cannot complete (the
//     broker is away: the Pulsar client waits for its answer without a
//     deadline) is abandoned at the deadline, with the rest of the queue:
//     those records are durable at the anchor, the broker redelivers them,
//     and an ordered subscription's positions recognise them as delivered
//     (Stats.AckAbandoned counts them).
//  6. Close the source. Its Close ends an Ack still in progress (the
//     Source contract), and with it the acker's goroutine; when the
//     broker is away that may be after Run returned (the Pulsar client
//     finishes closing in the background, within its operation timeout).
//  7. Finish the secondaries, concurrently and bounded by the same drain
//     deadline: each forwarder takes what is queued, catches up from raw
//     what the (now final) anchor watermark has and it lacks, then its
//     lane waits for its confirmations and closes.
//  8. Flush the offset store again (coverage).
//
// A drain that times out loses nothing: whatever was not durably delivered
// is not acknowledged upstream and comes back, as duplicates, after a
// restart; a secondary that did not catch up is caught up at the next
// start. The offset store is not closed: the caller opened it.
package pipeline
