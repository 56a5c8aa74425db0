package flight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// PositionsAction is the DoAction type of the positions call (see the
// package documentation, Positions).
const PositionsAction = "positions"

// ErrNoPositions is wrapped by Positions' error when the server does not
// offer the positions action (a Flight server that is not a thalweg
// receiver): callers take it as "the anchor cannot say", not as a failure
// of the anchor.
var ErrNoPositions = errors.New("flight: the server does not offer the positions action")

// Positions asks the Flight server on c for the highest seq it stores per
// partition of the dataset at path, synced with the data: the partition
// name (as in batch.OffsetSpan) to seq; empty when the dataset holds
// nothing or does not exist. opts are passed to the call (BearerToken for
// a server with a token; TLS is the connection's). A server without the
// action (Unimplemented, or an "unknown action" error of another status)
// gives an error wrapping ErrNoPositions.
func Positions(ctx context.Context, c arrowflight.FlightServiceClient, path []string, opts ...grpc.CallOption) (map[string]uint64, error) {
	body, err := json.Marshal(struct {
		Path []string `json:"path"`
	}{path})
	if err != nil {
		return nil, fmt.Errorf("flight: positions of %v: %w", path, err)
	}
	stream, err := c.DoAction(ctx, &arrowflight.Action{Type: PositionsAction, Body: body}, opts...)
	if err != nil {
		return nil, positionsErr(path, err)
	}
	r, err := stream.Recv()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("flight: positions of %v: the server sent no result", path)
		}
		return nil, positionsErr(path, err)
	}
	// Drain the stream so that the call ends cleanly; a second result is
	// not part of the call.
	if _, err := stream.Recv(); err == nil {
		return nil, fmt.Errorf("flight: positions of %v: the server sent more than one result", path)
	} else if !errors.Is(err, io.EOF) {
		return nil, positionsErr(path, err)
	}
	return parsePositions(path, r.GetBody())
}

func parsePositions(path []string, body []byte) (map[string]uint64, error) {
	var res struct {
		Positions *[]struct {
			Partition *string `json:"partition"`
			Seq       *uint64 `json:"seq"`
		} `json:"positions"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&res); err != nil || res.Positions == nil {
		return nil, fmt.Errorf(`flight: positions of %v: the result is not {"positions":[...]}: %q`, path, truncate(body))
	}
	out := make(map[string]uint64, len(*res.Positions))
	for i, p := range *res.Positions {
		if p.Partition == nil || p.Seq == nil {
			return nil, fmt.Errorf(`flight: positions of %v: element %d lacks "partition" or "seq"`, path, i)
		}
		if _, dup := out[*p.Partition]; dup {
			return nil, fmt.Errorf("flight: positions of %v: partition %q listed twice", path, *p.Partition)
		}
		out[*p.Partition] = *p.Seq
	}
	return out, nil
}

// positionsErr wraps ErrNoPositions around the errors of a server that
// does not know the action: gRPC's Unimplemented (arrow-go's and pyarrow's
// base servers), or another status whose message says the action is
// unknown (some servers answer InvalidArgument or Unknown).
func positionsErr(path []string, err error) error {
	st := status.Convert(err)
	if st.Code() == codes.Unimplemented || bytes.Contains(bytes.ToLower([]byte(st.Message())), []byte("unknown action")) {
		return fmt.Errorf("flight: positions of %v: %w: %w", path, ErrNoPositions, err)
	}
	return fmt.Errorf("flight: positions of %v: %w", path, err)
}

func truncate(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}
