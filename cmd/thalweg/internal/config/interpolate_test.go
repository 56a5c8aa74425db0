package config_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

func TestInterpolation(t *testing.T) {
	env := envOf(map[string]string{
		"DIR":   "/srv",
		"EMPTY": "",
		"ROWS":  "64",
		"PRICE": "$5",
	})
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "${DIR}/x", "/srv/x"},
		{"default unused", "${DIR:-/tmp}", "/srv"},
		{"default when unset", "${NOPE:-/tmp/a b}", "/tmp/a b"},
		{"default when empty", "${EMPTY:-fallback}", "fallback"},
		{"empty without default is empty", "a${EMPTY}b", "ab"},
		{"empty default", "${NOPE:-}", ""},
		{"default may contain colons and dashes", "${NOPE:-h:1-2}", "h:1-2"},
		{"escape", "$${DIR} costs $$5", "${DIR} costs $5"},
		{"lone dollar", "a $ b $x", "a $ b $x"},
		{"trailing dollar", "cost$", "cost$"},
		{"value is not re-expanded", "${PRICE}", "$5"},
		{"several on one line", "${DIR}${ROWS}${NOPE:-z}", "/srv64z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := doc(map[string]string{"store": "\n  dir: \"" + tc.in + "\""})
			cfg, err := config.Parse([]byte(y), env)
			if tc.want == "" {
				// An empty store.dir is a validation error, which proves the value was empty.
				require.ErrorContains(t, err, "store.dir: required")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg.Store.Dir)
		})
	}
}

func TestInterpolationErrors(t *testing.T) {
	const secret = "hunter2-very-secret"
	env := envOf(map[string]string{"MULTI": "a\nb: " + secret, "OK": secret})
	y := strings.Join([]string{
		"# a comment may mention ${UNSET_IN_COMMENT} freely",
		"   # indented comments too: ${ALSO_UNSET}",
		"source:",
		"  url: ${PULSAR_URL}",                   // line 4: unset
		"  topics: [${T1}, ${T2:-x}, ${T3}]",     // line 5: two unset
		"  subscription: {name: ${MULTI}}",       // line 6: newline value
		"store: {dir: ${bad-name}}",              // line 7: invalid name
		"log: {level: ${OK}, format: ${UNCLOSED", // line 8: unterminated
	}, "\n")
	_, err := config.Parse([]byte(y), env)
	require.ErrorIs(t, err, config.ErrInvalid)
	require.Equal(t, strings.Join([]string{
		"line 4: environment variable PULSAR_URL is not set (write ${PULSAR_URL:-default} to give a default)",
		"line 5: environment variable T1 is not set (write ${T1:-default} to give a default)",
		"line 5: environment variable T3 is not set (write ${T3:-default} to give a default)",
		"line 6: environment variable MULTI contains a line break, which interpolation does not allow",
		"line 7: invalid variable reference ${bad-name}: want ${NAME} or ${NAME:-default} with NAME matching [A-Za-z_][A-Za-z0-9_]*",
		"line 8: unterminated ${ (write $$ for a literal $)",
	}, "\n"), err.Error())
	require.NotContains(t, err.Error(), secret, "values are never echoed")
}

// A value cannot smuggle YAML structure past the schema: it is inserted
// verbatim, so a quoted placeholder keeps it a string.
func TestInterpolationKeepsStructure(t *testing.T) {
	env := envOf(map[string]string{"NAME": "s, type: shared"})
	cfg, err := config.Parse([]byte(doc(map[string]string{"source": `
  url: pulsar://h:1
  topics: [t]
  subscription: {name: "${NAME}"}`})), env)
	require.ErrorContains(t, err, "source.subscription.name: must not contain spaces")
	require.Nil(t, cfg)
}
