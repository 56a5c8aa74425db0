package receiver

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/thalweg/thalweg/internal/atomicfile"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/schemaevo"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	datasetFile = "DATASET"
	segExt      = ".arrows"
	idxExt      = ".idx"
	idxHdrLen   = 8
)

// entry is one stored record batch message: where it is and what it covers.
type entry struct {
	seg     int   // index into dataset.mu.segs
	pos     int64 // byte offset of the IPC continuation marker in the segment
	metaLen int32 // flatbuffer header length, unpadded
	// hdrLen is the framed metadata length (the IPC length prefix) of a
	// version 2 frame, which carries a trailer after the flatbuffer; 0 for
	// a version 1 frame, whose metadata is the flatbuffer padded to 8.
	hdrLen  int64
	bodyLen int64
	// crc is the frame's CRC-32C: for version 2 over everything after the
	// 8-byte prefix with the trailer's CRC field taken as zero (see
	// frameCRC), for version 1 over the whole framed message.
	crc    uint32
	rows   int64
	offset uint64 // the stream's offset_id
	spans  []flightwire.Span
	part   int32
	parts  int32
	// bad marks a position whose bytes failed verification at recovery and
	// were set aside: reads of it fail with DataLoss. Its extent is
	// bad.length bytes from pos; offset and spans are the index's when it
	// had them, inferred from the neighbours otherwise.
	bad *damage
}

// damage describes a position recovery could not verify.
type damage struct {
	length     int64
	quarantine string // file holding a copy of the bytes, relative to the dataset dir
}

// region is the framed metadata length: the IPC length prefix.
func (e *entry) region() int64 {
	if e.hdrLen > 0 {
		return e.hdrLen
	}
	return pad8(int64(e.metaLen))
}

func (e *entry) frameLen() int64 {
	if e.bad != nil {
		return e.bad.length
	}
	return 8 + e.region() + e.bodyLen
}

func pad8(n int64) int64 { return (n + 7) &^ 7 }

// Version 2 frames end their metadata with a trailer, inside the length the
// IPC prefix declares, so that a segment describes and verifies itself
// without its index (which recovery rebuilds from it). Arrow readers parse
// the flatbuffer from the start of the metadata and ignore what follows it,
// so a segment stays a plain Arrow IPC stream.
//
//	metadata := flatbuffer | zero padding | payload | footer
//	footer   := u32 payload length | u32 flatbuffer length | u32 CRC-32C |
//	            u32 kind | 8-byte magic
//
// The payload of a batch frame is the JSON of its idxRecord (without CRC);
// a schema frame has none. The metadata length is a multiple of 8 with the
// footer at its end; the CRC covers the frame after its 8-byte prefix with
// the CRC field as zero: a damaged prefix is found, not mistaken for
// damaged data.
const (
	footerLen  = 24
	kindSchema = 1
	kindBatch  = 2
)

var frameMagic = [8]byte{'t', 'h', 'a', 'l', 'w', 'e', 'g', 2}

// trailerRegion is the metadata length of a version 2 frame.
func trailerRegion(metaLen, payloadLen int) int64 {
	return pad8(int64(metaLen + payloadLen + footerLen))
}

// appendV2Frame appends a version 2 frame of meta, payload and body to dst,
// with its CRC, and returns it with the CRC and the metadata length.
func appendV2Frame(dst, meta, payload, body []byte, kind uint32) ([]byte, uint32, int64) {
	dst, c, region := appendV2Head(dst, meta, payload, body, kind)
	return append(dst, body...), c, region
}

// appendV2Head appends the part of a version 2 frame that precedes its body
// (the caller writes body right after it), with the CRC of the whole frame.
func appendV2Head(dst, meta, payload, body []byte, kind uint32) ([]byte, uint32, int64) {
	region := trailerRegion(len(meta), len(payload))
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, 0xFFFFFFFF)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(region))
	dst = append(dst, meta...)
	for range region - int64(len(meta)+len(payload)+footerLen) {
		dst = append(dst, 0)
	}
	dst = append(dst, payload...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(meta)))
	dst = binary.LittleEndian.AppendUint32(dst, 0) // CRC, set below
	dst = binary.LittleEndian.AppendUint32(dst, kind)
	dst = append(dst, frameMagic[:]...)
	c := crc32.Update(frameCRC(dst[start:], region), castagnoli, body)
	binary.LittleEndian.PutUint32(dst[start+8+int(region)-16:], c)
	return dst, c, region
}

