package pulsar

import (
	"encoding/binary"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
)

// appendID appends the serialized form of id, the id of msg, to dst: the
// same bytes as id.Serialize(), which Record.ID promises, without the
// protobuf message and marshal that Serialize builds for every record (half
// of Next's time on a batched topic).
//
// The encoding is Pulsar's MessageIdData (proto2) with the five fields that
// Serialize sets, in field-number order as the protobuf runtime writes them:
// ledgerId (1), entryId (2), partition (3), batch_index (4), batch_size (6).
// int32 fields are varints of their sign extension, as proto2 requires
// (-1 takes ten bytes). TestAppendIDMatchesSerialize holds it to the
// client's own output.
//
// A message sent on its own (not in a batch entry) has, in pulsar-client-go,
// the id of a batch of one: batch index 0, batch size 1. Its producer's id,
// and the one the Java and Python clients show, has batch index -1, so that
// is what is written: the bytes Serialize writes for
// NewMessageID(ledger, entry, -1, partition). unbatched says which it is
// (unbatchedOf).
//
// Only ids of messages inside a batch entry, and of those sent on their own,
// take this path: a chunked message's id serializes its first chunk too,
// and chunked messages are never batched, so every id with a batch index
// below 0 goes to Serialize.
func appendID(dst []byte, id pclient.MessageID, unbatched bool) []byte {
	if id.BatchIdx() < 0 {
		return append(dst, id.Serialize()...)
	}
	batchIdx, batchSize := int64(id.BatchIdx()), int64(id.BatchSize())
	if unbatched {
		batchIdx, batchSize = -1, 0
	}
	dst = binary.AppendUvarint(append(dst, 1<<3), uint64(id.LedgerID()))
	dst = binary.AppendUvarint(append(dst, 2<<3), uint64(id.EntryID()))
	dst = binary.AppendUvarint(append(dst, 3<<3), uint64(int64(id.PartitionIdx())))
	dst = binary.AppendUvarint(append(dst, 4<<3), uint64(batchIdx))
	return binary.AppendUvarint(append(dst, 6<<3), uint64(batchSize))
}

// unbatchedOf reports whether msg was sent on its own, not in a batch
// entry: pulsar-client-go gives both the same id, and only thalweg's copy
// of it (third_party/pulsar-client-go) tells them apart.
func unbatchedOf(msg pclient.Message) bool {
	u, ok := msg.(interface{ Unbatched() bool })
	return ok && u.Unbatched()
}

// eventTimeOf is msg's event time, the zero time.Time when it has none:
// pulsar-client-go returns time.Unix(0, 0) for a message without one (the
// wire format's 0, which means unset). A producer cannot set the event time
// 1970-01-01T00:00:00Z itself: it is the same 0 on the wire.
func eventTimeOf(msg pclient.Message) time.Time {
	t := msg.EventTime()
	if t.UnixMilli() == 0 {
		return time.Time{}
	}
	return t
}
