package config_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

// A YAML syntax error is reported at the line it is on, not at the line
// where the enclosing block starts (yaml.v3's "context" line).
func TestSyntaxErrorLine(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line      int
	}{
		{"over-indented key in a nested block", "source:\n  kind: generator\n  generator:\n    records: 10\n    seed: 2\n   rate: 5\n", 6},
		{"under-indented key", "source:\n  kind: generator\nbatching:\n  max_rows: 10\nstore:\n  dir: /tmp/x\n bad: 1\nlog:\n  level: info\n", 7},
		{"after a flow mapping", "source:\n  kind: generator\nbatching:\n  max_rows: 10\nstore: {dir: /tmp/x}\n log: x\n", 6},
		{"tab", "source:\n  kind: generator\nstore:\n  dir: /tmp/x\nlog:\n\tlevel: info\n", 6},
		{"already right", "source:\n  kind: generator\nlog: text\n  level: info\n", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tc.doc), noEnv)
			var e *config.Error
			require.ErrorAs(t, err, &e)
			require.Len(t, e.Problems, 1, "%v", err)
			require.Equal(t, tc.line, e.Problems[0].Line, "%v", err)
		})
	}

	path := filepath.Join(t.TempDir(), "pipeline.yaml")
	require.NoError(t, os.WriteFile(path, []byte("source:\n  kind: generator\n  generator:\n    records: 10\n    seed: 2\n   rate: 5\n"), 0o600))
	_, err := config.Load(path)
	require.ErrorContains(t, err, path+":6: ")
}

// A token file that cannot be read is named in the error, once, with the
// reason; ErrSecret and the *fs.PathError stay reachable. CheckSecrets on a
// loaded config names the config file and line too.
func TestTokenFileErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing-token")
	_, err := config.AuthConfig{TokenFile: missing}.Token(noEnv)
	require.EqualError(t, err, "token unavailable: token file "+missing+": no such file or directory")
	require.ErrorIs(t, err, config.ErrSecret)
	require.ErrorIs(t, err, fs.ErrNotExist)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)

	_, err = config.AuthConfig{TokenFile: dir}.Token(noEnv) // a directory: Open succeeds, Read fails
	require.ErrorContains(t, err, "token file "+dir+": ")
	require.Equal(t, 1, strings.Count(err.Error(), dir), "%v", err)

	path := filepath.Join(dir, "pipeline.yaml")
	require.NoError(t, os.WriteFile(path, []byte(doc(map[string]string{"source": `
  url: pulsar://127.0.0.1:6650
  topics: [events]
  subscription: {name: thalweg}
  auth:
    token_file: ` + missing})), 0o600))
	cfg, err := config.Load(path)
	require.NoError(t, err)
	err = cfg.CheckSecrets(noEnv)
	require.ErrorIs(t, err, config.ErrSecret)
	require.ErrorContains(t, err, path+":6: source.auth.token_file: token unavailable: token file "+missing+": no such file or directory")
}

// An unset ${VAR} is reported together with every other problem of the
// document, not instead of them; the field it left empty is not reported
// a second time.
func TestUnsetVariableDoesNotHideOtherErrors(t *testing.T) {
	d := doc(map[string]string{
		"source":   "\n  url: ${PULSAR_URL}\n  topics: [events]\n  subscription: {name: thalweg}",
		"batching": "\n  max_rows: -3\n  linger: 5",
	})
	_, err := config.Parse([]byte(d), noEnv)
	var e *config.Error
	require.ErrorAs(t, err, &e)
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	require.Equal(t, []string{
		"line 2: environment variable PULSAR_URL is not set (write ${PULSAR_URL:-default} to give a default)",
		"line 6: batching.max_rows: must be > 0, got -3",
		`line 7: batching.linger: want a duration with a unit such as 100ms, 30s or 1m30s, got "5"`,
	}, msgs)
	require.True(t, errors.Is(err, config.ErrInvalid))
}

// A key the destination's kind does not use is an error naming file, line
// and field.
func TestUnusedKeyForKind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipeline.yaml")
	for _, tc := range []struct{ dests, want string }{
		{`
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "127.0.0.1:8815"}
  - name: zb
    kind: zerobus
    role: secondary
    endpoint: "127.0.0.1:9000"
    table: a.b.c
    compression: none`, ":12: destinations[1].compression: not used by kind zerobus in mode ephemeral"},
		{`
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "127.0.0.1:8815", table: a.b.c}`, ":6: destinations[0].table: only allowed for kind zerobus"},
		{`
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "127.0.0.1:8815", mode: flight}`, ":6: destinations[0].mode: only allowed for kind zerobus"},
		{`
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "127.0.0.1:8815"}
  - {name: zb, kind: zerobus, role: secondary, endpoint: "127.0.0.1:9000", table: a.b.c, path: [x]}`, ":7: destinations[1].path: only allowed for kind flight"},
	} {
		require.NoError(t, os.WriteFile(path, []byte(doc(map[string]string{"destinations": tc.dests})), 0o600))
		_, err := config.Load(path)
		require.ErrorContains(t, err, path+tc.want)
	}
	// Compression is used by zerobus in mode flight.
	require.NoError(t, os.WriteFile(path, []byte(doc(map[string]string{"destinations": `
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "127.0.0.1:8815"}
  - {name: zb, kind: zerobus, role: secondary, endpoint: "127.0.0.1:9000", table: a.b.c, mode: flight, compression: zstd}`})), 0o600))
	cfg, err := config.Load(path)
	require.NoError(t, err)
	require.Equal(t, config.CompressionZstd, cfg.Destinations[1].Compression)
}

// The config's message-size and silence defaults are the sinks' own.
func TestSinkDefaultsAgree(t *testing.T) {
	f := config.DefaultDestination("raw", config.KindFlight, config.RoleRawAnchor, "h:1")
	z := config.DefaultDestination("zb", config.KindZerobus, config.RoleSecondary, "h:1")
	require.EqualValues(t, 64<<20, f.MaxMessageSize)
	require.EqualValues(t, 10<<20, z.MaxMessageSize)
	require.Less(t, f.SilenceTimeout, z.SilenceTimeout)
}
