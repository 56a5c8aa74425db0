package receiver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/thalweg/thalweg/flight/internal/wire"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	datasetFile = "DATASET"
	segExt      = ".arrows"
	idxExt      = ".idx"
	tmpExt      = ".tmp"
	idxHdrLen   = 8
)

// entry is one stored record batch message: where it is and what it covers.
type entry struct {
	seg     int   // index into dataset.mu.segs
	pos     int64 // byte offset of the IPC continuation marker in the segment
	metaLen int32 // flatbuffer header length, unpadded
	bodyLen int64
	crc     uint32 // CRC-32C of the whole framed message
	rows    int64
	offset  uint64 // the stream's offset_id
	spans   []wire.Span
	part    int32
	parts   int32
}

func (e *entry) frameLen() int64 { return 8 + pad8(int64(e.metaLen)) + e.bodyLen }

func pad8(n int64) int64 { return (n + 7) &^ 7 }

// idxRecord is the JSON payload of one index frame.
type idxRecord struct {
	Offset uint64      `json:"o"`
	Rows   int64       `json:"n"`
	Pos    int64       `json:"p"`
	Meta   int32       `json:"m"`
	Body   int64       `json:"b"`
	CRC    uint32      `json:"c"`
	Spans  []wire.Span `json:"s,omitempty"`
	Part   int32       `json:"pt,omitempty"`
	Parts  int32       `json:"ps,omitempty"`
}

type segment struct {
	num  int
	name string   // file name without extension
	rf   vfs.File // read handle, opened lazily under dataset.readMu
}

// activeSeg is the segment appends go to.
type activeSeg struct {
	seg     int // index into dataset.mu.segs
	f, idx  vfs.File
	size    int64
	idxSize int64
}

// pendingBatch is one validated batch message waiting to be appended.
type pendingBatch struct {
	meta, body  []byte
	rows        int64
	offset      uint64
	spans       []wire.Span
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
	fs     vfs.FS
	dir    string
	name   string
	path   []string
	opts   *Options
	log    *slog.Logger
	kick   chan struct{} // cap 1: "there is something to sync"
	quit   chan struct{}
	done   chan struct{}
	readMu sync.Mutex // guards segment.rf

	mu struct {
		sync.Mutex
		schema    *arrow.Schema
		schemaMsg []byte // flatbuffer of the schema message
		segs      []*segment
		entries   []entry
		durable   int // entries[:durable] are synced
		active    *activeSeg
		err       error         // sticky storage failure
		notify    chan struct{} // closed and replaced when durable or err change
		closed    bool
		segBuf    []byte // frames appended to the active segment, not yet written
		idxBuf    []byte // index frames of the same entries
	}
	// spare holds the committer's emptied write buffers for reuse; only the
	// committer touches it.
	spare struct{ seg, idx []byte }
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
	return d
}

// createDataset makes the directory and its DATASET file durable.
func createDataset(fs vfs.FS, root, name string, path []string, opts *Options) (*dataset, error) {
	d := newDataset(fs, root, name, path, opts)
	if err := fs.MkdirAll(d.dir, 0o755); err != nil {
		return nil, err
	}
	body, _ := json.Marshal(struct {
		Version int      `json:"version"`
		Path    []string `json:"path"`
	}{1, path})
	if err := writeFileAtomic(fs, d.dir, datasetFile, body); err != nil {
		return nil, err
	}
	if err := syncDir(fs, root); err != nil {
		return nil, err
	}
	go d.commitLoop()
	return d, nil
}

func writeFileAtomic(fs vfs.FS, dir, name string, data []byte) error {
	tmp := fs.PathJoin(dir, name+tmpExt)
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fs.Rename(tmp, fs.PathJoin(dir, name)); err != nil {
		return err
	}
	return syncDir(fs, dir)
}

