package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// topicPayloads reads every message topic holds, oldest first, without a
// subscription.
func topicPayloads(ctx context.Context, t *testing.T, url, topic string) []pclient.Message {
	t.Helper()
	c, err := pclient.NewClient(pclient.ClientOptions{URL: url, Logger: plog.DefaultNopLogger(),
		MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.CreateReader(pclient.ReaderOptions{Topic: topic, StartMessageID: pclient.EarliestMessageID()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []pclient.Message
	for r.HasNext() {
		m, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// thalweg dlq on the real broker: a real run dead-letters the malformed
// records to source.dead_letter_topic; `thalweg dlq` lists them with their
// reasons and origin; --republish needs --yes, then sends each back to the
// source topic (payload and key intact) exactly once — a second
// --republish finds nothing left to send.
func TestDLQListAndRepublish(t *testing.T) {
	url, _ := testenv.PulsarURL(t)
	ctx := flighttest.Ctx(t, 2*time.Minute)
	topic := fmt.Sprintf("thalweg-cmd-dlq-%d", time.Now().UnixNano())
	full := "persistent://public/default/" + topic
	const good, bad = 20, 5
	c, err := pclient.NewClient(pclient.ClientOptions{URL: url, Logger: plog.DefaultNopLogger(), MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	prod, err := c.CreateProducer(pclient.ProducerOptions{Topic: topic, SendTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= good+bad; i++ {
		payload, key := fmt.Sprintf(`{"id":%d}`, i), fmt.Sprintf("k%d", i)
		if i%5 == 0 {
			payload = fmt.Sprintf("not json %d", i)
		}
		if _, err := prod.Send(ctx, &pclient.ProducerMessage{Payload: []byte(payload), Key: key}); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()
	c.Close()

	flightAt := startFlight(t, receiver.Options{})
	cfg := writeConfig(t, fmt.Sprintf(`source:
  url: %s
  topics: [%s]
  subscription: {name: worker}
  dead_letter_topic: %s-dlq
schema:
  mode: json
  fields: [{name: id, type: int64, nullable: false}]
batching: {max_rows: 100, linger: 20ms}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "%s"}
store: {dir: %s}
metrics: {listen: "127.0.0.1:0"}
log: {format: json}
`, url, topic, topic, flightAt, filepath.Join(t.TempDir(), "offsets")))
	r, base := startInProcess(t, cfg)
	testenv.WaitFor(t, 30*time.Second, "every record acknowledged upstream", func() bool {
		return metricSum(httpBody(t, base+"/metrics"), "thalweg_source_acked_total") >= good+bad
	})
	if code := r.stop(t); code != exitOK {
		t.Fatalf("run: exit %d:\n%s", code, r.c.stderr.String())
	}
	if !strings.Contains(r.c.stderr.String(), fmt.Sprintf("%d records were dead-lettered", bad)) {
		t.Errorf("the run summary does not report %d dead letters:\n%s", bad, r.c.stderr.String())
	}

	// List: one row per dead letter, with its reason and origin.
	code, stdout, stderr := runCLI(t, "dlq", "--config", cfg)
	if code != exitOK {
		t.Fatalf("dlq: exit %d: %s", code, stderr)
	}
	rows := regexp.MustCompile(`(?m)^\S+\s+\S+\s+`+regexp.QuoteMeta(full)+`\s+-1\s+(\d+)\s+(.+?)\s+"not json (\d+)"$`).FindAllStringSubmatch(stdout, -1)
	if len(rows) != bad || !strings.Contains(stderr, fmt.Sprintf("%d dead letters on", bad)) {
		t.Fatalf("dlq listed %d dead letters of %s, want %d:\n%s\n%s", len(rows), full, bad, stdout, stderr)
	}
	t.Logf("thalweg dlq:\n%s", stdout)
	for _, row := range rows {
		if row[2] == "-" || !strings.Contains(row[2], "json") {
			t.Errorf("dead letter %s: reason %q does not say why", row[3], row[2])
		}
		// The topic is new: the n-th record has broker index n-1, seq n.
		if row[1] != row[3] {
			t.Errorf("dead letter %s: seq %s, want its broker index + 1", row[3], row[1])
		}
	}
	code, stdout, _ = runCLI(t, "dlq", "--config", cfg, "--limit", "2")
	if code != exitOK || strings.Count(stdout, "not json") != 2 {
		t.Errorf("--limit 2: exit %d\n%s", code, stdout)
	}

	// Republish: confirmed only.
	code, stdout, stderr = runCLI(t, "dlq", "--config", cfg, "--republish")
	if code != exitUsage || !strings.Contains(stderr, "--yes") || stdout != "" {
		t.Errorf("--republish without --yes: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if n := len(topicPayloads(ctx, t, url, topic)); n != good+bad {
		t.Fatalf("the source topic holds %d messages before the republish, want %d", n, good+bad)
	}
	code, stdout, stderr = runCLI(t, "dlq", "--config", cfg, "--republish", "--yes")
	if code != exitOK || !strings.Contains(stdout, fmt.Sprintf("republished %d dead letters", bad)) {
		t.Fatalf("--republish --yes: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	msgs := topicPayloads(ctx, t, url, topic)
	if len(msgs) != good+2*bad {
		t.Fatalf("the source topic holds %d messages after republishing, want %d", len(msgs), good+2*bad)
	}
	for _, m := range msgs[good+bad:] {
		if !strings.HasPrefix(string(m.Payload()), "not json ") || m.Key() != "k"+strings.TrimPrefix(string(m.Payload()), "not json ") ||
			m.Properties()[PropRepublishedFrom] == "" {
			t.Errorf("republished message %q key %q props %v", m.Payload(), m.Key(), m.Properties())
		}
	}
	// Nothing left to republish.
	code, stdout, _ = runCLI(t, "dlq", "--config", cfg, "--republish", "--yes", "--wait", "1s")
	if code != exitOK || !strings.Contains(stdout, "republished 0 dead letters") {
		t.Errorf("second --republish: exit %d, %q", code, stdout)
	}
}
