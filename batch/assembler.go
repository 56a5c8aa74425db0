package batch

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Assembler turns records into Arrow record batches with offset spans.
//
// Goroutine safety: all methods may be called concurrently; Add, Flush,
// Close and the linger timer serialise on one mutex, which is also held
// while Emit and OnReject run (so batches are emitted strictly in order).
// Stats is lock-free and never blocks, even while Emit blocks.
//
// Lifecycle: NewAssembler → Add* (interleaved with Flush) → Close. Close
// flushes what is buffered, stops the linger timer and releases the
// builders; it does not wait for a linger callback that is already running
// to return, but such a callback finds the assembler closed and does nothing.
type Assembler struct {
	opts   AssemblerOptions // defaults applied
	schema *arrow.Schema

	stats struct {
		records, rows, bytes, rejected, batches, outOfOrder atomic.Uint64
		flushes                                             [FlushIdle + 1]atomic.Uint64
	}

	mu struct {
		sync.Mutex
		closed bool
		raw    *rawColumns          // ModeRaw
		rb     *array.RecordBuilder // ModeJSON
		dec    *jsonDecoder         // ModeJSON
		cur    decodedState         // ModeDecoded: the schema version of rb
		meta   struct {             // ModeJSON and ModeDecoded with IncludeMeta
			topic     *array.StringBuilder
			partition *array.Int32Builder
			seq       *array.Uint64Builder
			messageID *array.BinaryBuilder
		}

		// parts holds every partition ever seen (Seq order spans batches).
		// cache finds the partition of a record by the address of its
		// name, tried before the map: sources hand over the same string for
		// every record of a partition (gen's names, the Pulsar consumer's
		// topic), and hashing a pointer is cheaper than hashing the name.
		parts  map[string]*partState
		cache  [partCacheSize]*partState
		active []*partState // partitions with records in the current batch

		// The current batch.
		records  int         // rows + rejected
		rows     int         // rows appended
		rejected int         // records rejected
		bytes    int         // estimated bytes appended
		oldest   time.Time   // when the first record of the batch was added
		timer    *time.Timer // linger timer, created on first use and then Reset
		armed    bool        // timer is scheduled for this batch
	}
}

// partState is the per-partition sequence state.
type partState struct {
	partition string
	topic     string // SplitPartition(partition), computed once
	index     int32
	seen      bool   // lastSeq is valid
	lastSeq   uint64 // last Seq added, across batches
	inBatch   bool   // the partition is in mu.active
	first     uint64 // first Seq in the current batch

	// The ID of lastSeq: in ModeRaw the message_id of row lastRow of the
	// current batch (nothing is copied per record), in ModeJSON
	// lastID[:idLen], a reused buffer (rejected records have no row).
	lastRow int
	lastID  []byte
	idLen   int

	// closed holds the spans of this partition that an out-of-order Seq
	// ended earlier in the current batch (AssemblerOptions.Unordered), in
	// the order they were added.
	closed []closedSpan
}

// closedSpan is a span of the current batch that an out-of-order Seq
// ended. Its LastID is resolved at flush: row in ModeRaw (the message_id
// column does not exist before), id (a copy) in ModeJSON.
type closedSpan struct {
	first, last uint64
	row         int
	id          []byte
}

// setLastID copies id; in steady state it writes no pointer, so no GC
// write barrier.
func (ps *partState) setLastID(id []byte) {
	if len(id) > len(ps.lastID) {
		ps.lastID = make([]byte, max(len(id), 2*len(ps.lastID)))
	}
	ps.idLen = copy(ps.lastID, id)
}

