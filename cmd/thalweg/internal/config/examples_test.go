package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

const examplesDir = "../../../../testdata/configs"

// Every example in testdata/configs loads and validates.
func TestExampleConfigs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 4)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			// A fixed, empty environment: the examples must work on defaults.
			cfg, err := config.Parse(data, noEnv)
			require.NoError(t, err)
			require.NoError(t, cfg.Validate())
			require.NotNil(t, cfg.RawAnchor())
			if cfg.Schema.Mode == config.SchemaJSON {
				s, err := cfg.Schema.ArrowSchema()
				require.NoError(t, err)
				require.Equal(t, len(cfg.Schema.Fields), s.NumFields())
			}
		})
	}
}

func TestExampleSpecifics(t *testing.T) {
	load := func(name string) *config.Config {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(examplesDir, name))
		require.NoError(t, err)
		cfg, err := config.Parse(data, noEnv)
		require.NoError(t, err)
		return cfg
	}

	pf := load("pulsar-flight.yaml")
	require.Equal(t, config.SourcePulsar, pf.Source.Kind)
	require.Equal(t, "pulsar://127.0.0.1:6650", pf.Source.URL)
	require.Equal(t, config.KindFlight, pf.RawAnchor().Kind)
	require.Equal(t, config.KindZerobus, pf.Destinations[1].Kind)
	require.Equal(t, config.RoleSecondary, pf.Destinations[1].Role)
	require.Equal(t, "ZEROBUS_TOKEN", pf.Destinations[1].TokenEnv)
	require.Equal(t, "./data/offsets", pf.Store.Dir)

	gen := load("generator.yaml")
	require.Equal(t, config.SourceGenerator, gen.Source.Kind)
	require.Equal(t, int64(42), gen.Source.Generator.Seed)
	require.Len(t, gen.Destinations, 2)

	js := load("json-schema.yaml")
	require.Equal(t, config.GenJSON, js.Source.Generator.Mode)
	require.Equal(t, config.LaneConfig{Capacity: 32, MaxBytes: config.DefaultLaneMaxBytes, AckTimeout: js.Destinations[0].Lane.AckTimeout, MaxRetries: 2, PermanentBudget: config.DefaultPermanentBudget}, js.Destinations[1].Lane, "merge key inherits capacity")

	full := load("full.yaml")
	require.Len(t, full.Destinations, 3)
	require.Equal(t, config.FormatJSON, full.Log.Format)
}

// full.yaml documents every key of the schema (written or, for keys that
// cannot be set together, in a comment).
func TestFullExampleDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(examplesDir, "full.yaml"))
	require.NoError(t, err)
	keys := map[string]bool{}
	collectKeys(reflect.TypeFor[config.Config](), keys, map[reflect.Type]bool{})
	require.GreaterOrEqual(t, len(keys), 55)
	for k := range keys {
		re := regexp.MustCompile(`(?m)^[ \t#-]*` + regexp.QuoteMeta(k) + `:`)
		require.True(t, re.Match(data), "full.yaml does not document %q", k)
	}
}

func collectKeys(t reflect.Type, keys map[string]bool, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true // FieldConfig contains itself
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		keys[name] = true
		collectKeys(t.Field(i).Type, keys, seen)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		doc(nil),
		"source: {kind: generator}\ndestinations: [{name: a, kind: flight, role: raw_anchor, endpoint: 'h:1'}]\nstore: {dir: d}\n",
		"a: &a [*a]\n",
		"x: &x {<<: *x}\n",
		"schema: {mode: json, fields: [{name: a, type: list, items: {type: list, items: {type: struct, fields: [{name: b, type: timestamp, unit: ns}]}}}]}\n",
		"batching: {max_bytes: ${A:-8MiB}, linger: $${B}}\n",
		"destinations: [{<<: [{name: a}, {kind: flight}]}]\n",
		"- 1\n- 2\n",
		"--- \n...\n",
	} {
		f.Add([]byte(s))
	}
	env := envOf(map[string]string{"A": "1KiB", "B": "x"})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(data, env)
		if err != nil {
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("error does not match ErrInvalid: %v", err)
			}
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse returned a Config that does not validate: %v", err)
		}
		if cfg.RawAnchor() == nil {
			t.Fatal("valid Config without a raw anchor")
		}
		if cfg.Schema.Mode == config.SchemaJSON {
			if _, err := cfg.Schema.ArrowSchema(); err != nil {
				t.Fatalf("valid json schema does not build: %v", err)
			}
		}
	})
}
