package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/zerobus/server"
)

// TestOfficialSDKInterop points the official databricks-zerobus-ingest-sdk
// (testdata/zerobus/sdk_ingest.py) at the server and checks that every
// record it reports as durable is stored, in each protocol the SDK speaks
// to a custom endpoint: EphemeralStream with single and batched JSON
// records, the Arrow Flight variant, a server that rotates streams under
// the SDK, and TLS with a test CA.
func TestOfficialSDKInterop(t *testing.T) {
	py := testenv.Python(t)
	script := filepath.Join(testenv.RepoRoot(), "testdata", "zerobus", "sdk_ingest.py")
	const token, table = "sdk-token", "main.interop.events"

	// Rotate every 40ms; acks trail the data so that rotations find records
	// in flight.
	rotating := server.Options{RotateEvery: 40 * time.Millisecond, RotateGrace: 50 * time.Millisecond, AckDelay: 2 * time.Millisecond}
	cases := []struct {
		name  string
		mode  string
		count int
		opts  server.Options
		tls   bool
	}{
		{name: "json", mode: "json"},
		{name: "json-batch", mode: "json-batch"},
		{name: "arrow", mode: "arrow"},
		{name: "json-rotating", mode: "json-batch", count: 20000, opts: rotating},
		{name: "arrow-rotating", mode: "arrow", count: 20000, opts: rotating},
		{name: "json-tls", mode: "json", tls: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			count := tc.count
			if count == 0 {
				count = 500
			}
			opts := tc.opts
			opts.Dir = t.TempDir()
			opts.Token = token
			scheme := "http"
			env := os.Environ()
			if tc.tls {
				caFile, cfg := testCA(t)
				opts.TLS = cfg
				scheme = "https"
				// The SDK verifies against the platform roots; rustls'
				// native-certs loader honours SSL_CERT_FILE.
				env = append(env, "SSL_CERT_FILE="+caFile)
			}
			srv, host := serveTCP(t, opts)
			if tc.tls {
				_, port, _ := net.SplitHostPort(host)
				host = "localhost:" + port
			}

			// A rotating case tests records in flight across a rotation;
			// a stream that ends before its first rotation is due (an
			// Arrow stream of 20 000 records can take less than 40ms)
			// tested nothing, so the SDK streams the next ids, twice as
			// many each time, until one came (bounded).
			total := 0
			for attempt := 0; ; attempt++ {
				runPeer(t, env, py, script,
					"--endpoint", scheme+"://"+host, "--table", table, "--token", token,
					"--start", strconv.Itoa(total), "--count", strconv.Itoa(count<<attempt), "--mode", tc.mode)
				total += count << attempt
				if tc.opts.RotateEvery == 0 || srv.Stats().Rotations > 0 {
					break
				}
				require.Less(t, attempt, 4, "no rotation in %d streams, %d records", attempt+1, total)
			}
			count = total

			lines, err := server.ReadTable(srv.Dir(), table)
			require.NoError(t, err)
			seen := make(map[int64]bool)
			for _, l := range lines {
				var row struct {
					ID   int64  `json:"id"`
					Name string `json:"name"`
				}
				require.NoError(t, json.Unmarshal(l, &row))
				require.Equal(t, "sdk-"+strconv.FormatInt(row.ID, 10), row.Name)
				seen[row.ID] = true
			}
			for i := int64(0); i < int64(count); i++ {
				require.True(t, seen[i], "record %d acknowledged to the SDK but not stored", i)
			}
			if tc.opts.RotateEvery > 0 {
				require.Positive(t, srv.Stats().Rotations, "the server rotated at least once")
			}
			t.Logf("%s: %d records stored for %d ingested, stats %+v", tc.name, len(lines), count, srv.Stats())
		})
	}
}

// serveTCP runs a server with opts on a loopback port until the test ends
// and returns it with its address.
func serveTCP(t *testing.T, opts server.Options) (*server.Server, string) {
	t.Helper()
	srv, err := server.New(opts)
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		require.NoError(t, srv.Stop())
		require.NoError(t, <-done)
	})
	return srv, lis.Addr().String()
}

// runPeer runs a Python peer script (env nil: this process's) for at most
// a minute and requires its last line to be {"ok": true}.
func runPeer(t *testing.T, env []string, py, script string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{script}, args...)...)
	cmd.Env = env
	out, err := cmd.Output()
	var res struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(lastLine(out), &res), "script output: %s (%v)", out, err)
	require.True(t, res.OK, "SDK failed: %s", res.Error)
	require.NoError(t, err)
}

func lastLine(b []byte) []byte {
	lines := splitLines(b)
	if len(lines) == 0 {
		return nil
	}
	return lines[len(lines)-1]
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	start := 0
	for i, c := range b {
		if c == '\n' {
			if i > start {
				out = append(out, b[start:i])
			}
			start = i + 1
		}
	}
	if start < len(b) {
		out = append(out, b[start:])
	}
	return out
}

// testCA writes a throwaway CA certificate (PEM) and returns its path and a
// server TLS config with a leaf for localhost and 127.0.0.1 signed by it.
func testCA(t *testing.T) (string, *tls.Config) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "thalweg test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	require.NoError(t, err)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600))
	return caFile, &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2"},
		Certificates: []tls.Certificate{{
			Certificate: [][]byte{leafDER, caDER},
			PrivateKey:  leafKey,
		}},
	}
}
