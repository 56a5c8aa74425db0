package flight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/bearer"
	"github.com/thalweg/thalweg/internal/flightwire"
)

// Ticket is the JSON DoGet ticket. Path is required. Selectors, combined
// (a batch is served when it matches every one given):
//
//   - Partition (a name, as batch.OffsetSpan.Partition; with optional
//     FromSeq, ToSeq; inclusive): the stored batches whose spans intersect
//     [FromSeq, ToSeq] of that partition, in stored order. This is what a rebuild from the raw anchor uses.
//   - From, To: stored positions [From, To), To omitted = to the end.
//   - none: every stored batch.
//
// A DoGet stream serves the batches of one schema; a selection that spans
// schemas is continued with From (see flight/receiver's Server.DoGet, and
// Get, which follows it).
//
// Only durable batches are served; batches whose spans were not sent (a
// pyarrow client may omit them) never match a partition selector.
type Ticket struct {
	Path      []string `json:"path"`
	Partition *string  `json:"partition,omitempty"`
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
// follows the "next" position the server gives with further DoGets. On
// error nothing is returned and nothing needs releasing.
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
		m, err := flightwire.ParseServedMeta(rdr.LatestAppMetadata())
		if err != nil {
			return out, nil, fmt.Errorf("served batch %d: %w", len(out), err)
		}
		rec := rdr.RecordBatch()
		rec.Retain()
		out = append(out, Stored{Rec: rec, Position: m.Position, OffsetID: m.OffsetID, Spans: flightwire.ToSpans(m.Spans), Part: m.Part, Parts: m.Parts})
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

// BearerToken is the call option that authenticates Get, ReadAll and
// Rebuild's DoGet calls to a receiver started with a token: the same
// "authorization: Bearer <token>" metadata the Sink sends. Like the Sink it
// does not require transport security, so that loopback plaintext works;
// use TLS anywhere else.
func BearerToken(token string) grpc.CallOption {
	return grpc.PerRPCCredentials(bearer.Credentials(token))
}