// NewAssembler validates opts, applies defaults and returns an Assembler.
// Errors wrap ErrInvalidOptions and name every problem at once.
func NewAssembler(opts AssemblerOptions) (*Assembler, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	a := &Assembler{opts: opts}
	switch opts.Mode {
	case ModeRaw:
		a.schema = rawSchema
		a.mu.raw = newRawColumns(opts.Allocator, opts.MaxRows)
	case ModeJSON:
		root, err := compileJSONSchema(opts.Schema, JSONBinaryBase64)
		if err != nil {
			return nil, err
		}
		if a.schema, err = jsonOutputSchema(opts.Schema, opts.IncludeMeta); err != nil {
			return nil, err
		}
		a.mu.rb = array.NewRecordBuilder(opts.Allocator, a.schema)
		bindBuilders(root, a.mu.rb, a.bindMetaLocked(a.mu.rb))
		a.mu.dec = &jsonDecoder{root: root}
	case ModeDecoded:
		a.schema = nil // per batch: see Schema
	}
	a.mu.parts = make(map[string]*partState)
	return a, nil
}

// Schema returns the schema of the emitted batches; nil in ModeDecoded,
// whose batches each have the schema of their records' version.
func (a *Assembler) Schema() *arrow.Schema { return a.schema }

// Add appends rec to the current batch, or in ModeJSON rejects it to
// OnReject; either way the record is covered by the batch's spans. It
// copies what it keeps: rec and the slices it refers to may be reused once
// Add returns. Add may flush (and so call Emit) when the batch reaches
// MaxRows or MaxBytes.
//
// It returns ErrSeqOrder when rec.Seq is not greater than the last Seq of
// its partition (the record is then ignored entirely) unless
// AssemblerOptions.Unordered is set, under which such a record starts a
// new span of its partition; and ErrClosed after Close. A rejected record is not an error of Add.
func (a *Assembler) Add(rec *Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mu.closed {
		return ErrClosed
	}
	slot := &a.mu.cache[partCacheSlot(rec.Partition)]
	ps := *slot
	if ps == nil || unsafe.StringData(ps.partition) != unsafe.StringData(rec.Partition) || len(ps.partition) != len(rec.Partition) {
		ps = a.partLocked(rec.Partition)
		*slot = ps
	}
	if ps.seen && rec.Seq <= ps.lastSeq {
		a.stats.outOfOrder.Add(1)
		if !a.opts.Unordered {
			return fmt.Errorf("%w: partition %q: seq %d after %d", ErrSeqOrder, rec.Partition, rec.Seq, ps.lastSeq)
		}
		if ps.inBatch {
			// End the partition's current span here; rec starts the next.
			c := closedSpan{first: ps.first, last: ps.lastSeq, row: ps.lastRow}
			if a.mu.raw == nil {
				c.id = slices.Clone(ps.lastID[:ps.idLen])
			}
			ps.closed = append(ps.closed, c)
			ps.first = rec.Seq
		}
	}

	if a.mu.records == 0 {
		a.startBatchLocked()
	}
	if a.opts.Mode == ModeDecoded {
		a.addDecodedLocked(rec, ps) // may flush first (FlushSchema)
	} else if a.mu.raw != nil {
		ps.lastRow = a.mu.rows
		a.mu.bytes += a.mu.raw.append(rec, ps.topic, ps.index)
		a.mu.rows++
	} else if err := a.mu.dec.decode(rec.Payload); err != nil {
		a.mu.dec.release()
		a.mu.rejected++
		if a.opts.OnReject != nil {
			a.opts.OnReject(rec, err)
		}
	} else {
		a.mu.bytes += a.appendMetaLocked(rec, ps)
		a.mu.bytes += a.mu.dec.replay()
		a.mu.dec.release()
		a.mu.rows++
	}
	a.mu.records++

	ps.seen, ps.lastSeq = true, rec.Seq
	if a.mu.raw == nil {
		ps.setLastID(rec.ID)
	}
	if !ps.inBatch {
		ps.inBatch, ps.first = true, rec.Seq
		a.mu.active = append(a.mu.active, ps)
	}

	switch {
	case a.mu.rows >= a.opts.MaxRows:
		a.flushLocked(FlushRows)
	case a.mu.bytes >= a.opts.MaxBytes:
		a.flushLocked(FlushBytes)
	}
	return nil
}

// partCacheSize is the number of slots of Assembler.mu.cache, a power of
// two: more than the partitions a batch usually interleaves.
const partCacheSize = 64

