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
	rawTopic = iota
	rawPartition
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
	rawTopic:       {Name: TopicColumn, Type: arrow.BinaryTypes.String},
	rawPartition:   {Name: PartitionColumn, Type: arrow.PrimitiveTypes.Int32},
	rawSeq:         {Name: SeqColumn, Type: arrow.PrimitiveTypes.Uint64},
	rawMessageID:   {Name: MessageIDColumn, Type: arrow.BinaryTypes.Binary},
	rawKey:         {Name: "key", Type: arrow.BinaryTypes.Binary, Nullable: true},
	rawPublishTime: {Name: "publish_time", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
	rawEventTime:   {Name: "event_time", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
	rawProperties:  {Name: "properties", Type: rawPropsType},
	rawPayload:     {Name: "payload", Type: arrow.BinaryTypes.Binary},
}, nil)

// RawSchema is the schema of ModeRaw batches, one row per record:
//
//	topic         utf8                   not null
//	partition     int32                  not null
//	seq           uint64                 not null
//	message_id    binary                 not null (empty when the record has no ID)
//	key           binary                 null when Record.Key is nil
//	publish_time  timestamp[us, UTC]     null when the time is zero
//	event_time    timestamp[us, UTC]     null when the time is zero
//	properties    map<string, string>    not null (empty map when no properties), keys sorted
//	payload       binary                 not null
//
// The first four columns are the record's identity: topic and partition are
// SplitPartition(Record.Partition) (the base topic and the Pulsar partition
// index, -1 when the topic is not partitioned), seq is Record.Seq (for
// Pulsar the broker's entry index plus one) and message_id Record.ID. A
// reader joins rows to Pulsar by (topic, partition, message_id).
//
// The returned schema is shared and must not be modified.
func RawSchema() *arrow.Schema { return rawSchema }

// rawRowOverhead is the fixed part of the raw size estimate: fixed-width
// values (4+8+8+8) plus one int32 offset each for topic, message_id, key,
// properties and payload. The topic's bytes are added per row.
const rawRowOverhead = 4 + 8 + 8 + 8 + 5*4

// Sizing of the buffers of a batch (see rawColumns).
const (
	rawMinRows    = 32   // rows of the first buffers ever, when nothing is known
	rawMinData    = 512  // bytes of a variable-length data buffer's first allocation
	rawShrinkOver = 1024 // a finished buffer larger than this is shrunk when under half full
)

// rawShortRun is how many batches in a row may be shorter than the hints
// before the hints follow them down (see rawColumns.build).
const rawShortRun = 8

// rawHint holds the buffer sizes a batch starts with.
type rawHint struct{ rows, entries, topic, id, key, payload, pkeys, pvals int }

