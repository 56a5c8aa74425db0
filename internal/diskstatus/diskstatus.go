// Package diskstatus turns a server's storage failure into the gRPC status
// the stream ends with. The servers (flight/receiver, zerobus/server) keep
// a failed write or sync sticky — the file's state after it is unknown — so
// the status says that a restart is needed, and a full disk (ENOSPC,
// EDQUOT) is told apart as ResourceExhausted: the one cause an operator
// fixes by freeing space before the restart.
//
// It stays thalweg's own: which status a storage failure ends a stream
// with is thalweg's contract with its clients, not a library's.
package diskstatus

import (
	"errors"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// NoSpace reports whether err is a full disk or an exhausted quota.
func NoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// Error is the status for a storage failure while doing what:
// ResourceExhausted for a full disk, Internal otherwise, both naming the
// cause and that the server does not heal by itself.
func Error(what string, err error) error {
	if NoSpace(err) {
		return status.Errorf(codes.ResourceExhausted,
			"%s: %v: disk full; this server does not retry a failed write: free space, then restart it", what, err)
	}
	return status.Errorf(codes.Internal, "%s: %v (storage failed; restart the server)", what, err)
}
