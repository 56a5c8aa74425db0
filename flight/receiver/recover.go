package receiver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/atomicfile"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/ipcguard"
)

// maxDamageLines bounds the lines recovery logs per segment for damaged
// positions; the rest are summed up in one line (a zeroed region can hold
// thousands of batches).
const maxDamageLines = 20

// quarantineDir is the directory, inside a dataset's directory, that holds
// copies of the bytes recovery could not verify (see the package
// documentation, Recovery).
const quarantineDir = "quarantine"

// openDataset loads an existing dataset directory and recovers every
// segment (see the package documentation, Recovery): a torn tail of the
// last segment is trimmed; anything else that does not verify is logged,
// copied to the quarantine directory and, inside a segment, kept as a
// position whose reads fail with DataLoss. Only an unrecoverable schema is
// an error.
func openDataset(fs vfs.FS, root, name string, opts *Options) (*dataset, error) {
	dir := fs.PathJoin(root, name)
	path, version, rerr := readDatasetFile(fs, dir)
	if rerr == nil && version < datasetVersion || rerr != nil && looksV1(fs, dir) {
		return nil, &V1Error{Dir: dir, Root: root}
	}
	if rerr != nil {
		var err error
		if path, err = parseDirName(name); err != nil {
			return nil, fmt.Errorf("%s: %w, and the directory name does not decode: %w", dir, rerr, err)
		}
	}
	d := newDataset(fs, root, name, path, opts)
	if rerr != nil {
		// The directory name encodes the path too (see dirName): recover it
		// from there, keep the damaged file and write a good one.
		q, err := "none (it is missing)", error(nil)
		if raw, rerr := readFile(fs, fs.PathJoin(dir, datasetFile)); rerr == nil {
			if q, err = d.quarantine(fmt.Sprintf("%s.%d", datasetFile, time.Now().UnixNano()), raw); err != nil {
				return nil, err
			}
		}
		if err := writeDatasetFile(fs, dir, path); err != nil {
			return nil, err
		}
		d.log.Error("receiver: dataset's DATASET file is missing or damaged; rewrote it from the directory name",
			"dir", dir, "err", rerr, "quarantine", q)
	}

	names, err := fs.List(dir)
	if err != nil {
		return nil, err
	}
	var nums []int
	segs := map[int]bool{}
	for _, n := range names {
		if strings.HasSuffix(n, atomicfile.TmpExt) {
			_ = fs.Remove(fs.PathJoin(dir, n)) // an interrupted rewrite; the original is intact
			continue
		}
		for _, ext := range []string{segExt, idxExt} {
			if base, ok := strings.CutSuffix(n, ext); ok {
				if v, err := strconv.Atoi(base); err == nil {
					if _, seen := segs[v]; !seen {
						nums = append(nums, v)
					}
					segs[v] = segs[v] || ext == segExt
				}
			}
		}
	}
	sort.Ints(nums)
	for i, num := range nums {
		if i > 0 && num != nums[i-1]+1 {
			d.log.Error("receiver: segments are missing (neither file is there); the positions of the batches after them moved up",
				"dataset_dir", dir, "after", fmt.Sprintf("%08d", nums[i-1]), "next", fmt.Sprintf("%08d", num))
		}
		var err error
		if segs[num] {
			err = d.loadSegment(num, i == len(nums)-1)
		} else {
			err = d.loadMissingSegment(num, i == len(nums)-1)
		}
		if err != nil {
			return nil, err
		}
	}
	d.fixSchemas()
	d.mu.durable = len(d.mu.entries)
	d.mu.appended = positionsOf(d.mu.entries)
	d.mu.durablePos = maps.Clone(d.mu.appended)
	d.reportSetAside()
	go d.commitLoop()
	return d, nil
}

// fixSchemas gives each segment whose file is missing (schema -1) the
// schema of the segment before it, or after it for leading ones.
func (d *dataset) fixSchemas() {
	prev := -1
	for _, sg := range d.mu.segs {
		if sg.schema >= 0 {
			prev = sg.schema
		} else if prev >= 0 {
			sg.schema = prev
		}
	}
	next := 0
	for i := len(d.mu.segs) - 1; i >= 0; i-- {
		if sg := d.mu.segs[i]; sg.schema >= 0 {
			next = sg.schema
		} else {
			sg.schema = next
		}
	}
}

// isDatasetDir reports whether root/name is a dataset to open: it has a
// DATASET file, or segments (its DATASET file was lost). A directory with
// neither is a dataset whose creation did not complete; it holds nothing.
func isDatasetDir(fs vfs.FS, root, name string) bool {
	dir := fs.PathJoin(root, name)
	if _, err := fs.Stat(fs.PathJoin(dir, datasetFile)); err == nil {
		return true
	}
	names, err := fs.List(dir)
	if err != nil {
		return false
	}
	for _, n := range names {
		if strings.HasSuffix(n, segExt) {
			_, err := parseDirName(name)
			return err == nil
		}
	}
	return false
}

