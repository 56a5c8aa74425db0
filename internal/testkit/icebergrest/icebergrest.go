// Package icebergrest runs an Apache Iceberg REST catalog server for tests:
// the Iceberg project's own REST test fixture (from Maven Central, see
// scripts/iceberg-rest.sh) over a JDBC catalog in a SQLite file, serving on
// a loopback port, with testdata/iceberg/rest/RestCatalog.java as its
// launcher. It is an implementation of the REST protocol independent of
// iceberg-go's client.
//
// It stays: the server is the Iceberg project's fixture; this package
// only runs it.
package icebergrest

import (
	"bufio"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// Server is a running REST catalog.
type Server struct {
	// URI is its base URL, http://127.0.0.1:port.
	URI string
	// Warehouse is the local directory new tables go under.
	Warehouse string
}

// Start starts a catalog whose warehouse and database are in a fresh
// directory of t; t's cleanup stops it. It fails t when the server does not
// serve within two minutes (the launcher compiles on each start).
func Start(t testing.TB) *Server {
	t.Helper()
	java := testenv.Java(t)
	cp := testenv.IcebergRESTClasspath(t)
	dir := t.TempDir()
	s := &Server{Warehouse: filepath.Join(dir, "warehouse")}
	launcher := filepath.Join(testenv.RepoRoot(), "testdata", "iceberg", "rest", "RestCatalog.java")
	cmd := exec.Command(java, "-cp", cp, launcher, "127.0.0.1", "0", "file://"+s.Warehouse, filepath.Join(dir, "catalog.db"))
	var logs crashtest.LogBuffer
	cmd.Stderr = &logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("REST catalog: %v", err)
	}
	exited := make(chan error, 1)
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				port <- p
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	select {
	case p := <-port:
		s.URI = "http://127.0.0.1:" + p
		return s
	case err := <-exited:
		exited <- err
		t.Fatalf("REST catalog exited before serving: %v\n%s", err, logs.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("REST catalog does not serve after two minutes\n%s", logs.String())
	}
	return nil
}

// PeerProps are pyiceberg's properties for the catalog.
func (s *Server) PeerProps() map[string]string {
	return map[string]string{"type": "rest", "uri": s.URI}
}