// segWrites are the frames appended to the active segment and not yet
// written. A large body is referenced, not copied, with a reference on the
// received message it lies in (flightwire.ReceivedData), released once the
// body was written: copying every body into one growing buffer was a third
// of a receiver's CPU on 256 KiB batches.
// Small frames stay in one buffer, written by one call.
type segWrites struct {
	buf   []byte   // frame heads and small bodies
	parts [][]byte // pieces before buf[from:], in file order
	from  int
	refs  []*flightwire.ReceivedData // the messages of the referenced bodies
}

// bigBody is the body size from which a body is written from where it is.
const bigBody = 16 << 10

// add appends a frame's body; its head was appended to buf just before.
// A referenced body is held with a reference on ref, the received message
// it lies in (nil: the body is the garbage collector's), until reusable.
func (w *segWrites) add(body []byte, ref *flightwire.ReceivedData) {
	if len(body) < bigBody {
		w.buf = append(w.buf, body...)
		return
	}
	// A later append to buf never writes inside buf[:len(buf)], and a
	// reallocation leaves this piece on the old array.
	w.parts = append(w.parts, w.buf[w.from:len(w.buf):len(w.buf)], body)
	w.from = len(w.buf)
	if ref != nil {
		ref.Retain()
		w.refs = append(w.refs, ref)
	}
}

// writeTo writes every piece to f, in order.
func (w *segWrites) writeTo(f interface{ Write([]byte) (int, error) }) error {
	for _, p := range w.parts {
		if len(p) == 0 {
			continue
		}
		if _, err := f.Write(p); err != nil {
			return err
		}
	}
	if rest := w.buf[w.from:]; len(rest) > 0 {
		if _, err := f.Write(rest); err != nil {
			return err
		}
	}
	return nil
}

// reusable empties w for reuse, once its pieces were written (or will
// never be): it releases the bodies' messages and drops a buffer above
// maxSpareBuf.
func (w segWrites) reusable() segWrites {
	for _, r := range w.refs {
		r.Release()
	}
	clear(w.parts)
	clear(w.refs)
	return segWrites{buf: reusable(w.buf), parts: w.parts[:0], refs: w.refs[:0]}
}

// frameCRC is the CRC-32C of a version 2 frame: everything after the 8-byte
// prefix, the CRC field counted as zero.
func frameCRC(frame []byte, region int64) uint32 {
	at := 8 + region - 16
	c := crc32.Update(0, castagnoli, frame[8:at])
	c = crc32.Update(c, castagnoli, []byte{0, 0, 0, 0})
	return crc32.Update(c, castagnoli, frame[at+4:])
}

// footer is the parsed trailer footer of a version 2 frame.
type footer struct {
	payloadLen, metaLen int
	crc, kind           uint32
}

// parseFooter reads the footer at the end of b (at least footerLen bytes).
func parseFooter(b []byte) (footer, bool) {
	b = b[len(b)-footerLen:]
	if [8]byte(b[16:]) != frameMagic {
		return footer{}, false
	}
	return footer{
		payloadLen: int(binary.LittleEndian.Uint32(b)), metaLen: int(binary.LittleEndian.Uint32(b[4:])),
		crc: binary.LittleEndian.Uint32(b[8:]), kind: binary.LittleEndian.Uint32(b[12:]),
	}, true
}

// idxRecord is the JSON payload of one index frame.
type idxRecord struct {
	Offset uint64            `json:"o"`
	Rows   int64             `json:"n"`
	Pos    int64             `json:"p"`
	Meta   int32             `json:"m"`
	Head   int64             `json:"h,omitempty"` // entry.hdrLen; absent in version 1
	Body   int64             `json:"b"`
	CRC    uint32            `json:"c"`
	Spans  []flightwire.Span `json:"s,omitempty"`
	Part   int32             `json:"pt,omitempty"`
	Parts  int32             `json:"ps,omitempty"`
	// Bad is the extent of a position set aside by recovery (entry.bad).
	Bad int64 `json:"x,omitempty"`
}

func (r *idxRecord) entry(seg int) entry {
	e := entry{seg: seg, pos: r.Pos, metaLen: r.Meta, hdrLen: r.Head, bodyLen: r.Body, crc: r.CRC, rows: r.Rows,
		offset: r.Offset, spans: r.Spans, part: r.Part, parts: r.Parts}
	if r.Bad > 0 {
		e.bad = &damage{length: r.Bad}
	}
	return e
}

type segment struct {
	num    int
	name   string   // file name without extension
	schema int      // index into dataset.mu.schemas: the schema message the segment starts with
	rf     vfs.File // read handle, opened lazily under dataset.readMu
}

