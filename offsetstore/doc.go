// Package offsetstore keeps thalweg's durable positions in Pebble: per
// (destination, partition) a delivered watermark — the only position
// recovery and upstream acks ever read — and a coverage watermark that
// secondary lanes advance. Partitions are keyed by their names and
// positions are the source's global seqs (batch.Record), so a store means
// the same on every worker and a lost store loses nothing that the raw
// anchor cannot answer.
//
// # Invariants
//
//   - Monotone: a commit at or below a watermark changes nothing; only
//     LowerCoverage (coverage, in the commit FIFO), SetPosition, Reset and
//     ResetDestination move one down (TestStoreMethods, TestLowerCoverage,
//     TestModelRandomized).
//   - Group commit: one sync covers every confirmation queued while the
//     previous one was in flight (TestGroupCommitMetrics).
//   - FIFO callbacks: every callback fires exactly once, in ticket order,
//     one at a time, whatever order the syncs complete in
//     (TestRandomCompletionOrder, TestOutOfOrderCompletionStillDeliversInOrder).
//   - Durable before success: no callback reports success for a state that
//     was not synced, and after the first failed sync none reports success
//     again (TestFaultInjectionEveryOp, TestOutOfOrderFailure,
//     TestWALFailureFailsStore).
//   - A full disk stalls the store instead of failing it: nothing is
//     released meanwhile, and everything held is released as durable once
//     it really is (TestFullDiskStallsAndRecovers).
//   - Bounded teardown: Close returns within Options.TeardownTimeout even
//     when a sync never completes (TestCloseBoundedOnStuckSync).
//
// # Watermarks
//
// A watermark is the highest OffsetSpan.Last committed for its (destination,
// partition, kind), stored with that span's LastID. Commits are monotone: a
// Last at or below the current one changes nothing (its callback still
// fires, once the state it is subsumed by is durable). SetPosition (both
// watermarks of a partition to a given position, for `thalweg offsets
// reset`), Reset, ResetDestination and, for coverage only, LowerCoverage
// are the only way down.
//
// # Group commit and the FIFO high-water mechanism
//
// CommitDelivered and CommitCoverage only enqueue. Each call gets a ticket
// from a store-wide counter; the ticket order is the callback order. The
// committer goroutine takes everything queued (at most Options.MaxBatch
// calls), coalesces it into one Pebble batch — one key per watermark,
// whatever the number of confirmations — and applies it with pebble.Sync
// without waiting for the sync (DB.ApplyNoSyncWait). A waiter goroutine per
// group waits for the WAL sync; at most Options.MaxInFlight groups wait at
// once, and whatever arrives meanwhile forms the next group. One fsync thus
// covers many confirmations.
//
// Sync completions are reported to the sequencer (complete), which is the
// engine-internal FIFO high-water mark: on success it
// advances durableTicket to max(durableTicket, last ticket of the group) and
// releases, from the head of the FIFO, every request whose ticket is at or
// below it. Advancing past groups whose own completion has not been seen
// yet is sound because Pebble's WAL is one ordered log: a synced record
// implies that every record written before it is synced, and groups are
// written in ticket order. A completion for a group already covered is a
// no-op, so completions may arrive in any order (tests reorder them on
// purpose) and callbacks are still released in FIFO order, exactly once.
// A group that changes no key while another is in flight writes a WAL-only
// record (Batch.LogData) so that its sync is ordered too; with nothing in
// flight it is durable at once.
//
// Callbacks run on a single notifier goroutine, one at a time, in ticket
// order, never under the store's lock: a callback may call Commit*,
// Delivered, Coverage, Destinations and Err. It must not call Flush,
// SetPosition, Reset or Close, which wait for callbacks and would wait for
// themselves; a slow callback delays later callbacks, never a sync.
// This is the callback order the lanes.Committer contract requires (FIFO per
// Committer, one at a time), so a lane releases its tokens straight from
// these callbacks. TestRandomCompletionOrder checks it with concurrent
// committers and sync completions reported in random order (its recorder
// fails on a callback out of order, twice, or overlapping another).
//
// Delivered and Coverage return the durable view: exactly what synced
// commits made durable (plus what Open read back), never a state still in
// flight.
//
// # Failure rule
//
// Pebble treats a failed WAL write or sync as fatal: the LogWriter's error is
// sticky and the commit pipeline cannot proceed (Pebble reports it through
// Logger.Fatalf, which the store intercepts instead of exiting). So the first
// failed group commit fails the store for good: every callback not yet
// released — in flight, queued, or from any later Commit* call — is released
// in FIFO order with an error wrapping ErrFailed and the cause, even if a
// sync still in flight later reports success (a late success after a
// failure is ignored; a late failure of a group already covered by a later
// successful sync still fails the store). Err returns that error, Flush
// returns it, Close includes it. No callback ever reports success for a
// state that was not synced. Reads keep returning the durable view, which
// stays exact. To recover, Close the store and Open it again: Open reads
// back whatever reached the disk, which is at least everything reported
// durable.
//
// A full disk (ENOSPC, or EDQUOT) is the exception: it heals once space is
// freed, so it stalls the store instead of failing it; see "Full disk".
//
// Some I/O failures Pebble does not return at all but panics on, because it
// considers them unrecoverable (a failed directory fsync, a failed WAL close
// during rotation). The store does not intercept those: the process
// crashes, which is safe — at-least-once recovery starts from the last
// durable state, and nothing undurable was reported.
//
// # Full disk
//
// Pebble's WAL error is sticky even for ENOSPC: the DB instance that hit it
// never writes again, even once space is back (tested: a commit after the
// disk emptied still fails). Re-opening the directory works. So a group
// commit that fails for lack of space stalls the store:
//
//   - no callback is released — neither with success nor with an error —
//     and Stalled returns the cause (wrapping ErrNoSpace) and a channel
//     closed when the stall ends; Err stays nil. Commits made meanwhile
//     queue up. A caller that waits for its callbacks (the lanes, the
//     pipeline) thus stops by itself: backpressure, not a busy loop;
//   - the committer waits for every group in flight, closes the failed
//     instance and opens a new one, retrying with backoff growing from
//     Options.RetryInitial to Options.RetryMax;
//   - once open, every request not yet released is committed again, in
//     ticket order, against the durable view (never against what the new
//     instance replayed from a WAL whose sync failed), and its callback
//     fires after that synced commit;
//   - an error other than lack of space while reopening fails the store
//     (ErrFailed, Failed is closed): a restart is needed.
//
// The condition is logged once, then as a summary every 30 s (attempts,
// last error), and once when it clears (internal/errlog), and reported to
// Options.OnDiskFull. Pebble's own retries are paced too: it retries a
// failed memtable flush at once and forever, which at Open (a WAL to
// replay) is a busy loop that never returns; the store's BackgroundError
// hook sleeps with backoff (at most 250 ms) before Pebble retries.
// OpenContext waits for space at start-up and returns when its context
// ends. Close while stalled does not wait for a commit that cannot happen:
// it releases what is held with ErrClosed at once.
//
// Options.ReadOnly opens an existing store without writing anything (and
// so works on a full disk); Options.MustExist refuses, with ErrNotStore
// and creating nothing, a directory that holds no store. A store another
// process holds is reported as ErrLocked, naming the holder's pid.
//
// # Key layout (version 2)
//
// All keys start with a one-byte prefix; destinations contain no NUL and are
// at most 1024 bytes, partition names (not empty) and upstream ids at most
// 4096 bytes.
//
//	"v"                           -> uvarint(2)                   layout version
//	"d" <dest> 0x00 <partition>   -> uvarint(seq) <upstream id>   delivered watermark
//	"c" <dest> 0x00 <partition>   -> uvarint(seq) <upstream id>   coverage watermark
//
// Open refuses a directory whose version key is missing (if it holds other
// keys) or unknown, with ErrIncompatibleLayout. Version 1 keyed watermarks
// by partition ids local to the store (a registry "p" <name> -> be32(id))
// and its seqs were counters of that store: they name no upstream position,
// so they cannot be translated. Open refuses such a store (read-only too)
// with an error wrapping ErrFormat that names the command that migrates it,
// `thalweg offsets migrate --store <dir>`; Migrate rewrites it, in one
// synced batch, as an empty version 2 store and reports how many
// watermarks it dropped. The worker then takes its positions from the raw
// anchor on start, and secondaries are rebuilt from the anchor.
//
// # Goroutines and shutdown
//
// A Store owns the committer goroutine, the notifier goroutine and one
// waiter goroutine per group in flight. Close documents the shutdown order;
// it is bounded by Options.TeardownTimeout even when a sync never returns,
// in which case Pebble finishes closing in the background (Done).
//
// # Metrics
//
// Instruments, from Options.MeterProvider, meter "github.com/thalweg/thalweg/offsetstore":
// thalweg.offsetstore.commit_latency (histogram, s: apply to sync returned),
// thalweg.offsetstore.syncs (counter), thalweg.offsetstore.commit_failures
// (counter) and thalweg.offsetstore.confirmations_per_sync (histogram).
package offsetstore