// rawColumns writes ModeRaw rows straight into the allocator buffers that
// become the batch's Arrow buffers. Raw assembly is the hot path (the target
// is millions of records per second per core), where generic builders spend
// most of the budget on per-value capacity checks, interface calls and
// regrowth, and where even one extra copy of every byte at flush is a large
// share of the cost. So:
//
//   - The first row of a batch allocates every fixed-width buffer for as
//     many rows as the previous batch had (and each data buffer, on first
//     use, for the previous batch's bytes plus 1/16), so a steady stream of
//     full batches never regrows or copies; one capacity check per row
//     covers all fixed-width columns. A buffer that does overflow doubles.
//   - Flush hands the buffers to the batch as they are, with their length
//     set. A buffer less than half full (a linger flush after full batches)
//     is first copied into an exact-size one, so a small batch never pins
//     the capacity of a large one; in all, at most half of a buffer's
//     capacity is unused.
//   - Validity bitmaps are created at the first null; a column without nulls
//     costs one predictable branch per row.
//   - Property keys of a repeated key set are copied as one block.
//   - Buffers come from a bufferPool: the buffers of batches the consumer
//     has released make the next batches, so a steady stream allocates
//     nothing at all and does not drive the garbage collector (allocating
//     every batch afresh cost half of BenchmarkAssembleRaw's time).
//
// Stores into the buffers write no pointers, so the hot path runs without
// GC write barriers; slice headers are rewritten only when a buffer is
// (re)allocated. Nothing is allocated on the Go heap per record.
type rawColumns struct {
	mem     memory.Allocator // pool, as the batches' allocator
	pool    *bufferPool
	maxRows int

	rows       int // rows in the current batch
	capRows    int // rows the fixed-width buffers hold; 0 before the batch's first row
	entries    int // property entries in the current batch
	capEntries int // entries the property offset buffers hold

	topicOffs fixedBuf[int32] // rows+1 offsets into topic
	partition fixedBuf[int32]
	seq       fixedBuf[uint64]
	pubTime   fixedBuf[int64]
	evTime    fixedBuf[int64]
	idOffs    fixedBuf[int32] // rows+1 offsets into id
	keyOffs   fixedBuf[int32]
	payOffs   fixedBuf[int32]
	propOffs  fixedBuf[int32] // map offsets into the entries, rows+1 values
	keyValid  validity
	pubValid  validity
	evValid   validity
	topic     dataBuf
	id        dataBuf
	key       dataBuf
	payload   dataBuf
	pkeyOffs  fixedBuf[int32] // entries+1 offsets into pkeys
	pvalOffs  fixedBuf[int32] // entries+1 offsets into pvals
	pkeys     dataBuf
	pvals     dataBuf

	// hint holds the sizes that the buffers of the next batch start with:
	// the largest of the recent batches' (see build); short counts the
	// batches since the hints were last reset.
	hint  rawHint
	short int
	// poolLimit is the pool's limit in bytes (see build).
	poolLimit int

	// keys are the sorted property keys of the last record with properties,
	// keyBytes their concatenation and keyEnds[i] the end of keys[i] in it.
	// keys may reference a caller's strings after Add returns; that pins
	// them, but never exposes them.
	keys     []string
	keyBytes []byte
	keyEnds  []int32
}

// fixedBuf is a fixed-width column or offsets buffer under construction; its
// length is kept by rawColumns (rows or entries).
type fixedBuf[T int32 | int64 | uint64] struct {
	buf *memory.Buffer
	v   []T // buf's capacity viewed as []T
}

// realloc replaces the buffer by one of n values holding the first keep.
func (f *fixedBuf[T]) realloc(mem memory.Allocator, n, keep int) {
	var zero T
	b := memory.NewResizableBuffer(mem)
	b.Reserve(n * int(unsafe.Sizeof(zero)))
	v := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b.Buf()))), n)
	copy(v, f.v[:keep])
	if f.buf != nil {
		f.buf.Release()
	}
	f.buf, f.v = b, v
}

// take hands the buffer, holding n values, over to the caller.
func (f *fixedBuf[T]) take(mem memory.Allocator, n int) *memory.Buffer {
	var zero T
	b := finish(mem, f.buf, n*int(unsafe.Sizeof(zero)))
	f.buf, f.v = nil, nil
	return b
}

// dataBuf is the data buffer of a binary or string column under
// construction.
type dataBuf struct {
	mem memory.Allocator
	buf *memory.Buffer
	p   []byte // buf's capacity
	n   int    // bytes used
}

// fits reports whether need more bytes fit without growing.
func (d *dataBuf) fits(need int) bool { return need <= len(d.p)-d.n }

// add appends v, which must fit, and returns the end offset.
func (d *dataBuf) add(v []byte) int32 {
	d.n += copy(d.p[d.n:], v)
	return int32(d.n)
}

// addString appends v, which must fit, and returns the end offset.
func (d *dataBuf) addString(v string) int32 {
	d.n += copy(d.p[d.n:], v)
	return int32(d.n)
}

// reserve makes room for need more bytes.
func (d *dataBuf) reserve(need int) {
	if !d.fits(need) {
		d.grow(need)
	}
}