// partCacheSlot is the cache slot of a partition name: a multiplicative
// hash of its address (Fibonacci hashing), so that names allocated next to
// each other spread over the slots.
func partCacheSlot(name string) uintptr {
	const shift = 64 - 6 // log2(partCacheSize)
	return uintptr(uint64(uintptr(unsafe.Pointer(unsafe.StringData(name))))*0x9e3779b97f4a7c15>>shift) & (partCacheSize - 1)
}

// partLocked returns the state of partition p, creating it on first use.
func (a *Assembler) partLocked(p string) *partState {
	ps := a.mu.parts[p]
	if ps == nil {
		ps = &partState{partition: p}
		ps.topic, ps.index = SplitPartition(p)
		a.mu.parts[p] = ps
	}
	return ps
}

// startBatchLocked arms the linger timer for a batch that just received its
// first record. This is the only clock access on the Add path, once per
// batch rather than once per record.
func (a *Assembler) startBatchLocked() {
	a.mu.oldest = time.Now()
	if a.mu.timer == nil {
		a.mu.timer = time.AfterFunc(a.opts.Linger, a.lingerExpired)
	} else {
		a.mu.timer.Reset(a.opts.Linger)
	}
	a.mu.armed = true
}

// lingerExpired runs on the timer's goroutine. The timer is reused across
// batches, so a firing may be stale (its batch was flushed for another
// reason and a new one started); it only flushes a batch whose oldest
// record has actually waited Linger, and re-arms for the remainder otherwise.
func (a *Assembler) lingerExpired() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mu.closed || !a.mu.armed || a.mu.records == 0 {
		return
	}
	if wait := a.opts.Linger - time.Since(a.mu.oldest); wait > 0 {
		a.mu.timer.Reset(wait)
		return
	}
	a.flushLocked(FlushLinger)
}

// Flush emits the buffered records, if any, as a batch with reason
// FlushShutdown. It is a no-op after Close.
func (a *Assembler) Flush() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.mu.closed {
		a.flushLocked(FlushShutdown)
	}
}

// FlushEarly emits the buffered records, if any, as a batch with reason
// FlushIdle, before a limit or the linger asks for it: for an owner whose
// sink has nothing in flight, for which waiting only adds latency. Safe
// from any goroutine; it blocks like Add while Emit does. A no-op after
// Close.
func (a *Assembler) FlushEarly() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.mu.closed {
		a.flushLocked(FlushIdle)
	}
}

// Close flushes the buffered records (FlushShutdown), stops the linger timer
// and releases the builders. Later Adds return ErrClosed. Close is
// idempotent and always returns nil; the error result is for io.Closer.
func (a *Assembler) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mu.closed {
		return nil
	}
	a.flushLocked(FlushShutdown)
	a.mu.closed = true
	if a.mu.timer != nil {
		a.mu.timer.Stop()
	}
	if a.mu.rb != nil {
		a.mu.rb.Release()
		a.mu.rb = nil
	}
	if a.mu.raw != nil {
		a.mu.raw.close()
	}
	return nil
}

