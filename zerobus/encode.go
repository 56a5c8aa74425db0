package zerobus

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/thalweg/thalweg/zerobus/internal/rowjson"
)

// frame is one physical message: the unit that gets one physical offset
// on the wire. Exactly one of its payload fields is set.
type frame struct {
	json  []string // ephemeral JSON records
	proto [][]byte // ephemeral protobuf records
	rows  int
}

// envelopeBytes is reserved in every message for the fields around the
// records (offset_id, oneof tags and lengths).
const envelopeBytes = 64

// recordOverhead bounds the protobuf framing of one repeated record: a
// one-byte tag and up to five bytes of length.
const recordOverhead = 6

// chunkBytes is the size of the arenas JSON records are rendered into.
const chunkBytes = 256 << 10

// encodeJSON renders the rows of rec as JSON records, split into frames
// whose encoded size stays within maxPayload.
//
// The record strings alias arenas that are never written again once a
// record is complete (see splitFrames), so handing them out as strings
// without a copy is safe; it saves one allocation and copy per row.
func encodeJSON(rec arrow.RecordBatch, maxPayload int) ([]frame, error) {
	rows, err := rowjson.New(rec)
	if err != nil {
		return nil, err
	}
	return splitFrames(rows.NumRows(), maxPayload,
		func(dst []byte, i int) ([]byte, error) { return rows.AppendRow(dst, i), nil },
		func(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) },
		func(recs []string) frame { return frame{json: recs, rows: len(recs)} })
}

// splitFrames renders n rows, each with appendRow into an arena, and
// splits the records into frames whose encoded size stays within
// maxPayload; a row too large for a frame of its own is ErrRecordTooLarge.
// record turns a record's bytes into what a frame holds, newFrame a frame's
// records into the frame.
//
// The arenas are chunkBytes large and only appended to: a complete record
// is never written again (appends go beyond it, and a grown arena is a new
// array), so a record may alias its arena.
func splitFrames[R any](n, maxPayload int, appendRow func(dst []byte, i int) ([]byte, error),
	record func([]byte) R, newFrame func([]R) frame) ([]frame, error) {
	if n == 0 {
		return nil, nil
	}
	limit := maxPayload - envelopeBytes
	var (
		frames []frame
		cur    []R
		size   int
		arena  = make([]byte, 0, chunkBytes)
	)
	for i := 0; i < n; i++ {
		if cap(arena)-len(arena) < 4096 {
			arena = make([]byte, 0, chunkBytes)
		}
		start := len(arena)
		var err error
		if arena, err = appendRow(arena, i); err != nil {
			return nil, err
		}
		l := len(arena) - start
		if l+recordOverhead > limit {
			return nil, fmt.Errorf("%w: row %d encodes to %d bytes, limit %d", ErrRecordTooLarge, i, l, limit)
		}
		if size+l+recordOverhead > limit {
			frames = append(frames, newFrame(cur))
			cur, size = nil, 0
		}
		if cur == nil {
			cur = make([]R, 0, min(n-i, 4096))
		}
		cur = append(cur, record(arena[start:len(arena):len(arena)]))
		size += l + recordOverhead
	}
	return append(frames, newFrame(cur)), nil
}
