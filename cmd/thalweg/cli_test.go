package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/thalweg/thalweg/internal/testkit/testca"
)

// commandFlags lists, per subcommand, the flags its --help must document.
// A command added to commands() without an entry here fails TestHelp.
var commandFlags = map[string][]string{
	"run":      {"config"},
	"validate": {"config", "secrets", "files"},
	"demo":     {"dir", "records", "partitions", "mode", "malformed", "rate", "metrics", "lane-capacity", "anchor", "pulsar", "pulsar-admin", "topic"},
	"receive": {"listen", "dir", "token-env", "tls-cert", "tls-key", "max-message-size", "ack-delay",
		"max-stream-pending-bytes", "max-decoded-message-bytes", "ack-send-timeout", "max-connections", "max-connection-idle"},
	"receiver": {"dir"},
	"zerobus-server": {"listen", "dir", "token-env", "tls-cert", "tls-key", "sync-interval", "rotate-every", "ack-delay", "drop-stream-after",
		"max-stream-pending-bytes", "max-decoded-message-bytes", "ack-send-timeout", "max-connections", "max-connection-idle", "max-decoded-record-bytes"},
	"offsets": {"store", "reset", "partition", "yes"},
	"dlq":     {"config", "limit", "republish", "max", "yes", "wait"},
	"table":   {"config", "destination"},
	"version": nil,
}

func TestHelp(t *testing.T) {
	for name := range commands() {
		if _, ok := commandFlags[name]; !ok {
			t.Errorf("command %q has no flag list in commandFlags", name)
		}
	}
	for name, flags := range commandFlags {
		for _, help := range []string{"--help", "-h"} {
			t.Run(name+help, func(t *testing.T) {
				code, stdout, stderr := runCLI(t, name, help)
				if code != exitOK {
					t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitOK, stderr)
				}
				if stdout != "" {
					t.Errorf("help wrote to stdout: %q", stdout)
				}
				if !strings.HasPrefix(stderr, "Usage: thalweg "+name) {
					t.Errorf("help does not start with the synopsis:\n%s", stderr)
				}
				for _, f := range flags {
					// flag.PrintDefaults: "  -name type\n    \tusage".
					if !regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(f) + `\b`).MatchString(stderr) {
						t.Errorf("help does not document -%s:\n%s", f, stderr)
					}
				}
			})
		}
	}
}

func TestTopLevelUsage(t *testing.T) {
	// Every command is listed with its summary, and the exit codes are documented.
	check := func(t *testing.T, stderr string) {
		t.Helper()
		names := make([]string, 0, len(commands()))
		for n := range commands() {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if !strings.Contains(stderr, "  "+n+" ") {
				t.Errorf("usage does not list %q:\n%s", n, stderr)
			}
		}
		if !strings.Contains(stderr, "Exit codes: 0 ok, 1 failure, 2 usage or invalid config, 3 forced") {
			t.Errorf("usage does not document the exit codes:\n%s", stderr)
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		code, _, stderr := runCLI(t, args...)
		if code != exitOK {
			t.Errorf("%v: exit %d, want %d", args, code, exitOK)
		}
		check(t, stderr)
	}
	code, _, stderr := runCLI(t)
	if code != exitUsage {
		t.Errorf("no arguments: exit %d, want %d", code, exitUsage)
	}
	check(t, stderr)
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"validate", "--config"}, "flag needs an argument: -config"},
		{[]string{"demo", "--records", "many"}, `invalid value "many" for flag -records`},
		{[]string{"offsets", "--store", "x", "extra"}, "unexpected arguments: [extra]"},
		{[]string{"version", "--short"}, "flag provided but not defined: -short"},
		{[]string{"run"}, "--config is required"},
		{[]string{"validate"}, "--config is required"},
		{[]string{"offsets"}, "--store is required"},
		{[]string{"receive"}, "--dir is required"},
		{[]string{"zerobus-server"}, "--dir is required"},
		{[]string{"receive", "--dir", "x", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"zerobus-server", "--dir", "x", "--token-env", "THALWEG_TEST_UNSET"}, "THALWEG_TEST_UNSET is not set"},
		{[]string{"demo", "--mode", "xml", "--dir", "@TMP"}, "--mode must be json or raw"},
		{[]string{"demo", "--anchor", "parquet", "--dir", "@TMP"}, "--anchor must be flight or iceberg"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			for i, a := range tc.args {
				if a == "@TMP" {
					tc.args[i] = t.TempDir()
				}
			}
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr)
			}
			if stdout != "" {
				t.Errorf("a usage error wrote to stdout: %q", stdout)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runCLI(t, "version")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if !regexp.MustCompile(`^thalweg \S+ .*go1\.\d+.* \w+/\w+\n$`).MatchString(stdout) {
		t.Errorf("version output %q", stdout)
	}
}

