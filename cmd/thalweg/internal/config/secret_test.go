package config_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

const tokenValue = "tok-3f9a1c-super-secret"

func TestSecretRedaction(t *testing.T) {
	s := config.NewSecret(tokenValue)
	require.Equal(t, tokenValue, s.Reveal())

	holder := struct {
		Name  string
		Token config.Secret
		Ptr   *config.Secret
	}{"x", s, &s}
	for _, verb := range []string{"%s", "%v", "%+v", "%#v", "%q", "%x", "%X", "%d", "%10s"} {
		out := fmt.Sprintf(verb, s) + fmt.Sprintf(verb, holder) + fmt.Sprintf(verb, &s)
		require.NotContains(t, out, tokenValue, verb)
		require.NotContains(t, out, fmt.Sprintf("%x", tokenValue), verb)
		require.Contains(t, out, "REDACTED", verb)
	}
	require.Equal(t, "[REDACTED]", s.String())
	require.Equal(t, "[EMPTY]", config.Secret{}.String())
	require.True(t, config.Secret{}.IsZero())

	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
		slog.New(h).Info("connect", "token", s, "holder", holder)
	}
	require.NotContains(t, logs.String(), tokenValue)
	require.Contains(t, logs.String(), `"token":"[REDACTED]"`)

	js, err := json.Marshal(holder)
	require.NoError(t, err)
	require.NotContains(t, string(js), tokenValue)
	ys, err := yaml.Marshal(map[string]config.Secret{"t": s})
	require.NoError(t, err)
	require.NotContains(t, string(ys), tokenValue)
}

func TestTokens(t *testing.T) {
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tokFile, []byte("  "+tokenValue+"\n"), 0o600))
	emptyFile := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(emptyFile, []byte("\n"), 0o600))

	env := envOf(map[string]string{"FLIGHT_TOKEN": tokenValue, "BLANK": "  "})

	tok, err := config.AuthConfig{TokenFile: tokFile}.Token(env)
	require.NoError(t, err)
	require.Equal(t, tokenValue, tok.Reveal(), "whitespace around the file content is trimmed")

	tok, err = config.AuthConfig{TokenEnv: "FLIGHT_TOKEN"}.Token(env)
	require.NoError(t, err)
	require.Equal(t, tokenValue, tok.Reveal())

	tok, err = config.AuthConfig{}.Token(env)
	require.NoError(t, err)
	require.True(t, tok.IsZero(), "no auth configured")

	for _, tc := range []struct {
		auth config.AuthConfig
		want string
	}{
		{config.AuthConfig{TokenEnv: "MISSING"}, "environment variable MISSING is not set"},
		{config.AuthConfig{TokenEnv: "BLANK"}, "environment variable BLANK is empty"},
		{config.AuthConfig{TokenFile: emptyFile}, "token file " + emptyFile + " is empty"},
		{config.AuthConfig{TokenFile: filepath.Join(dir, "nope")}, "no such file"},
	} {
		_, err := tc.auth.Token(env)
		require.ErrorIs(t, err, config.ErrSecret)
		require.ErrorContains(t, err, tc.want)
	}

	// CheckSecrets reports every unavailable token with its path and line,
	// and never a resolved value.
	y := doc(map[string]string{"source": `
  url: pulsar://h:1
  topics: [t]
  subscription: {name: s}
  auth: {token_env: PULSAR_TOKEN}`, "destinations": `
  - {name: a, kind: flight, role: raw_anchor, endpoint: "h:1", token_env: FLIGHT_TOKEN}
  - {name: b, kind: flight, role: secondary, endpoint: "h:1", token_env: ZB_TOKEN}`})
	cfg, err := config.Parse([]byte(y), env)
	require.NoError(t, err, "Validate does not need the tokens")
	err = cfg.CheckSecrets(env)
	require.ErrorIs(t, err, config.ErrInvalid)
	require.ErrorIs(t, err, config.ErrSecret)
	require.Equal(t, "line 5: source.auth.token_env: token unavailable: environment variable PULSAR_TOKEN is not set\n"+
		"line 8: destinations[1].token_env: token unavailable: environment variable ZB_TOKEN is not set", err.Error())
	require.NotContains(t, err.Error(), tokenValue)

	tok, err = cfg.Destinations[0].Token(env)
	require.NoError(t, err)
	require.Equal(t, tokenValue, tok.Reveal())

	require.NoError(t, cfg.CheckSecrets(envOf(map[string]string{"PULSAR_TOKEN": "p", "FLIGHT_TOKEN": "f", "ZB_TOKEN": "z"})))
}

// However a token reaches a mistaken place in the file, it is not echoed.
func TestTokensNeverInErrors(t *testing.T) {
	env := envOf(map[string]string{"FLIGHT_TOKEN": "eyJhbGciOi.payload.sig-" + tokenValue})
	for _, y := range []string{
		// A literal token key with an interpolated value.
		doc(map[string]string{"destinations": `
  - {name: a, kind: flight, role: raw_anchor, endpoint: "h:1", token: "${FLIGHT_TOKEN}"}`}),
		// The token interpolated where its variable's name belongs.
		doc(map[string]string{"destinations": `
  - {name: a, kind: flight, role: raw_anchor, endpoint: "h:1", token_env: "${FLIGHT_TOKEN}"}`}),
		doc(map[string]string{"source": `
  url: pulsar://h:1
  topics: [t]
  subscription: {name: s}
  auth: {token_env: "${FLIGHT_TOKEN}", token_file: /x}`}),
	} {
		_, err := config.Parse([]byte(y), env)
		require.Error(t, err)
		require.NotContains(t, err.Error(), tokenValue)
	}
}

func TestConfigLogValue(t *testing.T) {
	env := envOf(map[string]string{"PULSAR_TOKEN": tokenValue, "FLIGHT_TOKEN": tokenValue})
	cfg, err := config.Parse([]byte(doc(map[string]string{"source": `
  url: pulsar://h:1
  topics: [t]
  subscription: {name: s}
  auth: {token_env: PULSAR_TOKEN}`, "destinations": `
  - {name: a, kind: flight, role: raw_anchor, endpoint: "h:1", token_env: FLIGHT_TOKEN}
  - {name: zb, kind: zerobus, role: secondary, endpoint: "h:1", table: c.s.t}`})), env)
	require.NoError(t, err)
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "config", cfg)
	out := logs.String()
	require.NotContains(t, out, tokenValue)
	for _, want := range []string{`"token":"env:PULSAR_TOKEN"`, `"token":"env:FLIGHT_TOKEN"`, `"table":"c.s.t"`, `"destination.zb":{`, `"token":"none"`} {
		require.True(t, strings.Contains(out, want), "missing %s in %s", want, out)
	}
}
