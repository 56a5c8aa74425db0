package batch

import (
	"fmt"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Record is one message taken from a source, before assembly.
//
// Seq is the engine-internal, per-partition sequence number the source assigns:
// strictly increasing within a partition and never derived from the opaque
// upstream ID. Every durable position thalweg keeps (delivered watermark,
// coverage) is expressed in Seq.
//
// The assembler copies what it keeps: the caller may reuse ID, Key, Payload and
// Props after Add returns.
type Record struct {
	Partition   int32
	Seq         uint64
	ID          []byte // opaque upstream id, e.g. a serialized Pulsar message id
	Key         []byte
	EventTime   time.Time
	PublishTime time.Time
	Props       map[string]string
	Payload     []byte
	// Schema is, in ModeDecoded, the schema version Payload decodes with,
	// resolved by the source; nil rejects the record. Ignored otherwise.
	Schema RowSchema
}

// OffsetSpan is an inclusive range [First, Last] of sequence numbers of one
// partition.
//
// LastID is the opaque upstream id of the record at Last (nil when the source
// has none). The offset store keeps it beside the delivered watermark so that
// a restarted source can recognise redelivered messages at or below the
// durable position and continue numbering after it.
type OffsetSpan struct {
	Partition int32
	First     uint64
	Last      uint64
	LastID    []byte
}

func (s OffsetSpan) String() string {
	return fmt.Sprintf("p%d[%d..%d]", s.Partition, s.First, s.Last)
}

// Len is the number of sequence numbers the span covers.
func (s OffsetSpan) Len() uint64 { return s.Last - s.First + 1 }

// Contains reports whether seq of partition p lies inside the span.
func (s OffsetSpan) Contains(p int32, seq uint64) bool {
	return s.Partition == p && seq >= s.First && seq <= s.Last
}

// SortSpans orders spans by partition, then by First.
func SortSpans(spans []OffsetSpan) {
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].Partition != spans[j].Partition {
			return spans[i].Partition < spans[j].Partition
		}
		return spans[i].First < spans[j].First
	})
}

// FlushReason says why the assembler emitted a batch.
type FlushReason uint8

const (
	FlushRows     FlushReason = iota + 1 // MaxRows reached
	FlushBytes                           // MaxBytes reached
	FlushLinger                          // the oldest record waited Linger
	FlushShutdown                        // Flush/Close was called
	FlushSchema                          // ModeDecoded: the next record has another schema version
)

func (r FlushReason) String() string {
	switch r {
	case FlushRows:
		return "rows"
	case FlushBytes:
		return "bytes"
	case FlushLinger:
		return "linger"
	case FlushShutdown:
		return "shutdown"
	case FlushSchema:
		return "schema"
	default:
		return "unknown"
	}
}

// Batch is an Arrow record batch together with the source offsets it covers.
//
// Spans hold one span per partition present in the batch, sorted by
// partition, and cover every record that was added to the assembler for this
// batch, including records that were rejected and sent to the dead-letter
// path (counted in Rejected). A batch may therefore have zero rows and still
// carry spans: delivering it advances the watermark past the rejected records.
//
// Ownership: a Batch is reference counted through its arrow record. The
// receiver of a Batch (from the assembler's emit callback, from a channel)
// owns one reference and must call Release exactly once; anyone who keeps it
// beyond that owner's lifetime calls Retain first. Spans are immutable after
// the batch is emitted and may be read from any goroutine.
type Batch struct {
	Rec      arrow.RecordBatch
	Spans    []OffsetSpan
	Rejected int
	Reason   FlushReason
}

// Retain adds a reference.
func (b *Batch) Retain() { b.Rec.Retain() }

// Release drops a reference; at zero the arrow buffers return to their allocator.
func (b *Batch) Release() { b.Rec.Release() }

// NumRows is the number of rows in the Arrow record (rejected records excluded).
func (b *Batch) NumRows() int64 { return b.Rec.NumRows() }

// BufferBytes is the size of the Arrow buffers the batch holds: what it
// costs in memory and, roughly, on the wire. See RecordBytes.
func (b *Batch) BufferBytes() int64 { return RecordBytes(b.Rec) }

// RecordBytes is the size of the buffers rec references, children and
// dictionaries included. For a slice it counts the whole underlying
// buffers: an over-estimate of what the slice itself carries.
func RecordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBytes(c.Data(), (*memory.Buffer).Len)
	}
	return n
}

// dataBytes sums size over d's buffers, children and dictionary included.
func dataBytes(d arrow.ArrayData, size func(*memory.Buffer) int) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(size(b))
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c, size)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataBytes(d.Dictionary(), size)
	}
	return n
}

// NumRecords is the number of source records the batch covers (rows + rejected).
func (b *Batch) NumRecords() uint64 {
	var n uint64
	for _, s := range b.Spans {
		n += s.Len()
	}
	return n
}
