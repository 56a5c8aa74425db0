package pulsarschema_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/pulsarschema"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/source/pulsar"
)

// TestSourceDecodesRegistrySchemas: thalweg's Pulsar source, with
// Options.Schemas = Resolver.Resolve, feeding a ModeDecoded assembler, on
// the five topics the Python producers wrote. Every batch holds one schema
// version and says it in its metadata (topic, type, version); the Avro
// topic's upgrade (version 1, a new optional field) flows without anyone
// acting; the Python JsonSchema records with Bytes fields decode (text
// convention); the non-Avro payload and the two JSON payloads whose bytes
// fit no convention are rejected to OnReject with their field and
// offset, and still covered by the spans (so it is acknowledged only after
// its dead-letter write, as every rejected record).
func TestSourceDecodesRegistrySchemas(t *testing.T) {
	serviceURL, adminURL := testenv.PulsarURL(t)
	prefix, sent := produce(t)
	reg := newRegistry(t, adminURL)
	topics := []string{prefix + "-avro", prefix + "-json", prefix + "-proto", prefix + "-string", prefix + "-jsonbytes"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src, err := pulsar.Open(ctx, pulsar.Options{URL: serviceURL, Topics: topics, Subscription: "decoded",
		Type: pulsar.Exclusive, Schemas: pulsarschema.NewResolver(reg).Resolve, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var batches []*batch.Batch
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	type reject struct {
		seq    uint64
		reason error
	}
	var rejects []reject
	asm, err := batch.NewAssembler(batch.AssemblerOptions{Allocator: mem, Mode: batch.ModeDecoded, IncludeMeta: true,
		Linger: time.Hour, Emit: func(b *batch.Batch) { batches = append(batches, b) },
		OnReject: func(rec *batch.Record, reason error) {
			rejects = append(rejects, reject{rec.Seq, reason})
		}})
	if err != nil {
		t.Fatal(err)
	}
	const total = 4 + 2 + 1 + 2 + 4
	var rec batch.Record
	for range total {
		if err := src.Next(ctx, &rec); err != nil {
			t.Fatal(err)
		}
		if err := asm.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := asm.Close(); err != nil {
		t.Fatal(err)
	}

	// Rows by (topic, version), from each batch's schema metadata.
	type key struct{ topic, typ, version string }
	rows := map[key][]int{}
	var covered uint64
	for bi, b := range batches {
		covered += b.NumRecords()
		if b.NumRows() == 0 {
			continue
		}
		md := b.Rec.Schema().Metadata()
		get := func(k string) string { v, _ := md.GetValue(k); return v }
		k := key{get(pulsarschema.MetaTopic), get(pulsarschema.MetaSchemaType), get(pulsarschema.MetaSchemaVersion)}
		for r := range int(b.NumRows()) {
			rows[k] = append(rows[k], bi*1000+r)
		}
	}
	if covered != total {
		t.Errorf("spans cover %d records, want %d", covered, total)
	}
	short := func(s string) string { return s[len("persistent://"):] }
	for k, n := range map[key]int{
		{short(topics[0]), "AVRO", "0"}: 2, {short(topics[0]), "AVRO", "1"}: 1, {short(topics[1]), "JSON", "0"}: 2,
		{short(topics[2]), "PROTOBUF_NATIVE", "0"}: 1, {short(topics[3]), "STRING", "0"}: 2,
		{short(topics[4]), "JSON", "0"}: 2,
	} {
		if len(rows[k]) != n {
			t.Errorf("%v: %d rows, want %d (all: %v)", k, len(rows[k]), n, rows)
		}
	}
	// The upgraded Avro row carries the new field; its batch's schema has
	// it, the version 0 batches do not.
	for _, b := range batches {
		md := b.Rec.Schema().Metadata()
		if v, _ := md.GetValue(pulsarschema.MetaSchemaVersion); v == "1" {
			if got := col(b.Rec, "coupon").ValueStr(0); got != sent.Avro[2].Coupon {
				t.Errorf("coupon = %s, want %s", got, sent.Avro[2].Coupon)
			}
			if got := col(b.Rec, "id").(*array.Int64).Value(0); got != sent.Avro[2].ID {
				t.Errorf("id = %d, want %d", got, sent.Avro[2].ID)
			}
		}
		if typ, _ := md.GetValue(pulsarschema.MetaSchemaType); typ == "STRING" {
			for i := range int(b.NumRows()) {
				if got := col(b.Rec, "value").ValueStr(i); got != sent.String[0] && got != sent.String[1] {
					t.Errorf("string row %q was not sent", got)
				}
			}
		}
	}
	// The Avro payload that is not Avro, and the two JSON payloads whose
	// bytes field fits neither convention.
	if len(rejects) != 3 {
		t.Fatalf("%d rejects, want 3: %v", len(rejects), rejects)
	}
	for _, r := range rejects {
		var re *batch.RejectError
		if !errors.As(r.reason, &re) || re.Kind != batch.RejectUndecodable || re.Path == "" {
			t.Fatalf("reject reason %v, want RejectUndecodable naming a field", r.reason)
		}
		t.Logf("dead-letter reason (seq %s): %v", strconv.FormatUint(r.seq, 10), r.reason)
	}
}

// TestSourceRetriesSchemaResolution: while Options.Schemas fails (the
// registry unreachable), Next waits and retries with growing backoff
// rather than passing the record on; the record then carries what the
// resolver returned.
func TestSourceRetriesSchemaResolution(t *testing.T) {
	serviceURL, _ := testenv.PulsarURL(t)
	topic := fmt.Sprintf("persistent://public/default/schema-retry-%d", time.Now().UnixNano())
	client, err := pclient.NewClient(pclient.ClientOptions{URL: serviceURL, Logger: plog.DefaultNopLogger()})
	if err != nil {
		t.Fatal(err)
	}
	prod, err := client.CreateProducer(pclient.ProducerOptions{Topic: topic,
		SendTimeout: -1}) // its timeout goroutine would outlive Close (goleak); ctx bounds the send
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := prod.Send(ctx, &pclient.ProducerMessage{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	prod.Close()
	client.Close()

	want := &fixedSchema{}
	var calls int
	var topics []string
	src, err := pulsar.Open(ctx, pulsar.Options{URL: serviceURL, Topics: []string{topic}, Subscription: "retry", Type: pulsar.Exclusive,
		Logger: slog.New(slog.DiscardHandler),
		Schemas: func(_ context.Context, tp string, _ []byte) (batch.RowSchema, error) {
			calls++
			topics = append(topics, tp)
			if calls <= 2 {
				return nil, errors.New("connection refused")
			}
			return want, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	start := time.Now()
	var rec batch.Record
	if err := src.Next(ctx, &rec); err != nil {
		t.Fatal(err)
	}
	if calls != 3 || rec.Schema != want || string(rec.Payload) != "x" || topics[0] != topic {
		t.Fatalf("calls %d, schema %v, payload %q, topics %v", calls, rec.Schema, rec.Payload, topics)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("Next returned after %v: it did not back off (100ms, then 200ms)", waited)
	}
}

type fixedSchema struct{ batch.RowSchema }