// grow makes room for need more bytes: the first allocation of a batch
// takes the size hint, later ones double.
func (d *dataBuf) grow(need int) {
	n := max(d.n+need, 2*len(d.p), rawMinData)
	b := memory.NewResizableBuffer(d.mem)
	b.Reserve(n)
	copy(b.Buf(), d.p[:d.n])
	if d.buf != nil {
		d.buf.Release()
	}
	d.buf, d.p = b, b.Buf()
}

// start allocates the buffer of a new batch for hint bytes.
func (d *dataBuf) start(hint int) {
	if hint > 0 {
		d.grow(hint)
	}
}

// take hands the buffer over to the caller and empties d.
func (d *dataBuf) take() *memory.Buffer {
	b := finish(d.mem, d.buf, d.n)
	d.buf, d.p, d.n = nil, nil, 0
	return b
}

// validity is a validity bitmap under construction, created at the first
// null.
type validity struct {
	buf   *memory.Buffer
	bits  []byte // buf's capacity; nil while every row is valid
	nulls int
}

// set records whether row r is valid. Rows before r are already recorded.
func (v *validity) set(mem memory.Allocator, r, capRows int, valid bool) {
	if v.bits == nil {
		// First null: every earlier row was valid.
		v.realloc(mem, capRows, 0)
		clear(v.bits[:r/8+1])
		for i := range r / 8 {
			v.bits[i] = 0xff
		}
		v.bits[r/8] = byte(1)<<(r%8) - 1
	}
	// The allocator's memory is not necessarily zeroed: the first row of
	// each byte writes the whole byte.
	b := v.bits[r/8]
	if r%8 == 0 {
		b = 0
	}
	if valid {
		b |= 1 << (r % 8)
	} else {
		v.nulls++
	}
	v.bits[r/8] = b
}

// realloc replaces the bitmap by one for capRows rows holding the first
// keep rows' bits. Bytes past them are left uninitialised (see set).
func (v *validity) realloc(mem memory.Allocator, capRows, keep int) {
	b := memory.NewResizableBuffer(mem)
	b.Reserve(bitutilBytes(capRows))
	copy(b.Buf(), v.bits[:bitutilBytes(keep)])
	if v.buf != nil {
		v.buf.Release()
	}
	v.buf, v.bits = b, b.Buf()
}

// take hands the bitmap of n rows and its null count over to the caller;
// the bitmap is nil when no row is null (Arrow's "all valid").
func (v *validity) take(mem memory.Allocator, n int) (*memory.Buffer, int) {
	var b *memory.Buffer
	if v.buf != nil {
		b = finish(mem, v.buf, bitutilBytes(n))
	}
	nulls := v.nulls
	v.buf, v.bits, v.nulls = nil, nil, 0
	return b, nulls
}

func bitutilBytes(bits int) int { return (bits + 7) / 8 }

// finish sets b's length to n and returns it, or an exact-size copy when b
// is large and less than half used. A nil b (nothing was appended) becomes
// an empty buffer.
func finish(mem memory.Allocator, b *memory.Buffer, n int) *memory.Buffer {
	if b == nil {
		return memory.NewResizableBuffer(mem)
	}
	if b.Cap() > rawShrinkOver && n < b.Cap()/2 {
		exact := memory.NewResizableBuffer(mem)
		exact.Resize(n)
		copy(exact.Bytes(), b.Buf()[:n])
		b.Release()
		return exact
	}
	b.ResizeNoShrink(n)
	return b
}

// newRawColumns returns the columns of ModeRaw batches, whose buffers come
// from a bufferPool over mem. The caller must call close when done.
func newRawColumns(mem memory.Allocator, maxRows int) *rawColumns {
	pool := newBufferPool(mem)
	c := &rawColumns{mem: pool, pool: pool, maxRows: maxRows}
	for _, d := range []*dataBuf{&c.topic, &c.id, &c.key, &c.payload, &c.pkeys, &c.pvals} {
		d.mem = pool
	}
	return c
}

