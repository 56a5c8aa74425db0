// Package flightwire is the one implementation of the Arrow Flight wire
// encoding that every thalweg Flight speaker uses: the flight sink, the
// durable receiver (flight/receiver), the Zerobus sink's Flight mode and
// the Zerobus server's Flight endpoint. It holds the batch app_metadata
// ({"offset_id":N,"spans":[...],"part":i,"parts":n}), the PutResult ack
// ({"ack_up_to_offset":N,"ack_up_to_records":R} with the Zerobus ready and
// close-stream signals), the exact row split that keeps every message under
// the gRPC limit, the client TLS configuration, the durable watermark
// with its ack-silence watchdog, and the transport's codecs: Message and
// Codec (a DoPut FlightData that references the batch's Arrow buffers),
// ServerCodec (a FlightData decoded in place into ReceivedData, over a
// pooled buffer the receiver gives back) and DirtyPool (a buffer pool that
// does not zero: gRPC's, and RecvPool for received messages). The encoding itself is documented once, in
// the flight package documentation ("Wire encoding").
//
// # Why internal
//
// The package lives under the module's internal/ so that the four speakers
// (two of them under zerobus/, which cannot import flight/internal) share
// it, while it stays out of the library surface: a user meets the encoding
// through flight.Sink, flight/receiver and zerobus, and a foreign peer
// through the documented JSON (pyarrow and the official Zerobus SDK
// interoperate without any Go). Exporting it would freeze helper signatures
// (Plan's limits, the Watermark's hooks) that exist for thalweg's own
// transports, and give users two ways to write the same stream.
//
// It stays thalweg's own: arrow-go's flight package carries FlightData, not
// thalweg's batch metadata, acks and watermark, and its codec copies what
// this one references in place.
package flightwire
