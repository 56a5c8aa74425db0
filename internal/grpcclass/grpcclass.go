// Package grpcclass is the one classification of gRPC status codes that
// thalweg's sinks share (docs/operations.md, "Runbook: a lane that
// fails"): which codes say that the server refuses a stream as it is, so
// that a new stream with the same configuration and data fails again.
// Every other code — Unavailable, DeadlineExceeded, ResourceExhausted,
// Aborted, Internal, Unknown — is a sink that may heal, except an
// Unavailable that is a refused TLS handshake (TLSRefused).
//
// It stays thalweg's own: gRPC defines the codes, not which of them a sink
// treats as a refusal.
package grpcclass

import (
	"strings"

	"google.golang.org/grpc/codes"
)

// Refused reports whether c is a refusal: bad credentials
// (Unauthenticated, PermissionDenied), data or a schema the server will not
// take (InvalidArgument, OutOfRange, FailedPrecondition), a missing
// dataset or table (NotFound), or an unsupported feature (Unimplemented).
func Refused(c codes.Code) bool {
	switch c {
	case codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument, codes.NotFound,
		codes.FailedPrecondition, codes.Unimplemented, codes.OutOfRange:
		return true
	}
	return false
}

// Name is c's name for logs and metrics, or "" for codes.OK: a failure
// that had no gRPC status (a local one).
func Name(c codes.Code) string {
	if c == codes.OK {
		return ""
	}
	return c.String()
}

// TLSRefused reports whether err, of code c, is a connection whose TLS
// handshake failed for a reason that a retry with the same configuration
// repeats: a certificate that does not verify ("x509: ..."), or any other
// TLS failure ("tls: ...": the server's alert refusing a client
// certificate, a peer that does not speak TLS). gRPC reports these as
// Unavailable, like a server that is down. A handshake cut short (EOF, a
// reset) is not one: the server may be restarting.
func TLSRefused(c codes.Code, err error) bool {
	if c != codes.Unavailable || err == nil {
		return false
	}
	msg := err.Error()
	i := strings.Index(msg, "authentication handshake failed")
	if i < 0 {
		return false
	}
	rest := msg[i:]
	return strings.Contains(rest, "x509: ") || strings.Contains(rest, "tls: ")
}
