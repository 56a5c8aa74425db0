package flightwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Ack is the app_metadata of a PutResult: every offset_id <= Offset sent
// on this stream is durable, and Records rows have been made durable on
// this stream in total.
//
// An ack_up_to_offset of -1 is the "ready" signal a Zerobus server sends
// before any batch: Ready is set and Offset is 0. A Zerobus server may add
// close_stream_duration_ms, asking the client to move to a new stream
// within CloseAfter (Close is set). thalweg's receiver sends neither.
type Ack struct {
	Ready      bool
	Offset     uint64
	Records    uint64
	HasRecords bool // ack_up_to_records was present (the Zerobus variant requires it)
	Close      bool
	CloseAfter time.Duration // at most MaxCloseAfter
}

// MaxCloseAfter caps the grace a close-stream signal may announce: a larger
// value (or one that overflows time.Duration) is read as this.
const MaxCloseAfter = 24 * time.Hour

// AckEncoding is what a Flight server must send, for error messages that
// meet a server which does not: it names the encoding and where it is
// documented.
const AckEncoding = `every PutResult must carry app_metadata JSON {"ack_up_to_offset":N,"ack_up_to_records":R} ` +
	`(N: the highest offset_id made durable on this stream; the ack encoding of the flight package ` +
	`documentation, flight/doc.go "Wire encoding")`

// ErrEmptyAck is returned by ParseAck for a PutResult without app_metadata:
// typically a generic Flight server that acknowledges receipt, not
// durability, and does not speak this encoding at all.
var ErrEmptyAck = errors.New("PutResult app_metadata is empty")

// AppendAck appends the JSON encoding of a cumulative ack to dst.
func AppendAck(dst []byte, upToOffset, upToRecords uint64) []byte {
	dst = append(dst, `{"ack_up_to_offset":`...)
	dst = strconv.AppendUint(dst, upToOffset, 10)
	return appendRecords(dst, upToRecords)
}

// AppendReady appends the Zerobus ready signal,
// {"ack_up_to_offset":-1,"ack_up_to_records":0}.
func AppendReady(dst []byte) []byte {
	return appendRecords(append(dst, `{"ack_up_to_offset":-1`...), 0)
}

// AppendCloseStream appends a Zerobus close-stream signal: a cumulative ack
// (upToOffset -1: nothing acknowledged yet) with close_stream_duration_ms.
func AppendCloseStream(dst []byte, upToOffset int64, upToRecords uint64, grace time.Duration) []byte {
	dst = append(dst, `{"ack_up_to_offset":`...)
	dst = strconv.AppendInt(dst, upToOffset, 10)
	dst = appendRecords(dst, upToRecords)
	dst = append(dst[:len(dst)-1], `,"close_stream_duration_ms":`...)
	dst = strconv.AppendInt(dst, grace.Milliseconds(), 10)
	return append(dst, '}')
}

func appendRecords(dst []byte, records uint64) []byte {
	dst = append(dst, `,"ack_up_to_records":`...)
	dst = strconv.AppendUint(dst, records, 10)
	return append(dst, '}')
}

type ackJSON struct {
	UpToOffset  *json.Number `json:"ack_up_to_offset"`
	UpToRecords *json.Number `json:"ack_up_to_records"`
	CloseMs     *json.Number `json:"close_stream_duration_ms"`
}

// ParseAck decodes the app_metadata of a PutResult. Unknown fields are
// ignored. Every error names PutResult; an empty app_metadata is
// ErrEmptyAck.
func ParseAck(b []byte) (Ack, error) {
	if a, ok := parseCanonicalAck(b); ok {
		return a, nil
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return Ack{}, ErrEmptyAck
	}
	var j ackJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return Ack{}, fmt.Errorf("PutResult app_metadata %.64q is not the expected JSON object: %w", b, err)
	}
	if j.UpToOffset == nil {
		return Ack{}, fmt.Errorf(`PutResult app_metadata %.64q: "ack_up_to_offset" is missing`, b)
	}
	var a Ack
	if s := j.UpToOffset.String(); s == "-1" {
		a.Ready = true
	} else {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return Ack{}, fmt.Errorf("PutResult app_metadata: ack_up_to_offset %q is not -1 or an unsigned 64-bit integer", s)
		}
		a.Offset = v
	}
	if j.UpToRecords != nil {
		v, err := strconv.ParseUint(j.UpToRecords.String(), 10, 64)
		if err != nil {
			return Ack{}, fmt.Errorf("PutResult app_metadata: ack_up_to_records %q: %w", j.UpToRecords.String(), err)
		}
		a.Records, a.HasRecords = v, true
	}
	if j.CloseMs != nil {
		s := j.CloseMs.String()
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) || strings.HasPrefix(s, "-") {
			return Ack{}, fmt.Errorf("PutResult app_metadata: close_stream_duration_ms %q is not a non-negative integer", s)
		}
		a.Close, a.CloseAfter = true, MaxCloseAfter
		if err == nil && ms < int64(MaxCloseAfter/time.Millisecond) {
			a.CloseAfter = time.Duration(ms) * time.Millisecond
		}
	}
	return a, nil
}

// parseCanonicalAck is ParseAck's fast path for exactly what AppendAck
// writes, {"ack_up_to_offset":N,"ack_up_to_records":R} with both numbers
// in canonical form: the ack every thalweg receiver sends, parsed without
// encoding/json's reflection and allocations (a sink parses one per
// group commit). Anything else, equivalent or not, takes the general path.
func parseCanonicalAck(b []byte) (Ack, bool) {
	p := canonParser{b: b}
	if !p.lit(`{"ack_up_to_offset":`) {
		return Ack{}, false
	}
	offset, ok := p.uint(math.MaxUint64)
	if !ok || !p.lit(`,"ack_up_to_records":`) {
		return Ack{}, false
	}
	records, ok := p.uint(math.MaxUint64)
	if !ok || !p.lit(`}`) || p.i != len(b) {
		return Ack{}, false
	}
	return Ack{Offset: offset, Records: records, HasRecords: true}, true
}

// Variant selects the Zerobus flavour of the encoding for a flight sink
// (zerobus's Flight mode); nil means thalweg's own. The differences are
// exactly the Zerobus-specific signals and numbering:
//
//   - Headers: the stream's request metadata (the table name header, the
//     bearer token).
//   - Ready: a stream is usable only after the server's ready signal,
//     {"ack_up_to_offset":-1,"ack_up_to_records":0}, its first PutResult.
//   - Per-message offsets: offset_id numbers the messages of a stream 0, 1,
//     2, ... (a batch split by rows takes one offset_id per part, no
//     part/parts and no spans); acks are mapped back to the lane's
//     offsets.
//   - Close-stream: a PutResult with close_stream_duration_ms asks the
//     client to move to a new stream; the next batch goes on one once the
//     old stream's batches are acknowledged (at most MaxRotationWait, if
//     set). What the old stream did not acknowledge is not kept: the sink
//     fails and the lane replays it on a new transport.
type Variant struct {
	Headers         map[string]string
	MaxPayload      int           // bound of one message's encoded batch, on top of the message limit; 0: none
	MaxRotationWait time.Duration // 0: the server's grace
	OpenTimeout     time.Duration // bounds opening a stream and its ready signal; 0: the caller's context only
}

// SetVariant selects v for the flight sink that a *flight.Options (opts)
// configures. The options' field for it is unexported, so that the
// variant, a type of this internal package, is no part of flight's public
// API: only thalweg's own packages (zerobus's Flight mode) can choose it.
// Package flight sets SetVariant when it is initialised, before any
// importer of flight runs.
var SetVariant func(opts any, v *Variant)