func syncDir(fs vfs.FS, dir string) error {
	f, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// claimSchema checks schema against the dataset's, or makes it the
// dataset's schema when it has none yet.
func (d *dataset) claimSchema(schema *arrow.Schema, msg []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.err != nil {
		return d.mu.err
	}
	if d.mu.schema == nil {
		d.mu.schema = schema
		d.mu.schemaMsg = slices.Clone(msg)
		return nil
	}
	if !d.mu.schema.Equal(schema) {
		return fmt.Errorf("%w: dataset has %s, stream has %s", errSchemaMismatch, d.mu.schema, schema)
	}
	return nil
}

var errSchemaMismatch = errors.New("schema differs from the dataset's schema")

// errStorage marks failures of the local file system; the server reports
// them as Internal.
type storageError struct{ err error }

func (e *storageError) Error() string { return "receiver storage: " + e.err.Error() }
func (e *storageError) Unwrap() error { return e.err }

// append adds bs contiguously to the active segment and returns the index
// of the last entry. It neither writes nor syncs; the committer does both
// (see dataset). After a storage failure the dataset is poisoned: appends
// fail, durable entries stay readable, and a restart truncates any partial
// tail.
func (d *dataset) append(bs []pendingBatch) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return 0, errDatasetClosed
	}
	if d.mu.err != nil {
		return 0, d.mu.err
	}
	if d.mu.active == nil {
		if err := d.openSegmentLocked(); err != nil {
			return 0, d.failLocked(err)
		}
	}
	a := d.mu.active
	for i := range bs {
		b := &bs[i]
		e := entry{
			seg: a.seg, pos: a.size, metaLen: int32(len(b.meta)), bodyLen: int64(len(b.body)),
			rows: b.rows, offset: b.offset, spans: b.spans, part: b.part, parts: b.parts,
		}
		start := len(d.mu.segBuf)
		d.mu.segBuf = appendFrame(d.mu.segBuf, b.meta)
		d.mu.segBuf = append(d.mu.segBuf, b.body...)
		e.crc = crc32.Checksum(d.mu.segBuf[start:], castagnoli)
		a.size += e.frameLen()
		d.mu.idxBuf = appendIdxFrame(d.mu.idxBuf, &e)
		d.mu.entries = append(d.mu.entries, e)
	}
	select {
	case d.kick <- struct{}{}:
	default:
	}
	return len(d.mu.entries) - 1, nil
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

// writeBuffered writes out segBuf and idxBuf (which the caller took from mu)
// to the active segment's files.
func writeBuffered(a *activeSeg, seg, idx []byte) error {
	if len(seg) > 0 {
		if _, err := a.f.Write(seg); err != nil {
			return err
		}
	}
	if len(idx) > 0 {
		if _, err := a.idx.Write(idx); err != nil {
			return err
		}
		a.idxSize += int64(len(idx))
	}
	return nil
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
	dst = append(dst, `{"o":`...)
	dst = strconv.AppendUint(dst, e.offset, 10)
	dst = append(dst, `,"n":`...)
	dst = strconv.AppendInt(dst, e.rows, 10)
	dst = append(dst, `,"p":`...)
	dst = strconv.AppendInt(dst, e.pos, 10)
	dst = append(dst, `,"m":`...)
	dst = strconv.AppendInt(dst, int64(e.metaLen), 10)
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
			dst = strconv.AppendInt(dst, int64(sp.Partition), 10)
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
	dst = append(dst, '}')
	payload := dst[start+idxHdrLen:]
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(payload, castagnoli))
	return dst
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

