// Package s3test runs an S3-compatible server for tests: the server mode
// of moto (PyPI), from the project virtualenv (testenv.Python), on a
// loopback port of its own. It accepts any credentials.
//
// It stays: the server is moto's; this package only runs it.
package s3test

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// Server is a running S3-compatible server.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:port.
	Endpoint string
}

// Start starts a server for the rest of t; t's cleanup stops it. It fails
// t when the server does not answer within a minute.
func Start(t testing.TB) *Server {
	t.Helper()
	py := testenv.Python(t)
	addr := testenv.FreeAddr(t)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-m", "moto.server", "-H", host, "-p", port)
	var out crashtest.LogBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("moto server: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	s := &Server{Endpoint: "http://" + addr}
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(s.Endpoint + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("moto server exited: %v\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("moto server does not answer on %s after a minute: %v\n%s", addr, err, out.String())
		}
	}
}

// CreateBucket creates bucket (path-style; moto needs no signature).
func (s *Server) CreateBucket(t testing.TB, bucket string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, s.Endpoint+"/"+bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create bucket %s: %s", bucket, resp.Status)
	}
}
