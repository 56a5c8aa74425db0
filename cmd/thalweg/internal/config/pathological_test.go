package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

// Hostile documents cost an error, bounded in time and in message size.
func TestPathologicalInputs(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"deep flow list", "source: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000), "source: want a mapping, got a list"},
		{"deep flow map", "source: " + strings.Repeat("{a: ", 5000) + "1" + strings.Repeat("}", 5000), `source.a: unknown key "a"`},
		{"deep schema", "schema: {mode: json, fields: " + strings.Repeat("[{name: a, type: struct, fields: ", 2000) + "[]" + strings.Repeat("}]", 2000) + "}", "nested deeper than 100 levels"},
		{"self merge", "source: &x {<<: *x}\n", "merge (<<) nested deeper than 100 levels"},
		{"alias fanout", "source: {topics: &a [x,x,x,x,x,x,x,x,x,x]}\nschema: {fields: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]}\n", "schema.fields[9]: want a mapping, got a list"},
		{"alias bomb", aliasBomb(), "document too large: more than 100000 nodes after alias expansion"},
		{"many duplicate keys", "batching:\n" + strings.Repeat("  max_rows: 1\n", 20000), "more than 100 problems; stopped here"},
		{"many unset variables", strings.Repeat("a: ${X}\n", 20000), "… and 19900 more problems"},
		{"many bad destinations", "destinations:\n" + strings.Repeat("  - {name: A}\n", 5000), "more problems"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := config.Parse([]byte(tc.doc), noEnv)
			require.Less(t, time.Since(start), 10*time.Second)
			require.ErrorContains(t, err, tc.want)
			var e *config.Error
			require.ErrorAs(t, err, &e)
			require.LessOrEqual(t, len(e.Problems), 101)
		})
	}
}

// aliasBomb nests nine-fold aliases in a recursive schema field: 9^7 nodes
// if expanded.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("schema:\n  mode: json\n  fields:\n    - {name: f0, type: struct, fields: &l0 [" +
		strings.Repeat("{name: a, type: int8}, ", 8) + "{name: a, type: int8}]}\n")
	prev := "l0"
	for i := 1; i <= 6; i++ {
		cur := "l" + string(rune('0'+i))
		b.WriteString("    - {name: f" + cur + ", type: struct, fields: &" + cur + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("{name: x, type: list, items: {name: y, type: struct, fields: *" + prev + "}}")
		}
		b.WriteString("]}\n")
		prev = cur
	}
	return b.String()
}
