// Package wire holds the JSON encodings that the thalweg Flight sink and the
// thalweg receiver exchange in Arrow Flight app_metadata fields. The encoding
// is documented in the flight package documentation; this package is the one
// implementation of it so that both sides cannot drift apart.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/thalweg/thalweg/batch"
)

// Span is the wire form of one batch.OffsetSpan.
type Span struct {
	Partition int32  `json:"partition"`
	First     uint64 `json:"first"`
	Last      uint64 `json:"last"`
}

// BatchMeta is the app_metadata of one DoPut FlightData message carrying a
// record batch.
//
// Parts is 0 or 1 for a batch sent whole. A batch split by rows into n
// messages is sent as n consecutive messages with the same OffsetID, Part
// 0..n-1 and Parts n; the receiver acknowledges OffsetID only once all n
// parts are durable.
type BatchMeta struct {
	OffsetID uint64
	Spans    []Span
	Part     int
	Parts    int
}

// AppendBatchMeta appends the JSON encoding of m to dst. It does not allocate
// beyond growing dst, which is why it is written by hand.
func AppendBatchMeta(dst []byte, offsetID uint64, spans []batch.OffsetSpan, part, parts int) []byte {
	dst = append(dst, `{"offset_id":`...)
	dst = strconv.AppendUint(dst, offsetID, 10)
	if len(spans) > 0 {
		dst = append(dst, `,"spans":[`...)
		for i, s := range spans {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"partition":`...)
			dst = strconv.AppendInt(dst, int64(s.Partition), 10)
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
	Spans    []Span  `json:"spans"`
	Part     *int    `json:"part"`
	Parts    *int    `json:"parts"`
}

// ParseBatchMeta decodes and validates the app_metadata of a batch message.
// Unknown fields are ignored so that peers may add their own.
func ParseBatchMeta(b []byte) (BatchMeta, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return BatchMeta{}, errors.New("app_metadata is empty: every batch must carry {\"offset_id\":N}")
	}
	var j batchMetaJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return BatchMeta{}, fmt.Errorf("app_metadata is not the expected JSON object: %w", err)
	}
	if j.OffsetID == nil {
		return BatchMeta{}, ErrMissingOffset
	}
	m := BatchMeta{OffsetID: *j.OffsetID, Spans: j.Spans}
	for i, s := range m.Spans {
		if s.Last < s.First {
			return BatchMeta{}, fmt.Errorf("app_metadata: spans[%d]: last %d < first %d", i, s.Last, s.First)
		}
	}
	switch {
	case j.Part == nil && j.Parts == nil:
	case j.Part == nil || j.Parts == nil:
		return BatchMeta{}, errors.New(`app_metadata: "part" and "parts" must be given together`)
	case *j.Parts < 1 || *j.Part < 0 || *j.Part >= *j.Parts:
		return BatchMeta{}, fmt.Errorf("app_metadata: part %d of %d is out of range", *j.Part, *j.Parts)
	default:
		m.Part, m.Parts = *j.Part, *j.Parts
	}
	return m, nil
}

// Ack is the app_metadata of a PutResult: every offset <= Offset sent on
// this stream is durable, and Records rows have been made durable on this
// stream in total. A negative ack_up_to_offset is a "ready" ack sent before
// any batch (the Zerobus convention): Ready is set and Offset is meaningless.
// thalweg's receiver never sends one but the sink tolerates it.
type Ack struct {
	Ready   bool
	Offset  uint64
	Records uint64
}

// AppendAck appends the JSON encoding of a cumulative ack to dst.
func AppendAck(dst []byte, upToOffset, upToRecords uint64) []byte {
	dst = append(dst, `{"ack_up_to_offset":`...)
	dst = strconv.AppendUint(dst, upToOffset, 10)
	dst = append(dst, `,"ack_up_to_records":`...)
	dst = strconv.AppendUint(dst, upToRecords, 10)
	return append(dst, '}')
}

type ackJSON struct {
	UpToOffset  *json.Number `json:"ack_up_to_offset"`
	UpToRecords *json.Number `json:"ack_up_to_records"`
}

// ParseAck decodes the app_metadata of a PutResult.
func ParseAck(b []byte) (Ack, error) {
	var j ackJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return Ack{}, fmt.Errorf("PutResult app_metadata is not the expected JSON object: %w", err)
	}
	if j.UpToOffset == nil {
		return Ack{}, errors.New(`PutResult app_metadata: "ack_up_to_offset" is missing`)
	}
	s := j.UpToOffset.String()
	var a Ack
	if len(s) > 0 && s[0] == '-' {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Ack{}, fmt.Errorf("PutResult app_metadata: ack_up_to_offset %q: %w", s, err)
		}
		if v >= 0 {
			return Ack{}, fmt.Errorf("PutResult app_metadata: ack_up_to_offset %q is not a number", s)
		}
		a.Ready = true
	} else {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return Ack{}, fmt.Errorf("PutResult app_metadata: ack_up_to_offset %q: %w", s, err)
		}
		a.Offset = v
	}
	if j.UpToRecords != nil {
		v, err := strconv.ParseUint(j.UpToRecords.String(), 10, 64)
		if err != nil {
			return Ack{}, fmt.Errorf("PutResult app_metadata: ack_up_to_records %q: %w", j.UpToRecords.String(), err)
		}
		a.Records = v
	}
	return a, nil
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
