package flightwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/thalweg/thalweg/batch"
)

// Span is the wire form of one batch.OffsetSpan.
type Span struct {
	Partition string `json:"partition"`
	First     uint64 `json:"first"`
	Last      uint64 `json:"last"`
}

// BatchMeta is the app_metadata of one DoPut FlightData message carrying a
// record batch.
//
// Ordered says the batch comes from an ordered subscription (Exclusive,
// Failover): the receiver may drop rows at or below its stored position of
// their partition (idempotent append). It is encoded only when true.
//
// Parts is 0 or 1 for a batch sent whole. A batch split by rows into n
// messages is sent as n consecutive messages with the same OffsetID, Part
// 0..n-1 and Parts n; the receiver acknowledges OffsetID only once all n
// parts are durable.
type BatchMeta struct {
	OffsetID uint64
	Ordered  bool
	Spans    []Span
	Part     int
	Parts    int
}

// AppendBatchMeta appends the JSON encoding of a batch's meta to dst:
// {"offset_id":N[,"ordered":true][,"spans":[...]][,"part":P,"parts":K]}.
// It does not allocate beyond growing dst (for partition names of printable
// ASCII, as Pulsar's are), which is why it is written by hand.
func AppendBatchMeta(dst []byte, offsetID uint64, ordered bool, spans []batch.OffsetSpan, part, parts int) []byte {
	dst = append(dst, `{"offset_id":`...)
	dst = strconv.AppendUint(dst, offsetID, 10)
	if ordered {
		dst = append(dst, `,"ordered":true`...)
	}
	if len(spans) > 0 {
		dst = append(dst, `,"spans":[`...)
		for i, s := range spans {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"partition":`...)
			dst = AppendString(dst, s.Partition)
			dst = append(dst, `,"first":`...)
			dst = strconv.AppendUint(dst, s.First, 10)
			dst = append(dst, `,"last":`...)
			dst = strconv.AppendUint(dst, s.Last, 10)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if parts > 1 {
		dst = append(dst, `,"part":`...)
		dst = strconv.AppendInt(dst, int64(part), 10)
		dst = append(dst, `,"parts":`...)
		dst = strconv.AppendInt(dst, int64(parts), 10)
	}
	return append(dst, '}')
}

// ErrMissingOffset is returned by ParseBatchMeta when offset_id is absent.
var ErrMissingOffset = errors.New(`app_metadata: "offset_id" is missing`)

type batchMetaJSON struct {
	OffsetID *uint64 `json:"offset_id"`
	Ordered  bool    `json:"ordered"`
	Spans    []Span  `json:"spans"`
	Part     *int    `json:"part"`
	Parts    *int    `json:"parts"`
}

// ParseBatchMeta decodes and validates the app_metadata of a batch message.
// Unknown fields are ignored so that peers may add their own.
//
// Input exactly in AppendBatchMeta's canonical form (what thalweg's sink
// sends on every batch) is decoded by a hand-written parser that allocates
// only the spans; anything else goes through encoding/json. The fast path
// accepts nothing that encoding/json would read differently
// (FuzzCanonicalMatchesJSON), and both feed the same validation.
func ParseBatchMeta(b []byte) (BatchMeta, error) {
	f, ok := parseCanonicalMeta(b)
	if !ok {
		if len(bytes.TrimSpace(b)) == 0 {
			return BatchMeta{}, errors.New("app_metadata is empty: every batch must carry {\"offset_id\":N}")
		}
		var j batchMetaJSON
		if err := json.Unmarshal(b, &j); err != nil {
			return BatchMeta{}, fmt.Errorf("app_metadata is not the expected JSON object: %w", err)
		}
		f = j.fields()
	}
	return f.validate()
}

// metaFields are the decoded fields of a batch app_metadata, before
// validation.
type metaFields struct {
	offset            uint64
	ordered           bool
	spans             []Span
	part, parts       int
	hasOffset         bool
	hasPart, hasParts bool
}

func (j *batchMetaJSON) fields() metaFields {
	f := metaFields{spans: j.Spans, ordered: j.Ordered}
	if j.OffsetID != nil {
		f.offset, f.hasOffset = *j.OffsetID, true
	}
	if j.Part != nil {
		f.part, f.hasPart = *j.Part, true
	}
	if j.Parts != nil {
		f.parts, f.hasParts = *j.Parts, true
	}
	return f
}

func (f *metaFields) validate() (BatchMeta, error) {
	if !f.hasOffset {
		return BatchMeta{}, ErrMissingOffset
	}
	m := BatchMeta{OffsetID: f.offset, Ordered: f.ordered, Spans: f.spans}
	for i, s := range m.Spans {
		if s.Last < s.First {
			return BatchMeta{}, fmt.Errorf("app_metadata: spans[%d]: last %d < first %d", i, s.Last, s.First)
		}
	}
	switch {
	case !f.hasPart && !f.hasParts:
	case !f.hasPart || !f.hasParts:
		return BatchMeta{}, errors.New(`app_metadata: "part" and "parts" must be given together`)
	case f.parts < 1 || f.part < 0 || f.part >= f.parts:
		return BatchMeta{}, fmt.Errorf("app_metadata: part %d of %d is out of range", f.part, f.parts)
	default:
		m.Part, m.Parts = f.part, f.parts
	}
	return m, nil
}

// parseCanonicalMeta decodes b if it is exactly in AppendBatchMeta's form:
// that key order, no whitespace, no empty spans array, numbers without
// sign or leading zeros and in range, partition names of printable ASCII
// without escapes. Otherwise it reports
// false and the caller falls back to encoding/json.
func parseCanonicalMeta(b []byte) (metaFields, bool) {
	p := canonParser{b: b}
	var f metaFields
	var ok bool
	if !p.lit(`{"offset_id":`) {
		return f, false
	}
	if f.offset, ok = p.uint(math.MaxUint64); !ok {
		return f, false
	}
	f.hasOffset = true
	if p.lit(`,"ordered":true`) {
		f.ordered = true
	}
	if p.lit(`,"spans":[`) {
		for {
			var s Span
			if !p.lit(`{"partition":`) {
				return f, false
			}
			if s.Partition, ok = p.str(); !ok {
				return f, false
			}
			if !p.lit(`,"first":`) {
				return f, false
			}
			if s.First, ok = p.uint(math.MaxUint64); !ok {
				return f, false
			}
			if !p.lit(`,"last":`) {
				return f, false
			}
			if s.Last, ok = p.uint(math.MaxUint64); !ok || !p.lit(`}`) {
				return f, false
			}
			f.spans = append(f.spans, s)
			if p.lit(`]`) {
				break
			}
			if !p.lit(`,`) {
				return f, false
			}
		}
	}
	if p.lit(`,"part":`) {
		part, ok := p.uint(math.MaxInt)
		if !ok || !p.lit(`,"parts":`) {
			return f, false
		}
		parts, ok := p.uint(math.MaxInt)
		if !ok {
			return f, false
		}
		f.part, f.parts, f.hasPart, f.hasParts = int(part), int(parts), true, true
	}
	if !p.lit(`}`) || p.i != len(b) {
		return f, false
	}
	return f, true
}

type canonParser struct {
	b []byte
	i int
}

// lit consumes s if the input continues with it.
func (p *canonParser) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// uint consumes a decimal number in [0, max] without sign or leading zero.
func (p *canonParser) uint(max uint64) (uint64, bool) {
	start := p.i
	var v uint64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		d := uint64(p.b[p.i] - '0')
		if v > (max-d)/10 {
			return 0, false
		}
		v = v*10 + d
		p.i++
	}
	n := p.i - start
	if n == 0 || n > 1 && p.b[start] == '0' {
		return 0, false
	}
	return v, true
}

// str consumes a JSON string of printable ASCII without escapes, the form
// AppendString writes for such names.
func (p *canonParser) str() (string, bool) {
	if !p.lit(`"`) {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) && plainByte(p.b[p.i]) {
		p.i++
	}
	end := p.i
	if !p.lit(`"`) {
		return "", false
	}
	return string(p.b[start:end]), true
}

// plainByte reports whether c stands for itself inside a JSON string:
// printable ASCII but the quote and the backslash.
func plainByte(c byte) bool { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' }

// AppendString appends s as a JSON string: as it is when every byte is
// plain (Pulsar topic names are), escaped by encoding/json otherwise. The
// receiver's index writes span partitions with it too.
func AppendString(dst []byte, s string) []byte {
	for i := range len(s) {
		if !plainByte(s[i]) {
			q, _ := json.Marshal(s) // a string always marshals
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// ToSpans converts wire spans to batch spans.
func ToSpans(s []Span) []batch.OffsetSpan {
	if len(s) == 0 {
		return nil
	}
	out := make([]batch.OffsetSpan, len(s))
	for i, w := range s {
		out[i] = batch.OffsetSpan{Partition: w.Partition, First: w.First, Last: w.Last}
	}
	return out
}

// ServedMeta is the app_metadata of a batch a durable receiver serves by
// DoGet: the batch meta it was stored with, its stored position, and, on the
// last batch of a run when the selection continues with another schema,
// Next: the position a follow-up DoGet starts from (flight/doc.go).
type ServedMeta struct {
	BatchMeta
	Position uint64
	Next     *uint64
}

// AppendServedMeta appends the JSON encoding of a served batch's meta to
// dst: {"position":P[,"next":N],"offset_id":...}; next < 0 means none.
func AppendServedMeta(dst []byte, position, next int, offsetID uint64, spans []batch.OffsetSpan, part, parts int) []byte {
	dst = append(dst, `{"position":`...)
	dst = strconv.AppendInt(dst, int64(position), 10)
	if next >= 0 {
		dst = append(dst, `,"next":`...)
		dst = strconv.AppendInt(dst, int64(next), 10)
	}
	dst = append(dst, ',')
	start := len(dst)
	dst = AppendBatchMeta(dst, offsetID, false, spans, part, parts)
	return append(dst[:start], dst[start+1:]...) // drop the inner '{'
}

// ParseServedMeta decodes what AppendServedMeta wrote.
func ParseServedMeta(b []byte) (ServedMeta, error) {
	bm, err := ParseBatchMeta(b)
	if err != nil {
		return ServedMeta{}, err
	}
	var m struct {
		Position uint64  `json:"position"`
		Next     *uint64 `json:"next"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return ServedMeta{}, fmt.Errorf("served app_metadata: %w", err)
	}
	return ServedMeta{BatchMeta: bm, Position: m.Position, Next: m.Next}, nil
}
