package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/internal/testkit/pulsartest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	zbserver "github.com/thalweg/thalweg/zerobus/server"
)

// rawRow is one stored raw row, read from any sink; nil pointers are nulls.
type rawRow struct {
	Topic       string
	Partition   int32
	MessageID   []byte
	Key         *[]byte
	PublishTime *int64 // microseconds
	EventTime   *int64 // microseconds
	Props       map[string]string
	Payload     []byte
	PayloadNull bool
}

// TestEveryShapeStored: messages of every shape — payload empty or not,
// batched or not, with or without a key, properties and an event time —
// sent by the Pulsar Python client and by pulsar-client-go to a
// 2-partition topic, are all stored, at a Flight anchor and at an Iceberg
// anchor (read back with pyiceberg), and at a Zerobus secondary, each raw
// column equal to what a
// Pulsar Python client consumer shows of the same message: the payload
// (empty, not null), the key (null without one), the properties, the event
// time (null without one), the publish time, topic and partition, and the
// message id, which the Python client's MessageId.deserialize and the Java
// client's MessageId.fromByteArray decode to the id the Python consumer
// (and the producer) has, batch index -1 for a message sent on its own.
func TestEveryShapeStored(t *testing.T) {
	url, adminURL := testenv.PulsarURL(t)
	py := testenv.Python(t)
	short := fmt.Sprintf("shapes-%d", time.Now().UnixNano())
	topic := "persistent://public/default/" + short
	admin := pulsartest.Admin{URL: adminURL}
	admin.CreatePartitioned(t, short, 2)
	admin.CreateSubscription(t, short, "flight")
	admin.CreateSubscription(t, short, "iceberg")

	pulsartest.PythonShapes(t, py, url, topic)
	goShapes(t, url, topic)
	const total = 64
	view := pulsartest.PythonView(t, py, url, topic, "python-view", total)

	run := func(t *testing.T, sub, dest, storeDir string) {
		cfg := writeConfig(t, fmt.Sprintf(`source:
  url: %s
  topics: [%s]
  subscription: {name: %s}
batching: {max_rows: 100, linger: 20ms}
destinations:
%s
store: {dir: %s}
metrics: {listen: "127.0.0.1:0"}
log: {format: json}
`, url, topic, sub, dest, storeDir))
		r, _ := startInProcess(t, cfg)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the worker's log:\n%s", r.c.stderr.String())
			}
		})
		// Up to a minute: a client that drops messages leaves holes in
		// the seqs, and each costs the Source a redelivery delay.
		testenv.WaitFor(t, time.Minute, "the worker's backlog to be 0", func() bool {
			return admin.Backlog(t, short, sub, true) == 0
		})
		if code := r.stop(t); code != exitOK {
			t.Fatalf("run: exit %d:\n%s", code, r.c.stderr.String())
		}
		if logs := r.c.stderr.String(); strings.Contains(logs, "Discarding corrupted message") {
			t.Errorf("the client discarded messages:\n%s", logs)
		}
	}

	t.Run("flight", func(t *testing.T) {
		flightAt := startFlight(t, receiver.Options{})
		zbAt, zbDir := startZerobus(t, zbserver.Options{})
		run(t, "flight", fmt.Sprintf(`  - {name: raw, kind: flight, role: raw_anchor, endpoint: "%s"}
  - {name: zb, kind: zerobus, role: secondary, endpoint: "%s", table: main.test.shapes}`, flightAt, zbAt),
			filepath.Join(t.TempDir(), "offsets"))
		t.Run("zerobus", func(t *testing.T) {
			lines, err := zbserver.ReadTable(zbDir, "main.test.shapes")
			if err != nil {
				t.Fatal(err)
			}
			var rows []rawRow
			for i, l := range lines {
				var r struct {
					Topic       string            `json:"topic"`
					Partition   int32             `json:"partition"`
					MessageID   []byte            `json:"message_id"`
					Key         *[]byte           `json:"key"`
					PublishTime *int64            `json:"publish_time"`
					EventTime   *int64            `json:"event_time"`
					Properties  map[string]string `json:"properties"`
					Payload     *[]byte           `json:"payload"`
				}
				if err := json.Unmarshal(l, &r); err != nil {
					t.Fatalf("row %d: %v: %s", i, err, l)
				}
				row := rawRow{Topic: r.Topic, Partition: r.Partition, MessageID: r.MessageID, Key: r.Key,
					PublishTime: r.PublishTime, EventTime: r.EventTime, Props: r.Properties, PayloadNull: r.Payload == nil}
				if r.Payload != nil {
					row.Payload = *r.Payload
				}
				if row.Props == nil {
					row.Props = map[string]string{}
				}
				rows = append(rows, row)
			}
			checkShapes(t, py, view, rows)
		})
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		stored, err := flight.ReadAll(flighttest.Ctx(t, 30*time.Second), flighttest.Client(t, flightAt), []string{"raw"}, mem)
		if err != nil {
			t.Fatal(err)
		}
		defer flight.ReleaseAll(stored)
		var rows []rawRow
		for _, s := range stored {
			rows = append(rows, rawRowsOf(t, s.Rec)...)
		}
		checkShapes(t, py, view, rows)
	})

	t.Run("iceberg", func(t *testing.T) {
		storeDir := filepath.Join(t.TempDir(), "offsets")
		run(t, "iceberg", `  - {name: lake, kind: iceberg, role: raw_anchor, iceberg: {table: thalweg.shapes, commit_interval: 100ms}}`,
			storeDir)
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		v := icebergpeer.ReadRows(t, ctx, icebergpeer.SQLProps(storeDir+".iceberg/catalog.db", storeDir+".iceberg/warehouse"),
			"thalweg.shapes")
		var rows []rawRow
		for _, r := range v.RawRows {
			rows = append(rows, rawRow{Topic: r.Topic, Partition: r.Partition, MessageID: r.MessageID, Key: r.Key,
				PublishTime: r.PublishTime, EventTime: r.EventTime, Props: r.Properties, Payload: r.Payload,
				PayloadNull: r.Payload == nil})
		}
		checkShapes(t, py, view, rows)
	})
}

