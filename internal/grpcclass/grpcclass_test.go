package grpcclass

import (
	"errors"
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

// TestTLSRefused: an Unavailable whose TLS handshake failed on a
// certificate or a TLS alert is a refusal; one cut short, or any other
// code, is not.
func TestTLSRefused(t *testing.T) {
	for _, tc := range []struct {
		code codes.Code
		msg  string
		want bool
	}{
		{codes.Unavailable, `connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`, true},
		{codes.Unavailable, `connection error: desc = "transport: authentication handshake failed: remote error: tls: bad certificate"`, true},
		{codes.Unavailable, `connection error: desc = "transport: authentication handshake failed: tls: first record does not look like a TLS handshake"`, true},
		{codes.Unavailable, `connection error: desc = "transport: authentication handshake failed: EOF"`, false},
		{codes.Unavailable, `connection error: desc = "transport: authentication handshake failed: read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer"`, false},
		{codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`, false},
		{codes.Internal, `authentication handshake failed: tls: bad certificate`, false},
	} {
		if got := TLSRefused(tc.code, errors.New(tc.msg)); got != tc.want {
			t.Errorf("TLSRefused(%v, %q) = %v, want %v", tc.code, tc.msg, got, tc.want)
		}
	}
	if TLSRefused(codes.Unavailable, nil) {
		t.Error("TLSRefused of nil")
	}
}