// openSegmentLocked creates the next segment with the dataset's schema
// message and makes it and its directory entry durable before any batch is
// appended, so that recovery only ever has to repair the last segment.
func (d *dataset) openSegmentLocked() error {
	if d.mu.schemaMsg == nil {
		return errors.New("no schema")
	}
	num := 1
	if n := len(d.mu.segs); n > 0 {
		num = d.mu.segs[n-1].num + 1
	}
	name := fmt.Sprintf("%08d", num)
	f, err := d.fs.Create(d.fs.PathJoin(d.dir, name+segExt), vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	idx, err := d.fs.Create(d.fs.PathJoin(d.dir, name+idxExt), vfs.WriteCategoryUnspecified)
	if err != nil {
		f.Close()
		return err
	}
	hdr := appendFrame(nil, d.mu.schemaMsg)
	if _, err = f.Write(hdr); err == nil {
		if err = f.Sync(); err == nil {
			if err = idx.Sync(); err == nil {
				err = syncDir(d.fs, d.dir)
			}
		}
	}
	if err != nil {
		f.Close()
		idx.Close()
		return err
	}
	d.mu.segs = append(d.mu.segs, &segment{num: num, name: name})
	d.mu.active = &activeSeg{seg: len(d.mu.segs) - 1, f: f, idx: idx, size: int64(len(hdr))}
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
	d.mu.Lock()
	target, a := len(d.mu.entries), d.mu.active
	if d.mu.err != nil || a == nil || target == d.mu.durable {
		d.mu.Unlock()
		return
	}
	seg, idx := d.mu.segBuf, d.mu.idxBuf
	d.mu.segBuf, d.mu.idxBuf = d.spare.seg[:0], d.spare.idx[:0]
	d.mu.Unlock()
	err := writeBuffered(a, seg, idx)
	if err == nil {
		err = a.f.Sync()
	}
	if err == nil {
		err = a.idx.Sync()
	}
	d.spare.seg, d.spare.idx = reusable(seg), reusable(idx)
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
		d.mu.segBuf, d.mu.idxBuf = reusable(seg), reusable(idx)
		if err := writeBuffered(a, seg, idx); err != nil {
			return err
		}
		if err := a.f.Sync(); err != nil {
			return err
		}
		if err := a.idx.Sync(); err != nil {
			return err
		}
		d.publishLocked(target)
	}
	d.mu.active = nil
	err := a.f.Close()
	if cerr := a.idx.Close(); err == nil {
		err = cerr
	}
	return err
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

	d.mu.Lock()
	var err error
	if d.mu.err == nil {
		err = d.sealLocked()
	} else if a := d.mu.active; a != nil {
		a.f.Close()
		a.idx.Close()
		d.mu.active = nil
	}
	segs := d.mu.segs
	close(d.mu.notify) // wake waiters; they see closed via their contexts or errors
	d.mu.notify = make(chan struct{})
	d.mu.Unlock()

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

// snapshot returns the durable entries, the segments and the schema. The
// returned entries never change (entries are append-only).
func (d *dataset) snapshot() ([]entry, []*segment, *arrow.Schema, []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mu.entries[:d.mu.durable:d.mu.durable], slices.Clone(d.mu.segs), d.mu.schema, d.mu.schemaMsg
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
	n := e.frameLen()
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := rf.ReadAt(buf, e.pos); err != nil {
		return nil, nil, buf, fmt.Errorf("segment %s at %d: %w", seg.name, e.pos, err)
	}
	if c := crc32.Checksum(buf, castagnoli); c != e.crc {
		return nil, nil, buf, fmt.Errorf("%w: segment %s at %d: crc %08x, index says %08x", errCorrupt, seg.name, e.pos, c, e.crc)
	}
	hdrEnd := 8 + pad8(int64(e.metaLen))
	return buf[8 : 8+int64(e.metaLen)], buf[hdrEnd:], buf, nil
}

var errCorrupt = errors.New("stored batch is corrupt")

// ---- recovery ----

// openDataset loads an existing dataset directory. Every segment but the
// last was sealed (fully synced) before its successor was created, so only
// the last one can have a torn tail: its index frames and messages are
// verified and the files are cut back to the longest valid prefix, dropping
// a split batch whose parts did not all survive.
func openDataset(fs vfs.FS, root, name string, opts *Options) (*dataset, error) {
	dir := fs.PathJoin(root, name)
	raw, err := readFile(fs, fs.PathJoin(dir, datasetFile))
	if err != nil {
		return nil, err
	}
	var meta struct {
		Path []string `json:"path"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil || len(meta.Path) == 0 {
		return nil, fmt.Errorf("%s: unreadable %s: %v", dir, datasetFile, err)
	}
	d := newDataset(fs, root, name, meta.Path, opts)

	names, err := fs.List(dir)
	if err != nil {
		return nil, err
	}
	var nums []int
	for _, n := range names {
		if strings.HasSuffix(n, tmpExt) {
			_ = fs.Remove(fs.PathJoin(dir, n)) // an interrupted rewrite
			continue
		}
		if base, ok := strings.CutSuffix(n, segExt); ok {
			if v, err := strconv.Atoi(base); err == nil {
				nums = append(nums, v)
			}
		}
	}
	sort.Ints(nums)
	for i, num := range nums {
		last := i == len(nums)-1
		if err := d.loadSegment(num, last); err != nil {
			return nil, err
		}
	}
	d.mu.durable = len(d.mu.entries)
	go d.commitLoop()
	return d, nil
}

func readFile(fs vfs.FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (d *dataset) loadSegment(num int, last bool) error {
	name := fmt.Sprintf("%08d", num)
	segPath := d.fs.PathJoin(d.dir, name+segExt)
	idxPath := d.fs.PathJoin(d.dir, name+idxExt)
	f, err := d.fs.Open(segPath)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()

	schemaEnd, schema, schemaMsg, serr := readSchemaMessage(f, size)
	if serr != nil {
		if !last {
			return fmt.Errorf("%s: sealed segment has no valid schema: %w", segPath, serr)
		}
		// Torn while being created: nothing in it was ever acknowledged.
		d.log.Warn("receiver: removing a segment torn at creation", "segment", segPath, "err", serr)
		return d.removeSegment(name)
	}
	if d.mu.schema == nil {
		d.mu.schema, d.mu.schemaMsg = schema, schemaMsg
	} else if !d.mu.schema.Equal(schema) {
		return fmt.Errorf("%s: schema differs from earlier segments", segPath)
	}

	idxRaw, err := readFile(d.fs, idxPath)
	if err != nil && !(last && errors.Is(err, os.ErrNotExist)) {
		return err
	}
	segIdx := len(d.mu.segs)
	var (
		entries  []entry
		idxEnds  []int64 // index bytes up to and including entries[i]
		idxValid int64
		end      = schemaEnd
		buf      []byte
	)
	for off := int64(0); off+idxHdrLen <= int64(len(idxRaw)); {
		n := int64(binary.LittleEndian.Uint32(idxRaw[off:]))
		c := binary.LittleEndian.Uint32(idxRaw[off+4:])
		if off+idxHdrLen+n > int64(len(idxRaw)) {
			break
		}
		payload := idxRaw[off+idxHdrLen : off+idxHdrLen+n]
		if crc32.Checksum(payload, castagnoli) != c {
			break
		}
		var r idxRecord
		if err := json.Unmarshal(payload, &r); err != nil {
			break
		}
		e := entry{seg: segIdx, pos: r.Pos, metaLen: r.Meta, bodyLen: r.Body, crc: r.CRC, rows: r.Rows,
			offset: r.Offset, spans: r.Spans, part: r.Part, parts: r.Parts}
		if e.pos != end || e.metaLen < 0 || e.bodyLen < 0 || e.pos+e.frameLen() > size {
			break
		}
		if last {
			buf = slices.Grow(buf[:0], int(e.frameLen()))[:e.frameLen()]
			if _, err := f.ReadAt(buf, e.pos); err != nil || crc32.Checksum(buf, castagnoli) != e.crc {
				break
			}
		}
		entries = append(entries, e)
		end = e.pos + e.frameLen()
		off += idxHdrLen + n
		idxValid = off
		idxEnds = append(idxEnds, off)
	}
	if !last && (end != size || idxValid != int64(len(idxRaw))) {
		return fmt.Errorf("%s: sealed segment is inconsistent with its index (%d of %d bytes, %d of %d index bytes valid)",
			segPath, end, size, idxValid, len(idxRaw))
	}
	// A split batch is acknowledged only when all its parts are durable; a
	// group cut by the crash is dropped entirely.
	if k := len(entries); k > 0 && entries[k-1].parts > 1 && entries[k-1].part != entries[k-1].parts-1 {
		start := k - 1 - int(entries[k-1].part)
		entries = entries[:start]
		end, idxValid = schemaEnd, 0
		if start > 0 {
			end, idxValid = entries[start-1].pos+entries[start-1].frameLen(), idxEnds[start-1]
		}
	}
	if last && len(entries) == 0 {
		return d.removeSegment(name)
	}
	if last && (end != size || idxValid != int64(len(idxRaw))) {
		d.log.Warn("receiver: discarding a torn tail", "segment", segPath,
			"kept_bytes", end, "file_bytes", size, "kept_entries", len(entries))
		if err := d.rewritePrefix(f, segPath, end); err != nil {
			return err
		}
		if err := d.rewriteBytes(idxPath, idxRaw[:idxValid]); err != nil {
			return err
		}
	}
	d.mu.segs = append(d.mu.segs, &segment{num: num, name: name})
	d.mu.entries = append(d.mu.entries, entries...)
	return nil
}

func (d *dataset) removeSegment(name string) error {
	for _, ext := range []string{segExt, idxExt} {
		if err := d.fs.Remove(d.fs.PathJoin(d.dir, name+ext)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return syncDir(d.fs, d.dir)
}

// rewritePrefix replaces path with its first n bytes (vfs has no truncate):
// copy, sync, rename, sync the directory.
func (d *dataset) rewritePrefix(src vfs.File, path string, n int64) error {
	data := make([]byte, n)
	if _, err := src.ReadAt(data, 0); err != nil {
		return err
	}
	return d.rewriteBytes(path, data)
}

func (d *dataset) rewriteBytes(path string, data []byte) error {
	base := d.fs.PathBase(path)
	return writeFileAtomic(d.fs, d.dir, base, data)
}

// readSchemaMessage parses the IPC schema message at the start of a segment.
func readSchemaMessage(f vfs.File, size int64) (end int64, schema *arrow.Schema, msg []byte, err error) {
	if size < 8 {
		return 0, nil, nil, fmt.Errorf("segment is %d bytes long", size)
	}
	var hdr [8]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return 0, nil, nil, err
	}
	if binary.LittleEndian.Uint32(hdr[:4]) != 0xFFFFFFFF {
		return 0, nil, nil, errors.New("segment does not start with an IPC continuation marker")
	}
	n := int64(binary.LittleEndian.Uint32(hdr[4:]))
	if n == 0 || 8+n > size || n%8 != 0 {
		return 0, nil, nil, fmt.Errorf("schema message length %d does not fit the segment (%d bytes)", n, size)
	}
	buf := make([]byte, 8+n)
	if _, err := f.ReadAt(buf, 0); err != nil {
		return 0, nil, nil, err
	}
	r, err := ipc.NewReader(bytes.NewReader(buf), ipc.WithAllocator(memory.NewGoAllocator()))
	if err != nil {
		return 0, nil, nil, err
	}
	schema = r.Schema()
	r.Release()
	return 8 + n, schema, buf[8:], nil
}
