package flightwire

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	protov2 "google.golang.org/protobuf/proto"
)

// FlightData field numbers (Flight.proto): flight_descriptor = 1,
// data_header = 2, app_metadata = 3, data_body = 1000.
const (
	fieldDescriptor = 1
	fieldHeader     = 2
	fieldAppMeta    = 3
	fieldBody       = 1000
)

// Message is one FlightData of a record batch, encoded for gRPC without
// copying the batch's body: the protobuf framing (data_header, app_metadata
// and the data_body field's tag and length) is one small buffer, and the
// body is the list of the batch's own Arrow buffers and their padding, as
// arrow-go's IPC writer lays them out. Send it with SendMsg on a stream
// whose codec is Codec; the bytes gRPC puts on the wire are those
// proto.Marshal gives for the equivalent *flight.FlightData (fields in
// number order, empty fields left out), so any Flight peer reads them.
//
// Ownership: a Message holds the IPC payload, which holds a reference to
// every Arrow buffer of the batch (the batch itself may be released once
// EncodeBatch returned). Codec.Marshal hands the buffers to gRPC; gRPC frees
// them once its HTTP/2 writer has copied the last byte into its write
// buffer (or dropped the message with its stream), which releases the
// payload. SendMsg returns when the message is queued, before that: the
// Arrow buffers stay retained past Send. A Message that was never marshalled
// (SendMsg failed early) must be given back with Free; Free after Marshal
// does nothing.
type Message struct {
	bufs mem.BufferSlice
}

// Len is the encoded size of the FlightData message.
func (m *Message) Len() int { return m.bufs.Len() }

// Free releases a Message gRPC did not take.
func (m *Message) Free() {
	m.bufs.Free()
	m.bufs = nil
}

// msgEncoding is the state of one EncodeBatch, allocated once per message:
// it collects the body pieces SerializeBody writes and, as the (empty) last
// buffer's mem.BufferPool, frees the IPC payload and leaves its Tracker
// when gRPC frees that buffer.
type msgEncoding struct {
	p        ipc.Payload
	tr       *Tracker
	released atomic.Bool
	last     []byte // the sentinel buffer's slice

	// The body pass: pieces of at least coalesceMin bytes (the payload's
	// own buffers) are referenced; smaller ones (validity bitmaps, short
	// offsets, padding) are appended to chunk, which starts with the
	// protobuf framing, so that a small batch is one buffer.
	counting bool
	small    int // counting: bytes of the small pieces
	n        int // body bytes
	chunk    []byte
	chunkBuf *[]byte // chunk's array, from Pool, given back with the payload
	bufs     mem.BufferSlice
}

// coalesceMin is the size from which a body piece is passed to gRPC where
// it is instead of being copied next to the framing: a piece below it costs
// more as one more buffer (an allocation, a slice in the HTTP/2 writer)
// than as a copy of under 1 KiB.
const coalesceMin = 1 << 10

func (e *msgEncoding) Get(int) *[]byte { panic("flightwire: a Message's release is not a pool") }

func (e *msgEncoding) Put(*[]byte) { e.release(true) }

// release frees the payload once, whoever comes first: gRPC (toPool: the
// framing buffer can be reused) or Tracker.ReleaseAll (it cannot: gRPC
// might still read it).
func (e *msgEncoding) release(toPool bool) {
	if !e.released.CompareAndSwap(false, true) {
		return
	}
	if toPool {
		Pool.Put(e.chunkBuf)
	}
	e.p.Release()
	if e.tr != nil {
		e.tr.remove(e)
	}
}

// Tracker keeps the Messages gRPC has not released yet. grpc-go v1.85 does
// not release every message it was given: a message queued for a stream
// that its transport has just cleaned up is dropped without freeing its
// buffers (loopyWriter.preprocessData), which a stream the server refuses
// while the client writes meets. ReleaseAll releases those once the
// connection is closed. It is safe for concurrent use; the zero Tracker is
// ready.
type Tracker struct {
	mu   sync.Mutex
	live map[*msgEncoding]struct{}
}

func (t *Tracker) add(e *msgEncoding) {
	t.mu.Lock()
	if t.live == nil {
		t.live = make(map[*msgEncoding]struct{})
	}
	t.live[e] = struct{}{}
	t.mu.Unlock()
}

func (t *Tracker) remove(e *msgEncoding) {
	t.mu.Lock()
	delete(t.live, e)
	t.mu.Unlock()
}

// Live is the number of Messages not released yet.
func (t *Tracker) Live() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.live)
}

