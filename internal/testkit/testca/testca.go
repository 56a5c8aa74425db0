// Package testca makes throwaway X.509 certificate authorities for tests of
// TLS and mutual TLS on loopback: ECDSA P-256 keys, certificates valid for
// an hour around now, server leaves for 127.0.0.1, ::1 and localhost.
// Nothing here is fit for anything but tests.
//
// It stays: crypto/x509 does the work; this package is only the tests'
// defaults.
package testca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// CA is one test certificate authority. Its files live in a test temp dir.
type CA struct {
	// CAFile is the PEM file of the CA certificate (what clients and mTLS
	// servers trust).
	CAFile string
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	dir    string
	serial atomic.Int64
}

// New creates a CA named name.
func New(t testing.TB, name string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	c := &CA{cert: cert, key: key, dir: t.TempDir()}
	c.serial.Store(1)
	c.CAFile = c.write(t, "ca.pem", "CERTIFICATE", der)
	return c
}

// Pool is a cert pool holding only this CA.
func (c *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.cert)
	return p
}

func (c *CA) write(t testing.TB, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(c.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (c *CA) issue(t testing.TB, cn string, usage x509.ExtKeyUsage) (tls.Certificate, []byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(c.serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, der, key
}

// ServerTLS returns a server configuration with a leaf for the loopback
// addresses. With clients non-nil, it requires and verifies a client
// certificate signed by clients (mutual TLS).
func (c *CA) ServerTLS(t testing.TB, clients *CA) *tls.Config {
	t.Helper()
	leaf, _, _ := c.issue(t, "thalweg test server", x509.ExtKeyUsageServerAuth)
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{leaf}}
	if clients != nil {
		cfg.ClientCAs = clients.Pool()
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg
}

// ClientCert issues a client certificate and writes it and its key as PEM
// files; it returns their paths.
func (c *CA) ClientCert(t testing.TB, cn string) (certFile, keyFile string) {
	t.Helper()
	_, der, key := c.issue(t, cn, x509.ExtKeyUsageClientAuth)
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	n := c.serial.Load()
	certFile = c.write(t, "client-"+big.NewInt(n).String()+".pem", "CERTIFICATE", der)
	keyFile = c.write(t, "client-"+big.NewInt(n).String()+".key", "EC PRIVATE KEY", kder)
	return certFile, keyFile
}
