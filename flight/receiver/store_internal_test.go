package receiver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/thalweg/thalweg/internal/flightwire"
)

// TestIdxFrameMatchesJSON: the hand-written index frame is byte for byte
// what encoding/json makes of idxRecord, which loadSegment decodes.
func TestIdxFrameMatchesJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	entries := []entry{
		{},
		{offset: math.MaxUint64, rows: math.MaxInt64, pos: math.MaxInt64, metaLen: math.MaxInt32, bodyLen: math.MaxInt64,
			crc: math.MaxUint32, spans: []flightwire.Span{{Partition: "persistent://public/default/t-partition-2147483647", First: 0, Last: math.MaxUint64}}, part: math.MaxInt32, parts: -1},
	}
	for range 200 {
		e := entry{offset: rng.Uint64(), rows: rng.Int64(), pos: rng.Int64N(1 << 40), metaLen: rng.Int32(), bodyLen: rng.Int64(), crc: rng.Uint32()}
		for range rng.IntN(4) {
			e.spans = append(e.spans, flightwire.Span{Partition: []string{"a", "gen-1", "q\"\\\u00e9\n"}[rng.IntN(3)], First: rng.Uint64(), Last: rng.Uint64()})
		}
		if rng.IntN(2) == 0 {
			e.parts = rng.Int32N(100)
			e.part = rng.Int32N(e.parts + 1)
		}
		entries = append(entries, e)
	}
	prefix := []byte("prefix")
	for _, e := range entries {
		want, err := json.Marshal(idxRecord{Offset: e.offset, Rows: e.rows, Pos: e.pos, Meta: e.metaLen, Body: e.bodyLen,
			CRC: e.crc, Spans: e.spans, Part: e.part, Parts: e.parts})
		if err != nil {
			t.Fatal(err)
		}
		frame := appendIdxFrame(bytes.Clone(prefix), &e)
		if !bytes.HasPrefix(frame, prefix) {
			t.Fatal("appendIdxFrame overwrote dst")
		}
		frame = frame[len(prefix):]
		got := frame[idxHdrLen:]
		if !bytes.Equal(got, want) {
			t.Fatalf("index frame payload\n got %s\nwant %s", got, want)
		}
		if n, c := binary.LittleEndian.Uint32(frame), binary.LittleEndian.Uint32(frame[4:]); int(n) != len(want) || c != crc32.Checksum(want, castagnoli) {
			t.Fatalf("frame header: length %d crc %x, want %d %x", n, c, len(want), crc32.Checksum(want, castagnoli))
		}
	}
}

// TestParseDirName: parseDirName inverts dirName, and rejects names dirName
// does not make.
func TestParseDirName(t *testing.T) {
	for _, p := range [][]string{{"a"}, {"raw", "events"}, {"a.b", "c%d", "é/ü", " "}, {"x-y_z", "0"}} {
		name, err := dirName(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseDirName(name)
		if err != nil || !slices.Equal(got, p) {
			t.Fatalf("parseDirName(%q) = %q, %v; want %q", name, got, err, p)
		}
	}
	for _, bad := range []string{"", "a..b", "a%", "a%zz", "a%2e", "LOCK.tmp%"} {
		if _, err := parseDirName(bad); err == nil {
			t.Errorf("parseDirName(%q) succeeded", bad)
		}
	}
}
