package receiver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/flightwire"
)

// Ticket is the JSON DoGet ticket. Path is required. Selectors, combined
// (a batch is served when it matches every one given):
//
//   - Partition (with optional FromSeq, ToSeq; inclusive): the stored
//     batches whose spans intersect [FromSeq, ToSeq] of that partition, in
//     stored order. This is what a rebuild from the raw anchor uses.
//   - From, To: stored positions [From, To), To omitted = to the end.
//   - none: every stored batch.
//
// A DoGet stream serves the batches of one schema; a selection that spans
// schemas is continued with From (see Server.DoGet and Get).
//
// Only durable batches are served; batches whose spans were not sent (a
// pyarrow client may omit them) never match a partition selector.
type Ticket struct {
	Path      []string `json:"path"`
	Partition *int32   `json:"partition,omitempty"`
	FromSeq   *uint64  `json:"from_seq,omitempty"`
	ToSeq     *uint64  `json:"to_seq,omitempty"`
	From      *uint64  `json:"from,omitempty"`
	To        *uint64  `json:"to,omitempty"`
}

// Bytes encodes the ticket.
func (t Ticket) Bytes() []byte {
	b, _ := json.Marshal(t)
	return b
}

// ParseTicket decodes and validates a ticket. Unknown fields are errors so
// that a typo does not silently select everything.
func ParseTicket(b []byte) (Ticket, error) {
	var t Ticket
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Ticket{}, fmt.Errorf("ticket is not the expected JSON object: %w", err)
	}
	if dec.More() {
		return Ticket{}, errors.New("ticket has trailing data after the JSON object")
	}
	if _, err := dirName(t.Path); err != nil {
		return Ticket{}, fmt.Errorf("ticket path: %w", err)
	}
	bySeq := t.FromSeq != nil || t.ToSeq != nil
	switch {
	case bySeq && t.Partition == nil:
		return Ticket{}, errors.New(`ticket: "from_seq"/"to_seq" need "partition"`)
	case t.FromSeq != nil && t.ToSeq != nil && *t.FromSeq > *t.ToSeq:
		return Ticket{}, fmt.Errorf("ticket: from_seq %d > to_seq %d", *t.FromSeq, *t.ToSeq)
	case t.From != nil && t.To != nil && *t.From > *t.To:
		return Ticket{}, fmt.Errorf("ticket: from %d > to %d", *t.From, *t.To)
	}
	return t, nil
}

// selects reports whether the stored entry at position pos is in the ticket's
// selection.
func (t *Ticket) selects(pos int, e *entry) bool {
	if t.From != nil && uint64(pos) < *t.From || t.To != nil && uint64(pos) >= *t.To {
		return false
	}
	if t.Partition != nil {
		lo, hi := uint64(0), uint64(math.MaxUint64)
		if t.FromSeq != nil {
			lo = *t.FromSeq
		}
		if t.ToSeq != nil {
			hi = *t.ToSeq
		}
		for _, s := range e.spans {
			if s.Partition == *t.Partition && s.First <= hi && s.Last >= lo {
				return true
			}
		}
		return false
	}
	return true
}

// appendServedMeta is the app_metadata of a batch served by DoGet: the
// stored batch meta plus its stored position, and next (when >= 0): where
// the selection continues with another schema (see Server.DoGet).
func appendServedMeta(dst []byte, pos int, e *entry, next int) []byte {
	dst = append(dst, `{"position":`...)
	dst = strconv.AppendInt(dst, int64(pos), 10)
	if next >= 0 {
		dst = append(dst, `,"next":`...)
		dst = strconv.AppendInt(dst, int64(next), 10)
	}
	dst = append(dst, ',')
	start := len(dst)
	dst = flightwire.AppendBatchMeta(dst, e.offset, flightwire.ToSpans(e.spans), int(e.part), int(e.parts))
	return append(dst[:start], dst[start+1:]...) // drop the inner '{'
}

// Stored is one batch served by DoGet, with the metadata it was stored
// under. The caller owns Rec and must Release it (see ReleaseAll).
type Stored struct {
	Rec      arrow.RecordBatch
	Position uint64
	OffsetID uint64
	Spans    []batch.OffsetSpan
	Part     int
	Parts    int
}

// ReleaseAll releases every record in s.
func ReleaseAll(s []Stored) {
	for i := range s {
		if s[i].Rec != nil {
			s[i].Rec.Release()
			s[i].Rec = nil
		}
	}
}

// Get runs DoGet with t on c and returns the served batches, allocated from
// mem, each with its own schema: when the selection spans schemas it
// follows the "next" position the server gives (see Server.DoGet) with
// further DoGets. On error nothing is returned and nothing needs releasing.
func Get(ctx context.Context, c flight.FlightServiceClient, t Ticket, mem memory.Allocator, opts ...grpc.CallOption) (out []Stored, err error) {
	defer func() {
		if err != nil {
			ReleaseAll(out)
			out = nil
		}
	}()
	for {
		var next *uint64
		out, next, err = getRun(ctx, c, t, mem, out, opts...)
		if err != nil || next == nil {
			return out, err
		}
		if t.From != nil && *next <= *t.From {
			return out, fmt.Errorf("DoGet continues at position %d, not past %d", *next, *t.From)
		}
		t.From = next
	}
}

// getRun runs one DoGet and appends what it serves to out; next is the
// position where the selection continues, if the server said so.
func getRun(ctx context.Context, c flight.FlightServiceClient, t Ticket, mem memory.Allocator, out []Stored, opts ...grpc.CallOption) (_ []Stored, next *uint64, err error) {
	stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: t.Bytes()}, opts...)
	if err != nil {
		return out, nil, err
	}
	rdr, err := flight.NewRecordReader(stream, ipc.WithAllocator(mem))
	if err != nil {
		return out, nil, err
	}
	defer rdr.Release()
	for rdr.Next() {
		var m struct {
			Position uint64  `json:"position"`
			Next     *uint64 `json:"next"`
		}
		md := rdr.LatestAppMetadata()
		bm, err := flightwire.ParseBatchMeta(md)
		if err != nil {
			return out, nil, fmt.Errorf("served batch %d: %w", len(out), err)
		}
		if err := json.Unmarshal(md, &m); err != nil {
			return out, nil, err
		}
		rec := rdr.RecordBatch()
		rec.Retain()
		out = append(out, Stored{Rec: rec, Position: m.Position, OffsetID: bm.OffsetID, Spans: flightwire.ToSpans(bm.Spans), Part: bm.Part, Parts: bm.Parts})
		next = m.Next
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return out, nil, err
	}
	return out, next, nil
}

// ReadAll returns every stored batch of the dataset at path; see Get.
func ReadAll(ctx context.Context, c flight.FlightServiceClient, path []string, mem memory.Allocator, opts ...grpc.CallOption) ([]Stored, error) {
	return Get(ctx, c, Ticket{Path: path}, mem, opts...)
}
