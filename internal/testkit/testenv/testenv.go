// Package testenv finds the external peers that integration tests need: the
// project virtualenv's Python (pyarrow, the Zerobus SDK, the Pulsar client,
// pyiceberg, moto), a running Pulsar broker (with its TLS port, a token it
// accepts and an advertised listener for a test proxy) and the Apache
// Iceberg REST catalog fixture's classpath.
//
// `make test` provisions both and sets THALWEG_REQUIRE_PEERS=1, under which a
// missing peer fails the test instead of skipping it: in CI nothing skips.
// A plain `go test ./...` without the peers skips those tests with a message
// that names the make target to run.
//
// It also builds the repository's binaries for tests that run them as child
// processes (GoBuild), and finds loopback addresses for them (FreeAddr).
//
// It stays thalweg's own: which peers thalweg's tests need, and where
// scripts/pulsar.sh and the Makefile put them, is the project's.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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

// PulsarTLS returns the broker's TLS service URL (PULSAR_TLS_URL,
// pulsar+ssl://) and the PEM file of the CA that signs its certificate
// (PULSAR_CA_FILE). scripts/pulsar.sh serves both.
func PulsarTLS(t testing.TB) (serviceURL, caFile string) {
	t.Helper()
	serviceURL, caFile = os.Getenv("PULSAR_TLS_URL"), os.Getenv("PULSAR_CA_FILE")
	if serviceURL == "" || caFile == "" {
		missing(t, "PULSAR_TLS_URL and PULSAR_CA_FILE (a Pulsar broker with TLS, scripts/pulsar.sh)")
	}
	if _, err := os.Stat(caFile); err != nil {
		missing(t, "PULSAR_CA_FILE="+caFile)
	}
	return serviceURL, caFile
}

// PulsarTokenFile returns a file holding a token the broker accepts
// (PULSAR_TOKEN_FILE). The broker also admits clients without a token.
func PulsarTokenFile(t testing.TB) string {
	t.Helper()
	f := os.Getenv("PULSAR_TOKEN_FILE")
	if f == "" {
		missing(t, "PULSAR_TOKEN_FILE (a Pulsar broker with token authentication, scripts/pulsar.sh)")
	}
	if _, err := os.Stat(f); err != nil {
		missing(t, "PULSAR_TOKEN_FILE="+f)
	}
	return f
}

// PulsarProxyListener returns the name of an advertised listener of the
// broker (PULSAR_PROXY_LISTENER) and the loopback address it advertises
// (PULSAR_PROXY_ADDR), which the broker does not bind: a test runs its own
// TCP proxy there, forwarding to PulsarURL, and connects with service URL
// pulsar://addr and that listener name, so that topic lookups keep the
// client on the proxy. The address is fixed, so one test at a time can
// hold it.
func PulsarProxyListener(t testing.TB) (name, addr string) {
	t.Helper()
	name, addr = os.Getenv("PULSAR_PROXY_LISTENER"), os.Getenv("PULSAR_PROXY_ADDR")
	if name == "" || addr == "" {
		missing(t, "PULSAR_PROXY_LISTENER and PULSAR_PROXY_ADDR (a Pulsar broker with a proxy listener, scripts/pulsar.sh)")
	}
	return name, addr
}

// RepoRoot returns the repository root, for locating testdata scripts.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// PulsarHome returns the Pulsar distribution the test broker runs from
// (PULSAR_HOME, which scripts/pulsar.sh prints; else what `scripts/pulsar.sh
// home` names): its lib/ holds the Java client, for interop tests with it.
func PulsarHome(t testing.TB) string {
	t.Helper()
	home := os.Getenv("PULSAR_HOME")
	if home == "" {
		out, err := exec.Command("bash", filepath.Join(RepoRoot(), "scripts", "pulsar.sh"), "home").Output()
		if err == nil {
			home = strings.TrimPrefix(strings.TrimSpace(string(out)), "PULSAR_HOME=")
		}
	}
	if home == "" {
		missing(t, "PULSAR_HOME (the Pulsar distribution, scripts/pulsar.sh)")
	}
	if _, err := os.Stat(filepath.Join(home, "lib")); err != nil {
		missing(t, "PULSAR_HOME="+home)
	}
	return home
}

// Java returns a java launcher (JAVA_HOME's, else the one on PATH), for
// single-file Java programs run against PulsarHome's client.
func Java(t testing.TB) string {
	t.Helper()
	if h := os.Getenv("JAVA_HOME"); h != "" {
		if j := filepath.Join(h, "bin", "java"); fileExists(j) {
			return j
		}
	}
	j, err := exec.LookPath("java")
	if err != nil {
		missing(t, "java (a Java 17 or 21 runtime, as scripts/pulsar.sh needs)")
	}
	return j
}

// IcebergRESTClasspath returns the classpath of the Apache Iceberg REST
// catalog test fixture (the file THALWEG_ICEBERG_REST_CP names, which
// scripts/iceberg-rest.sh writes).
func IcebergRESTClasspath(t testing.TB) string {
	t.Helper()
	f := os.Getenv("THALWEG_ICEBERG_REST_CP")
	if f == "" {
		missing(t, "THALWEG_ICEBERG_REST_CP (the Iceberg REST catalog fixture, scripts/iceberg-rest.sh)")
	}
	cp, err := os.ReadFile(f)
	if err != nil || len(strings.TrimSpace(string(cp))) == 0 {
		missing(t, "THALWEG_ICEBERG_REST_CP="+f)
	}
	return strings.TrimSpace(string(cp))
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// GitHistory returns the git command for the repository at root, whose
// full history a test reads (BENCHMARKS.md's commits against the code's):
// git on PATH, root a work tree, and the clone not shallow (CI clones in
// full; `git fetch --unshallow` completes a shallow one).
func GitHistory(t testing.TB, root string) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		missing(t, "git")
	}
	out, err := exec.Command(git, "-C", root, "rev-parse", "--is-shallow-repository").Output()
	if err != nil {
		missing(t, "a git work tree at "+root)
	}
	if strings.TrimSpace(string(out)) != "false" {
		missing(t, "the full git history of "+root+" (a shallow clone: git fetch --unshallow)")
	}
	return git
}