// close returns the pooled buffers to the allocator. Batches built earlier
// stay valid; their buffers go straight to the allocator when released. It
// must not be called while a batch is being assembled (the assembler closes
// after its final flush).
func (c *rawColumns) close() { c.pool.close() }

// growRows makes room for one more row in every fixed-width buffer. The
// first call of a batch allocates them for the previous batch's rows.
func (c *rawColumns) growRows() {
	n := min(max(2*c.capRows, c.hint.rows, rawMinRows), max(c.maxRows, c.rows+1))
	keep := c.rows
	c.partition.realloc(c.mem, n, keep)
	c.seq.realloc(c.mem, n, keep)
	c.pubTime.realloc(c.mem, n, keep)
	c.evTime.realloc(c.mem, n, keep)
	keepOffs := 0
	if c.capRows > 0 {
		keepOffs = keep + 1
	}
	for _, o := range []*fixedBuf[int32]{&c.topicOffs, &c.idOffs, &c.keyOffs, &c.payOffs, &c.propOffs} {
		o.realloc(c.mem, n+1, keepOffs)
	}
	for _, v := range []*validity{&c.keyValid, &c.pubValid, &c.evValid} {
		if v.bits != nil {
			v.realloc(c.mem, n, keep)
		}
	}
	if c.capRows == 0 { // a new batch
		c.topicOffs.v[0], c.idOffs.v[0], c.keyOffs.v[0], c.payOffs.v[0], c.propOffs.v[0] = 0, 0, 0, 0, 0
		c.topic.start(c.hint.topic)
		c.id.start(c.hint.id)
		c.key.start(c.hint.key)
		c.payload.start(c.hint.payload)
	}
	c.capRows = n
}

// growEntries makes room for need more property entries.
func (c *rawColumns) growEntries(need int) {
	n := max(2*c.capEntries, c.entries+need, c.hint.entries, rawMinRows)
	if c.capEntries == 0 {
		c.pkeyOffs.realloc(c.mem, n+1, 0)
		c.pvalOffs.realloc(c.mem, n+1, 0)
		c.pkeyOffs.v[0], c.pvalOffs.v[0] = 0, 0
		c.pkeys.start(c.hint.pkeys)
		c.pvals.start(c.hint.pvals)
	} else {
		c.pkeyOffs.realloc(c.mem, n+1, c.entries+1)
		c.pvalOffs.realloc(c.mem, n+1, c.entries+1)
	}
	c.capEntries = n
}

// append adds rec as one row and returns its estimated size in bytes.
// topic and index are SplitPartition(rec.Partition), which the caller
// computes once per partition rather than once per record.
func (c *rawColumns) append(rec *Record, topic string, index int32) int {
	r := c.rows
	// One branch checks the room for the whole row but the properties.
	if r == c.capRows || !c.topic.fits(len(topic)) || !c.id.fits(len(rec.ID)) ||
		!c.key.fits(len(rec.Key)) || !c.payload.fits(len(rec.Payload)) {
		c.makeRoom(rec, len(topic))
	}
	c.topicOffs.v[r+1] = c.topic.addString(topic)
	c.partition.v[r] = index
	c.seq.v[r] = rec.Seq
	c.idOffs.v[r+1] = c.id.add(rec.ID)
	c.keyOffs.v[r+1] = c.key.add(rec.Key)
	if rec.Key == nil || c.keyValid.bits != nil {
		c.keyValid.set(c.mem, r, c.capRows, rec.Key != nil)
	}
	c.pubTime.v[r] = rec.PublishTime.UnixMicro()
	if pz := rec.PublishTime.IsZero(); pz || c.pubValid.bits != nil {
		c.pubValid.set(c.mem, r, c.capRows, !pz)
	}
	c.evTime.v[r] = rec.EventTime.UnixMicro()
	if ez := rec.EventTime.IsZero(); ez || c.evValid.bits != nil {
		c.evValid.set(c.mem, r, c.capRows, !ez)
	}
	c.payOffs.v[r+1] = c.payload.add(rec.Payload)
	size := rawRowOverhead + len(topic) + len(rec.ID) + len(rec.Key) + len(rec.Payload)
	if len(rec.Props) > 0 {
		size += c.appendProps(rec.Props)
	}
	c.propOffs.v[r+1] = int32(c.entries)
	c.rows = r + 1
	return size
}

