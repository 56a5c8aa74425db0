package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/internal/testkit/pulsartest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/source/pulsar"
)

// A pipeline config whose source reaches the broker over TLS with the test
// CA (auth.tls_ca_file) and a token from an environment variable
// (auth.token_env) or a file (auth.token_file) opens a working source
// through pulsarOptions, the mapping `thalweg run` uses: records arrive and
// their acknowledgement drains the subscription. A token the broker did not
// issue fails with pulsar.ErrAuthentication.
func TestOpenPulsarWithTLSAndTokenFromConfig(t *testing.T) {
	plainURL, admin := testenv.PulsarURL(t)
	tlsURL, ca := testenv.PulsarTLS(t)
	tokenFile := testenv.PulsarTokenFile(t)
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	badFile := filepath.Join(t.TempDir(), "bad.jwt")
	// A well-formed token whose signature does not verify.
	parts := strings.Split(strings.TrimSpace(string(token)), ".")
	if err := os.WriteFile(badFile, []byte(parts[0]+"."+parts[1]+".c2lnbmF0dXJl\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"PULSAR_TLS_URL":      tlsURL,
		"PULSAR_CA_FILE":      ca,
		"THALWEG_TEST_TOKEN":  strings.TrimSpace(string(token)),
		"THALWEG_TOKEN_FILE":  tokenFile,
		"THALWEG_BAD_TOKEN_F": badFile,
	}
	env := &cliEnv{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }

	for _, tc := range []struct {
		name, auth string
		wantErr    error
	}{
		{"token_env", "{token_env: THALWEG_TEST_TOKEN, tls_ca_file: '${PULSAR_CA_FILE}'}", nil},
		{"token_file", "{token_file: '${THALWEG_TOKEN_FILE}', tls_ca_file: '${PULSAR_CA_FILE}'}", nil},
		{"bad token_file", "{token_file: '${THALWEG_BAD_TOKEN_F}', tls_ca_file: '${PULSAR_CA_FILE}'}", pulsar.ErrAuthentication},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			defer cancel()
			const n = 50
			topic := fmt.Sprintf("thalweg-cmd-tls-%d", time.Now().UnixNano())
			produceTo(ctx, t, plainURL, topic, n)
			doc := fmt.Sprintf(`source:
  url: '${PULSAR_TLS_URL}'
  auth: %s
  topics: [%s]
  subscription: {name: sub}
destinations: [{name: raw, kind: flight, role: raw_anchor, endpoint: '127.0.0.1:1'}]
store: {dir: %s}
`, tc.auth, topic, t.TempDir())
			cfg, err := config.Parse([]byte(doc), lookup)
			if err != nil {
				t.Fatal(err)
			}
			store, err := offsetstore.Open(cfg.Store.Dir, offsetstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			opts, err := pulsarOptions(cfg, store, nil, env, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != nil {
				// A short operation timeout keeps the refused case quick.
				opts.OperationTimeout = 3 * time.Second
			}
			src, err := pulsar.Open(ctx, opts)
			if tc.wantErr != nil {
				if err == nil {
					src.Close()
				}
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Open = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			var (
				rec   batch.Record
				spans []batch.OffsetSpan
			)
			for i := 0; i < n; i++ {
				if err := src.Next(ctx, &rec); err != nil {
					t.Fatalf("Next after %d of %d: %v", i, n, err)
				}
				if !strings.HasPrefix(string(rec.Payload), "record-") {
					t.Fatalf("payload %q", rec.Payload)
				}
				spans = append(spans, batch.OffsetSpan{Partition: rec.Partition, First: rec.Seq, Last: rec.Seq})
			}
			if err := src.Ack(spans); err != nil {
				t.Fatal(err)
			}
			waitBacklogZero(t, admin, topic, "sub")
		})
	}
}

// produceTo publishes n records "record-<i>" to topic over the plain port,
// without a token (the broker admits anonymous clients).
func produceTo(ctx context.Context, t *testing.T, url, topic string, n int) {
	t.Helper()
	c, err := pclient.NewClient(pclient.ClientOptions{URL: url, Logger: plog.DefaultNopLogger(),
		MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// SendTimeout -1: the producer's timeout goroutine would outlive Close
	// (goleak); ctx bounds the sends instead.
	p, err := c.CreateProducer(pclient.ProducerOptions{Topic: topic, SendTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := range n {
		if _, err := p.Send(ctx, &pclient.ProducerMessage{Payload: []byte("record-" + strconv.Itoa(i))}); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
}

func waitBacklogZero(t *testing.T, admin, topic, sub string) {
	t.Helper()
	pulsartest.Admin{URL: admin}.WaitBacklog(t, topic, sub, false, 0)
}
