package receiver

import (
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ListActions lists the one action this server offers.
func (s *Server) ListActions(_ *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	return stream.Send(&flight.ActionType{Type: ActionPositions,
		Description: `highest seq stored per partition of a dataset: body {"path":[...]}, ` +
			`one result {"positions":[{"partition":"<name>","seq":N},...]}`})
}

// DoAction serves the "positions" action (documented in package flight):
// one Result with the durable positions of the dataset the body names, an
// empty list for a dataset that does not exist. Other action types are
// Unimplemented.
func (s *Server) DoAction(act *flight.Action, stream flight.FlightService_DoActionServer) error {
	if act.GetType() != ActionPositions {
		return status.Errorf(codes.Unimplemented, "unknown action %q (this server offers %q)", act.GetType(), ActionPositions)
	}
	path, err := parsePositionsRequest(act.GetBody())
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	p := positions{}
	ds, err := s.dataset(path, false)
	switch {
	case err == nil:
		p = ds.positions()
	case status.Code(err) != codes.NotFound:
		return err
	}
	return stream.Send(&flight.Result{Body: encodePositions(p)})
}