// flushLocked emits the current batch, if it covers any record.
func (a *Assembler) flushLocked(reason FlushReason) {
	if a.mu.records == 0 {
		return
	}
	if a.mu.armed {
		a.mu.armed = false
		if reason != FlushLinger {
			a.mu.timer.Stop()
		}
	}

	var rec arrow.RecordBatch
	switch {
	case a.mu.raw != nil:
		rec = a.mu.raw.build()
	case a.mu.rb == nil: // ModeDecoded before any schema: every record was rejected
		rec = array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 0)
	default:
		rec = a.mu.rb.NewRecordBatch()
	}
	slices.SortFunc(a.mu.active, func(x, y *partState) int { return strings.Compare(x.partition, y.partition) })
	lastID := func(ps *partState) []byte { return ps.lastID[:ps.idLen] }
	if a.mu.raw != nil {
		msgIDs := rec.Column(rawMessageID).(*array.Binary)
		lastID = func(ps *partState) []byte { return msgIDs.Value(ps.lastRow) }
	}
	closedID := func(c *closedSpan) []byte { return c.id }
	if a.mu.raw != nil {
		msgIDs := rec.Column(rawMessageID).(*array.Binary)
		closedID = func(c *closedSpan) []byte { return msgIDs.Value(c.row) }
	}
	n, idBytes := len(a.mu.active), 0
	for _, ps := range a.mu.active {
		idBytes += len(lastID(ps))
		n += len(ps.closed)
		for i := range ps.closed {
			idBytes += len(closedID(&ps.closed[i]))
		}
	}
	spans := make([]OffsetSpan, 0, n)
	ids := make([]byte, 0, idBytes) // one allocation for every LastID
	add := func(sp OffsetSpan, id []byte) {
		if len(id) > 0 {
			start := len(ids)
			ids = append(ids, id...)
			sp.LastID = ids[start:len(ids):len(ids)]
		}
		spans = append(spans, sp)
	}
	for i, ps := range a.mu.active {
		for j := range ps.closed {
			c := &ps.closed[j]
			add(OffsetSpan{Partition: ps.partition, First: c.first, Last: c.last}, closedID(c))
			c.id = nil
		}
		ps.closed = ps.closed[:0]
		add(OffsetSpan{Partition: ps.partition, First: ps.first, Last: ps.lastSeq}, lastID(ps))
		ps.inBatch = false
		a.mu.active[i] = nil
	}
	a.mu.active = a.mu.active[:0]

	b := &Batch{Rec: rec, Spans: spans, Rejected: a.mu.rejected, Reason: reason}
	a.stats.records.Add(uint64(a.mu.records))
	a.stats.rows.Add(uint64(a.mu.rows))
	a.stats.bytes.Add(uint64(a.mu.bytes))
	a.stats.rejected.Add(uint64(a.mu.rejected))
	a.stats.batches.Add(1)
	a.stats.flushes[reason].Add(1)
	a.mu.records, a.mu.rows, a.mu.rejected, a.mu.bytes = 0, 0, 0, 0

	a.opts.Emit(b)
}

// Stats are cumulative counters of an Assembler. Records, rows, bytes and
// rejections are counted when their batch is emitted, so buffered records
// do not show until the next flush.
type Stats struct {
	Records    uint64 // records covered by emitted batches (Rows + Rejected)
	Rows       uint64 // rows in emitted batches
	Bytes      uint64 // estimated column bytes of emitted batches (see MaxBytes)
	Rejected   uint64 // records rejected to OnReject
	Batches    uint64 // batches emitted
	OutOfOrder uint64 // Adds with a Seq at or below their partition's last: refused with ErrSeqOrder, or (Unordered) starting a new span

	FlushRows, FlushBytes, FlushLinger, FlushShutdown, FlushSchema, FlushIdle uint64 // batches by FlushReason
}

// Flushes returns the number of batches emitted for reason r.
func (s Stats) Flushes(r FlushReason) uint64 {
	switch r {
	case FlushRows:
		return s.FlushRows
	case FlushBytes:
		return s.FlushBytes
	case FlushLinger:
		return s.FlushLinger
	case FlushShutdown:
		return s.FlushShutdown
	case FlushSchema:
		return s.FlushSchema
	case FlushIdle:
		return s.FlushIdle
	}
	return 0
}

// Stats returns a snapshot of the counters. It never blocks; the fields are
// read one by one, so a snapshot taken during a flush may be mid-update.
func (a *Assembler) Stats() Stats {
	return Stats{
		Records:       a.stats.records.Load(),
		Rows:          a.stats.rows.Load(),
		Bytes:         a.stats.bytes.Load(),
		Rejected:      a.stats.rejected.Load(),
		Batches:       a.stats.batches.Load(),
		OutOfOrder:    a.stats.outOfOrder.Load(),
		FlushRows:     a.stats.flushes[FlushRows].Load(),
		FlushBytes:    a.stats.flushes[FlushBytes].Load(),
		FlushLinger:   a.stats.flushes[FlushLinger].Load(),
		FlushShutdown: a.stats.flushes[FlushShutdown].Load(),
		FlushSchema:   a.stats.flushes[FlushSchema].Load(),
		FlushIdle:     a.stats.flushes[FlushIdle].Load(),
	}
}