// storedSchema is one of the schemas a dataset holds batches of.
type storedSchema struct {
	schema *arrow.Schema
	msg    []byte // flatbuffer of the schema message
}

// activeSeg is the segment appends go to.
type activeSeg struct {
	seg     int // index into dataset.mu.segs
	f, idx  vfs.File
	direct  *directWriter // nil: the segment is written through f
	size    int64
	idxSize int64
}

// closeFiles closes the segment's files.
func (a *activeSeg) closeFiles() error {
	err := a.f.Close()
	if a.direct != nil {
		err = errors.Join(err, a.direct.close())
	}
	return errors.Join(err, a.idx.Close())
}

// pendingBatch is one validated batch message waiting to be appended.
type pendingBatch struct {
	meta, body []byte
	// ref is the received message meta and body lie in, nil when they
	// are the garbage collector's (a batch encoded again by filterBatch).
	// The appender holds a reference until append returns.
	ref         *flightwire.ReceivedData
	rows        int64
	offset      uint64
	spans       []flightwire.Span
	part, parts int32
}

// dataset is the storage of one descriptor path: a directory of segment
// files. Appends are serialised by mu; a committer goroutine makes them
// durable in groups and publishes the durable count.
//
// Appends only encode their frames into mu.segBuf and mu.idxBuf; the
// committer writes those out right before each sync (and sealLocked before
// a segment is closed), so a sync round costs two write calls however many
// batches it covers, rather than three per batch. Only the committer, or
// close after the committer has stopped, writes to the files, so the
// writes stay in append order. The buffers hold nothing that was
// acknowledged: a batch is acknowledged after its bytes were written and
// synced. Their size is bounded by Options.MaxPendingBytes, which the
// server reserves for every batch until it is durable.
type dataset struct {
	fs   vfs.FS
	dir  string
	name string
	path []string
	opts *Options
	log  *slog.Logger
	kick chan struct{} // cap 1: "there is something to sync"
	quit chan struct{}
	done chan struct{}
	// write is held by whoever writes to, seals or opens the active
	// segment's files: the committer around each sync, append when a batch
	// of another schema must roll the segment, close. It is taken before
	// mu, never while holding it.
	write  sync.Mutex
	readMu sync.Mutex // guards segment.rf and reported
	// reported holds the frames reportReadDamage logged (segment<<40|pos).
	reported map[int64]bool

	mu struct {
		sync.Mutex
		// schemas are the distinct schemas of the dataset's segments, in
		// the order the dataset took them (append-only); merged is their
		// union under the schema evolution rules (internal/schemaevo),
		// which a new stream's schema must be compatible with.
		schemas []storedSchema
		merged  []schemaevo.Field
		segs    []*segment
		entries []entry
		durable int // entries[:durable] are synced
		active  *activeSeg
		err     error         // sticky storage failure
		notify  chan struct{} // closed and replaced when durable or err change
		closed  bool
		// appended are the positions of every entry appended, durable or
		// not: what idempotent append checks a batch against, so that two
		// streams cannot both store a row. durablePos are those of
		// entries[:durable]: what the positions action serves (nothing
		// is served before it is synced).
		appended, durablePos positions
		segBuf               segWrites // frames appended to the active segment, not yet written
		idxBuf               []byte    // index frames of the same entries
		scratch              []byte    // a frame's trailer payload while it is encoded
	}
	// directBytes counts the segment bytes written with direct writes.
	directBytes atomic.Int64
	// syncs and syncNanos count the committer's sync rounds and the time
	// it spent in them, writing and syncing (Server.SyncStats).
	syncs, syncNanos atomic.Int64
	// spare holds the committer's emptied write buffers for reuse; only the
	// committer touches it.
	spare struct {
		seg segWrites
		idx []byte
	}
}

// dirName encodes a descriptor path as one directory name: bytes outside
// [A-Za-z0-9_-] become %XX and elements are joined by '.', which is
// therefore unambiguous.
func dirName(path []string) (string, error) {
	if len(path) == 0 {
		return "", errors.New("descriptor path is empty")
	}
	var b strings.Builder
	for i, p := range path {
		if p == "" {
			return "", fmt.Errorf("descriptor path element %d is empty", i)
		}
		if i > 0 {
			b.WriteByte('.')
		}
		for j := 0; j < len(p); j++ {
			c := p[j]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		}
	}
	if b.Len() > 200 {
		return "", fmt.Errorf("descriptor path encodes to %d bytes, more than 200", b.Len())
	}
	return b.String(), nil
}

