// Package batch turns source records into Arrow record batches that carry
// the source offsets they cover.
//
// # Invariants
//
//   - Coverage: every record handed to an Assembler is accounted for in
//     exactly one emitted Batch's Spans — whether it became a row or was
//     rejected to the dead-letter callback. Spans never have holes, so the
//     delivered watermark can never stall behind a bad record.
//   - Order: within a partition, sequence numbers must be added in strictly
//     increasing order; the assembler rejects an out-of-order Seq with
//     ErrSeqOrder rather than emitting overlapping spans.
//   - Ownership: see Batch. The assembler never touches a Batch after emitting it.
//
// This package imports nothing else of thalweg.
package batch
