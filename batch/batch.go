package batch

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Record is one message taken from a source, before assembly.
//
// Partition names the record's source partition, the same on every worker
// and after any restart: for Pulsar the topic-partition exactly as the broker
// names it ("persistent://public/default/orders-partition-2", or the topic
// itself when it is not partitioned); other sources use their own stable
// names (source/gen: "gen-0", "gen-1", ...). SplitPartition recovers the
// base topic and the partition index from a Pulsar name.
//
// Seq is the record's global position in its partition: for Pulsar the
// broker's entry index plus one (so that 0 keeps meaning "nothing"). It is
// strictly increasing in the source's order and contiguous except where the
// source skipped records (a Pulsar TTL expiry, a cursor reset forward); it is
// never a counter of one worker or one offset store, so (Partition, Seq) is
// the identity of a record everywhere: every durable position thalweg keeps
// (delivered watermark, coverage, a receiver's stored positions) is
// expressed in Seq, and secondaries are rebuilt by (Partition, Seq) ranges.
//
// The assembler copies what it keeps: the caller may reuse ID, Key, Payload and
// Props after Add returns.
type Record struct {
	Partition   string
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

// OffsetSpan is an inclusive range [First, Last] of sequence numbers (see
// Record.Seq) of one partition, named as in Record.Partition.
//
// LastID is the opaque upstream id of the record at Last (nil when the source
// has none). The offset store keeps it beside the delivered watermark so that
// a restarted source can recognise redelivered messages at or below the
// durable position and continue numbering after it.
type OffsetSpan struct {
	Partition string
	First     uint64
	Last      uint64
	LastID    []byte
}

func (s OffsetSpan) String() string {
	return fmt.Sprintf("%s[%d..%d]", s.Partition, s.First, s.Last)
}

// Len is the number of sequence numbers the span covers: positions, not
// records (see Batch.NumRecords).
func (s OffsetSpan) Len() uint64 { return s.Last - s.First + 1 }

// Contains reports whether seq of partition p lies inside the span.
func (s OffsetSpan) Contains(p string, seq uint64) bool {
	return s.Partition == p && seq >= s.First && seq <= s.Last
}

// SortSpans orders spans by partition name, then by First.
func SortSpans(spans []OffsetSpan) {
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].Partition != spans[j].Partition {
			return spans[i].Partition < spans[j].Partition
		}
		return spans[i].First < spans[j].First
	})
}

// partitionSuffix separates a Pulsar topic from its partition index.
const partitionSuffix = "-partition-"

// SplitPartition splits a Pulsar topic-partition name into its base topic
// and partition index: "<topic>-partition-N" gives (topic, N); any other
// name (a topic that is not partitioned, another source's partition) gives
// (name, -1). Only a non-negative decimal N that fits int32 counts.
func SplitPartition(name string) (topic string, index int32) {
	i := strings.LastIndex(name, partitionSuffix)
	if i < 0 {
		return name, -1
	}
	digits := name[i+len(partitionSuffix):]
	if digits == "" || digits[0] < '0' || digits[0] > '9' {
		return name, -1
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return name, -1
	}
	return name[:i], int32(n)
}

// JoinPartition is the inverse of SplitPartition: the name of partition
// index of topic ("<topic>-partition-N"), or topic itself for index -1 (a
// topic that is not partitioned, another source's partition). It turns a
// stored row's topic and partition columns back into Record.Partition.
func JoinPartition(topic string, index int32) string {
	if index < 0 {
		return topic
	}
	return topic + partitionSuffix + strconv.FormatInt(int64(index), 10)
}

// FlushReason says why the assembler emitted a batch.
type FlushReason uint8

const (
	FlushRows     FlushReason = iota + 1 // MaxRows reached
	FlushBytes                           // MaxBytes reached
	FlushLinger                          // the oldest record waited Linger
	FlushShutdown                        // Flush/Close was called
	FlushSchema                          // ModeDecoded: the next record has another schema version
	FlushIdle                            // FlushEarly was called: the owner's sink had nothing in flight
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
	case FlushIdle:
		return "idle"
	default:
		return "unknown"
	}
}

// Batch is an Arrow record batch together with the source offsets it covers.
//
// Spans are sorted by partition and cover every record that was added to
// the assembler for this batch, including records that were rejected and
// sent to the dead-letter path (counted in Rejected). A batch may therefore
// have zero rows and still carry spans: delivering it advances the
// watermark past the rejected records. An ordered assembler emits one span
// per partition present; an unordered one (AssemblerOptions.Unordered)
// may emit several spans of one partition, in the order their records were
// added (a later span may start at or below an earlier one's Last). A span
// is a range of positions, not a count: seqs are global, so a span also
// covers positions the source skipped or, for a non-monotone source,
// positions another consumer took. NumRecords counts the records.
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

// AllocatedBytes is the memory the batch holds: the allocated size of
// every Arrow buffer it references (a buffer may be larger than what it
// holds: the assembler sizes a batch's buffers like the recent ones, so a
// batch cut short by linger can hold as much as a full one). A sliced
// buffer counts its slice. It is what a lane's byte bound counts
// (lanes.Options.MaxBytes).
func (b *Batch) AllocatedBytes() int64 { return recordBytes(b.Rec, (*memory.Buffer).Cap) }

// RecordBytes is the size of the buffers rec references, children and
// dictionaries included. For a slice it counts the whole underlying
// buffers: an over-estimate of what the slice itself carries.
func RecordBytes(rec arrow.RecordBatch) int64 { return recordBytes(rec, (*memory.Buffer).Len) }

// recordBytes sums size over the buffers of rec's columns.
func recordBytes(rec arrow.RecordBatch, size func(*memory.Buffer) int) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBytes(c.Data(), size)
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

// NumRecords is the number of source records the batch covers: its rows
// plus the records rejected to the dead-letter path. It is not the sum of
// the spans' Len: seqs are global positions, and a span also covers
// positions this batch holds no record for (the source skipped them, or
// another consumer of a shared subscription took them).
func (b *Batch) NumRecords() uint64 {
	return uint64(b.NumRows()) + uint64(b.Rejected)
}