func newDataset(fs vfs.FS, root, name string, path []string, opts *Options) *dataset {
	d := &dataset{
		fs: fs, dir: fs.PathJoin(root, name), name: name, path: path, opts: opts,
		log:  opts.Logger.With("dataset", strings.Join(path, "/")),
		kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
	}
	d.mu.notify = make(chan struct{})
	d.mu.appended, d.mu.durablePos = positions{}, positions{}
	return d
}

// createDataset makes the directory and its DATASET file durable.
func createDataset(fs vfs.FS, root, name string, path []string, opts *Options) (*dataset, error) {
	d := newDataset(fs, root, name, path, opts)
	if err := fs.MkdirAll(d.dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeDatasetFile(fs, d.dir, path); err != nil {
		return nil, err
	}
	if err := atomicfile.SyncDir(fs, root); err != nil {
		return nil, err
	}
	go d.commitLoop()
	return d, nil
}

// writeDatasetFile writes dir's DATASET file durably.
func writeDatasetFile(fs vfs.FS, dir string, path []string) error {
	body, _ := json.Marshal(struct {
		Version int      `json:"version"`
		Path    []string `json:"path"`
	}{datasetVersion, path})
	return atomicfile.WriteFile(fs, dir, datasetFile, body)
}

// schemaClaim is a stream's schema as the dataset knows it: sid is its
// index in dataset.mu.schemas, or -1 while it is a new schema that no
// batch was stored with yet (append adds it with the stream's first batch,
// so the dataset's schemas and their union are those of stored batches,
// as recovery finds them).
type schemaClaim struct {
	sid    int
	schema *arrow.Schema
	msg    []byte
}

// claimSchema checks a stream's schema against the dataset's: one equal to
// it (fields, and schema and field metadata), or compatible with the union
// of them (internal/schemaevo). An incompatible schema is a
// *schemaevo.Error.
func (d *dataset) claimSchema(schema *arrow.Schema, msg []byte) (schemaClaim, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.err != nil {
		return schemaClaim{}, d.mu.err
	}
	if i := d.findSchemaLocked(schema); i >= 0 {
		return schemaClaim{sid: i}, nil
	}
	if _, err := schemaevo.MergeArrow(d.mu.merged, schema); err != nil {
		return schemaClaim{}, err
	}
	return schemaClaim{sid: -1, schema: schema, msg: slices.Clone(msg)}, nil
}

// resolveLocked returns c's schema index, adding its schema first when it
// is new; another stream may have added an incompatible one since
// claimSchema (a *schemaevo.Error).
func (d *dataset) resolveLocked(c *schemaClaim) (int, error) {
	if c.sid >= 0 {
		return c.sid, nil
	}
	n := len(d.mu.schemas)
	sid, err := d.addSchemaLocked(c.schema, c.msg)
	if err != nil {
		return 0, err
	}
	if n > 0 && sid == n {
		d.log.Info("receiver: dataset takes a new compatible schema; its batches go to a new segment",
			"schemas", n+1, "fields", c.schema.NumFields())
	}
	c.sid = sid
	return sid, nil
}

func (d *dataset) findSchemaLocked(schema *arrow.Schema) int {
	for i := len(d.mu.schemas) - 1; i >= 0; i-- {
		if s := d.mu.schemas[i].schema; s.Equal(schema) && s.Metadata().Equal(schema.Metadata()) {
			return i
		}
	}
	return -1
}

// addSchemaLocked returns the index of schema, adding it (and merging it
// into the union) when the dataset has none equal to it.
func (d *dataset) addSchemaLocked(schema *arrow.Schema, msg []byte) (int, error) {
	if i := d.findSchemaLocked(schema); i >= 0 {
		return i, nil
	}
	merged, err := schemaevo.MergeArrow(d.mu.merged, schema)
	if err != nil {
		return 0, err
	}
	d.mu.merged = merged
	d.mu.schemas = append(d.mu.schemas, storedSchema{schema: schema, msg: slices.Clone(msg)})
	return len(d.mu.schemas) - 1, nil
}

// errStorage marks failures of the local file system; the server reports
// them as Internal.
type storageError struct{ err error }

func (e *storageError) Error() string { return "receiver storage: " + e.err.Error() }
func (e *storageError) Unwrap() error { return e.err }

// append adds bs, the parts of one batch, contiguously to the active
// segment. It neither writes nor syncs; the committer does both (see
// dataset). After a storage failure the dataset is poisoned: appends fail,
// durable entries stay readable, and a restart truncates any partial tail.
//
// All of bs have the schema of c (they come from one stream). When the
// active segment has another, append seals it and opens a segment for
// theirs first: a segment holds batches of one schema.
//
// With o set (an ordered batch) append is idempotent: under mu, against
// the positions of everything appended so far by any stream, rows at or
// below the position of their partition are not stored again (see
// dedupeLocked). The check and the append happen under one hold of mu, so
// two streams sending the same rows store them once.
func (d *dataset) append(bs []pendingBatch, c *schemaClaim, o *order) (appendResult, error) {
	d.mu.Lock()
	writeHeld := false
	defer func() {
		d.mu.Unlock()
		if writeHeld {
			d.write.Unlock()
		}
	}()
	var (
		keep []pendingBatch
		res  appendResult
	)
	for {
		if d.mu.closed {
			return res, errDatasetClosed
		}
		if d.mu.err != nil {
			return res, d.mu.err
		}
		var err error
		if keep, res, err = d.dedupeLocked(bs, o); err != nil {
			return res, err
		}
		if len(keep) == 0 {
			return res, nil // stored before: acknowledged once res.last is durable
		}
		sid := c.sid
		if sid < 0 {
			sid = d.findSchemaLocked(c.schema)
		}
		if a := d.mu.active; writeHeld || a == nil || (sid >= 0 && d.mu.segs[a.seg].schema == sid) {
			break
		}
		// Rolling writes and closes the files the committer may be
		// writing right now, outside mu: take write first, then decide
		// again (another stream may have appended meanwhile).
		d.mu.Unlock()
		d.write.Lock()
		writeHeld = true
		d.mu.Lock()
	}
	sid, err := d.resolveLocked(c)
	if err != nil {
		return res, err
	}
	if a := d.mu.active; a != nil && d.mu.segs[a.seg].schema != sid {
		if err := d.sealLocked(); err != nil {
			return res, d.failLocked(err)
		}
	}
	if d.mu.active == nil {
		if err := d.openSegmentLocked(sid); err != nil {
			return res, d.failLocked(err)
		}
	}
	a := d.mu.active
	for i := range keep {
		b := &keep[i]
		e := entry{
			seg: a.seg, pos: a.size, metaLen: int32(len(b.meta)), bodyLen: int64(len(b.body)),
			rows: b.rows, offset: b.offset, spans: b.spans, part: b.part, parts: b.parts,
		}
		d.mu.scratch = appendIdxJSON(d.mu.scratch[:0], &e)
		d.mu.segBuf.buf, e.crc, e.hdrLen = appendV2Head(d.mu.segBuf.buf, b.meta, d.mu.scratch, b.body, kindBatch)
		d.mu.segBuf.add(b.body, b.ref)
		a.size += e.frameLen()
		d.mu.idxBuf = appendIdxFrame(d.mu.idxBuf, &e)
		d.mu.entries = append(d.mu.entries, e)
		d.mu.appended.add(e.spans)
	}
	select {
	case d.kick <- struct{}{}:
	default:
	}
	res.last, res.stored = len(d.mu.entries)-1, true
	return res, nil
}

// positions returns a copy of the dataset's durable positions.
func (d *dataset) positions() positions {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.mu.durablePos)
}

