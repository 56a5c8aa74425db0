package receiver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/bearer"
)

func (s *Server) authorize(ctx context.Context) error {
	if s.opts.Token == "" {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(bearer.Header)
	if len(vals) == 0 {
		return status.Error(codes.Unauthenticated, "missing authorization metadata (want: Bearer <token>)")
	}
	tok, ok := bearer.Token(vals[0])
	if !ok {
		return status.Error(codes.Unauthenticated, "authorization metadata is not a Bearer token")
	}
	// Comparing digests keeps the comparison constant-time in the token
	// length too.
	sum := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare(sum[:], s.tokenSum[:]) != 1 {
		return status.Error(codes.Unauthenticated, "invalid bearer token")
	}
	return nil
}

func (s *Server) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := s.authorize(ctx); err != nil {
		s.logAuthFailure(ctx, info.FullMethod, err)
		return nil, err
	}
	return h(ctx, req)
}

// streamAuth authenticates a streaming RPC, then holds one of its peer's
// stream slots (Options.MaxStreamsPerPeer) for the RPC's duration.
func (s *Server) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx := ss.Context()
	if err := s.authorize(ctx); err != nil {
		s.logAuthFailure(ctx, info.FullMethod, err)
		return err
	}
	release, err := s.peers.Acquire(ctx)
	if err != nil {
		s.opts.Logger.Warn("receiver: stream refused", "peer", peerAddr(ctx), "method", info.FullMethod, "err", err)
		return err
	}
	defer release()
	return h(srv, ss)
}

// logAuthFailure records a rejected request. It logs the reason, never the
// presented credentials.
func (s *Server) logAuthFailure(ctx context.Context, method string, err error) {
	s.opts.Logger.Warn("receiver: unauthenticated request", "peer", peerAddr(ctx), "method", method, "reason", status.Convert(err).Message())
}
