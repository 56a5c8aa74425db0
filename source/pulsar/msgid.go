package pulsar

import (
	"encoding/binary"

	pclient "github.com/apache/pulsar-client-go/pulsar"
)

// appendID appends the serialized form of id to dst: the same bytes as
// id.Serialize(), which Record.ID promises, without the protobuf message and
// marshal that Serialize builds for every record (half of Next's time on a
// batched topic).
//
// The encoding is Pulsar's MessageIdData (proto2) with the five fields that
// Serialize sets, in field-number order as the protobuf runtime writes them:
// ledgerId (1), entryId (2), partition (3), batch_index (4), batch_size (6).
// int32 fields are varints of their sign extension, as proto2 requires
// (-1 takes ten bytes). TestAppendIDMatchesSerialize holds it to the
// client's own output.
//
// Only ids of messages inside a batch entry take this path: a chunked
// message's id serializes its first chunk too, and chunked messages are
// never batched, so every id with a batch index below 0 goes to Serialize.
func appendID(dst []byte, id pclient.MessageID) []byte {
	if id.BatchIdx() < 0 {
		return append(dst, id.Serialize()...)
	}
	dst = binary.AppendUvarint(append(dst, 1<<3), uint64(id.LedgerID()))
	dst = binary.AppendUvarint(append(dst, 2<<3), uint64(id.EntryID()))
	dst = binary.AppendUvarint(append(dst, 3<<3), uint64(int64(id.PartitionIdx())))
	dst = binary.AppendUvarint(append(dst, 4<<3), uint64(int64(id.BatchIdx())))
	return binary.AppendUvarint(append(dst, 6<<3), uint64(int64(id.BatchSize())))
}
