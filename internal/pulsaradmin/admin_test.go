package pulsaradmin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, testenv.LeakOptions()...) }

func TestOptions(t *testing.T) {
	for _, o := range []Options{
		{},
		{URL: "pulsar://127.0.0.1:6650"},
		{URL: "127.0.0.1:8080"},
		{URL: "http://"},
		{URL: "http://h:8080/admin"},
		{URL: "http://h:8080", Token: "a", TokenFile: "/f"},
		{URL: "http://h:8080", TLSCAFile: "/ca.pem"},
		{URL: "https://h:8443", TLSCAFile: "/does/not/exist"},
		{URL: "http://h:8080", Timeout: -1},
	} {
		if _, err := New(o); !errors.Is(err, ErrOptions) {
			t.Errorf("New(%+v) = %v, want ErrOptions", o, err)
		}
	}
	c, err := New(Options{URL: "http://h:8080/"})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestParse(t *testing.T) {
	for in, want := range map[string]string{
		"t":                          "persistent://public/default/t",
		"a/b/t":                      "persistent://a/b/t",
		"persistent://a/b/t":         "persistent://a/b/t",
		"non-persistent://a/b/t-x_y": "non-persistent://a/b/t-x_y",
	} {
		got, err := ParseTopic(in)
		if err != nil || got.String() != want {
			t.Errorf("ParseTopic(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "a/b", "x://a/b/t", "persistent://a//t", "a/b/c/d"} {
		if _, err := ParseTopic(in); err == nil {
			t.Errorf("ParseTopic(%q) succeeded", in)
		}
	}
	for in, want := range map[string]MessageID{"12:5": {12, 5, -1}, "0:0:3": {0, 0, 3}} {
		got, err := ParseMessageID(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("ParseMessageID(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "12", "a:b", "1:2:3:4", "-1:0", "1:-2", "1:2:-1", "1:2:x"} {
		if _, err := ParseMessageID(in); err == nil {
			t.Errorf("ParseMessageID(%q) succeeded", in)
		}
	}
}

// broker is the real broker of internal/testkit/testenv.
type broker struct {
	url string
	c   *Client
}

func newBroker(t *testing.T) broker {
	u, a := testenv.PulsarURL(t)
	c, err := New(Options{URL: a})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return broker{url: u, c: c}
}

func topicName(t *testing.T) string {
	return fmt.Sprintf("thalweg-pulsaradmin-%s-%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), time.Now().UnixNano()%1e9)
}

func (b broker) client(t *testing.T) pclient.Client {
	c, err := pclient.NewClient(pclient.ClientOptions{URL: b.url, MetricsRegisterer: prometheus.NewRegistry(),
		Logger: plog.NewLoggerWithSlog(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// produce sends payloads "m<i>" for i in [from, to) unbatched and returns their ids.
func produce(t *testing.T, c pclient.Client, topic string, from, to int) []pclient.MessageID {
	p, err := c.CreateProducer(pclient.ProducerOptions{Topic: topic, DisableBatching: true, SendTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ids []pclient.MessageID
	for i := from; i < to; i++ {
		id, err := p.Send(ctx, &pclient.ProducerMessage{Payload: []byte("m" + strconv.Itoa(i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// drain consumes sub on topic until it has been quiet for quiet, acks
// everything and returns the payload numbers in order.
func drain(t *testing.T, c pclient.Client, topic, sub string, quiet time.Duration) []int {
	cons, err := c.Subscribe(pclient.ConsumerOptions{Topic: topic, SubscriptionName: sub, Type: pclient.Exclusive,
		SubscriptionInitialPosition: pclient.SubscriptionPositionEarliest})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []int
	for {
		ctx, cancel := context.WithTimeout(context.Background(), quiet)
		m, err := cons.Receive(ctx)
		cancel()
		if err != nil {
			return got
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(string(m.Payload()), "m"))
		got = append(got, n)
		if err := cons.Ack(m); err != nil {
			t.Fatal(err)
		}
	}
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func equal(t *testing.T, what string, got, want []int) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// Every reset moves a real subscription's cursor: a consumer on it then
// receives exactly the messages from the reset point on.
func TestResetCursor(t *testing.T) {
	b := newBroker(t)
	short := topicName(t)
	if err := b.c.CreatePartitionedTopic(context.Background(), short, 2); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	parts, err := b.c.Partitions(ctx, short)
	if err != nil {
		t.Fatal(err)
	}
	full := "persistent://public/default/" + short
	if fmt.Sprint(parts) != fmt.Sprint([]string{full + "-partition-0", full + "-partition-1"}) {
		t.Fatalf("Partitions = %v", parts)
	}
	p0 := parts[0]
	c := b.client(t)
	ids := produce(t, c, p0, 0, 5)
	// Publish times are in milliseconds: mid falls in a millisecond after
	// the first five were published and before the next five are.
	nextMilli := func(after time.Time) time.Time {
		var now time.Time
		testenv.WaitFor(t, time.Second, "the clock's next millisecond", func() bool {
			now = time.Now()
			return now.UnixMilli() > after.UnixMilli()
		})
		return now
	}
	mid := nextMilli(time.Now())
	nextMilli(mid)
	ids = append(ids, produce(t, c, p0, 5, 10)...)
	const sub = "s"
	equal(t, "first read", drain(t, c, p0, sub, 500*time.Millisecond), seq(0, 10))

	id := MessageID{Ledger: ids[4].LedgerID(), Entry: ids[4].EntryID(), Batch: -1}
	if err := b.c.ResetToMessageID(ctx, p0, sub, id); err != nil {
		t.Fatal(err)
	}
	equal(t, "after reset to message 4 ("+id.String()+")", drain(t, c, p0, sub, 500*time.Millisecond), seq(4, 10))
	if err := b.c.ResetToMessageID(ctx, p0, sub, id); err != nil {
		t.Fatal(err)
	}
	if rp, err := b.c.ReadPosition(ctx, p0, sub); err != nil || rp != id {
		t.Fatalf("ReadPosition after the reset to %v = %v, %v", id, rp, err)
	}
	if _, err := b.c.ReadPosition(ctx, p0, "no-such-sub"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ReadPosition of a missing subscription: %v", err)
	}

	if err := b.c.ResetToEarliest(ctx, p0, sub); err != nil {
		t.Fatal(err)
	}
	equal(t, "after reset to earliest", drain(t, c, p0, sub, 500*time.Millisecond), seq(0, 10))

	if err := b.c.ResetToTime(ctx, p0, sub, mid); err != nil {
		t.Fatal(err)
	}
	equal(t, "after reset to a time between 4 and 5", drain(t, c, p0, sub, 500*time.Millisecond), seq(5, 10))

	if err := b.c.ResetToEarliest(ctx, p0, sub); err != nil {
		t.Fatal(err)
	}
	if err := b.c.ResetToLatest(ctx, p0, sub); err != nil {
		t.Fatal(err)
	}
	produce(t, c, p0, 10, 11)
	equal(t, "after reset to latest and one more message", drain(t, c, p0, sub, 500*time.Millisecond), []int{10})

	// A time after the last message: the end.
	if err := b.c.ResetToEarliest(ctx, p0, sub); err != nil {
		t.Fatal(err)
	}
	if err := b.c.ResetToTime(ctx, p0, sub, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	equal(t, "after reset to a time after the end", drain(t, c, p0, sub, 300*time.Millisecond), nil)

	// What does not exist is named as such.
	err = b.c.ResetToEarliest(ctx, p0, "no-such-sub")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no-such-sub") {
		t.Errorf("reset of a missing subscription: %v", err)
	}
	_, err = b.c.Partitions(ctx, short+"-missing")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Partitions of a missing topic: %v", err)
	}
	if parts, err := b.c.Partitions(ctx, p0); err != nil || len(parts) != 1 || parts[0] != p0 {
		t.Errorf("Partitions of a partition = %v, %v", parts, err)
	}
	names, err := b.c.Topics(ctx, "public/default")
	if err != nil || !contains(names, p0) {
		t.Errorf("Topics(public/default) = %d names (%v), want %s among them", len(names), err, p0)
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// The admin API over TLS with the broker's CA and a token from a file.
func TestTLSAndToken(t *testing.T) {
	b := newBroker(t)
	adminTLS := os.Getenv("PULSAR_ADMIN_TLS_URL")
	_, ca := testenv.PulsarTLS(t)
	tokenFile := testenv.PulsarTokenFile(t)
	if adminTLS == "" {
		adminTLS = "https://127.0.0.1:8443"
	}
	c, err := New(Options{URL: adminTLS, TLSCAFile: ca, TokenFile: tokenFile})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	short := topicName(t)
	if err := b.c.CreatePartitionedTopic(context.Background(), short, 3); err != nil {
		t.Fatal(err)
	}
	parts, err := c.Partitions(context.Background(), short)
	if err != nil || len(parts) != 3 {
		t.Fatalf("Partitions over TLS = %v, %v", parts, err)
	}
	// Without the CA the certificate is refused.
	plain, err := New(Options{URL: adminTLS})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Partitions(context.Background(), short); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("TLS without the CA: %v", err)
	}
}

// TestSchema: Schema asks the registry's path (by version, or the latest
// for a negative one) with the token file's current content, returns the
// body as sent, and a 404 is a StatusError matching ErrNotFound with the
// broker's reason. With DisableKeepAlives every request has its own
// connection.
func TestSchema(t *testing.T) {
	var (
		mu    sync.Mutex
		asked []string
		conns int
	)
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/7") {
			http.Error(w, `{"reason":"Not Found"}`, http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(`{"version":3,"type":"INT64","data":""}`))
	}))
	hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	hs.Start()
	defer hs.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{URL: hs.URL, TokenFile: tokenFile, DisableKeepAlives: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	body, err := c.Schema(ctx, "persistent://t/n/orders", 3)
	if err != nil || string(body) != `{"version":3,"type":"INT64","data":""}` {
		t.Fatalf("Schema(3) = %q, %v", body, err)
	}
	if err := os.WriteFile(tokenFile, []byte("two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Schema(ctx, "t/n/orders", -1); err != nil {
		t.Fatal(err)
	}
	_, err = c.Schema(ctx, "t/n/orders", 7)
	var se *StatusError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &se) || se.Reason != "Not Found" ||
		err.Error() != "pulsaradmin: GET /admin/v2/schemas/t/n/orders/schema/7: 404 Not Found: Not Found" {
		t.Errorf("absent version: %v, want a 404 StatusError matching ErrNotFound", err)
	}
	if _, err := c.Schema(ctx, "a/b", 0); err == nil {
		t.Error("Schema of a bad topic name succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"/admin/v2/schemas/t/n/orders/schema/3 Bearer one",
		"/admin/v2/schemas/t/n/orders/schema Bearer two",
		"/admin/v2/schemas/t/n/orders/schema/7 Bearer two",
	}
	if strings.Join(asked, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(asked, "\n"), strings.Join(want, "\n"))
	}
	if conns != 3 {
		t.Errorf("%d connections for 3 requests with DisableKeepAlives", conns)
	}
}
