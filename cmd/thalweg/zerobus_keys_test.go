package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/testca"
	"github.com/thalweg/thalweg/source/gen"
	zbserver "github.com/thalweg/thalweg/zerobus/server"
)

// A zerobus destination's tls.cert_file/key_file, compression and
// max_message_size reach the sink: `thalweg run` delivers every record to a
// real Zerobus server that requires a client certificate and refuses
// messages over 256 KiB, with batches of about 1 MiB. Before, the worker
// dropped those keys: the handshake failed for want of a certificate, and
// the batches went as messages up to 10 MiB.
func TestZerobusDestinationKeysReachTheSink(t *testing.T) {
	const records, partitions = 4000, 2
	ca := testca.New(t, "zerobus server CA")
	clients := testca.New(t, "worker CA")
	cert, key := clients.ClientCert(t, "thalweg worker")
	zbAt, zbDir := startZerobus(t, zbserver.Options{TLS: ca.ServerTLS(t, clients), MaxMessageBytes: 256 << 10})
	flightAt := startFlight(t, receiver.Options{})

	cfg := filepath.Join(t.TempDir(), "pipeline.yaml")
	doc := fmt.Sprintf(`source:
  kind: generator
  generator: {seed: 7, partitions: %d, records: %d, payload_size: 1KiB}
batching: {max_rows: 1000, linger: 20ms}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "%s"}
  - name: zb
    kind: zerobus
    role: secondary
    endpoint: "%s"
    table: main.test.events
    mode: flight
    compression: zstd
    max_message_size: 256KiB
    tls: {enabled: true, ca_file: %s, cert_file: %s, key_file: %s}
store: {dir: %s}
shutdown: {drain_timeout: 10s}
metrics: {listen: ""}
log: {format: json}
`, partitions, records, flightAt, zbAt, ca.CAFile, cert, key, filepath.Join(t.TempDir(), "offsets"))
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}

	var c cli
	if code := c.run(t.Context(), "run", "--config", cfg); code != exitOK {
		t.Fatalf("run: exit %d; stderr:\n%s", code, c.stderr.String())
	}
	zt, err := zerobusTally(zbDir, "main.test.events")
	if err != nil {
		t.Fatal(err)
	}
	g, err := gen.New(gen.Options{Seed: 7, Partitions: partitions, Records: records, PayloadSize: 1024, Mode: gen.ModeRaw})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{}
	var rec batch.Record
	for g.Next(&rec) {
		want[rec.Partition] = max(want[rec.Partition], rec.Seq)
	}
	if rep := zt.Check(want, nil); !rep.OK() || rep.Distinct != records {
		t.Errorf("zerobus server: %s\nworker log:\n%s", rep, c.stderr.String())
	}
}
