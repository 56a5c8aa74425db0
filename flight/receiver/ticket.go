package receiver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	tflight "github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/flightwire"
)

// ticket is the DoGet ticket this server accepts (see flight.Ticket, which
// the client side, flight.Get, builds).
type ticket = tflight.Ticket

// ParseTicket decodes and validates a flight.Ticket. Unknown fields are
// errors so that a typo does not silently select everything.
func ParseTicket(b []byte) (tflight.Ticket, error) {
	var t ticket
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return ticket{}, fmt.Errorf("ticket is not the expected JSON object: %w", err)
	}
	if dec.More() {
		return ticket{}, errors.New("ticket has trailing data after the JSON object")
	}
	if _, err := dirName(t.Path); err != nil {
		return ticket{}, fmt.Errorf("ticket path: %w", err)
	}
	bySeq := t.FromSeq != nil || t.ToSeq != nil
	switch {
	case bySeq && t.Partition == nil:
		return ticket{}, errors.New(`ticket: "from_seq"/"to_seq" need "partition"`)
	case t.FromSeq != nil && t.ToSeq != nil && *t.FromSeq > *t.ToSeq:
		return ticket{}, fmt.Errorf("ticket: from_seq %d > to_seq %d", *t.FromSeq, *t.ToSeq)
	case t.From != nil && t.To != nil && *t.From > *t.To:
		return ticket{}, fmt.Errorf("ticket: from %d > to %d", *t.From, *t.To)
	}
	return t, nil
}

// selects reports whether the stored entry at position pos is in t's
// selection.
func selects(t *ticket, pos int, e *entry) bool {
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

// appendServedMeta is the app_metadata of a batch served by DoGet (see
// flightwire.AppendServedMeta); next < 0 when the selection does not
// continue with another schema.
func appendServedMeta(dst []byte, pos int, e *entry, next int) []byte {
	return flightwire.AppendServedMeta(dst, pos, next, e.offset, flightwire.ToSpans(e.spans), int(e.part), int(e.parts))
}