// makeRoom makes room for rec, whose topic is topicLen bytes, but its
// properties.
func (c *rawColumns) makeRoom(rec *Record, topicLen int) {
	if c.rows == c.capRows {
		c.growRows()
	}
	c.topic.reserve(topicLen)
	c.id.reserve(len(rec.ID))
	c.key.reserve(len(rec.Key))
	c.payload.reserve(len(rec.Payload))
}

// appendProps appends the entries of props sorted by key: sorted keys make
// the batch a deterministic function of the records, which Go's map order
// would not. Producers usually send the same key set on every record, so
// the sorted keys of the previous record are tried first: one lookup per
// key, no iteration or sorting of the map, and the keys copied as one block.
// (Ranging over the map instead costs more than twice as much for three
// keys: starting an iteration of even a small map is dearer than three
// lookups.)
func (c *rawColumns) appendProps(props map[string]string) int {
	if c.entries+len(props) > c.capEntries {
		c.growEntries(len(props))
	}
	if len(c.keys) == len(props) {
		if size, ok := c.appendKnownProps(props); ok {
			return size
		}
	}
	c.learnKeys(props)
	size, _ := c.appendKnownProps(props)
	return size
}

// appendKnownProps appends props if its keys are c.keys, and reports
// whether they were. Each value is appended as it is found; a missing key
// rolls the values back, so nothing is appended then.
func (c *rawColumns) appendKnownProps(props map[string]string) (int, bool) {
	e, vals0 := c.entries, c.pvals.n
	voffs := c.pvalOffs.v[e+1 : e+1+len(c.keys)]
	for i, k := range c.keys {
		v, ok := props[k]
		if !ok {
			c.pvals.n = vals0
			return 0, false
		}
		c.pvals.reserve(len(v))
		voffs[i] = c.pvals.addString(v)
	}
	return c.pvals.n - vals0 + c.appendKeys(), true
}

// appendKeys completes the entries whose values were just appended: it
// copies the keys as one block and advances entries. It returns the keys'
// part of the size estimate.
func (c *rawColumns) appendKeys() int {
	c.pkeys.reserve(len(c.keyBytes))
	e := c.entries
	keys0 := int32(c.pkeys.n)
	c.pkeys.add(c.keyBytes)
	koffs := c.pkeyOffs.v[e+1 : e+1+len(c.keyEnds)]
	for i, end := range c.keyEnds {
		koffs[i] = keys0 + end
	}
	c.entries = e + len(c.keys)
	return 8*len(c.keys) + len(c.keyBytes)
}

// learnKeys makes the sorted keys of props the cached key set. It allocates
// only when the set is larger than any before.
func (c *rawColumns) learnKeys(props map[string]string) {
	clear(c.keys)
	c.keys = c.keys[:0]
	for k := range props {
		c.keys = append(c.keys, k)
	}
	slices.Sort(c.keys)
	c.keyBytes, c.keyEnds = c.keyBytes[:0], c.keyEnds[:0]
	for _, k := range c.keys {
		c.keyBytes = append(c.keyBytes, k...)
		c.keyEnds = append(c.keyEnds, int32(len(c.keyBytes)))
	}
}

