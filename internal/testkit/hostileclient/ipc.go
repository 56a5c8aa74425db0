// Package hostileclient builds the inputs of hostile clients for the servers'
// tests: Arrow IPC messages whose headers declare more than they carry
// (decompression and row bombs, invalid offsets), and a raw HTTP/2 gRPC
// client that never opens its receive window. It is for tests only.
//
// It stays thalweg's own: no library builds malformed Arrow IPC headers
// or misbehaving HTTP/2 clients on purpose.
package hostileclient

import (
	"bytes"
	"encoding/binary"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/klauspost/compress/zstd"
)

// Node is a FieldNode of a record batch header.
type Node struct{ Length, Nulls int64 }

// Codec of a compressed record batch (Message.fbs CompressionType); None
// sends buffers uncompressed.
type Codec int8

const (
	None Codec = -1
	LZ4  Codec = 0
	Zstd Codec = 1
)

// Message is one IPC message as FlightData fields.
type Message struct{ Header, Body []byte }

// Schema encodes sc as an IPC schema message header.
func Schema(sc *arrow.Schema) []byte {
	p := ipc.GetSchemaPayload(sc, memory.NewGoAllocator())
	defer p.Release()
	m := p.Meta()
	defer m.Release()
	return bytes.Clone(m.Bytes())
}

// RecordBatch builds a record batch message of rows rows from raw
// parts: the field nodes in schema order (depth first) and the body
// buffers, laid out 8-byte aligned in the order given. With a codec the
// buffers must already be in the compressed layout (8-byte uncompressed
// length, then the frame); see ZstdBuffer.
func RecordBatch(rows int64, nodes []Node, buffers [][]byte, codec Codec) Message {
	var body []byte
	type span struct{ off, n int64 }
	spans := make([]span, len(buffers))
	for i, b := range buffers {
		spans[i] = span{int64(len(body)), int64(len(b))}
		body = append(body, b...)
		for len(body)%8 != 0 {
			body = append(body, 0)
		}
	}
	fb := flatbuffers.NewBuilder(1024)
	var comp flatbuffers.UOffsetT
	if codec != None {
		fb.StartObject(2)
		fb.PrependInt8Slot(0, int8(codec), -1)
		comp = fb.EndObject()
	}
	fb.StartVector(16, len(spans), 8)
	for i := len(spans) - 1; i >= 0; i-- {
		fb.Prep(8, 16)
		fb.PrependInt64(spans[i].n)
		fb.PrependInt64(spans[i].off)
	}
	bufs := fb.EndVector(len(spans))
	fb.StartVector(16, len(nodes), 8)
	for i := len(nodes) - 1; i >= 0; i-- {
		fb.Prep(8, 16)
		fb.PrependInt64(nodes[i].Nulls)
		fb.PrependInt64(nodes[i].Length)
	}
	nvec := fb.EndVector(len(nodes))
	fb.StartObject(5)
	fb.PrependInt64Slot(0, rows, 0)
	fb.PrependUOffsetTSlot(1, nvec, 0)
	fb.PrependUOffsetTSlot(2, bufs, 0)
	if codec != None {
		fb.PrependUOffsetTSlot(3, comp, 0)
	}
	rb := fb.EndObject()
	fb.StartObject(5)
	fb.PrependInt16Slot(0, int16(ipc.MetadataV5), 0)
	fb.PrependByteSlot(1, 3, 0) // MessageHeader.RecordBatch
	fb.PrependUOffsetTSlot(2, rb, 0)
	fb.PrependInt64Slot(3, int64(len(body)), 0)
	fb.Finish(fb.EndObject())
	return Message{Header: bytes.Clone(fb.FinishedBytes()), Body: body}
}

var zeros struct {
	sync.Mutex
	frames map[int64][]byte
}

// ZstdBuffer is a compressed IPC buffer that decompresses to n zero bytes:
// its 8-byte length prefix declares n, a real zstd frame follows (a few KiB
// for 256 MiB). Frames are cached per n.
func ZstdBuffer(n int64) []byte {
	zeros.Lock()
	defer zeros.Unlock()
	if f, ok := zeros.frames[n]; ok {
		return f
	}
	var out bytes.Buffer
	var prefix [8]byte
	binary.LittleEndian.PutUint64(prefix[:], uint64(n))
	out.Write(prefix[:])
	w, err := zstd.NewWriter(&out, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err)
	}
	chunk := make([]byte, 1<<20)
	for left := n; left > 0; left -= int64(len(chunk)) {
		if _, err := w.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	if zeros.frames == nil {
		zeros.frames = map[int64][]byte{}
	}
	zeros.frames[n] = out.Bytes()
	return out.Bytes()
}

// Int64Schema is a schema of cols non-nullable int64 columns c0, c1, ...
func Int64Schema(cols int) *arrow.Schema {
	fs := make([]arrow.Field, cols)
	for i := range fs {
		fs[i] = arrow.Field{Name: "c" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Type: arrow.PrimitiveTypes.Int64}
	}
	return arrow.NewSchema(fs, nil)
}

// ZstdBomb is a record batch of Int64Schema(cols) whose every data buffer
// is a zstd frame of perColumn zero bytes (perColumn/8 rows). 24 columns of
// 256 MiB make a ~200 KB message that decodes to 6 GiB.
func ZstdBomb(cols int, perColumn int64) Message {
	rows := perColumn / 8
	nodes := make([]Node, cols)
	var bufs [][]byte
	for i := range nodes {
		nodes[i] = Node{Length: rows}
		bufs = append(bufs, nil, ZstdBuffer(perColumn))
	}
	return RecordBatch(rows, nodes, bufs, Zstd)
}

// NullSchema is one Null-typed column "n".
var NullSchema = arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.Null, Nullable: true}}, nil)

// NullRows is a record batch of NullSchema declaring rows rows: a Null
// column has no buffers, so the message is ~200 bytes whatever rows says.
func NullRows(rows int64) Message {
	return RecordBatch(rows, []Node{{Length: rows, Nulls: rows}}, nil, None)
}

// StringSchema is one non-nullable utf8 column "s".
var StringSchema = arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)

// Strings is a record batch of StringSchema with the given int32 offsets
// (len(offsets)-1 rows) over data, unchecked: negative, decreasing or
// out-of-range offsets, and invalid UTF-8, are sent as given.
func Strings(offsets []int32, data []byte) Message {
	ob := make([]byte, 4*len(offsets))
	for i, o := range offsets {
		binary.LittleEndian.PutUint32(ob[4*i:], uint32(o))
	}
	rows := int64(len(offsets) - 1)
	return RecordBatch(rows, []Node{{Length: rows}}, [][]byte{nil, ob, data}, None)
}
