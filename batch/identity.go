package batch

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Names of the identity columns a stored row carries: those of RawSchema,
// and, prefixed with MetaPrefix, the metadata columns of ModeJSON with
// AssemblerOptions.IncludeMeta. Every reader that tells stored rows apart
// (a sink's filter, the Flight receiver, the audit) finds them with
// IdentityOf.
const (
	TopicColumn     = "topic"      // utf8: the base topic (SplitPartition)
	PartitionColumn = "partition"  // int32: the partition index, -1 when not partitioned
	SeqColumn       = "seq"        // uint64: Record.Seq
	MessageIDColumn = "message_id" // binary: Record.ID
	MetaPrefix      = "_"          // prefix of the identity columns of ModeJSON rows
)

// Identity holds the indexes of a schema's identity columns.
type Identity struct {
	Topic, Partition, Seq int
}

// IdentityOf finds s's identity columns: TopicColumn (utf8),
// PartitionColumn (int32) and SeqColumn (uint64), or the same names with
// MetaPrefix. ok is false when s has neither set with those types; such
// rows cannot be told apart.
func IdentityOf(s *arrow.Schema) (id Identity, ok bool) {
	find := func(name string, t arrow.Type) int {
		idx := s.FieldIndices(name)
		if len(idx) != 1 || s.Field(idx[0]).Type.ID() != t {
			return -1
		}
		return idx[0]
	}
	for _, prefix := range []string{"", MetaPrefix} {
		id = Identity{
			Topic:     find(prefix+TopicColumn, arrow.STRING),
			Partition: find(prefix+PartitionColumn, arrow.INT32),
			Seq:       find(prefix+SeqColumn, arrow.UINT64),
		}
		if id.Topic >= 0 && id.Partition >= 0 && id.Seq >= 0 {
			return id, true
		}
	}
	return Identity{}, false
}

// Each calls fn, in row order, with the partition name of every row of rec
// (JoinPartition of its topic and partition, the record's
// Record.Partition) and its seq. rec must have the schema id was found in.
// A run of rows of one partition shares one name string.
func (id Identity) Each(rec arrow.RecordBatch, fn func(partition string, seq uint64, row int)) {
	topics := rec.Column(id.Topic).(*array.String)
	parts := rec.Column(id.Partition).(*array.Int32).Int32Values()
	seqs := rec.Column(id.Seq).(*array.Uint64).Uint64Values()
	var lastTopic, lastName string
	var lastPart int32
	for i := range seqs {
		t, p := topics.Value(i), parts[i]
		if i == 0 || t != lastTopic || p != lastPart {
			lastTopic, lastPart, lastName = t, p, JoinPartition(t, p)
		}
		fn(lastName, seqs[i], i)
	}
}