// build returns the accumulated rows as a record batch that owns the
// buffers, and starts the next batch.
func (c *rawColumns) build() arrow.RecordBatch {
	n, mem := c.rows, c.mem
	// Size the next batch's buffers like the largest of the recent ones
	// (data buffers with 1/16 headroom for varying value sizes): a batch
	// cut short (by the linger, or by a full lane that held the source back)
	// must not make the next, full one grow its buffers by copying (a tenth
	// of the batches of a backlog drain, each copying its bytes up to twice
	// more), nor miss the pooled buffers of the full batches' size class.
	// After rawShortRun batches in a row below the hints, the rate has
	// dropped for good and the hints follow it; in between, finish copies a
	// buffer less than half used out of its large allocation, so the memory
	// a short batch keeps follows its rows.
	c.short++
	if c.short > rawShortRun || n >= c.hint.rows || c.payload.n > c.hint.payload {
		c.short = 0
		c.hint = rawHint{}
		c.poolLimit = 0
	}
	head := func(hint, n int) int { return max(n+n/16, hint) }
	h := &c.hint
	h.rows, h.entries = max(n, h.rows), max(c.entries, h.entries)
	h.topic, h.id, h.key, h.payload = head(h.topic, c.topic.n), head(h.id, c.id.n), head(h.key, c.key.n), head(h.payload, c.payload.n)
	h.pkeys, h.pvals = head(h.pkeys, c.pkeys.n), head(h.pvals, c.pvals.n)

	keyValid, keyNulls := c.keyValid.take(mem, n)
	pubValid, pubNulls := c.pubValid.take(mem, n)
	evValid, evNulls := c.evValid.take(mem, n)
	cols := [rawNumFields]arrow.Array{
		rawTopic: makeArray(arrow.BinaryTypes.String, n, 0, nil,
			nil, c.topicOffs.take(mem, n+1), c.topic.take()),
		rawPartition: makeArray(arrow.PrimitiveTypes.Int32, n, 0, nil, nil, c.partition.take(mem, n)),
		rawSeq:       makeArray(arrow.PrimitiveTypes.Uint64, n, 0, nil, nil, c.seq.take(mem, n)),
		rawMessageID: makeArray(arrow.BinaryTypes.Binary, n, 0, nil,
			nil, c.idOffs.take(mem, n+1), c.id.take()),
		rawKey: makeArray(arrow.BinaryTypes.Binary, n, keyNulls, nil,
			keyValid, c.keyOffs.take(mem, n+1), c.key.take()),
		rawPublishTime: makeArray(arrow.FixedWidthTypes.Timestamp_us, n, pubNulls, nil,
			pubValid, c.pubTime.take(mem, n)),
		rawEventTime: makeArray(arrow.FixedWidthTypes.Timestamp_us, n, evNulls, nil,
			evValid, c.evTime.take(mem, n)),
		rawPayload: makeArray(arrow.BinaryTypes.Binary, n, 0, nil,
			nil, c.payOffs.take(mem, n+1), c.payload.take()),
	}
	entries := c.entries
	if c.capEntries == 0 { // no properties in the whole batch
		c.pkeyOffs.realloc(mem, 1, 0)
		c.pvalOffs.realloc(mem, 1, 0)
		c.pkeyOffs.v[0], c.pvalOffs.v[0] = 0, 0
	}
	keys := makeData(arrow.BinaryTypes.String, entries, 0, nil, nil, c.pkeyOffs.take(mem, entries+1), c.pkeys.take())
	vals := makeData(arrow.BinaryTypes.String, entries, 0, nil, nil, c.pvalOffs.take(mem, entries+1), c.pvals.take())
	structData := makeData(rawPropsType.Elem(), entries, 0, []arrow.ArrayData{keys, vals}, nil)
	keys.Release()
	vals.Release()
	cols[rawProperties] = makeArray(rawPropsType, n, 0, []arrow.ArrayData{structData}, nil, c.propOffs.take(mem, n+1))
	structData.Release()

	rec := array.NewRecordBatch(rawSchema, cols[:], int64(n))
	var allocated int64
	for _, col := range cols {
		allocated += dataBytes(col.Data(), (*memory.Buffer).Cap)
		col.Release()
	}
	// The pool keeps about two of the recent batches, like the hints: a
	// short batch must not evict the buffers the next full one will take.
	c.poolLimit = max(2*int(allocated), c.poolLimit)
	c.pool.setLimit(c.poolLimit)
	c.rows, c.capRows, c.entries, c.capEntries = 0, 0, 0, 0
	return rec
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