// readDatasetFile returns the descriptor path and the format version a
// DATASET file records.
func readDatasetFile(fs vfs.FS, dir string) ([]string, int, error) {
	raw, err := readFile(fs, fs.PathJoin(dir, datasetFile))
	if err != nil {
		return nil, 0, err
	}
	var meta struct {
		Version int      `json:"version"`
		Path    []string `json:"path"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil || len(meta.Path) == 0 {
		return nil, 0, fmt.Errorf("unreadable %s: %v", datasetFile, err)
	}
	return meta.Path, meta.Version, nil
}

// parseDirName inverts dirName.
func parseDirName(name string) ([]string, error) {
	var path []string
	for _, el := range strings.Split(name, ".") {
		var b strings.Builder
		for i := 0; i < len(el); i++ {
			if el[i] != '%' {
				b.WriteByte(el[i])
				continue
			}
			if i+2 >= len(el) {
				return nil, fmt.Errorf("directory name %q: truncated escape", name)
			}
			v, err := strconv.ParseUint(el[i+1:i+3], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("directory name %q: bad escape: %w", name, err)
			}
			b.WriteByte(byte(v))
			i += 2
		}
		path = append(path, b.String())
	}
	if enc, err := dirName(path); err != nil || enc != name {
		return nil, fmt.Errorf("directory name %q is not a dataset name", name)
	}
	return path, nil
}

// reportSetAside logs, at every start, the positions earlier or this
// recovery set aside: they stay unreadable until an operator acts.
func (d *dataset) reportSetAside() {
	var bad []int
	for i := range d.mu.entries {
		if d.mu.entries[i].bad != nil {
			bad = append(bad, i)
		}
	}
	if len(bad) == 0 {
		return
	}
	shown := bad[:min(len(bad), 32)]
	d.log.Error("receiver: dataset has positions that failed verification; DoGet of them fails with DataLoss, other positions are served",
		"count", len(bad), "positions", shown, "quarantine", d.fs.PathJoin(d.dir, quarantineDir))
}

func readFile(fs vfs.FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size())
	if err := readAt(f, buf, 0); err != nil {
		return nil, err
	}
	return buf, nil
}

// readAt fills p from off. A read of nothing is not asked of the file:
// some vfs.FS (pebble's MemFS) answer it at the end of a file with io.EOF,
// which made an empty file — a segment torn at creation, an empty index —
// look damaged.
func readAt(f io.ReaderAt, p []byte, off int64) error {
	if len(p) == 0 {
		return nil
	}
	_, err := f.ReadAt(p, off)
	return err
}

// idxState is what parsing an index file found after its valid frames.
type idxState int

const (
	idxOK      idxState = iota // every byte is a valid frame
	idxTorn                    // an incomplete frame at the end: an interrupted write
	idxCorrupt                 // a complete frame that does not verify
	idxMissing                 // no index file
)

// segScan is the recovery of one segment.
type segScan struct {
	d        *dataset
	f        vfs.File
	name     string // file name without extension
	segPath  string
	idxPath  string
	last     bool
	segIdx   int
	schema   int // index into dataset.mu.schemas, set by readSchema
	size     int64
	v2       bool
	idxRaw   []byte
	idx      []entry // the index's valid frames, in file order
	idxValid int64   // bytes of idxRaw they cover
	idxState idxState
	buf      []byte
}

func (d *dataset) loadSegment(num int, last bool) error {
	name := fmt.Sprintf("%08d", num)
	sc := &segScan{d: d, name: name, last: last, segIdx: len(d.mu.segs),
		segPath: d.fs.PathJoin(d.dir, name+segExt), idxPath: d.fs.PathJoin(d.dir, name+idxExt)}
	f, err := d.fs.Open(sc.segPath)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	sc.f, sc.size = f, st.Size()
	// A cached page of the segment may predate a direct write that
	// rewrote its block (see Durability in the package documentation):
	// recovery reads what is on the disk.
	dropCached(f, 0, 0)

	sc.idxRaw, err = readFile(d.fs, sc.idxPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		sc.idxState = idxMissing
	case err != nil:
		return err
	default:
		sc.parseIndex()
	}

	schemaEnd, err := sc.readSchema()
	if err != nil {
		return sc.schemaFailed(err)
	}
	var entries []entry
	if !last && sc.indexConsistent(schemaEnd) {
		// Sealed segments were synced whole before their successor was
		// created; a consistent index is trusted, and every read verifies
		// the batch it serves.
		entries = sc.idx
	} else {
		if entries, err = sc.recover(schemaEnd); err != nil {
			return err
		}
	}
	d.mu.segs = append(d.mu.segs, &segment{num: num, name: name, schema: sc.schema})
	d.mu.entries = append(d.mu.entries, entries...)
	return nil
}

// loadMissingSegment keeps the positions of a segment whose file is gone but
// whose index is there: every batch it lists is a damaged position, so the
// positions after it do not move and reads of them fail with DataLoss.
//
// The last segment's index alone, listing nothing, is a creation that a
// crash interrupted (openSegmentLocked creates both files and syncs their
// directory entries before it appends a batch, so nothing in it was ever
// acknowledged): its index is removed, and the segment is created again
// when a batch needs it.
func (d *dataset) loadMissingSegment(num int, last bool) error {
	name := fmt.Sprintf("%08d", num)
	sc := &segScan{d: d, name: name, segIdx: len(d.mu.segs), idxPath: d.fs.PathJoin(d.dir, name+idxExt)}
	var err error
	if sc.idxRaw, err = readFile(d.fs, sc.idxPath); err != nil {
		return err
	}
	sc.parseIndex()
	if last && len(sc.idx) == 0 {
		d.log.Warn("receiver: removed the index of a segment whose creation was interrupted (its file is missing; nothing was written to it)",
			"index", sc.idxPath)
		return d.removeTornAtCreation(sc.idxPath)
	}
	var offsets []uint64
	for i := range sc.idx {
		e := &sc.idx[i]
		if e.bad == nil {
			e.bad = &damage{length: e.frameLen()}
		}
		offsets = append(offsets, e.offset)
	}
	d.log.Error("receiver: segment file is missing; its index keeps its positions, reads of them fail with DataLoss",
		"segment", d.fs.PathJoin(d.dir, name+segExt), "positions", len(sc.idx), "first_position", len(d.mu.entries),
		"offset_ids", offsets[:min(len(offsets), 32)])
	// Its schema is unknown; every position in it fails with DataLoss, so
	// the schema only decides which DoGet run the positions fall in: the
	// segment before's (fixSchemas).
	d.mu.segs = append(d.mu.segs, &segment{num: num, name: name, schema: -1})
	d.mu.entries = append(d.mu.entries, sc.idx...)
	return nil
}

// parseIndex decodes the valid prefix of the index frames.
func (sc *segScan) parseIndex() {
	raw := sc.idxRaw
	off := 0
	for off+idxHdrLen <= len(raw) {
		n := int(binary.LittleEndian.Uint32(raw[off:]))
		c := binary.LittleEndian.Uint32(raw[off+4:])
		if n > len(raw)-off-idxHdrLen {
			break // incomplete
		}
		payload := raw[off+idxHdrLen : off+idxHdrLen+n]
		var r idxRecord
		if crc32.Checksum(payload, castagnoli) != c || json.Unmarshal(payload, &r) != nil ||
			r.Pos < 8 || r.Meta < 0 || r.Head < 0 || r.Body < 0 || r.Bad < 0 {
			sc.idxState = idxCorrupt
			if allZero(raw[off:]) {
				sc.idxState = idxTorn // unsynced blocks a crash left as zeros
			}
			sc.idxValid = int64(off)
			return
		}
		sc.idx = append(sc.idx, r.entry(sc.segIdx))
		off += idxHdrLen + n
	}
	sc.idxValid = int64(off)
	if off < len(raw) {
		sc.idxState = idxTorn
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// indexConsistent reports whether the index describes the segment exactly:
// every frame valid, contiguous from the schema to the end of the file.
func (sc *segScan) indexConsistent(schemaEnd int64) bool {
	if sc.idxState != idxOK {
		return false
	}
	end := schemaEnd
	for i := range sc.idx {
		if sc.idx[i].pos != end {
			return false
		}
		end += sc.idx[i].frameLen()
	}
	return end == sc.size
}

func (sc *segScan) read(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > sc.size {
		return nil, fmt.Errorf("read of %d bytes at %d beyond the segment (%d bytes)", n, off, sc.size)
	}
	sc.buf = slices.Grow(sc.buf[:0], int(n))[:n]
	if err := readAt(sc.f, sc.buf, off); err != nil {
		return nil, err
	}
	return sc.buf, nil
}

// ---- the schema frame ----

// readSchema reads the segment's schema frame, sets sc.v2 and the dataset's
// schema, and returns where the first batch starts. A damaged frame prefix
// is recovered from the frame's trailer (version 2) or from the index
// (version 1), and reported; the segment is left as it is.
func (sc *segScan) readSchema() (int64, error) {
	end, v2, schema, msg, perr := sc.parseSchemaFrame()
	if perr == nil && !v2 {
		// A damaged length prefix can still frame a flatbuffer that decodes;
		// the index, or the trailer of a version 2 schema frame, tells.
		switch {
		case len(sc.idx) > 0 && (sc.idx[0].pos != end || sc.idx[0].hdrLen > 0):
			perr = fmt.Errorf("schema frame ends at byte %d but the index's first batch (version %d) starts at byte %d",
				end, 1+min(sc.idx[0].hdrLen, 1), sc.idx[0].pos)
		case len(sc.idx) == 0:
			limit := min(sc.size, int64(max(sc.d.opts.MaxMessageSize, 64<<20))+footerLen+8)
			if _, _, found := sc.findFooter(8, limit, kindSchema); found {
				perr = fmt.Errorf("schema frame's length prefix %d does not reach its trailer", end-8)
			}
		}
	}
	if perr != nil {
		var ok bool
		end, v2, schema, msg, ok = sc.recoverSchema()
		if !ok {
			return 0, perr
		}
		var prefix [8]byte
		_, _ = sc.f.ReadAt(prefix[:], 0)
		sc.d.log.Error("receiver: segment's schema frame is damaged; recovered the schema from the frame's other bytes, the segment is served as it is",
			"segment", sc.segPath, "err", perr, "prefix", fmt.Sprintf("%x", prefix),
			"want_prefix", fmt.Sprintf("ffffffff%08x", bswap(uint32(end-8))), "first_batch_at", end,
			"action", "the file is not a valid Arrow IPC stream for other readers until its first 8 bytes are restored to want_prefix")
	}
	sc.v2 = v2
	sid, err := sc.d.addSchemaLocked(schema, msg)
	if err != nil {
		// Not written by this receiver, which refuses such a stream: serve
		// the segment with its own schema all the same, and check new
		// streams against the schemas before it.
		sc.d.log.Error("receiver: segment's schema is not compatible with the earlier segments'; it is served with its own schema",
			"segment", sc.segPath, "err", err)
		sc.d.mu.schemas = append(sc.d.mu.schemas, storedSchema{schema: schema, msg: slices.Clone(msg)})
		sid = len(sc.d.mu.schemas) - 1
	}
	sc.schema = sid
	return end, nil
}

// bswap turns a little-endian u32 into the hex digits of its bytes in file
// order.
func bswap(v uint32) uint32 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	return binary.BigEndian.Uint32(b[:])
}

// parseSchemaFrame parses the frame at the start of the segment.
func (sc *segScan) parseSchemaFrame() (end int64, v2 bool, schema *arrow.Schema, msg []byte, err error) {
	if sc.size < 8 {
		return 0, false, nil, nil, fmt.Errorf("segment is %d bytes long", sc.size)
	}
	hdr, err := sc.read(0, 8)
	if err != nil {
		return 0, false, nil, nil, err
	}
	if binary.LittleEndian.Uint32(hdr) != 0xFFFFFFFF {
		return 0, false, nil, nil, errors.New("segment does not start with an IPC continuation marker")
	}
	n := int64(binary.LittleEndian.Uint32(hdr[4:]))
	if n == 0 || 8+n > sc.size || n%8 != 0 {
		return 0, false, nil, nil, fmt.Errorf("schema message length %d does not fit the segment (%d bytes)", n, sc.size)
	}
	buf, err := sc.read(0, 8+n)
	if err != nil {
		return 0, false, nil, nil, err
	}
	buf = slices.Clone(buf)
	if n >= footerLen {
		if ft, ok := parseFooter(buf[8:]); ok && ft.kind == kindSchema {
			if ft.payloadLen != 0 || trailerRegion(ft.metaLen, 0) != n || frameCRC(buf, n) != ft.crc {
				return 0, false, nil, nil, errors.New("schema frame does not match its checksum")
			}
			schema, err := decodeSchema(buf[8 : 8+ft.metaLen])
			return 8 + n, true, schema, buf[8 : 8+ft.metaLen], err
		}
	}
	schema, err = decodeSchema(buf[8:])
	return 8 + n, false, schema, buf[8:], err
}

// recoverSchema finds the schema of a segment whose schema frame does not
// parse: from the version 2 trailer (its checksum does not cover the
// prefix), from the bytes before the index's first batch, or, with a
// schema from an earlier segment, up to the first batch frame that
// verifies.
func (sc *segScan) recoverSchema() (end int64, v2 bool, schema *arrow.Schema, msg []byte, ok bool) {
	limit := min(sc.size, int64(max(sc.d.opts.MaxMessageSize, 64<<20))+footerLen+8)
	if m, ft, found := sc.findFooter(8, limit, kindSchema); found {
		region := trailerRegion(ft.metaLen, 0)
		if fend := m + 8; fend == 8+region && ft.payloadLen == 0 {
			if buf, err := sc.read(0, fend); err == nil && frameCRC(buf, region) == ft.crc {
				meta := slices.Clone(buf[8 : 8+ft.metaLen])
				if s, err := decodeSchema(meta); err == nil {
					return fend, true, s, meta, true
				}
			}
		}
	}
	// A version 1 schema frame has no checksum: the bytes before the
	// index's first batch are all there is. A version 2 one whose checksum
	// failed above is damaged, not merely its prefix: it is not decoded.
	if len(sc.idx) > 0 && sc.idx[0].hdrLen == 0 {
		p := sc.idx[0].pos
		if buf, err := sc.read(8, p-8); err == nil {
			meta := slices.Clone(buf)
			if s, err := decodeSchema(meta); err == nil {
				return p, false, s, meta, true
			}
		}
	}
	if len(sc.d.mu.schemas) > 0 {
		// A schema of an earlier segment: the newest one whose field
		// count matches the first batch that verifies.
		if e, found := sc.nextFrameEntry(8, sc.size); found {
			if s, ok := sc.schemaOf(&e); ok {
				return e.pos, true, s.schema, s.msg, true
			}
		}
	}
	return 0, false, nil, nil, false
}

// schemaOf picks, among the dataset's schemas so far (newest first), one
// with as many field nodes as the batch e declares: a segment's schemas
// differ from each other by fields added or left out, which changes that
// count.
func (sc *segScan) schemaOf(e *entry) (storedSchema, bool) {
	buf, err := sc.read(e.pos, 8+int64(e.metaLen))
	if err != nil {
		return storedSchema{}, false
	}
	n, err := ipcguard.FieldNodes(buf[8:])
	if err != nil {
		return storedSchema{}, false
	}
	for i := len(sc.d.mu.schemas) - 1; i >= 0; i-- {
		if s := sc.d.mu.schemas[i]; ipcguard.SchemaNodes(s.schema) == n {
			return s, true
		}
	}
	return storedSchema{}, false
}

// decodeSchema decodes an IPC schema message's flatbuffer.
func decodeSchema(meta []byte) (schema *arrow.Schema, err error) {
	if err := ipcguard.CheckMessage(meta, 0); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("garbled schema message: %v", p)
		}
	}()
	r, err := ipc.NewReader(bytes.NewReader(appendFrame(nil, meta)), ipc.WithAllocator(memory.NewGoAllocator()))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return r.Schema(), nil
}

// schemaFailed handles a segment whose schema cannot be recovered. The last
// segment torn while it was being created (nothing in it was ever
// acknowledged) is removed; any other is refused: the receiver does not
// start until an operator moves it aside.
func (sc *segScan) schemaFailed(cause error) error {
	if sc.last && len(sc.idx) == 0 && sc.tornSchema() {
		sc.d.log.Warn("receiver: removing a segment torn at creation (it holds no batch)", "segment", sc.segPath, "bytes", sc.size, "err", cause)
		return sc.d.removeTornAtCreation(sc.segPath, sc.idxPath)
	}
	return fmt.Errorf("%s: the schema message is damaged and cannot be recovered from the segment, its index or an earlier segment (%w); "+
		"move the segment and its .idx out of the dataset directory to start without it", sc.segPath, cause)
}

// removeTornAtCreation removes the files of the last segment, whose
// creation a crash interrupted before a batch was appended (those that are
// there), and makes the removal durable.
func (d *dataset) removeTornAtCreation(paths ...string) error {
	for _, p := range paths {
		if err := d.fs.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return atomicfile.SyncDir(d.fs, d.dir)
}

// tornSchema reports whether the segment is a prefix of a schema frame:
// its creation was interrupted before the schema was synced.
func (sc *segScan) tornSchema() bool {
	if sc.size < 8 {
		b, err := sc.read(0, sc.size)
		return err == nil && isMarkerPrefix(b)
	}
	hdr, err := sc.read(0, 8)
	if err != nil || binary.LittleEndian.Uint32(hdr) != 0xFFFFFFFF {
		return false
	}
	return 8+int64(binary.LittleEndian.Uint32(hdr[4:])) > sc.size
}

func isMarkerPrefix(b []byte) bool {
	for i := 0; i < len(b) && i < 4; i++ {
		if b[i] != 0xFF {
			return false
		}
	}
	return true
}

// setAsideIn fails a read, before anything is sent, with DataLoss naming
// every position it selects that recovery set aside: the client learns all
// that is missing from its range at once and can select around it.
func setAsideIn(entries []entry, tk *ticket) error {
	var bad []int
	for i := range entries {
		if entries[i].bad != nil && selects(tk, i, &entries[i]) {
			bad = append(bad, i)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	more := ""
	if len(bad) > 64 {
		more = fmt.Sprintf(" and %d more", len(bad)-64)
		bad = bad[:64]
	}
	return status.Errorf(codes.DataLoss, "positions %v%s failed verification at recovery and were set aside "+
		"(their bytes are in the dataset's %s directory); every other position is intact: select around them", bad, more, quarantineDir)
}

// ---- batch frames ----

// frameAt parses and verifies a version 2 batch frame at pos by its own
// trailer.
func (sc *segScan) frameAt(pos int64) (entry, bool) {
	if sc.size-pos < 8+footerLen {
		return entry{}, false
	}
	hdr, err := sc.read(pos, 8)
	if err != nil || binary.LittleEndian.Uint32(hdr) != 0xFFFFFFFF {
		return entry{}, false
	}
	return sc.frameWith(pos, int64(binary.LittleEndian.Uint32(hdr[4:])))
}

// frameWith verifies the version 2 batch frame at pos whose metadata is
// region bytes long, ignoring its 8-byte prefix (which its CRC does not
// cover).
func (sc *segScan) frameWith(pos, region int64) (entry, bool) {
	if region%8 != 0 || region < footerLen || pos+8+region > sc.size {
		return entry{}, false
	}
	r, ft, ok := sc.trailer(pos, region)
	if !ok || pos+8+region+r.Body > sc.size {
		return entry{}, false
	}
	buf, err := sc.read(pos, 8+region+r.Body)
	if err != nil || frameCRC(buf, region) != ft.crc {
		return entry{}, false
	}
	e := r.entry(sc.segIdx)
	e.hdrLen, e.crc, e.bad = region, ft.crc, nil
	return e, true
}

// trailer reads the footer and payload of the version 2 batch frame at pos
// whose metadata is region bytes long.
func (sc *segScan) trailer(pos, region int64) (idxRecord, footer, bool) {
	fb, err := sc.read(pos+8+region-footerLen, footerLen)
	if err != nil {
		return idxRecord{}, footer{}, false
	}
	ft, ok := parseFooter(fb)
	if !ok || ft.kind != kindBatch || trailerRegion(ft.metaLen, ft.payloadLen) != region {
		return idxRecord{}, footer{}, false
	}
	pb, err := sc.read(pos+8+region-footerLen-int64(ft.payloadLen), int64(ft.payloadLen))
	if err != nil {
		return idxRecord{}, footer{}, false
	}
	var r idxRecord
	if json.Unmarshal(pb, &r) != nil || r.Pos != pos || int(r.Meta) != ft.metaLen || r.Body < 0 || r.Body > math.MaxInt32*4 {
		return idxRecord{}, footer{}, false
	}
	return r, ft, true
}

// checkPrefix reports a version 2 frame whose 8-byte prefix (not covered by
// its CRC) is damaged although the rest verified: the batch is served, but
// the file is no longer a valid IPC stream for other readers there.
func (sc *segScan) checkPrefix(e *entry, position int) {
	if e.hdrLen == 0 {
		return
	}
	b, err := sc.read(e.pos, 8)
	if err != nil || (binary.LittleEndian.Uint32(b) == 0xFFFFFFFF && int64(binary.LittleEndian.Uint32(b[4:])) == e.hdrLen) {
		return
	}
	sc.d.log.Error("receiver: a batch frame's 8-byte prefix is damaged; the batch verified by its checksum and is served, the segment is left as it is",
		"segment", sc.segPath, "offset", e.pos, "position", position, "prefix", fmt.Sprintf("%x", b),
		"want_prefix", fmt.Sprintf("ffffffff%08x", bswap(uint32(e.hdrLen))))
}

// verify reads e's frame and checks its CRC.
func (sc *segScan) verify(e *entry) bool {
	if e.pos+e.frameLen() > sc.size {
		return false
	}
	buf, err := sc.read(e.pos, e.frameLen())
	return err == nil && e.checksum(buf) == e.crc
}

// findFooter finds the first version 2 footer of kind whose magic starts in
// [from, limit), returning the magic's offset.
func (sc *segScan) findFooter(from, limit int64, kind uint32) (int64, footer, bool) {
	const chunk = 1 << 20
	for off := from; off < limit; off += chunk {
		n := min(chunk+int64(len(frameMagic))-1, sc.size-off)
		buf, err := sc.read(off, n)
		if err != nil {
			return 0, footer{}, false
		}
		buf = slices.Clone(buf)
		for j := 0; ; {
			k := bytes.Index(buf[j:], frameMagic[:])
			if k < 0 || int64(j+k) >= chunk || off+int64(j+k) >= limit {
				break
			}
			m := off + int64(j+k)
			j += k + 1
			if m < footerLen-8 {
				continue
			}
			fb, err := sc.read(m+8-footerLen, footerLen)
			if err != nil {
				continue
			}
			if ft, ok := parseFooter(fb); ok && ft.kind == kind {
				return m, ft, true
			}
		}
	}
	return 0, footer{}, false
}

// nextFrame finds the first version 2 batch frame at or after from that
// verifies and starts before limit. Frames do not overlap, so the first
// trailer that verifies belongs to the next frame.
func (sc *segScan) nextFrame(from, limit int64) (int64, bool) {
	e, ok := sc.nextFrameEntry(from, limit)
	return e.pos, ok
}

func (sc *segScan) nextFrameEntry(from, limit int64) (entry, bool) {
	slack := int64(max(sc.d.opts.MaxMessageSize, 64<<20)) + footerLen
	for at := from; at < sc.size; {
		m, ft, ok := sc.findFooter(at, min(sc.size, limit+slack), kindBatch)
		if !ok {
			return entry{}, false
		}
		at = m + 1
		region := trailerRegion(ft.metaLen, ft.payloadLen)
		start := m + 8 - region - 8
		if start < from {
			continue
		}
		if start >= limit {
			return entry{}, false
		}
		if e, ok := sc.frameWith(start, region); ok {
			return e, true
		}
	}
	return entry{}, false
}

// ---- the walk ----

// recover walks the segment from the schema, frame by frame, keeping every
// frame that verifies (by the index's CRC or the frame's own trailer), and
// marking as damaged what does not; then it handles the tail, sets aside
// what cannot be verified and rewrites the index when it differs.
func (sc *segScan) recover(schemaEnd int64) ([]entry, error) {
	d := sc.d
	byPos := make(map[int64]int, len(sc.idx))
	for i := range sc.idx {
		if _, dup := byPos[sc.idx[i].pos]; !dup {
			byPos[sc.idx[i].pos] = i
		}
	}
	sorted := slices.Clone(sc.idx)
	slices.SortStableFunc(sorted, func(a, b entry) int { return int(min(max(a.pos-b.pos, -1), 1)) })

	var (
		out       []entry
		fresh     []int // indexes into out of positions found damaged now
		pos       = schemaEnd
		crashTail bool // [pos, size) was written after the last completed sync
	)
	for pos < sc.size {
		i, indexed := byPos[pos]
		if indexed {
			e := sc.idx[i]
			fits := pos+e.frameLen() <= sc.size
			if fits && (e.bad != nil || sc.verify(&e)) {
				if e.bad == nil {
					sc.checkPrefix(&e, len(d.mu.entries)+len(out))
				}
				out = append(out, e)
				pos += e.frameLen()
				continue
			}
		}
		if sc.v2 {
			e, ok := sc.frameAt(pos)
			if !ok {
				// Perhaps only the prefix is damaged: the trailer tells.
				if e, ok = sc.nextFrameEntry(pos, pos+1); ok {
					sc.checkPrefix(&e, len(d.mu.entries)+len(out))
				}
			}
			if ok {
				out = append(out, e)
				pos += e.frameLen()
				continue
			}
		}
		if indexed {
			e := sc.idx[i]
			if pos+e.frameLen() <= sc.size || sc.v2 {
				// The index knows what this position held and where it ends:
				// it was synced (see writeAndSync), so it was damaged since.
				// A version 2 segment shorter than its index lost synced
				// bytes too; its last position keeps what is left.
				e.bad = &damage{length: min(e.frameLen(), sc.size-pos)}
				fresh = append(fresh, len(out))
				out = append(out, e)
				pos += e.bad.length
				continue
			}
		}
		if sc.last && sc.v2 && sc.idxState != idxMissing && !indexedAfter(pos, sorted) {
			// No index frame describes this or any later batch: all of it
			// was written after the last sync that completed, so none of it
			// was acknowledged, and a crash may have kept any part of it.
			crashTail = true
			break
		}
		q := sc.nextGood(pos+1, sorted)
		if q < 0 {
			break
		}
		fresh = append(fresh, len(out))
		out = append(out, entry{seg: sc.segIdx, pos: pos, bad: &damage{length: q - pos}})
		pos = q
	}
	inferSpans(out, fresh)
	if sc.v2 {
		// Index frames past the end of the segment describe synced batches
		// (see writeAndSync) whose bytes are gone.
		var lost []uint64
		for i := range sorted {
			if sorted[i].pos >= pos && sorted[i].bad == nil {
				lost = append(lost, sorted[i].offset)
			}
		}
		if len(lost) > 0 {
			d.log.Error("receiver: the segment is shorter than its index: synced batches are missing",
				"segment", sc.segPath, "bytes", sc.size, "missing", len(lost), "offset_ids", lost[:min(len(lost), 32)])
		}
	}

	keep := pos // bytes [keep, size) do not belong to any position
	// A split batch is acknowledged only when all its parts are durable; a
	// group cut short at the end of the last segment never was.
	cut := keep
	unfinished := false
	if k := len(out); sc.last && k > 0 {
		if l := out[k-1]; l.bad == nil && l.parts > 1 && l.part != l.parts-1 && int(l.part) < k {
			start := k - 1 - int(l.part)
			cut, unfinished = out[start].pos, true
			out = out[:start]
			fresh = slices.DeleteFunc(fresh, func(i int) bool { return i >= start })
		}
	}

	for n, i := range fresh {
		e := &out[i]
		q, err := sc.setAside(e.pos, e.pos+e.bad.length)
		if err != nil {
			return nil, err
		}
		e.bad.quarantine = q
		if n == maxDamageLines {
			d.log.Error("receiver: more stored batches of the segment failed verification; set aside without a line each",
				"segment", sc.segPath, "count", len(fresh)-n, "quarantine", d.fs.PathJoin(d.dir, quarantineDir))
		}
		if n >= maxDamageLines {
			continue
		}
		d.log.Error("receiver: stored batch failed verification; set aside, reads of its position fail with DataLoss",
			"segment", sc.segPath, "from", e.pos, "to", e.pos+e.bad.length, "position", len(d.mu.entries)+i,
			"offset_id", e.offset, "metadata", metadataSource(e), "quarantine", q)
	}
	switch {
	case unfinished:
		q, err := sc.setAside(cut, sc.size)
		if err != nil {
			return nil, err
		}
		d.log.Warn("receiver: the last segment ends inside a split batch that was never acknowledged; set aside",
			"segment", sc.segPath, "from", cut, "to", sc.size, "quarantine", q)
	case keep == sc.size:
	case sc.last && sc.tornAt(keep):
		d.log.Warn("receiver: trimming a torn tail (an interrupted write; nothing in it was acknowledged)",
			"segment", sc.segPath, "from", keep, "to", sc.size, "bytes", sc.size-keep)
	case crashTail:
		q, err := sc.setAside(keep, sc.size)
		if err != nil {
			return nil, err
		}
		d.log.Warn("receiver: the last segment ends in batches written after the last completed sync (never acknowledged) that a crash damaged; set aside",
			"segment", sc.segPath, "from", keep, "to", sc.size, "bytes", sc.size-keep, "quarantine", q)
	default:
		q, err := sc.setAside(keep, sc.size)
		if err != nil {
			return nil, err
		}
		msg := "receiver: segment ends in bytes that do not verify as a batch; set aside"
		if !sc.v2 && sc.idxState == idxMissing {
			msg = "receiver: version 1 segment has no index, its batches cannot be verified; set aside"
		}
		d.log.Error(msg, "segment", sc.segPath, "from", keep, "to", sc.size, "bytes", sc.size-keep, "quarantine", q)
	}
	if cut < sc.size {
		if err := d.rewritePrefix(sc.f, sc.segPath, cut); err != nil {
			return nil, err
		}
	}
	return out, sc.rewriteIndex(out)
}

func metadataSource(e *entry) string {
	if e.rows == 0 && e.offset == 0 && e.metaLen == 0 {
		return "unknown (index lost too); spans inferred from the neighbours"
	}
	return "from the index"
}

// indexedAfter reports whether an index frame describes a batch starting
// after pos.
func indexedAfter(pos int64, sorted []entry) bool {
	i, _ := slices.BinarySearchFunc(sorted, pos+1, func(e entry, p int64) int { return int(min(max(e.pos-p, -1), 1)) })
	return i < len(sorted)
}

// nextGood returns the start of the next position at or after from: an
// index frame that fits the file, or a version 2 frame that verifies; -1
// when there is none.
func (sc *segScan) nextGood(from int64, sorted []entry) int64 {
	best := int64(-1)
	for i := range sorted {
		if e := &sorted[i]; e.pos >= from && e.pos+e.frameLen() <= sc.size {
			best = e.pos
			break
		}
	}
	if sc.v2 {
		limit := sc.size
		if best >= 0 {
			limit = best
		}
		if p, ok := sc.nextFrame(from, limit); ok {
			best = p
		}
	}
	return best
}

// inferSpans gives each damaged position whose metadata was lost (no index
// frame) spans covering, per partition, the seqs strictly between the
// nearest intact batches of that partition before and after it, so that a
// partition read that may have needed it fails with DataLoss instead of
// silently skipping it, while reads of the intact neighbours are served.
func inferSpans(out []entry, fresh []int) {
	for _, i := range fresh {
		e := &out[i]
		if metadataSource(e) == "from the index" {
			continue
		}
		lo, hi := map[string]uint64{}, map[string]uint64{}
		for j := i - 1; j >= 0; j-- {
			for _, s := range out[j].spans {
				if _, ok := lo[s.Partition]; !ok && out[j].bad == nil {
					lo[s.Partition] = s.Last
				}
			}
		}
		for j := i + 1; j < len(out); j++ {
			for _, s := range out[j].spans {
				if _, ok := hi[s.Partition]; !ok && out[j].bad == nil {
					hi[s.Partition] = s.First
				}
			}
		}
		parts := map[string]bool{}
		for p := range lo {
			parts[p] = true
		}
		for p := range hi {
			parts[p] = true
		}
		for p := range parts {
			sp := flightwire.Span{Partition: p, First: 0, Last: math.MaxUint64}
			if l, ok := lo[p]; ok {
				if l == math.MaxUint64 {
					continue
				}
				sp.First = l + 1
			}
			if h, ok := hi[p]; ok {
				if h == 0 {
					continue
				}
				sp.Last = h - 1
			}
			if sp.First <= sp.Last {
				e.spans = append(e.spans, sp)
			}
		}
		slices.SortFunc(e.spans, func(a, b flightwire.Span) int { return strings.Compare(a.Partition, b.Partition) })
	}
}

// tornAt reports whether the bytes from pos to the end of the file are the
// beginning of a frame: what an interrupted append leaves.
func (sc *segScan) tornAt(pos int64) bool {
	rem := sc.size - pos
	if rem < 8 {
		b, err := sc.read(pos, rem)
		return err == nil && isMarkerPrefix(b)
	}
	hdr, err := sc.read(pos, 8)
	if err != nil || binary.LittleEndian.Uint32(hdr) != 0xFFFFFFFF {
		return false
	}
	region := int64(binary.LittleEndian.Uint32(hdr[4:]))
	if region%8 != 0 {
		return false
	}
	if 8+region > rem {
		return true
	}
	if sc.v2 {
		if region < footerLen {
			return false
		}
		r, _, ok := sc.trailer(pos, region)
		return ok && 8+region+r.Body > rem
	}
	buf, err := sc.read(pos+8, region)
	if err != nil {
		return false
	}
	body, ok := msgBodyLen(buf)
	return ok && 8+region+body > rem
}

// msgBodyLen is the body length a version 1 frame's flatbuffer declares.
func msgBodyLen(meta []byte) (n int64, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	m := ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(nil))
	return m.BodyLen(), m.BodyLen() >= 0
}

// setAside copies bytes [from, to) of the segment into the quarantine
// directory, durably, and returns the copy's path relative to the dataset
// directory. It never changes the segment.
func (sc *segScan) setAside(from, to int64) (string, error) {
	data := make([]byte, to-from)
	if err := readAt(sc.f, data, from); err != nil {
		return "", err
	}
	return sc.d.quarantine(fmt.Sprintf("%s%s.%d-%d", sc.name, segExt, from, to), data)
}

// quarantine writes data durably to the quarantine directory under name.
func (d *dataset) quarantine(name string, data []byte) (string, error) {
	qdir := d.fs.PathJoin(d.dir, quarantineDir)
	if err := atomicfile.MkdirAll(d.fs, qdir); err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(d.fs, qdir, name, data); err != nil {
		return "", err
	}
	return d.fs.PathJoin(quarantineDir, name), nil
}

// rewriteIndex replaces the index with the frames of entries when it
// differs, keeping a copy of a damaged one.
func (sc *segScan) rewriteIndex(entries []entry) error {
	var want []byte
	for i := range entries {
		want = appendIdxFrame(want, &entries[i])
	}
	if sc.idxState != idxMissing && bytes.Equal(want, sc.idxRaw) {
		return nil
	}
	d := sc.d
	attrs := []any{"index", sc.idxPath, "batches", len(entries), "valid_index_frames", len(sc.idx),
		"valid_index_bytes", sc.idxValid, "index_bytes", len(sc.idxRaw)}
	switch {
	case sc.idxState == idxMissing:
		d.log.Error("receiver: segment index is missing; rebuilt it from the segment", attrs...)
	case sc.idxState == idxCorrupt || !sc.indexIsPrefix(entries) || (!sc.last && (sc.idxState == idxTorn || len(sc.idx) != len(entries))):
		// A sealed segment's index was synced whole: short is damaged.
		q, err := d.quarantine(fmt.Sprintf("%s%s.%d", sc.name, idxExt, time.Now().UnixNano()), sc.idxRaw)
		if err != nil {
			return err
		}
		d.log.Error("receiver: segment index is damaged; rebuilt it from the segment", append(attrs, "quarantine", q)...)
	case sc.last && (sc.idxState == idxTorn || len(sc.idx) != len(entries)):
		d.log.Warn("receiver: segment index was torn or behind its segment (an interrupted write); rebuilt it from the segment", attrs...)
	default:
		d.log.Info("receiver: segment index now records the positions set aside", attrs...)
	}
	return d.rewriteBytes(sc.idxPath, want)
}

// indexIsPrefix reports whether every valid index frame is, in order, one of
// the recovered positions unchanged (the index was merely short).
func (sc *segScan) indexIsPrefix(entries []entry) bool {
	// Index frames beyond the recovered positions describe the tail of the
	// last segment that was trimmed or set aside (and logged as such).
	if len(sc.idx) > len(entries) && !sc.last {
		return false
	}
	for i := range min(len(sc.idx), len(entries)) {
		e := entries[i]
		if e.bad != nil && sc.idx[i].bad == nil {
			e.bad = nil // marked now: the index frame itself was right
		}
		if !bytes.Equal(appendIdxJSON(nil, &sc.idx[i]), appendIdxJSON(nil, &e)) {
			return false
		}
	}
	return true
}

// rewritePrefix replaces path with its first n bytes (vfs has no truncate):
// copy, sync, rename, sync the directory.
func (d *dataset) rewritePrefix(src vfs.File, path string, n int64) error {
	data := make([]byte, n)
	if err := readAt(src, data, 0); err != nil {
		return err
	}
	return d.rewriteBytes(path, data)
}

func (d *dataset) rewriteBytes(path string, data []byte) error {
	return atomicfile.WriteFile(d.fs, d.dir, d.fs.PathBase(path), data)
}
