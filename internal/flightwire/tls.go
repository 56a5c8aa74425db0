package flightwire

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLS is the client side of transport security, as both sinks configure
// it. Field names match flight.TLSOptions and zerobus.TLSOptions, so that
// the errors of Config name the option the user set.
type TLS struct {
	CAFile             string // PEM roots replacing the system roots; empty: system roots
	CertFile, KeyFile  string // client certificate for mutual TLS; both or neither
	ServerName         string // overrides the name checked in the server certificate
	InsecureSkipVerify bool   // tests against self-signed servers only
}

// Config builds the client *tls.Config (TLS 1.2 or later). Errors name the
// field ("TLS.CAFile: ...") without a package prefix: the caller adds its own.
func (t TLS) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("TLS.CAFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS.CAFile %s: no PEM certificates found", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("TLS.CertFile and KeyFile must be given together")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate (TLS.CertFile, TLS.KeyFile): %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
