// Package lanes implements the ack lane (docs/design.md#ack-lanes): pipelined,
// fire-and-forget delivery to a sink, with the durable wait moved off the
// ingest path onto a per-destination background task.
//
// # Shape
//
// A [Lane] owns one destination. [Lane.Submit] assigns the next logical
// offset, hands the batch to the [Transport] and returns as soon as the
// transport accepted it. The pending acknowledgement {offset, token,
// submittedAt, batch} goes to the lane's bounded channel. The ack task
// receives the first pending ack (blocking), drains whatever else is queued
// (non-blocking), waits once — WaitDurable on the largest offset of that
// burst — and then confirms the burst in ascending offset order: it advances
// the delivered watermark, records the per-batch delivery latency and the
// burst size, and enqueues the destination's commit.
//
// # Invariants
//
//   - Fire-and-forget: Submit never waits for an acknowledgement
//     (TestFireAndForgetAndOneWaitPerBurst).
//   - Bounded: at most Options.Capacity batches are unfinished (sent but not
//     confirmed, or confirmed but not yet committed), holding at most
//     Options.MaxBytes of Arrow buffers between them (one batch larger than
//     that is taken alone); Submit blocks, honouring its context, when the
//     next batch does not fit. That is also the most a transport ever holds
//     un-acked from the lane, and the lane's memory bound (TestBackpressure,
//     TestMaxBytesBoundsHeldBatches).
//   - One wait per burst, confirmations in ascending offset order, each
//     offset confirmed exactly once for the lane's life, across rebuilds
//     (TestFireAndForgetAndOneWaitPerBurst, TestPoisonRebuildReplay,
//     TestModel).
//   - Poison ⇒ rebuild: a dead stream poisons the lane's incarnation; the
//     supervisor dials a new one and replays every unconfirmed batch under
//     its original offset before taking new ones ("States and poisoning";
//     TestPoisonRebuildReplay).
//   - Delivered, never submitted, is the watermark. Submitted exists for the
//     pending gauge (submitted − delivered) only (TestModel).
//   - Upstream after durable: a [RawAnchor] token's OnDurable(nil) fires only
//     after the lane's commit of its spans, and every earlier commit, was
//     reported durable by the [Committer], in offset order: the Committer
//     contract delivers callbacks in commit order, the lane checks it
//     ([ErrCommitterContract]). After the first commit failure no token is
//     released with nil (see [Lane.Err]; TestUpstreamFIFOAndCommitFailure,
//     TestCommitterOrderIsChecked).
//   - Compile-time lane separation: the [Token] type parameter is a sealed
//     union; Lane[Coverage].Submit does not accept a RawAnchor
//     (TestTokenSeparationIsCompileTime).
//   - Isolation: a lane shares no channel, goroutine, lock, atomic or
//     metric attribute set with any other lane (TestLaneIsolation).
//
// # States and poisoning
//
//	connecting ──dial+replay──► open ──stream error (Permanent, or MaxRetries transient)──► poisoned
//	                              ▲                                                            │
//	                              └────────── rebuilding (close, backoff, dial, replay) ◄──────┘
//	connecting/rebuilding ──permanent failures outlast PermanentBudget──► failed
//	any ──Close──► closing ──drained, failed, or ctx done──► closed
//
// An error that declares the stream dead ([Permanent]), or MaxRetries
// consecutive transient errors, on either Send or WaitDurable poisons the
// current incarnation: its ack task returns, Submit stops using it, and the
// supervisor goroutine closes the transport, waits its backoff, dials a new
// one and replays every retained-but-unconfirmed batch in offset order under
// its original offset before new batches are accepted. Confirmed batches are
// never replayed; unconfirmed ones may reach the sink twice (at-least-once).
//
// # Failures: class, backoff, budget
//
// Poisoning says "this stream is dead"; the failure's [Class] ([Classify],
// from the sink's error through [Classified]) says whether a new one may
// fare better. A retryable failure (the sink is unreachable, restarting,
// overloaded or slow) is retried for as long as the lane lives. A permanent
// one (the sink refuses the stream as it is: credentials, schema, a missing
// dataset, malformed acks) is retried too — a fix within the budget heals
// the lane — but once permanent failures have persisted for
// Options.PermanentBudget, uninterrupted by progress or a retryable failure,
// the lane fails for good: StateFailed, [Lane.Failure] and [Lane.Failed],
// and Submit, Flush and Close return the error (wrapping [ErrFailed]) at
// once. A permanent failure after [Lane.Drain] or Close ends the lane at
// once: a drain cannot wait for a fix.
//
// Every failure — a failed dial, a failed replay, a poisoned stream — is
// one step of the lane's failure streak, which counts across incarnations
// and resets only on progress: a durable confirmation. The wait before the
// next dial is Backoff.delay(streak): exponential from Backoff.Initial,
// capped at Backoff.Max, jittered. A stream that opens and dies at its first
// send therefore backs off like a dial that fails. An idle lane cannot make
// progress, so a streak that began there keeps its backoff until traffic
// confirms something; the cap bounds what that costs.
//
// thalweg.lane.poisoned counts every failure with cause <step>_<class>
// (observability.Causes). The log gets one line when the lane starts failing
// or the class changes, a summary per Options.FailureLogInterval while it
// stays broken, one line when it recovers or fails for good; errors are
// truncated. Nothing makes the process exit: the embedding program decides
// what a failed lane means (package pipeline stops for the raw anchor and
// detaches a secondary).
//
// Submit blocks while the lane is connecting or rebuilding (context-aware)
// rather than returning an error: the pipeline only wants its batch accepted
// eventually, and a blocked Submit is the same backpressure a full lane
// exerts. A batch whose Send fails after its offset was assigned stays in the
// lane's custody and is replayed; Submit returns nil for it.
//
// The two kinds of blocking are told apart in thalweg.lane.intake_blocked:
// a Submit that waits while the stream is open and the lane full counts as
// lane_full (the sink is slow to acknowledge), one that waits while there is
// no open stream as connecting or rebuilding (the lane is broken) — also
// when it waits for a slot that only the rebuilt stream can free. Only a
// Submit that blocks touches the clock. A Close whose drain ctx cuts short
// counts in thalweg.lane.drain_timeouts.
//
// # Waiting for durability, and seeing failures
//
// [Lane.Flush] waits, honouring its context, until every batch submitted
// before the call is done — confirmed by the transport and, for committing
// lanes, its commit synced, so every OnDurable of those batches has fired —
// without stopping intake; it waits through rebuilds and reports a commit
// failure or a Close that discarded batches. Offsets are assigned 1, 2, 3, ...
// and finished in that order, so Flush only compares two counters.
//
// The supervisor retries a retryable failure for as long as the lane lives,
// so an unreachable endpoint would otherwise show only as a Submit that
// blocks. Options.OnStateChange reports every state transition and every
// failed dial or replay attempt with its error and class, and the default
// logger is slog.Default(), never a discard logger.
//
// # Goroutines
//
// Per lane: one supervisor for the lane's life, one ack task per transport
// incarnation. Close stops both; see [Lane.Close] for the shutdown order.
package lanes
