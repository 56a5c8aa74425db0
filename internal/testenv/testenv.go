// Package testenv finds the external peers that integration tests need: the
// project virtualenv's Python (pyarrow, the Zerobus SDK, the Pulsar client)
// and a running Pulsar broker.
//
// `make test` provisions both and sets THALWEG_REQUIRE_PEERS=1, under which a
// missing peer fails the test instead of skipping it: in CI nothing skips.
// A plain `go test ./...` without the peers skips those tests with a message
// that names the make target to run.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Required reports whether missing peers must fail tests rather than skip them.
func Required() bool {
	return os.Getenv("THALWEG_REQUIRE_PEERS") == "1"
}

func missing(t testing.TB, what string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s is not available (THALWEG_REQUIRE_PEERS=1): run the tests with `make test`", what)
	}
	t.Skipf("%s is not available: run `make test` to provision it", what)
}

// Python returns the interpreter of the project virtualenv (THALWEG_PYTHON).
func Python(t testing.TB) string {
	t.Helper()
	p := os.Getenv("THALWEG_PYTHON")
	if p == "" {
		missing(t, "THALWEG_PYTHON (the interop virtualenv, scripts/pyenv.sh)")
	}
	if _, err := exec.LookPath(p); err != nil {
		missing(t, "THALWEG_PYTHON="+p)
	}
	return p
}

// PulsarURL returns the broker service URL (PULSAR_URL) and, when set, the
// admin HTTP URL (PULSAR_ADMIN_URL, default http://127.0.0.1:8080).
func PulsarURL(t testing.TB) (serviceURL, adminURL string) {
	t.Helper()
	serviceURL = os.Getenv("PULSAR_URL")
	if serviceURL == "" {
		missing(t, "PULSAR_URL (a Pulsar broker, scripts/pulsar.sh)")
	}
	adminURL = os.Getenv("PULSAR_ADMIN_URL")
	if adminURL == "" {
		adminURL = "http://127.0.0.1:8080"
	}
	return serviceURL, adminURL
}

// RepoRoot returns the repository root, for locating testdata scripts.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