// maxSpareBuf caps the write buffers kept for reuse, so that a burst of
// large batches does not pin its memory.
const maxSpareBuf = 4 << 20

func reusable(b []byte) []byte {
	if cap(b) > maxSpareBuf {
		return nil
	}
	return b[:0]
}

// writeAndSync writes out segBuf and idxBuf (which the caller took from mu)
// to the active segment's files and makes them durable: the segment first,
// then the index. An index frame therefore reaches the disk only after the
// bytes it describes were synced, which is what lets recovery tell a crash
// from corruption: a batch with an intact index frame was synced, so if it
// does not verify it was damaged afterwards; a damaged batch without one
// was written after the last sync and never acknowledged.
func writeAndSync(a *activeSeg, seg *segWrites, idx []byte) error {
	if a.direct != nil {
		if err := seg.writeTo(a.direct); err != nil {
			return err
		}
		if err := a.direct.flush(); err != nil {
			return err
		}
	} else if err := seg.writeTo(a.f); err != nil {
		return err
	}
	if err := a.f.Sync(); err != nil {
		return err
	}
	if len(idx) > 0 {
		if _, err := a.idx.Write(idx); err != nil {
			return err
		}
		a.idxSize += int64(len(idx))
	}
	return a.idx.Sync()
}

var errDatasetClosed = errors.New("receiver: dataset closed")

