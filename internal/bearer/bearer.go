// Package bearer is the one spelling of thalweg's token authentication on
// gRPC: the metadata key and its "Bearer <token>" value, which every client
// sends (the Flight sink and reader, the Zerobus sink) and every server
// checks (flight/receiver, zerobus/server).
//
// It stays thalweg's own: gRPC's credentials/oauth sends the same header
// but requires transport security (loopback plaintext must work) and
// checks nothing on the server side.
package bearer

import (
	"context"
	"strings"

	"google.golang.org/grpc/credentials"
)

// Header is the gRPC metadata key (gRPC metadata keys are lower case).
const Header = "authorization"

// Scheme is the authorization scheme of Value.
const Scheme = "Bearer"

// Value is the metadata value that carries token.
func Value(token string) string { return Scheme + " " + token }

// Token returns the token of a metadata value, the scheme compared
// case-insensitively (RFC 6750), or false when v is not a bearer value.
func Token(v string) (string, bool) {
	scheme, tok, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, Scheme) {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// Credentials sends the token on every call. It does not require transport
// security, like the sinks, so that loopback plaintext works; use TLS
// anywhere else.
type Credentials string

var _ credentials.PerRPCCredentials = Credentials("")

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (c Credentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{Header: Value(string(c))}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (Credentials) RequireTransportSecurity() bool { return false }
