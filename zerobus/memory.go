package zerobus

// RetainedBound is an upper bound of the encoded bytes an ephemeral-mode
// Sink keeps for one batch it was handed and has not yet written: Send
// encodes the whole batch at once and the frames stay until the writer has
// written them (see entry). A stream that does not take the bytes (a
// stalled server holds the gRPC flow-control window shut, or a rotation
// pauses the writer) therefore keeps the encoding of every batch the lane
// has sent on top of the lane's own reference to the batch. Written
// batches keep nothing; the Flight mode keeps only references, never a
// copy (0 here).
//
// batchBytes is the batch's estimated column bytes (batch.Stats.Bytes,
// the figure batching.max_bytes bounds). The factors are measured on
// raw-mode batches with random binary payloads (TestRetainedBound): JSON
// spells every field name in every row and base64 doubles-and-a-third a
// binary value, 1.3× for 16 KiB payloads up to 1.9× for 16-byte ones, so
// 2×; protobuf stays at or below the Arrow size (0.8–1.0×), so 5/4.
func RetainedBound(mode Mode, enc Encoding, batchBytes int64) int64 {
	if mode == ModeFlight {
		return 0
	}
	if enc == EncodingProto {
		return batchBytes * 5 / 4
	}
	return 2 * batchBytes
}

// sendCopies is how many transient copies of one batch an ephemeral-mode
// stream's Send makes on its way to the socket: its records, the protobuf
// message, the HTTP/2 frames.
const sendCopies = 3

// SendMemory bounds the transient copies of one message of msgBytes (the
// batch, or Options.MaxMessageSize when smaller) an ephemeral-mode Sink
// makes on its way to the socket, one batch at a time. The Flight mode
// sends as the Flight sink does (flightwire.SendMemory): 0 here.
func SendMemory(mode Mode, msgBytes int64) int64 {
	if mode == ModeFlight {
		return 0
	}
	return sendCopies * msgBytes
}
