package main

import (
	"bufio"
	be "encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/pulsartest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// TestClientDiscardIsNoSilentGap: a message pulsar-client-go cannot read —
// published over Pulsar's binary protocol without the optional checksum,
// which the Java, C++ and Python clients accept and pulsar-client-go takes
// for a checksum mismatch — is discarded (and acknowledged) by the client
// between six ordinary ones. The broker holds it (a Pulsar Python client
// consumer reads all seven); thalweg stores the six, and says what it
// lost: thalweg_source_discarded_total{reason="ChecksumMismatch"} and
// thalweg_source_gap_records_total{cause="client"} count it, an ERROR line
// names the partition, the missing seq and the discarded message id, and
// the run summary is an ERROR that names the count.
func TestClientDiscardIsNoSilentGap(t *testing.T) {
	pulsarURL, adminURL := testenv.PulsarURL(t)
	short := fmt.Sprintf("gap-%d", time.Now().UnixNano())
	topic := "persistent://public/default/" + short
	admin := pulsartest.Admin{URL: adminURL}
	admin.CreateTopic(t, short)
	admin.CreateSubscription(t, short, "worker")
	ctx := flighttest.Ctx(t, time.Minute)
	produceTo(ctx, t, pulsarURL, topic, 3)
	rawSendWithoutChecksum(t, pulsarURL, topic, []byte("no-checksum"))
	produceTo(ctx, t, pulsarURL, topic, 3)

	view := pulsartest.PythonView(t, testenv.Python(t), pulsarURL, topic, "python-view", 7)
	if string(view[3].Payload) != "no-checksum" {
		t.Fatalf("the Python client reads %q fourth, want the message without a checksum", view[3].Payload)
	}

	flightAt := startFlight(t, receiver.Options{})
	cfg := writeConfig(t, fmt.Sprintf(`source:
  url: %s
  topics: [%s]
  subscription: {name: worker}
batching: {max_rows: 100, linger: 20ms}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "%s"}
store: {dir: %s}
metrics: {listen: "127.0.0.1:0"}
log: {format: json}
`, pulsarURL, topic, flightAt, filepath.Join(t.TempDir(), "offsets")))
	r, base := startInProcess(t, cfg)
	var body string
	testenv.WaitFor(t, time.Minute, "the gap counted and the backlog 0", func() bool {
		body = httpBody(t, base+"/metrics")
		return metricWith(body, "thalweg_source_gap_records_total", `cause="client"`) == 1 &&
			admin.Backlog(t, short, "worker", false) == 0
	})
	if got := metricWith(body, "thalweg_source_discarded_total", `reason="ChecksumMismatch"`); got != 1 {
		t.Errorf("thalweg_source_discarded_total{reason=\"ChecksumMismatch\"} = %v, want 1", got)
	}
	if got := metricWith(body, "thalweg_source_gap_records_total", `cause="broker"`); got != 0 {
		t.Errorf("thalweg_source_gap_records_total{cause=\"broker\"} = %v, want 0", got)
	}
	if code := r.stop(t); code != exitOK {
		t.Fatalf("run: exit %d:\n%s", code, r.c.stderr.String())
	}
	logs := r.c.stderr.String()
	id := fmt.Sprintf("%d:%d:-1 (ChecksumMismatch)", view[3].ID.Ledger, view[3].ID.Entry)
	line := logLine(logs, "records lost: the Pulsar client discarded")
	for _, want := range []string{`"level":"ERROR"`, `"topic":"` + topic + `"`, `"from":4`, `"to":4`, `"records":1`, id} {
		if !strings.Contains(line, want) {
			t.Errorf("the gap's log line lacks %s:\n%s", want, line)
		}
	}
	summary := logLine(logs, "run summary")
	for _, want := range []string{`"level":"ERROR"`, "discarded 1 messages", "1 records are missing",
		`"source":{"discarded":1,"lost":1,"skipped":0}`} {
		if !strings.Contains(summary, want) {
			t.Errorf("the run summary lacks %s:\n%s", want, summary)
		}
	}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	stored, err := flight.ReadAll(flighttest.Ctx(t, 30*time.Second), flighttest.Client(t, flightAt), []string{"raw"}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer flight.ReleaseAll(stored)
	var seqs []string
	for _, s := range stored {
		for i := range int(s.Rec.NumRows()) {
			seqs = append(seqs, s.Rec.Column(s.Rec.Schema().FieldIndices("seq")[0]).ValueStr(i))
		}
	}
	if got := strings.Join(seqs, ","); got != "1,2,3,5,6,7" {
		t.Errorf("stored seqs %s, want 1,2,3,5,6,7", got)
	}
}

// metricWith sums the samples of family whose labels contain label.
func metricWith(text, family, label string) float64 {
	var sum float64
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, family+"{") || !strings.Contains(line, label) {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// logLine returns the first line of logs that contains msg, or "".
func logLine(logs, msg string) string {
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, msg) {
			return l
		}
	}
	return ""
}

// rawSendWithoutChecksum publishes one message with payload to topic (not
// partitioned) over Pulsar's binary protocol, on the plain port without a
// token, in a frame without the optional magic number and CRC32-C checksum.
func rawSendWithoutChecksum(t *testing.T, serviceURL, topic string, payload []byte) {
	t.Helper()
	u, err := url.Parse(serviceURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	rd := bufio.NewReader(conn)
	// Field numbers of PulsarApi.proto: BaseCommand.type 1; CONNECT 2,
	// CONNECTED 3, PRODUCER 5, SEND 6, SEND_RECEIPT 7, SEND_ERROR 8, ERROR
	// 14, PRODUCER_SUCCESS 17, PING 18, PONG 19 (each the command's field
	// number too).
	send := func(typ protowire.Number, body, tail []byte) {
		cmd := protowire.AppendTag(nil, 1, protowire.VarintType)
		cmd = protowire.AppendVarint(cmd, uint64(typ))
		cmd = protowire.AppendTag(cmd, typ, protowire.BytesType)
		cmd = protowire.AppendBytes(cmd, body)
		frame := be.BigEndian.AppendUint32(nil, uint32(4+len(cmd)+len(tail)))
		frame = be.BigEndian.AppendUint32(frame, uint32(len(cmd)))
		frame = append(append(frame, cmd...), tail...)
		if _, err := conn.Write(frame); err != nil {
			t.Fatal(err)
		}
	}
	// await reads commands until one of type want, answering pings; it
	// returns the command's body.
	await := func(want protowire.Number) []byte {
		for {
			var hdr [8]byte
			if _, err := io.ReadFull(rd, hdr[:]); err != nil {
				t.Fatalf("awaiting command %d: %v", want, err)
			}
			total, size := be.BigEndian.Uint32(hdr[:4]), be.BigEndian.Uint32(hdr[4:])
			buf := make([]byte, total-4)
			if _, err := io.ReadFull(rd, buf); err != nil {
				t.Fatal(err)
			}
			typ, body := protowire.Number(0), []byte(nil)
			for b := buf[:size]; len(b) > 0; {
				num, wt, n := protowire.ConsumeTag(b)
				b = b[n:]
				if wt == protowire.VarintType {
					v, m := protowire.ConsumeVarint(b)
					if num == 1 {
						typ = protowire.Number(v)
					}
					b = b[m:]
					continue
				}
				v, m := protowire.ConsumeBytes(b)
				if num == typ {
					body = v
				}
				b = b[m:]
			}
			switch typ {
			case want:
				return body
			case 18: // PING
				send(19, nil, nil)
			case 8, 14: // SEND_ERROR, ERROR
				t.Fatalf("the broker answered with command %d: %q", typ, body)
			}
		}
	}
	str := func(b []byte, num protowire.Number, s string) []byte {
		return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
	}
	varint := func(b []byte, num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
	}

	send(2, varint(str(nil, 1, "thalweg-test-raw"), 4, 19), nil) // client_version, protocol_version
	await(3)
	send(5, varint(varint(str(nil, 1, topic), 2, 1), 3, 1), nil) // topic, producer_id, request_id
	name := ""
	for b := await(17); len(b) > 0; { // CommandProducerSuccess: producer_name is field 2
		num, wt, n := protowire.ConsumeTag(b)
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, wt, b)
		if num == 2 {
			v, _ := protowire.ConsumeString(b)
			name = v
		}
		b = b[n:]
	}
	// MessageMetadata: producer_name 1, sequence_id 2, publish_time 3.
	meta := varint(varint(str(nil, 1, name), 2, 0), 3, uint64(time.Now().UnixMilli()))
	tail := be.BigEndian.AppendUint32(nil, uint32(len(meta)))
	tail = append(append(tail, meta...), payload...)
	send(6, varint(varint(varint(nil, 1, 1), 2, 0), 3, 1), tail) // producer_id, sequence_id, num_messages
	await(7)
}
