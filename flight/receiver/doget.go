package receiver

import (
	"errors"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DoGet serves the durable batches the JSON ticket selects (see Ticket),
// verified against their checksums, each with app_metadata
// {"position":i,"offset_id":N,"spans":[...]}.
//
// An Arrow IPC stream has one schema, so a DoGet stream serves one run of
// the selection: the selected batches from the first one on that share its
// schema. When selected batches of another schema follow, the last batch
// served also carries "next":P, the position of the first of them; the same
// ticket with "from":P serves the next run (Get follows it). A selection of
// nothing is served as the dataset's latest schema and no batch.
func (s *Server) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	tk, err := ParseTicket(t.GetTicket())
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	ds, err := s.dataset(tk.Path, false)
	if err != nil {
		return err
	}
	entries, segs, schemas := ds.snapshot()
	if len(schemas) == 0 {
		return status.Errorf(codes.NotFound, "dataset %q has no data yet", strings.Join(tk.Path, "/"))
	}
	if err := setAsideIn(entries, &tk); err != nil {
		return err
	}
	first, last, next := selectRun(entries, segs, &tk)
	sid := len(schemas) - 1
	if first >= 0 {
		sid = segs[entries[first].seg].schema
	}
	if err := stream.Send(&flight.FlightData{DataHeader: schemas[sid].msg}); err != nil {
		return err
	}
	var buf, md []byte
	for i := max(first, 0); first >= 0 && i <= last; i++ {
		e := &entries[i]
		if !selects(&tk, i, e) {
			continue
		}
		var meta, body []byte
		meta, body, buf, err = ds.readEntry(segs[e.seg], e, buf)
		if err != nil {
			if errors.Is(err, errCorrupt) {
				return status.Errorf(codes.DataLoss, "position %d: %v", i, err)
			}
			return status.Errorf(codes.Internal, "position %d: %v", i, err)
		}
		nx := -1
		if i == last {
			nx = next
		}
		md = appendServedMeta(md[:0], i, e, nx)
		if err := stream.Send(&flight.FlightData{DataHeader: meta, DataBody: body, AppMetadata: md}); err != nil {
			return err
		}
	}
	return nil
}

// selectRun returns the positions of the first and last selected entries of
// the first run of the selection (the selected entries that share the
// schema of the first one, up to the first that does not), and the position
// of that next one, or -1. first is -1 when nothing is selected.
func selectRun(entries []entry, segs []*segment, tk *ticket) (first, last, next int) {
	first, last, next = -1, -1, -1
	sid := -1
	for i := range entries {
		e := &entries[i]
		if !selects(tk, i, e) {
			continue
		}
		switch s := segs[e.seg].schema; {
		case first < 0:
			first, last, sid = i, i, s
		case s == sid:
			last = i
		default:
			return first, last, i
		}
	}
	return first, last, next
}
