package limits

import (
	"fmt"

	"github.com/thalweg/thalweg/internal/optcheck"
)

// DefaultMaxPendingBytes bounds a server's received bytes not yet durable,
// server-wide (both servers' Options.MaxPendingBytes default).
const DefaultMaxPendingBytes = 1 << 30

// minDecodedBuffer is the floor of the decode limits' defaults (4 × the
// largest message).
const minDecodedBuffer = 256 << 20

// Budgets are the memory bounds both servers derive from their largest
// message (docs/operations.md, "Server limits"). Each server copies its
// Options into one, takes the defaults from WithDefaults and checks the
// relations with Relations, so that the two keep one rule.
type Budgets struct {
	MaxMessage     int   // the largest gRPC message; set before WithDefaults
	Pending        int64 // received, not yet durable, server-wide
	StreamPending  int64 // the same, per stream
	DecodedMessage int64 // what one message may declare it decodes to
	DecodedBuffer  int   // one decoded buffer
}

// WithDefaults fills the zero fields: Pending DefaultMaxPendingBytes;
// StreamPending half of Pending, or all of it when half is below
// MaxMessage; DecodedMessage 4 × MaxMessage (at least 256 MiB) but at most
// half of StreamPending; DecodedBuffer 4 × MaxMessage (at least 256 MiB).
func (b *Budgets) WithDefaults() {
	if b.Pending == 0 {
		b.Pending = DefaultMaxPendingBytes
	}
	if b.StreamPending == 0 {
		b.StreamPending = b.Pending / 2
		if b.StreamPending < int64(b.MaxMessage) {
			b.StreamPending = b.Pending
		}
	}
	if b.DecodedMessage == 0 {
		b.DecodedMessage = min(max(4*int64(b.MaxMessage), minDecodedBuffer), b.StreamPending/2)
	}
	if b.DecodedBuffer == 0 {
		b.DecodedBuffer = max(4*b.MaxMessage, minDecodedBuffer)
	}
}

// Relations returns what the effective budgets b break of the relations
// both servers require (Pending ≥ MaxMessage, MaxMessage ≤ StreamPending ≤
// Pending), each naming the Options fields with the values the caller set
// (set; a defaulted one as "0 (default N)"). messageField is the name of
// the server's largest-message field.
func (b Budgets) Relations(set Budgets, messageField string) []error {
	var errs []error
	msg := optcheck.OrDefault(set.MaxMessage, b.MaxMessage)
	pending := optcheck.OrDefault(set.Pending, b.Pending)
	if b.Pending < int64(b.MaxMessage) {
		errs = append(errs, fmt.Errorf("Options.MaxPendingBytes %s is below Options.%s %s", pending, messageField, msg))
	}
	if b.StreamPending < int64(b.MaxMessage) || b.StreamPending > b.Pending {
		errs = append(errs, fmt.Errorf("Options.MaxStreamPendingBytes %s is not between Options.%s %s and Options.MaxPendingBytes %s",
			optcheck.OrDefault(set.StreamPending, b.StreamPending), messageField, msg, pending))
	}
	return errs
}
