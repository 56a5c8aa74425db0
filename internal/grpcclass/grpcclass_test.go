package grpcclass

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// The refusals are exactly the codes the runbook lists as permanent; every
// other code may heal.
func TestRefused(t *testing.T) {
	refused := map[codes.Code]bool{codes.Unauthenticated: true, codes.PermissionDenied: true, codes.InvalidArgument: true,
		codes.NotFound: true, codes.FailedPrecondition: true, codes.Unimplemented: true, codes.OutOfRange: true}
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if Refused(c) != refused[c] {
			t.Errorf("Refused(%v) = %v", c, Refused(c))
		}
	}
	if Name(codes.OK) != "" || Name(codes.Unavailable) != "Unavailable" {
		t.Errorf("Name: %q %q", Name(codes.OK), Name(codes.Unavailable))
	}
}