// appendFrame appends the IPC frame header of a message to dst:
// continuation marker, padded length, the flatbuffer and its padding.
func appendFrame(dst, meta []byte) []byte {
	padded := pad8(int64(len(meta)))
	dst = binary.LittleEndian.AppendUint32(dst, 0xFFFFFFFF)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(padded))
	dst = append(dst, meta...)
	for range padded - int64(len(meta)) {
		dst = append(dst, 0)
	}
	return dst
}

// appendIdxFrame appends the index frame of e: length, CRC-32C and the JSON
// of its idxRecord. The JSON is written by hand (one frame per batch is on
// the hot path); loadSegment reads it back with encoding/json, and
// TestIdxFrameMatchesJSON keeps the two in step.
func appendIdxFrame(dst []byte, e *entry) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0) // length and CRC, set below
	dst = appendIdxJSON(dst, e)
	payload := dst[start+idxHdrLen:]
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(payload, castagnoli))
	return dst
}

// appendIdxJSON appends the JSON of e's idxRecord, the payload of its index
// frame and (with hdrLen and crc still zero) of its segment frame's trailer.
func appendIdxJSON(dst []byte, e *entry) []byte {
	dst = append(dst, `{"o":`...)
	dst = strconv.AppendUint(dst, e.offset, 10)
	dst = append(dst, `,"n":`...)
	dst = strconv.AppendInt(dst, e.rows, 10)
	dst = append(dst, `,"p":`...)
	dst = strconv.AppendInt(dst, e.pos, 10)
	dst = append(dst, `,"m":`...)
	dst = strconv.AppendInt(dst, int64(e.metaLen), 10)
	if e.hdrLen != 0 {
		dst = append(dst, `,"h":`...)
		dst = strconv.AppendInt(dst, e.hdrLen, 10)
	}
	dst = append(dst, `,"b":`...)
	dst = strconv.AppendInt(dst, e.bodyLen, 10)
	dst = append(dst, `,"c":`...)
	dst = strconv.AppendUint(dst, uint64(e.crc), 10)
	if len(e.spans) > 0 {
		dst = append(dst, `,"s":[`...)
		for i, sp := range e.spans {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"partition":`...)
			dst = flightwire.AppendString(dst, sp.Partition)
			dst = append(dst, `,"first":`...)
			dst = strconv.AppendUint(dst, sp.First, 10)
			dst = append(dst, `,"last":`...)
			dst = strconv.AppendUint(dst, sp.Last, 10)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if e.part != 0 {
		dst = append(dst, `,"pt":`...)
		dst = strconv.AppendInt(dst, int64(e.part), 10)
	}
	if e.parts != 0 {
		dst = append(dst, `,"ps":`...)
		dst = strconv.AppendInt(dst, int64(e.parts), 10)
	}
	if e.bad != nil {
		dst = append(dst, `,"x":`...)
		dst = strconv.AppendInt(dst, e.bad.length, 10)
	}
	return append(dst, '}')
}

func (d *dataset) failLocked(err error) error {
	if d.mu.err == nil {
		d.mu.err = &storageError{err}
		d.log.Error("receiver: dataset failed; restart to recover", "err", err)
		close(d.mu.notify)
		d.mu.notify = make(chan struct{})
	}
	return d.mu.err
}

// openSegmentLocked creates the next segment with schema message sid and
// makes it and its directory entry durable before any batch is
// appended, so that recovery only ever has to repair the last segment.
func (d *dataset) openSegmentLocked(sid int) error {
	if sid < 0 || sid >= len(d.mu.schemas) {
		return fmt.Errorf("no schema %d", sid)
	}
	num := 1
	if n := len(d.mu.segs); n > 0 {
		num = d.mu.segs[n-1].num + 1
	}
	name := fmt.Sprintf("%08d", num)
	segPath := d.fs.PathJoin(d.dir, name+segExt)
	f, err := d.fs.Create(segPath, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	idx, err := d.fs.Create(d.fs.PathJoin(d.dir, name+idxExt), vfs.WriteCategoryUnspecified)
	if err != nil {
		f.Close()
		return err
	}
	hdr, _, _ := appendV2Frame(nil, d.mu.schemas[sid].msg, nil, nil, kindSchema)
	if _, err = f.Write(hdr); err == nil {
		if err = f.Sync(); err == nil {
			if err = idx.Sync(); err == nil {
				err = atomicfile.SyncDir(d.fs, d.dir)
			}
		}
	}
	if err != nil {
		f.Close()
		idx.Close()
		return err
	}
	a := &activeSeg{seg: len(d.mu.segs), f: f, idx: idx, size: int64(len(hdr))}
	if d.opts.FS == vfs.Default {
		// Where the file system does not take O_DIRECT, the segment is
		// written through f, as on any other FS.
		if df, err := openDirect(segPath); err == nil {
			a.direct = newDirectWriter(df, f, hdr, &d.directBytes)
		}
	}
	d.mu.segs = append(d.mu.segs, &segment{num: num, name: name, schema: sid})
	d.mu.active = a
	return nil
}

// durableState returns how many entries are durable, a channel closed at the
// next change, and the sticky failure.
func (d *dataset) durableState() (int, <-chan struct{}, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mu.durable, d.mu.notify, d.mu.err
}

// commitLoop is the dataset's committer goroutine: group fsync.
func (d *dataset) commitLoop() {
	defer close(d.done)
	for {
		select {
		case <-d.kick:
		case <-d.quit:
			d.syncOnce(false)
			return
		}
		if d.opts.SyncInterval > 0 && !d.gather() {
			d.syncOnce(false)
			return
		}
		if d.opts.AckDelay > 0 {
			t := time.NewTimer(d.opts.AckDelay)
			select {
			case <-t.C:
			case <-d.quit:
				t.Stop()
				d.syncOnce(false)
				return
			}
		}
		d.syncOnce(true)
	}
}

// gather waits SyncInterval for more batches unless MaxSyncBatch are
// already waiting. It returns false when the dataset is closing.
func (d *dataset) gather() bool {
	t := time.NewTimer(d.opts.SyncInterval)
	defer t.Stop()
	for {
		d.mu.Lock()
		waiting := len(d.mu.entries) - d.mu.durable
		d.mu.Unlock()
		if waiting >= d.opts.MaxSyncBatch {
			return true
		}
		select {
		case <-t.C:
			return true
		case <-d.kick:
		case <-d.quit:
			return false
		}
	}
}

// syncOnce writes out and syncs everything appended so far, and publishes
// it. The write and sync run outside mu so appends continue meanwhile (into
// fresh buffers); only the committer writes, syncs or rolls segments, so the
// files cannot be closed under it.
func (d *dataset) syncOnce(mayRoll bool) {
	d.write.Lock()
	defer d.write.Unlock()
	d.mu.Lock()
	target, a := len(d.mu.entries), d.mu.active
	if d.mu.err != nil || a == nil || target == d.mu.durable {
		d.mu.Unlock()
		return
	}
	seg, idx := d.mu.segBuf, d.mu.idxBuf
	d.mu.segBuf, d.mu.idxBuf = d.spare.seg, d.spare.idx[:0]
	d.mu.Unlock()
	start := time.Now()
	err := writeAndSync(a, &seg, idx)
	d.syncNanos.Add(int64(time.Since(start)))
	d.syncs.Add(1)
	d.spare.seg, d.spare.idx = seg.reusable(), reusable(idx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.failLocked(err)
		return
	}
	d.publishLocked(target)
	if mayRoll && a.size >= d.opts.SegmentSize {
		if err := d.sealLocked(); err != nil {
			d.failLocked(err)
		}
	}
}

func (d *dataset) publishLocked(durable int) {
	if durable > d.mu.durable {
		for i := d.mu.durable; i < durable; i++ {
			d.mu.durablePos.add(d.mu.entries[i].spans)
		}
		d.mu.durable = durable
		close(d.mu.notify)
		d.mu.notify = make(chan struct{})
	}
}

// sealLocked syncs and closes the active segment; the next append opens a
// new one. It holds mu across the sync: appenders wait once per segment.
func (d *dataset) sealLocked() error {
	a := d.mu.active
	if a == nil {
		return nil
	}
	target := len(d.mu.entries)
	if target > d.mu.durable {
		seg, idx := d.mu.segBuf, d.mu.idxBuf
		err := writeAndSync(a, &seg, idx)
		d.mu.segBuf, d.mu.idxBuf = seg.reusable(), reusable(idx)
		if err != nil {
			return err
		}
		d.publishLocked(target)
	}
	d.mu.active = nil
	return a.closeFiles()
}

// close stops the committer after a final sync and closes every file.
func (d *dataset) close() error {
	d.mu.Lock()
	if d.mu.closed {
		d.mu.Unlock()
		return nil
	}
	d.mu.closed = true
	d.mu.Unlock()
	close(d.quit)
	<-d.done

	d.write.Lock() // an append may be rolling the segment
	d.mu.Lock()
	var err error
	if d.mu.err == nil {
		err = d.sealLocked()
	} else if a := d.mu.active; a != nil {
		a.closeFiles()
		d.mu.active = nil
	}
	segs := d.mu.segs
	close(d.mu.notify) // wake waiters; they see closed via their contexts or errors
	d.mu.notify = make(chan struct{})
	d.mu.Unlock()
	d.write.Unlock()

	d.readMu.Lock()
	for _, s := range segs {
		if s.rf != nil {
			s.rf.Close()
			s.rf = nil
		}
	}
	d.readMu.Unlock()
	return err
}

// snapshot returns the durable entries, the segments and the schemas. The
// returned entries and schemas never change (both are append-only).
func (d *dataset) snapshot() ([]entry, []*segment, []storedSchema) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := len(d.mu.schemas)
	return d.mu.entries[:d.mu.durable:d.mu.durable], slices.Clone(d.mu.segs), d.mu.schemas[:n:n]
}

// readEntry reads the framed message of e into buf (grown as needed) and
// verifies its checksum. It returns the flatbuffer header and the body.
func (d *dataset) readEntry(seg *segment, e *entry, buf []byte) (meta, body, out []byte, err error) {
	d.readMu.Lock()
	if seg.rf == nil {
		seg.rf, err = d.fs.Open(d.fs.PathJoin(d.dir, seg.name+segExt))
	}
	rf := seg.rf
	d.readMu.Unlock()
	if err != nil {
		return nil, nil, buf, err
	}
	if e.bad != nil {
		return nil, nil, buf, fmt.Errorf("%w: segment %s bytes %d-%d failed verification at recovery and were set aside (copy in %s)",
			errCorrupt, seg.name, e.pos, e.pos+e.bad.length, orUnknown(e.bad.quarantine))
	}
	n := e.frameLen()
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := rf.ReadAt(buf, e.pos); err != nil {
		return nil, nil, buf, fmt.Errorf("segment %s at %d: %w", seg.name, e.pos, err)
	}
	c := e.checksum(buf)
	if c != e.crc && dropCached(rf, e.pos, n) {
		// The page cache may hold a block as it was before a direct
		// write rewrote it (direct.go): read once more from the disk.
		if _, err := rf.ReadAt(buf, e.pos); err != nil {
			return nil, nil, buf, fmt.Errorf("segment %s at %d: %w", seg.name, e.pos, err)
		}
		c = e.checksum(buf)
	}
	if c != e.crc {
		d.reportReadDamage(seg, e, slices.Clone(buf))
		return nil, nil, buf, fmt.Errorf("%w: segment %s bytes %d-%d: crc %08x, index says %08x", errCorrupt, seg.name, e.pos, e.pos+n, c, e.crc)
	}
	return buf[8 : 8+int64(e.metaLen)], buf[8+e.region():], buf, nil
}

// checksum computes e's CRC over its frame as read.
func (e *entry) checksum(frame []byte) uint32 {
	if e.hdrLen > 0 {
		return frameCRC(frame, e.hdrLen)
	}
	return crc32.Checksum(frame, castagnoli)
}

func orUnknown(s string) string {
	if s == "" {
		return "an earlier run's quarantine directory"
	}
	return s
}

// reportReadDamage logs, once per position and run, a stored batch that
// failed its checksum when read (a sealed segment damaged after recovery
// verified it, or never verified: only the last segment is read in full at
// start-up).
func (d *dataset) reportReadDamage(seg *segment, e *entry, frame []byte) {
	d.readMu.Lock()
	if d.reported == nil {
		d.reported = make(map[int64]bool)
	}
	key := int64(e.seg)<<40 | e.pos
	first := !d.reported[key]
	d.reported[key] = true
	d.readMu.Unlock()
	if !first {
		return
	}
	q, err := d.quarantine(fmt.Sprintf("%s%s.%d-%d", seg.name, segExt, e.pos, e.pos+e.frameLen()), frame)
	if err != nil {
		q = "not copied: " + err.Error()
	}
	d.log.Error("receiver: stored batch failed its checksum; reads of it fail with DataLoss",
		"segment", d.fs.PathJoin(d.dir, seg.name+segExt), "offset", e.pos, "length", e.frameLen(), "offset_id", e.offset, "quarantine", q)
}

var errCorrupt = errors.New("stored batch is corrupt")
