package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

// The keys of a long-running worker: source.start, metrics.pprof,
// metrics.otlp.* and log.stats_interval — their defaults, their values, and
// their errors with field path and line.
func TestParseDaemonKeys(t *testing.T) {
	cfg, err := config.Parse([]byte(doc(nil)), noEnv)
	require.NoError(t, err)
	require.Equal(t, config.StartEarliest, cfg.Source.Start)
	require.False(t, cfg.Metrics.Pprof)
	require.Equal(t, config.OTLPConfig{Protocol: config.OTLPGRPC, Interval: 30 * time.Second}, cfg.Metrics.OTLP)
	require.Equal(t, 30*time.Second, cfg.Log.StatsInterval)

	cfg, err = config.Parse([]byte(doc(map[string]string{
		"source": baseSections["source"] + "\n  start: latest",
		"metrics": `
  listen: 127.0.0.1:0
  pprof: true
  otlp:
    endpoint: collector:4318
    protocol: http
    insecure: true
    headers: {x-api-key: "${KEY}", X-Tenant: acme}
    interval: 5s`,
		"log": "\n  stats_interval: 0s",
	})), envOf(map[string]string{"KEY": "k3y"}))
	require.NoError(t, err)
	require.Equal(t, config.StartLatest, cfg.Source.Start)
	require.True(t, cfg.Metrics.Pprof)
	require.Equal(t, config.OTLPConfig{Endpoint: "collector:4318", Protocol: config.OTLPHTTP, Insecure: true,
		Headers: map[string]string{"x-api-key": "k3y", "X-Tenant": "acme"}, Interval: 5 * time.Second}, cfg.Metrics.OTLP)
	require.Zero(t, cfg.Log.StatsInterval, "an explicit 0 disables the periodic line")

	for _, tc := range []struct {
		name string
		over map[string]string
		want []string // "line: path: message" fragments
	}{
		{"start", map[string]string{"source": baseSections["source"] + "\n  start: newest"},
			[]string{`line 5: source.start: must be one of earliest|latest, got "newest"`}},
		{"start with the generator", map[string]string{"source": "\n  kind: generator\n  start: latest"},
			[]string{"line 3: source.start: only allowed with source.kind pulsar"}},
		{"pprof without listener", map[string]string{"metrics": "\n  listen: ''\n  pprof: true"},
			[]string{"line 11: metrics.pprof: requires metrics.listen"}},
		{"otlp keys without endpoint", map[string]string{"metrics": "\n  otlp:\n    protocol: http\n    insecure: true"},
			[]string{"line 11: metrics.otlp.protocol: requires metrics.otlp.endpoint", "line 12: metrics.otlp.insecure: requires metrics.otlp.endpoint"}},
		{"otlp values", map[string]string{"metrics": `
  otlp:
    endpoint: http://collector:4317
    protocol: thrift
    headers: {"bad header": x}
    interval: 0s`},
			[]string{
				`line 11: metrics.otlp.endpoint: want host:port without a scheme`,
				`line 12: metrics.otlp.protocol: must be one of grpc|http, got "thrift"`,
				`line 13: metrics.otlp.headers.bad header: want an HTTP header name`,
				`line 14: metrics.otlp.interval: must be > 0`,
			}},
		{"headers shape", map[string]string{"metrics": "\n  otlp:\n    endpoint: c:1\n    headers: [a]"},
			[]string{"line 12: metrics.otlp.headers: want a mapping"}},
		{"stats interval", map[string]string{"log": "\n  stats_interval: -1s"},
			[]string{"line 10: log.stats_interval: must be >= 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := doc(tc.over)
			_, err := config.Parse([]byte(text), noEnv)
			require.ErrorIs(t, err, config.ErrInvalid, "document:\n%s", text)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w, "document:\n%s", text)
			}
			require.Len(t, strings.Split(err.Error(), "\n"), len(tc.want), "%v", err)
		})
	}
}
