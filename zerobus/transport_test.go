package zerobus_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/zerobus"
)

// The sink satisfies the lane contract structurally (zerobus never imports
// lanes); its errors classify through lanes.IsPermanent.
var (
	_ lanes.Transport = (*zerobus.Sink)(nil)
	_ lanes.Permanent = (*zerobus.Error)(nil)
)

func TestErrorClassification(t *testing.T) {
	for _, tc := range []struct {
		err  *zerobus.Error
		want bool
	}{
		{&zerobus.Error{Op: "create_stream", Code: codes.Unavailable, Err: fmt.Errorf("x")}, false},
		{&zerobus.Error{Op: "create_stream", Code: codes.Internal, Err: fmt.Errorf("x")}, false},
		{&zerobus.Error{Op: "create_stream", Code: codes.ResourceExhausted, Err: fmt.Errorf("x")}, false},
		{&zerobus.Error{Op: "recv", Code: codes.Unavailable, StreamDead: true, Err: fmt.Errorf("x")}, true},
		{&zerobus.Error{Op: "create_stream", Code: codes.InvalidArgument, Err: fmt.Errorf("x")}, true},
		{&zerobus.Error{Op: "create_stream", Code: codes.Unauthenticated, Err: fmt.Errorf("x")}, true},
		{&zerobus.Error{Op: "create_stream", Code: codes.PermissionDenied, Err: fmt.Errorf("x")}, true},
		{&zerobus.Error{Op: "create_stream", Code: codes.OutOfRange, Err: fmt.Errorf("x")}, true},
		{&zerobus.Error{Op: "create_stream", Code: codes.Unimplemented, Err: fmt.Errorf("x")}, true},
		{&zerobus.Error{Op: "create_stream", Code: codes.NotFound, Err: fmt.Errorf("x")}, true},
	} {
		require.Equal(t, tc.want, lanes.IsPermanent(fmt.Errorf("wrapped: %w", tc.err)), "%v", tc.err)
	}
}