// ReleaseAll releases every Message not released yet and returns how many
// there were. Call it only once gRPC can no longer write them (their
// connection closed): with memory.GoAllocator a late read by gRPC would
// still be safe (the garbage collector keeps the buffers), with an
// allocator that reuses memory it would not.
func (t *Tracker) ReleaseAll() int {
	t.mu.Lock()
	left := make([]*msgEncoding, 0, len(t.live))
	for e := range t.live {
		left = append(left, e)
	}
	t.mu.Unlock()
	for _, e := range left {
		e.release(false)
	}
	return len(left)
}

// sentinel backs the last, empty buffer of every Message. mem.NewBuffer
// tracks (and so calls Put for) only buffers whose capacity exceeds the
// pooling threshold (1 KiB in grpc-go v1.85; TestSentinelTracked holds it);
// the contents are never read (length 0). Being last, it is freed after
// every byte before it was written: gRPC frees a message's buffers in order.
var sentinel [64 << 10]byte

// Write takes a piece of the body from SerializeBody. It keeps (does not
// copy) a piece of coalesceMin bytes or more, breaking io.Writer's "must
// not retain p" on purpose: the piece is one of the payload's buffers, and
// the payload outlives the Message (see Message); the byte-identity test
// against arrow-go's Flight writer holds the layout.
func (e *msgEncoding) Write(p []byte) (int, error) {
	e.n += len(p)
	switch {
	case len(p) < coalesceMin && e.counting:
		e.small += len(p)
	case len(p) < coalesceMin:
		e.chunk = append(e.chunk, p...)
	case !e.counting:
		if len(e.chunk) > 0 {
			e.bufs = append(e.bufs, mem.SliceBuffer(e.chunk))
			e.chunk = e.chunk[len(e.chunk):]
		}
		e.bufs = append(e.bufs, mem.SliceBuffer(p))
	}
	return len(p), nil
}

// EncodeBatch encodes rec as the FlightData of an IPC record batch message
// with appMeta (copied) and the IPC options opts (allocator, compression),
// as arrow-go's flight.Writer would, but without copying the body's
// buffers (pieces under 1 KiB are copied next to the framing). tr, if not
// nil, tracks the Message until its references to the Arrow buffers are
// released (by gRPC, by Free or by tr.ReleaseAll).
func EncodeBatch(rec arrow.RecordBatch, appMeta []byte, opts []ipc.Option, tr *Tracker) (*Message, error) {
	p, err := ipc.GetRecordBatchPayload(rec, opts...)
	if err != nil {
		return nil, fmt.Errorf("encoding the IPC record batch: %w", err)
	}
	e := &msgEncoding{p: p, counting: true}
	if err := p.SerializeBody(e); err != nil {
		p.Release()
		return nil, err
	}
	meta := p.Meta()
	m := meta.Bytes()
	// The framing and small pieces go to a pooled buffer (what the proto
	// codec would take from gRPC's pool for the whole message); it is
	// given back with the payload, once gRPC has written the message.
	e.chunkBuf = Pool.Get(len(m) + len(appMeta) + 24 + e.small)
	e.chunk = (*e.chunkBuf)[:0]
	e.chunk = protowire.AppendTag(e.chunk, fieldHeader, protowire.BytesType)
	e.chunk = protowire.AppendBytes(e.chunk, m)
	meta.Release()
	if len(appMeta) > 0 {
		e.chunk = protowire.AppendTag(e.chunk, fieldAppMeta, protowire.BytesType)
		e.chunk = protowire.AppendBytes(e.chunk, appMeta)
	}
	if e.n > 0 {
		e.chunk = protowire.AppendTag(e.chunk, fieldBody, protowire.BytesType)
		e.chunk = protowire.AppendVarint(e.chunk, uint64(e.n))
	}
	e.counting, e.n = false, 0
	e.bufs = make(mem.BufferSlice, 0, 4)
	if err := p.SerializeBody(e); err != nil {
		Pool.Put(e.chunkBuf)
		p.Release()
		return nil, err
	}
	if len(e.chunk) > 0 {
		e.bufs = append(e.bufs, mem.SliceBuffer(e.chunk))
	}
	e.last = sentinel[:0:len(sentinel)]
	e.bufs = append(e.bufs, mem.NewBuffer(&e.last, e))
	if tr != nil {
		e.tr = tr
		tr.add(e)
	}
	return &Message{bufs: e.bufs}, nil
}

// Codec is the gRPC codec of a DoPut stream written with Message: it
// passes a *Message's buffers through as they are and marshals and
// unmarshals everything else (the schema FlightData, PutResults) as the
// standard proto codec does. Select it per call with grpc.ForceCodecV2; its
// name is "proto", so the content type on the wire stays the standard one.
type Codec struct{}

var protoCodec = encoding.GetCodecV2(proto.Name)

// Marshal implements encoding.CodecV2.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*Message); ok {
		b := m.bufs
		m.bufs = nil
		if b == nil {
			return nil, fmt.Errorf("flightwire: Message marshalled twice")
		}
		return b, nil
	}
	return protoCodec.Marshal(v)
}

