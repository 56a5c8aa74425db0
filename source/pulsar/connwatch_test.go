package pulsar

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	plog "github.com/apache/pulsar-client-go/pulsar/log"
)

// TestConnWatchHealth drives connWatch with the log lines pulsar-client-go
// v0.19 writes through the slog adapter, as the client writes them (fields
// through WithFields / SubLogger), and checks Health's verdict after each.
func TestConnWatchHealth(t *testing.T) {
	w := newConnWatch(slog.DiscardHandler)
	client := plog.NewLoggerWithSlog(slog.New(w))
	conn := client.SubLogger(plog.Fields{"remote_addr": "pulsar://127.0.0.1:6650"})
	p0 := client.SubLogger(plog.Fields{"topic": "persistent://public/default/t-partition-0"})
	p1 := client.SubLogger(plog.Fields{"topic": "persistent://public/default/t-partition-1"})

	steps := []struct {
		log  func()
		want string // "" healthy, else a substring of the error
	}{
		{func() { conn.Info("Connecting to broker") }, "connecting to pulsar://127.0.0.1:6650"},
		{func() { conn.Info("Connection is ready") }, ""},
		{func() { p0.Info("Connected consumer"); p1.Info("Connected consumer") }, ""},
		// A cut: the client opens a new connection at once; its handshake hangs.
		{func() { conn.Info("Connecting to broker") }, "connecting to"},
		// Its first reconnection attempt fails: the consumer is named.
		{func() {
			p0.WithError(errors.New("i/o timeout")).Error("Failed to create consumer at reconnect")
			p0.WithFields(plog.Fields{"delayReconnectTime": 100}).Info("Reconnecting to broker")
		}, "1 partition consumer(s) reconnecting, persistent://public/default/t-partition-0"},
		{func() { conn.Info("Connection is ready") }, "reconnecting"},
		{func() { p0.Info("Connected consumer"); p0.Info("Reconnected consumer to broker") }, ""},
		// Unrelated lines change nothing.
		{func() { conn.Info("TCP connection established"); p1.Warn("something else") }, ""},
	}
	for i, s := range steps {
		s.log()
		err := w.health()
		switch {
		case s.want == "" && err != nil:
			t.Fatalf("step %d: unhealthy: %v", i, err)
		case s.want != "" && (err == nil || !errors.Is(err, ErrDisconnected) || !strings.Contains(err.Error(), s.want)):
			t.Fatalf("step %d: health %v, want an ErrDisconnected containing %q", i, err, s.want)
		}
	}
}

// TestConnWatchReportsLostNotifications: the client logs a notification for
// a consumer it has not registered yet with the consumer's id only; the
// "Connected consumer" line that follows names its topic, which the watch
// reports once.
func TestConnWatchReportsLostNotifications(t *testing.T) {
	w := newConnWatch(slog.DiscardHandler)
	var lost []string
	w.setOnLost(func(topic string) { lost = append(lost, topic) })
	client := plog.NewLoggerWithSlog(slog.New(w))
	conn := client.SubLogger(plog.Fields{"remote_addr": "pulsar://127.0.0.1:6650"})
	p0 := client.SubLogger(plog.Fields{"topic": "t-partition-0", "consumerID": uint64(4)})
	p1 := client.SubLogger(plog.Fields{"topic": "t-partition-1", "consumerID": uint64(5)})

	conn.WithField("consumerID", uint64(4)).Warn("Consumer not found while active consumer change")
	p1.Info("Connected consumer") // its notification arrived
	p0.Info("Connected consumer")
	p0.Info("Reconnected consumer to broker")
	p0.Info("Connected consumer") // a later connection: nothing lost this time
	if len(lost) != 1 || lost[0] != "t-partition-0" {
		t.Fatalf("lost notifications reported for %q, want [t-partition-0]", lost)
	}
}

// The client adds a field it already added (serviceURL on lookups) to a
// derived logger; the line then carries the key once, with the newer value,
// and the Source's own attributes stay.
func TestConnWatchWritesEachKeyOnce(t *testing.T) {
	var buf strings.Builder
	w := newConnWatch(slog.NewJSONHandler(&buf, nil).WithAttrs([]slog.Attr{slog.String("component", "source/pulsar")}))
	client := plog.NewLoggerWithSlog(slog.New(w))
	client.SubLogger(plog.Fields{"serviceURL": "a", "topic": "t"}).
		SubLogger(plog.Fields{"serviceURL": "b"}).Info("lookup")
	line := buf.String()
	if strings.Count(line, `"serviceURL"`) != 1 || !strings.Contains(line, `"serviceURL":"b"`) ||
		!strings.Contains(line, `"topic":"t"`) || strings.Count(line, `"component":"source/pulsar"`) != 1 {
		t.Errorf("log line %s: want serviceURL once (b), topic and component once", line)
	}
}
