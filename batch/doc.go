// Package batch turns source records into Arrow record batches that carry
// the source offsets they cover.
//
// # Invariants
//
//   - Coverage: every record handed to an Assembler is accounted for in
//     exactly one emitted Batch's Spans — whether it became a row or was
//     rejected to the dead-letter callback. Spans never have holes, so the
//     delivered watermark can never stall behind a bad record
//     (TestJSONRejects, TestJSONOnlyRejectedBatch).
//   - Identity: a record is identified by (Record.Partition, Record.Seq),
//     the partition's name and the record's global position in it (for
//     Pulsar the topic-partition name and the broker's entry index plus
//     one), never by anything local to one worker or offset store; see
//     Record (TestRawRowContents, TestPartitionNamesByValue).
//   - Order: by default, within a partition, sequence numbers must be added
//     in strictly increasing order; the assembler rejects an out-of-order Seq
//     with ErrSeqOrder rather than emitting overlapping spans. Batches are
//     emitted one at a time, in order, so spans of one partition increase
//     across batches. With AssemblerOptions.Unordered (a source that is not
//     monotone: several consumers of a Shared or KeyShared subscription,
//     one taking over what another dropped) a Seq at or below its
//     partition's last starts a new span instead: a batch may then hold
//     several spans of a partition, in the order their records were added,
//     and spans of a partition may overlap or go down across batches.
//     Consumers of spans take the maximum Last as a watermark, or walk
//     spans in order; none may assume one span per partition (TestSeqOrder,
//     TestOrderedStillRefuses, TestUnorderedStartsNewSpan).
//   - Spans are ranges of global positions, not counts: a span covers
//     positions the batch holds no record for (skipped by the source, or
//     taken by another consumer). Batch.NumRecords counts records
//     (TestSpans, TestUnorderedStartsNewSpan).
//   - Atomic rows: a record either becomes one whole row or none of it does.
//     ModeJSON decodes and validates the whole payload onto a scratch tape
//     before appending anything to the builders (see jsondec.go;
//     TestJSONRejectLateInRow).
//   - Ownership: see Batch. The assembler never touches a Batch after emitting
//     it, and copies every byte it keeps from a Record (TestRawRowContents,
//     TestRawBuffersReusedSafely).
//
// # Flushing
//
// A batch is emitted when it reaches MaxRows rows (FlushRows), when its
// estimated column bytes reach MaxBytes (FlushBytes), when its oldest record
// has waited Linger (FlushLinger), on FlushEarly (FlushIdle: its owner's
// sink has nothing in flight), or on Flush/Close (FlushShutdown). The
// linger clock is read once per batch, when its first record arrives; one
// reusable timer is re-armed then, so Add does no per-record timer work. A
// timer firing that belongs to an already-flushed batch is recognised and
// ignored (or re-armed for the remainder).
//
// # Concurrency
//
// Add, Flush, FlushEarly, Close and the linger timer serialise on one mutex, held while
// Emit and OnReject run. Stats reads atomics and never blocks.
//
// # Schema modes
//
// ModeRaw writes RawSchema (metadata columns plus the payload as binary)
// straight into allocator buffers, presized like the largest of the recent
// batches (a batch cut short by the linger does not shrink the next one's
// buffers; eight in a row do), that a pool recycles once the batches holding
// them are released (bufferPool): a steady stream allocates nothing, and the
// pool holds about two batches.
// Reading a batch after releasing it therefore shows another batch's data;
// race-detector builds poison freed buffers so that such a bug fails tests.
// ModeJSON decodes payload objects into the user's schema with a
// schema-directed, hand-written decoder (measured against bytedance/sonic's
// visitor, goccy/go-json's tokenizer and encoding/json in
// BenchmarkJSONDecoders); unknown JSON fields are skipped (but must be valid
// JSON), missing nullable fields become null, and anything else that does not
// fit is rejected with a *RejectError naming the field path (e.g.
// "user.tags[2]", "attrs{key}") and the expected type. With IncludeMeta
// the JSON batches also carry the identity columns "_topic", "_partition",
// "_seq" and "_message_id". JSONRows is the same
// decoder for callers that fill their own RecordBuilder (the JSON schemas
// of Pulsar's registry, internal/pulsarschema).
//
// ModeDecoded decodes each payload with the RowSchema its source resolved
// for it (Record.Schema: a schema version of Pulsar's registry, say). One
// batch holds the rows of one RowSchema: a record of another flushes the
// batch first (FlushSchema), so batches of one assembler may differ in
// schema, each carrying its version in its schema metadata. A record
// without a schema, or whose payload does not decode, is rejected like a
// ModeJSON rejection (RejectNoSchema, RejectUndecodable), covered by the
// spans all the same.
//
// This package imports nothing else of thalweg.
package batch