// goShapes sends the 16 shapes of testdata/pulsar/shapes.py with
// pulsar-client-go, from a batching producer and from one that does not
// batch.
func goShapes(t *testing.T, url, topic string) {
	t.Helper()
	c, err := pclient.NewClient(pclient.ClientOptions{URL: url, Logger: plog.DefaultNopLogger(),
		MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for _, batched := range []bool{true, false} {
		// SendTimeout -1: the producer's timeout goroutine would outlive
		// Close (goleak); ctx bounds the sends instead.
		p, err := c.CreateProducer(pclient.ProducerOptions{Topic: topic, SendTimeout: -1, DisableBatching: !batched,
			BatchingMaxPublishDelay: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 16)
		i := 0
		for _, empty := range []bool{true, false} {
			for _, key := range []string{"", "k"} {
				for _, props := range []map[string]string{nil, {"a": "1", "b": ""}} {
					for _, event := range []time.Time{{}, time.UnixMilli(1700000000123)} {
						m := &pclient.ProducerMessage{Payload: []byte{}, Key: key, Properties: props, EventTime: event}
						if !empty {
							m.Payload = fmt.Appendf(nil, "go-%t-%d", batched, i)
						}
						i++
						p.SendAsync(ctx, m, func(_ pclient.MessageID, _ *pclient.ProducerMessage, err error) { errs <- err })
					}
				}
			}
		}
		if err := p.FlushWithCtx(ctx); err != nil {
			t.Fatal(err)
		}
		for range 16 {
			if err := <-errs; err != nil {
				t.Fatalf("send: %v", err)
			}
		}
		p.Close()
	}
}

// rawRowsOf reads the raw columns of rec.
func rawRowsOf(t *testing.T, rec arrow.RecordBatch) []rawRow {
	t.Helper()
	col := func(name string) arrow.Array {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %s in %s", name, rec.Schema())
		}
		return rec.Column(idx[0])
	}
	topics := col("topic").(*array.String)
	parts := col("partition").(*array.Int32)
	ids := col("message_id").(*array.Binary)
	keys := col("key").(*array.Binary)
	pub := col("publish_time").(*array.Timestamp)
	ev := col("event_time").(*array.Timestamp)
	props := col("properties").(*array.Map)
	pkeys := props.Keys().(*array.String)
	pvals := props.Items().(*array.String)
	payloads := col("payload").(*array.Binary)
	var rows []rawRow
	for i := range int(rec.NumRows()) {
		r := rawRow{Topic: topics.Value(i), Partition: parts.Value(i), MessageID: ids.Value(i),
			Payload: payloads.Value(i), PayloadNull: payloads.IsNull(i), Props: map[string]string{}}
		if !keys.IsNull(i) {
			k := keys.Value(i)
			r.Key = &k
		}
		if !pub.IsNull(i) {
			v := int64(pub.Value(i))
			r.PublishTime = &v
		}
		if !ev.IsNull(i) {
			v := int64(ev.Value(i))
			r.EventTime = &v
		}
		start, end := props.ValueOffsets(i)
		for j := start; j < end; j++ {
			r.Props[pkeys.Value(int(j))] = pvals.Value(int(j))
		}
		rows = append(rows, r)
	}
	return rows
}

// checkShapes finds each message of view among rows, once, and compares
// every raw column with it.
func checkShapes(t *testing.T, py string, view []pulsartest.PyMessage, rows []rawRow) {
	t.Helper()
	type pos struct {
		ledger, entry int64
		part, batch   int32
	}
	byPos := map[pos]int{}
	for i, r := range rows {
		id, err := pclient.DeserializeMessageID(r.MessageID)
		if err != nil {
			t.Fatalf("row %d: message id %x: %v", i, r.MessageID, err)
		}
		p := pos{id.LedgerID(), id.EntryID(), id.PartitionIdx(), max(id.BatchIdx(), 0)}
		if _, dup := byPos[p]; dup {
			t.Errorf("message %v stored twice", p)
		}
		byPos[p] = i
	}
	var matched [][]byte
	var want []pulsartest.PyID
	missing := 0
	for _, m := range view {
		i, ok := byPos[pos{m.ID.Ledger, m.ID.Entry, m.ID.Partition, max(m.ID.BatchIndex, 0)}]
		if !ok {
			missing++
			t.Errorf("not stored: message %+v (key %v, payload %q, properties %v, event time %d)",
				m.ID, deref(m.Key), m.Payload, m.Props, m.Event)
			continue
		}
		r := rows[i]
		matched = append(matched, r.MessageID)
		want = append(want, m.ID)
		what := fmt.Sprintf("message %+v", m.ID)
		if wantTopic := fmt.Sprintf("%s-partition-%d", r.Topic, r.Partition); m.Topic != wantTopic {
			t.Errorf("%s: stored topic %s partition %d, the client shows %s", what, r.Topic, r.Partition, m.Topic)
		}
		if r.PayloadNull || string(r.Payload) != string(m.Payload) {
			t.Errorf("%s: payload %q (null %t), sent %q", what, r.Payload, r.PayloadNull, m.Payload)
		}
		switch {
		case m.Key == nil && r.Key != nil:
			t.Errorf("%s: key %q, the message has none", what, *r.Key)
		case m.Key != nil && (r.Key == nil || string(*r.Key) != *m.Key):
			t.Errorf("%s: key %v, sent %q", what, r.Key, *m.Key)
		}
		if !maps.Equal(r.Props, m.Props) {
			t.Errorf("%s: properties %v, sent %v", what, r.Props, m.Props)
		}
		switch {
		case m.Event == 0 && r.EventTime != nil:
			t.Errorf("%s: event_time %s, the message has none", what, time.UnixMicro(*r.EventTime).UTC())
		case m.Event != 0 && (r.EventTime == nil || *r.EventTime != m.Event*1000):
			t.Errorf("%s: event_time %v, sent %d ms", what, r.EventTime, m.Event)
		}
		if r.PublishTime == nil || *r.PublishTime != m.Publish*1000 {
			t.Errorf("%s: publish_time %v, published at %d ms", what, r.PublishTime, m.Publish)
		}
	}
	if missing > 0 || len(rows) != len(view) {
		t.Fatalf("%d of %d messages not stored; %d rows", missing, len(view), len(rows))
	}
	for i, got := range pulsartest.PythonDecodeIDs(t, py, matched) {
		if got != want[i] {
			t.Errorf("the Python client decodes stored message_id %x to %+v, its consumer's id is %+v", matched[i], got, want[i])
		}
	}
	for i, got := range pulsartest.JavaDecodeIDs(t, testenv.Java(t), testenv.PulsarHome(t), matched) {
		if got != want[i] {
			t.Errorf("the Java client decodes stored message_id %x to %+v, the Python consumer's id is %+v", matched[i], got, want[i])
		}
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