// Unmarshal implements encoding.CodecV2.
func (Codec) Unmarshal(data mem.BufferSlice, v any) error {
	return protoCodec.Unmarshal(data, v)
}

// Name implements encoding.CodecV2.
func (Codec) Name() string { return proto.Name }

// ServerCodec is the gRPC codec of a Flight server that reads DoPut
// streams into ReceivedData: it gathers the message into one buffer from
// RecvPool and decodes the FlightData by hand, so that data_body (and
// data_header, app_metadata) alias that buffer, instead of the standard
// codec's two copies (a pooled buffer the message is gathered into, then
// a new slice per bytes field). Everything else, a plain *flight.FlightData
// included, goes through the standard proto codec. Install it with
// grpc.ForceServerCodecV2.
type ServerCodec struct{}

// Marshal implements encoding.CodecV2.
func (ServerCodec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

// Name implements encoding.CodecV2.
func (ServerCodec) Name() string { return proto.Name }

// Unmarshal implements encoding.CodecV2.
func (ServerCodec) Unmarshal(data mem.BufferSlice, v any) error {
	rd, ok := v.(*ReceivedData)
	if !ok {
		return protoCodec.Unmarshal(data, v)
	}
	b := RecvPool.Get(data.Len())
	data.CopyTo(*b)
	if err := UnmarshalFlightData(*b, &rd.FlightData); err != nil {
		RecvPool.Put(b)
		return err
	}
	rd.buf = b
	rd.refs.Store(1)
	return nil
}

// ReceivedData is a FlightData that ServerCodec decoded in place over a
// buffer from RecvPool, for a server that gives the buffer back once it is
// done with the message: a receiver storing 8 MB batches otherwise
// allocates (and the runtime zeroes) 8 MB per message. Receive into it with
// the stream's RecvMsg.
//
// Ownership: the message starts with one reference, the receiver's. Every
// holder of its fields (DataHeader, DataBody, AppMetadata, and anything
// sliced from them, such as an IPC record decoded without copying) must
// hold a reference, taken with Retain, and drop it with Release once it no
// longer reads them; the last Release gives the buffer back, after which
// the fields hold other messages' bytes. A reference never released only
// leaves the buffer to the garbage collector. In race-detector builds (the
// test builds) a released buffer is overwritten, so that a read after the
// last Release shows up as corrupted data in tests. Retain and Release are
// safe for concurrent use.
type ReceivedData struct {
	flight.FlightData
	buf  *[]byte
	refs atomic.Int32
}

// Retain adds a reference.
func (d *ReceivedData) Retain() { d.refs.Add(1) }

// Release drops a reference; the last one gives the buffer back.
func (d *ReceivedData) Release() {
	switch n := d.refs.Add(-1); {
	case n > 0:
		return
	case n < 0:
		panic("flightwire: ReceivedData released more often than retained")
	}
	b := d.buf
	d.buf = nil
	if b == nil {
		return
	}
	if poisonReleased {
		for i := range *b {
			(*b)[i] = poison
		}
	}
	RecvPool.Put(b)
}

// UnmarshalFlightData decodes b into fd, aliasing b: fd's bytes fields are
// subslices of b. It accepts what proto.Unmarshal accepts for FlightData
// (unknown fields and known fields of another wire type are skipped, a
// repeated field's last occurrence wins, a repeated flight_descriptor is
// merged; unknown fields are dropped, not kept), and fails where it fails.
func UnmarshalFlightData(b []byte, fd *flight.FlightData) error {
	fd.Reset()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("flightwire: FlightData: %w", protowire.ParseError(n))
		}
		if num > protowire.MaxValidNumber {
			return fmt.Errorf("flightwire: FlightData: field number %d out of range", num)
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == fieldDescriptor || num == fieldHeader || num == fieldAppMeta || num == fieldBody) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return fmt.Errorf("flightwire: FlightData field %d: %w", num, protowire.ParseError(n))
			}
			b = b[n:]
			switch num {
			case fieldDescriptor:
				if fd.FlightDescriptor == nil {
					fd.FlightDescriptor = &flight.FlightDescriptor{}
				}
				if err := (protov2.UnmarshalOptions{Merge: true}).Unmarshal(v, fd.FlightDescriptor); err != nil {
					return fmt.Errorf("flightwire: FlightData flight_descriptor: %w", err)
				}
			case fieldHeader:
				fd.DataHeader = v
			case fieldAppMeta:
				fd.AppMetadata = v
			case fieldBody:
				fd.DataBody = v
			}
			continue
		}
		// Another field, or a known one of the wrong wire type, which
		// proto.Unmarshal also keeps as an unknown field: skip it.
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return fmt.Errorf("flightwire: FlightData field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return nil
}