// Every example config in testdata/configs validates through the CLI, on its
// defaults (the ${VAR:-default} placeholders need no environment), with
// --files=false: the files they name are examples.
func TestValidateExamples(t *testing.T) {
	files, err := filepath.Glob("../../testdata/configs/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("found %d example configs, want at least 4", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			// Their files (TLS, tokens) are examples: not on this machine.
			code, stdout, stderr := runCLI(t, "validate", "--files=false", "--config", f)
			if code != exitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			if !strings.Contains(stdout, f+": valid (") || !strings.Contains(stdout, "raw anchor") {
				t.Errorf("stdout %q", stdout)
			}
		})
	}
}

const validBase = `source:
  kind: generator
destinations:
  - name: raw
    kind: flight
    role: raw_anchor
    endpoint: 127.0.0.1:8815
store:
  dir: /tmp/x
`

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A broken config exits 2 and names the field path (and the file and line)
// of every problem.
func TestValidateBroken(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"bad value", validBase + "batching:\n  max_rows: -3\n", []string{"pipeline.yaml:", "batching.max_rows"}},
		{"unknown key", validBase + "batching:\n  max_rowz: 10\n", []string{"batching.max_rowz"}},
		{"wrong shape", validBase + "shutdown:\n  drain_timeout: 100\n", []string{"shutdown.drain_timeout"}},
		{"nested path", strings.Replace(validBase, "    endpoint: 127.0.0.1:8815\n",
			"    endpoint: 127.0.0.1:8815\n    lane: {capacity: 0}\n", 1), []string{"destinations[0].lane.capacity"}},
		{"no raw anchor", strings.Replace(validBase, "role: raw_anchor", "role: secondary", 1), []string{"raw_anchor"}},
		{"literal token", strings.Replace(validBase, "    endpoint:", "    token: hunter2\n    endpoint:", 1),
			[]string{"destinations[0].token"}},
		{"unset variable", validBase + "metrics:\n  listen: ${THALWEG_TEST_UNSET_VAR}\n", []string{"THALWEG_TEST_UNSET_VAR"}},
		{"every problem at once", validBase + "batching:\n  max_rows: -3\n  linger: -1s\n",
			[]string{"batching.max_rows", "batching.linger"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "validate", "--config", writeConfig(t, tc.text))
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "hunter2") {
				t.Errorf("stderr echoes a secret:\n%s", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
		})
	}
	code, _, stderr := runCLI(t, "validate", "--config", filepath.Join(t.TempDir(), "missing.yaml"))
	if code != exitUsage || !strings.Contains(stderr, "missing.yaml") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
}

// TestValidateFiles: validate reads every file the config names, for the
// source and every destination, and reports each that is missing,
// unreadable or unusable — all of them in one report, each with the file,
// line and field path — exits 2, and says nothing is wrong once the files
// are there. full.yaml names four files no machine has.
func TestValidateFiles(t *testing.T) {
	code, stdout, stderr := runCLI(t, "validate", "--config", "../../testdata/configs/full.yaml")
	if code != exitUsage || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want %d and nothing", code, stdout, exitUsage)
	}
	full, err := os.ReadFile("../../testdata/configs/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// lineOf is the line of full.yaml that sets a field to file.
	lineOf := func(file string) int {
		for i, l := range strings.Split(string(full), "\n") {
			if strings.Contains(l, ": "+file) && !strings.HasPrefix(strings.TrimSpace(l), "#") {
				return i + 1
			}
		}
		t.Fatalf("full.yaml names no %s", file)
		return 0
	}
	for _, w := range []string{
		"source.auth.tls_ca_file: file unusable: /etc/thalweg/pulsar-ca.pem: no such file or directory",
		"destinations[0].tls.ca_file: file unusable: /etc/thalweg/flight-ca.pem: no such file or directory",
		"destinations[0].tls.cert_file: file unusable: /etc/thalweg/client.pem: no such file or directory",
		"destinations[0].tls.key_file: file unusable: /etc/thalweg/client-key.pem: no such file or directory",
	} {
		file := w[strings.Index(w, "/etc/"):strings.Index(w, ": no such")]
		w = fmt.Sprintf("full.yaml:%d: %s", lineOf(file), w)
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}

	// Files that exist but do not hold what their field needs, a
	// directory, an unreadable token file, and a key of another
	// certificate, for a zerobus secondary and the source at once.
	dir := t.TempDir()
	ca := testca.New(t, "validate CA")
	cert, _ := ca.ClientCert(t, "worker")
	_, otherKey := ca.ClientCert(t, "other")
	notPEM := filepath.Join(dir, "notpem.pem")
	token := filepath.Join(dir, "token")
	for f, text := range map[string]string{notPEM: "not a certificate\n", token: "t0ken\n"} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(token, 0); err != nil {
		t.Fatal(err)
	}
	unreadable := os.Geteuid() != 0 // root reads a file of mode 0
	text := `source:
  kind: pulsar
  url: pulsar+ssl://127.0.0.1:6651
  topics: [t]
  subscription: {name: s}
  auth:
    token_file: ` + token + `
    tls_ca_file: ` + notPEM + `
destinations:
  - name: raw
    kind: flight
    role: raw_anchor
    endpoint: 127.0.0.1:8815
  - name: zb
    kind: zerobus
    role: secondary
    endpoint: 127.0.0.1:50051
    table: c.s.t
    tls:
      enabled: true
      ca_file: ` + dir + `
      cert_file: ` + cert + `
      key_file: ` + otherKey + `
store:
  dir: /tmp/x
`
	path := writeConfig(t, text)
	code, _, stderr = runCLI(t, "validate", "--config", path)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d:\n%s", code, exitUsage, stderr)
	}
	want := []string{
		"pipeline.yaml:8: source.auth.tls_ca_file: file unusable: " + notPEM + " holds no PEM certificate",
		"pipeline.yaml:21: destinations[1].tls.ca_file: file unusable: " + dir + " is a directory",
		"pipeline.yaml:23: destinations[1].tls.key_file: file unusable: the private key does not match the certificate of cert_file " + cert,
	}
	if unreadable {
		want = append(want, "pipeline.yaml:7: source.auth.token_file: token unavailable: token file "+token+": permission denied")
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if strings.Contains(stderr, "t0ken") {
		t.Errorf("stderr echoes the token:\n%s", stderr)
	}
	// --files=false checks the config alone.
	if code, _, stderr := runCLI(t, "validate", "--files=false", "--config", path); code != exitOK {
		t.Errorf("--files=false: exit %d:\n%s", code, stderr)
	}
}

