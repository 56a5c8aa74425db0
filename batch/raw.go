package batch

import (
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Column indexes of RawSchema.
const (
	rawPartition = iota
	rawSeq
	rawMessageID
	rawKey
	rawPublishTime
	rawEventTime
	rawProperties
	rawPayload
	rawNumFields
)

var rawPropsType = arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String)

var rawSchema = arrow.NewSchema([]arrow.Field{
	rawPartition:   {Name: "partition", Type: arrow.PrimitiveTypes.Int32},
	rawSeq:         {Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
	rawMessageID:   {Name: "message_id", Type: arrow.BinaryTypes.Binary},
	rawKey:         {Name: "key", Type: arrow.BinaryTypes.Binary, Nullable: true},
	rawPublishTime: {Name: "publish_time", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
	rawEventTime:   {Name: "event_time", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
	rawProperties:  {Name: "properties", Type: rawPropsType},
	rawPayload:     {Name: "payload", Type: arrow.BinaryTypes.Binary},
}, nil)

// RawSchema is the schema of ModeRaw batches, one row per record:
//
//	partition     int32                  not null
//	seq           uint64                 not null
//	message_id    binary                 not null (empty when the record has no ID)
//	key           binary                 null when Record.Key is nil
//	publish_time  timestamp[us, UTC]     null when the time is zero
//	event_time    timestamp[us, UTC]     null when the time is zero
//	properties    map<string, string>    not null (empty map when no properties), keys sorted
//	payload       binary                 not null
//
// The returned schema is shared and must not be modified.
func RawSchema() *arrow.Schema { return rawSchema }

// rawRowOverhead is the fixed part of the raw size estimate: fixed-width
// values (4+8+8+8) plus one int32 offset each for message_id, key,
// properties and payload.
const rawRowOverhead = 4 + 8 + 8 + 8 + 4*4

// rawColumns accumulates ModeRaw rows in plain Go slices and turns them into
// Arrow arrays at flush. Raw assembly is the hot path (the target is millions
// of records per second per core); generic builders spend most of that
// budget on per-value capacity checks, interface calls and repeated
// regrowth. Here each value is one append to a slice that is reused across
// batches, and flush makes one exact-size allocator buffer per Arrow buffer
// and copies into it: one extra memcpy, no per-batch regrowth, and nothing
// allocated on the Go heap in steady state.
type rawColumns struct {
	rows      int
	partition column[int32]
	seq       column[uint64]
	id        bytesCol
	key       bytesCol
	keyValid  bitmap
	pubTime   column[int64]
	pubValid  bitmap
	evTime    column[int64]
	evValid   bitmap
	propOffs  column[int32] // map offsets into the entries, rows+1 values
	propKeys  bytesCol
	propVals  bytesCol
	payload   bytesCol

	// keys are the sorted property keys of the previous record. They may
	// reference a caller's strings after Add returns; that pins them, but
	// never exposes them.
	keys []string
}

// column is a growable slice whose length lives in n rather than in the
// slice header: appending stores only the value and an int, never a
// pointer, so the hot path runs without GC write barriers (which the
// flush-time allocations otherwise keep switched on a good part of the
// time). The slice header is rewritten only when it grows.
type column[T any] struct {
	v []T
	n int
}

func (c *column[T]) append(x T) {
	if c.n == len(c.v) {
		c.grow(1)
	}
	c.v[c.n] = x
	c.n++
}

func (c *column[T]) appendSlice(x []T) {
	if c.n+len(x) > len(c.v) {
		c.grow(len(x))
	}
	c.n += copy(c.v[c.n:], x)
}

func (c *column[T]) grow(need int) {
	c.v = slices.Grow(c.v[:c.n], need)
	c.v = c.v[:cap(c.v)]
}

func (c *column[T]) values() []T { return c.v[:c.n] }

// bytesCol is a binary/string column: Arrow offsets (rows+1 values) and data.
type bytesCol struct {
	offsets column[int32]
	data    column[byte]
}

func (c *bytesCol) reset() {
	c.offsets.n, c.data.n = 0, 0
	c.offsets.append(0)
}

func (c *bytesCol) append(v []byte) {
	c.data.appendSlice(v)
	c.offsets.append(int32(c.data.n))
}

func (c *bytesCol) appendString(v string) {
	if c.data.n+len(v) > len(c.data.v) {
		c.data.grow(len(v))
	}
	c.data.n += copy(c.data.v[c.data.n:], v)
	c.offsets.append(int32(c.data.n))
}

// truncate drops the values after the first n (n >= 0).
func (c *bytesCol) truncate(n int) {
	c.offsets.n = n + 1
	c.data.n = int(c.offsets.v[n])
}

// bitmap is an Arrow validity bitmap under construction.
type bitmap struct {
	bits  column[byte]
	n     int
	nulls int
}

func (b *bitmap) reset() { b.bits.n, b.n, b.nulls = 0, 0, 0 }

func (b *bitmap) append(valid bool) {
	if b.n%8 == 0 {
		b.bits.append(0)
	}
	if valid {
		b.bits.v[b.n/8] |= 1 << (b.n % 8)
	} else {
		b.nulls++
	}
	b.n++
}

func newRawColumns() *rawColumns {
	c := &rawColumns{}
	c.reset()
	return c
}

func (c *rawColumns) reset() {
	c.rows = 0
	c.partition.n, c.seq.n, c.pubTime.n, c.evTime.n = 0, 0, 0, 0
	c.propOffs.n = 0
	c.propOffs.append(0)
	for _, b := range []*bytesCol{&c.id, &c.key, &c.propKeys, &c.propVals, &c.payload} {
		b.reset()
	}
	for _, b := range []*bitmap{&c.keyValid, &c.pubValid, &c.evValid} {
		b.reset()
	}
}

// append adds rec as one row and returns its estimated size in bytes.
func (c *rawColumns) append(rec *Record) int {
	c.rows++
	c.partition.append(rec.Partition)
	c.seq.append(rec.Seq)
	c.id.append(rec.ID)
	c.key.append(rec.Key)
	c.keyValid.append(rec.Key != nil)
	c.pubTime.append(rec.PublishTime.UnixMicro())
	c.pubValid.append(!rec.PublishTime.IsZero())
	c.evTime.append(rec.EventTime.UnixMicro())
	c.evValid.append(!rec.EventTime.IsZero())
	c.payload.append(rec.Payload)
	size := rawRowOverhead + len(rec.ID) + len(rec.Key) + len(rec.Payload)
	if len(rec.Props) > 0 {
		size += c.appendProps(rec.Props)
	}
	c.propOffs.append(int32(c.propKeys.offsets.n - 1))
	return size
}

// appendProps appends the entries of props sorted by key: sorted keys make
// the batch a deterministic function of the records, which Go's map order
// would not. Producers usually send the same key set on every record, so
// the sorted keys of the previous record are tried first: one lookup per
// key, no iteration or sorting of the map.
func (c *rawColumns) appendProps(props map[string]string) int {
	// Fast path: append straight to the columns, storing no pointers (so
	// no GC write barriers), and roll back if the key set changed.
	if len(c.keys) == len(props) {
		entries := c.propKeys.offsets.n - 1
		size := 0
		ok := true
		for _, k := range c.keys {
			v, found := props[k]
			if !found {
				ok = false
				break
			}
			c.propKeys.appendString(k)
			c.propVals.appendString(v)
			size += 8 + len(k) + len(v)
		}
		if ok {
			return size
		}
		c.propKeys.truncate(entries)
		c.propVals.truncate(entries)
	}
	clear(c.keys)
	c.keys = c.keys[:0]
	for k := range props {
		c.keys = append(c.keys, k)
	}
	slices.Sort(c.keys)
	size := 0
	for _, k := range c.keys {
		v := props[k]
		c.propKeys.appendString(k)
		c.propVals.appendString(v)
		size += 8 + len(k) + len(v)
	}
	return size
}

// build returns the accumulated rows as a record batch whose buffers come
// from mem, and resets the columns.
func (c *rawColumns) build(mem memory.Allocator) arrow.RecordBatch {
	n := c.rows
	cols := [rawNumFields]arrow.Array{
		rawPartition:   makeArray(arrow.PrimitiveTypes.Int32, n, 0, nil, nil, copyBuf(mem, c.partition.values())),
		rawSeq:         makeArray(arrow.PrimitiveTypes.Uint64, n, 0, nil, nil, copyBuf(mem, c.seq.values())),
		rawMessageID:   makeArray(arrow.BinaryTypes.Binary, n, 0, nil, c.id.buffers(mem)...),
		rawKey:         makeArray(arrow.BinaryTypes.Binary, n, c.keyValid.nulls, nil, c.key.buffersValid(mem, &c.keyValid)...),
		rawPublishTime: makeArray(arrow.FixedWidthTypes.Timestamp_us, n, c.pubValid.nulls, nil, c.pubValid.buffer(mem), copyBuf(mem, c.pubTime.values())),
		rawEventTime:   makeArray(arrow.FixedWidthTypes.Timestamp_us, n, c.evValid.nulls, nil, c.evValid.buffer(mem), copyBuf(mem, c.evTime.values())),
		rawPayload:     makeArray(arrow.BinaryTypes.Binary, n, 0, nil, c.payload.buffers(mem)...),
	}
	entries := c.propKeys.offsets.n - 1
	keys := makeData(arrow.BinaryTypes.String, entries, 0, nil, c.propKeys.buffers(mem)...)
	vals := makeData(arrow.BinaryTypes.String, entries, 0, nil, c.propVals.buffers(mem)...)
	structData := makeData(rawPropsType.Elem(), entries, 0, []arrow.ArrayData{keys, vals}, nil)
	keys.Release()
	vals.Release()
	cols[rawProperties] = makeArray(rawPropsType, n, 0, []arrow.ArrayData{structData}, nil, copyBuf(mem, c.propOffs.values()))
	structData.Release()

	rec := array.NewRecordBatch(rawSchema, cols[:], int64(n))
	for _, col := range cols {
		col.Release()
	}
	c.reset()
	return rec
}

func (c *bytesCol) buffers(mem memory.Allocator) []*memory.Buffer {
	return []*memory.Buffer{nil, copyBuf(mem, c.offsets.values()), copyBuf(mem, c.data.values())}
}

func (c *bytesCol) buffersValid(mem memory.Allocator, valid *bitmap) []*memory.Buffer {
	return []*memory.Buffer{valid.buffer(mem), copyBuf(mem, c.offsets.values()), copyBuf(mem, c.data.values())}
}

// buffer returns the validity buffer, or nil when nothing is null (Arrow's
// "all valid").
func (b *bitmap) buffer(mem memory.Allocator) *memory.Buffer {
	if b.nulls == 0 {
		return nil
	}
	return copyBuf(mem, b.bits.values())
}

// copyBuf returns a new buffer from mem holding a copy of v.
func copyBuf[T any](mem memory.Allocator, v []T) *memory.Buffer {
	var zero T
	n := len(v) * int(unsafe.Sizeof(zero))
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n)
	if n > 0 {
		copy(buf.Bytes(), unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), n))
	}
	return buf
}

// makeData wraps buffers (taking over the caller's references) into Data.
func makeData(dt arrow.DataType, n, nulls int, children []arrow.ArrayData, bufs ...*memory.Buffer) *array.Data {
	d := array.NewData(dt, n, bufs, children, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return d
}

func makeArray(dt arrow.DataType, n, nulls int, children []arrow.ArrayData, bufs ...*memory.Buffer) arrow.Array {
	d := makeData(dt, n, nulls, children, bufs...)
	defer d.Release()
	return array.MakeFromData(d)
}
