package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// A message without a broker index (here: a non-persistent topic's, which
// the broker's entry interceptor never sees) ends `thalweg run` with exit 2
// and the cause, naming both broker settings, once on stderr and once in
// the log, instead of a record with an invented identity.
func TestRunRefusesMessagesWithoutIndex(t *testing.T) {
	url, _ := testenv.PulsarURL(t)
	topic := fmt.Sprintf("non-persistent://public/default/thalweg-cmd-noindex-%d", time.Now().UnixNano()%1e12)
	flightAt := startFlight(t, receiver.Options{})
	doc := fmt.Sprintf(`source:
  url: %s
  topics: ['%s']
  subscription: {name: sub, type: exclusive}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: '%s'}
store: {dir: %s}
metrics: {listen: "127.0.0.1:0"}
log: {format: json}
`, url, topic, flightAt, filepath.Join(t.TempDir(), "offsets"))
	cfg := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startRun(t, binary(t), cfg)
	p.waitReady(t) // subscribed: a non-persistent topic delivers only to subscribers

	c, err := pclient.NewClient(pclient.ClientOptions{URL: url, Logger: plog.DefaultNopLogger(), MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	prod, err := c.CreateProducer(pclient.ProducerOptions{Topic: topic, SendTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := prod.Send(ctx, &pclient.ProducerMessage{Payload: []byte("no index")}); err != nil {
		t.Fatal(err)
	}
	code := p.exitCode(t, 20*time.Second)
	stderr := p.stderr.String()
	if code != exitUsage {
		t.Fatalf("exit %d, want %d:\n%s", code, exitUsage, tail(stderr, 20))
	}
	const setting = "exposingBrokerEntryMetadataToClientEnabled=true"
	plain := grepLines(stderr, "thalweg run: ")
	if !strings.Contains(plain, setting) || !strings.Contains(plain, "AppendIndexMetadataInterceptor") || strings.Count(plain, "\n") > 1 {
		t.Errorf("stderr's own line %q does not name both settings once", plain)
	}
	if n := strings.Count(stderr, setting); n != 2 {
		t.Errorf("the settings are named %d times (want once on stderr, once in the log):\n%s", n, grepLines(stderr, setting))
	}
}