// TestRunChecksFilesFirst: run refuses a config naming TLS files that are
// not there before it opens anything — no source read, no store, no
// listener — with exit 2 and every missing file named with its line and
// field; the same report validate gives.
func TestRunChecksFilesFirst(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "offsets")
	path := writeConfig(t, `source:
  kind: generator
  generator: {records: 1000}
destinations:
  - name: raw
    kind: flight
    role: raw_anchor
    endpoint: 127.0.0.1:8815
  - name: zb
    kind: zerobus
    role: secondary
    endpoint: 127.0.0.1:50051
    table: c.s.t
    tls:
      enabled: true
      cert_file: `+dir+`/client.pem
      key_file: `+dir+`/client-key.pem
store:
  dir: `+store+`
metrics:
  listen: ""
`)
	code, _, stderr := runCLI(t, "run", "--config", path)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d:\n%s", code, exitUsage, stderr)
	}
	for _, w := range []string{
		"pipeline.yaml:16: destinations[1].tls.cert_file: file unusable: " + dir + "/client.pem: no such file or directory",
		"pipeline.yaml:17: destinations[1].tls.key_file: file unusable: " + dir + "/client-key.pem: no such file or directory",
	} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if strings.Contains(stderr, "pipeline started") {
		t.Errorf("the pipeline started:\n%s", stderr)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("the offset store was opened (%v): run went on past the file check", err)
	}
	_, _, vstderr := runCLI(t, "validate", "--config", path)
	if !strings.Contains(vstderr, "destinations[1].tls.cert_file") || !strings.Contains(vstderr, "destinations[1].tls.key_file") {
		t.Errorf("validate does not report the same files:\n%s", vstderr)
	}
}

// validate --secrets resolves token_env through the CLI's environment and
// never prints the value.
func TestValidateSecrets(t *testing.T) {
	path := writeConfig(t, strings.Replace(validBase, "    endpoint:", "    token_env: THALWEG_TEST_TOKEN\n    endpoint:", 1))
	var c cli
	if code := c.run(t.Context(), "validate", "--config", path); code != exitOK {
		t.Fatalf("without --secrets: exit %d: %s", code, c.stderr.String())
	}
	c = cli{}
	if code := c.run(t.Context(), "validate", "--secrets", "--config", path); code != exitUsage {
		t.Errorf("unset token: exit %d, want %d", code, exitUsage)
	}
	if !strings.Contains(c.stderr.String(), "THALWEG_TEST_TOKEN") {
		t.Errorf("stderr does not name the variable: %s", c.stderr.String())
	}
	c = cli{env: map[string]string{"THALWEG_TEST_TOKEN": "s3cret-value"}}
	if code := c.run(t.Context(), "validate", "--secrets", "--config", path); code != exitOK {
		t.Errorf("token set: exit %d: %s", code, c.stderr.String())
	}
	if strings.Contains(c.stdout.String()+c.stderr.String(), "s3cret-value") {
		t.Error("the token value was printed")
	}
}

// TestRunSignalledDuringStartupExitsZero: a stop requested before the
// pipeline started (here: while the Pulsar source is still trying to reach
// a broker that never answers) is graceful, exit 0, not a failure.
//
// The Pulsar client only gives up after its operation timeout (~30 s), so
// the test runs in parallel with the rest of the package.
func TestRunSignalledDuringStartupExitsZero(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never speaks Pulsar
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "p.yaml")
	yaml := fmt.Sprintf(`source:
  url: pulsar://%s
  topics: [t]
  subscription: {name: s}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: 127.0.0.1:1}
store: {dir: %s}
metrics: {listen: ""}
`, lis.Addr(), filepath.Join(dir, "offsets"))
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var c cli
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	if code := c.run(ctx, "run", "--config", cfg); code != exitOK {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitOK, c.stderr.String())
	}
}
