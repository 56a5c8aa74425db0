package pulsaradmin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, testenv.LeakOptions()...) }

func TestOptions(t *testing.T) {
	noPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(noPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{
		{},
		{URL: "pulsar://127.0.0.1:6650"},
		{URL: "127.0.0.1:8080"},
		{URL: "http://"},
		{URL: "http://h:8080/admin"},
		{URL: "http://h:8080", Token: "a", TokenFile: "/f"},
		{URL: "http://h:8080", TLSCAFile: "/ca.pem"},
		{URL: "https://h:8443", TLSCAFile: "/does/not/exist"},
		{URL: "https://h:8443", TLSCAFile: noPEM},
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

// recorder is a reverse proxy in front of the real broker's admin API that
// records each request's method, path, Authorization header and body.
type recorder struct {
	URL string
	mu  sync.Mutex
	got []string
}

func newRecorder(t *testing.T) *recorder {
	_, a := testenv.PulsarURL(t)
	target, err := url.Parse(a)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{DisableKeepAlives: true}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		r.mu.Lock()
		r.got = append(r.got, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", req.Method, req.URL.EscapedPath(), req.Header.Get("Authorization"), body)))
		r.mu.Unlock()
		rp.ServeHTTP(w, req)
	}))
	t.Cleanup(hs.Close)
	r.URL = hs.URL
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

func newTopic(t *testing.T, c *Client, partitions int) utils.TopicName {
	t.Helper()
	name := fmt.Sprintf("thalweg-pulsaradmin-%s-%d", strings.ToLower(t.Name()), time.Now().UnixNano()%1e9)
	tn, err := utils.GetTopicName(name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	if err := c.Topics().CreateWithContext(ctx, *tn, partitions); err != nil {
		t.Fatal(err)
	}
	return *tn
}

// TestTokenFileReread: the token file is read on every request, so a token
// rotated between two calls is the one the second call sends; a missing
// file fails the request with an error naming the file's role, not a token.
func TestTokenFileReread(t *testing.T) {
	rec := newRecorder(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{URL: rec.URL, TokenFile: tokenFile, DisableKeepAlives: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tn := newTopic(t, c, 0)
	ctx := context.Background()
	if _, err := c.Subscriptions().ListWithContext(ctx, tn); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenFile, []byte("  two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Subscriptions().ListWithContext(ctx, tn); err != nil {
		t.Fatal(err)
	}
	path := "/admin/v2/persistent/public/default/" + tn.GetLocalName()
	want := []string{
		"PUT " + path + " Bearer one null",
		"GET " + path + "/subscriptions Bearer one",
		"GET " + path + "/subscriptions Bearer two",
	}
	if got := rec.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := os.Remove(tokenFile); err != nil {
		t.Fatal(err)
	}
	_, err = c.Subscriptions().ListWithContext(ctx, tn)
	if err == nil || !strings.Contains(err.Error(), "token file") || strings.Contains(err.Error(), "two") {
		t.Errorf("without the token file: %v, want an error naming the token file", err)
	}
	if n := len(rec.requests()); n != 3 {
		t.Errorf("%d requests reached the broker, want 3: none without a token", n)
	}
}

// TestTLSCAFile: the broker's https admin port with its CA file answers;
// without the CA its certificate is refused.
func TestTLSCAFile(t *testing.T) {
	_, ca := testenv.PulsarTLS(t)
	adminTLS := os.Getenv("PULSAR_ADMIN_TLS_URL")
	if adminTLS == "" {
		adminTLS = "https://127.0.0.1:8443"
	}
	c, err := New(Options{URL: adminTLS, TLSCAFile: ca, TokenFile: testenv.PulsarTokenFile(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tn := newTopic(t, c, 3)
	ctx := context.Background()
	meta, err := c.Topics().GetMetadataWithContext(ctx, tn)
	if err != nil || meta.Partitions != 3 {
		t.Fatalf("partitions over TLS = %+v, %v; want 3", meta, err)
	}
	plain, err := New(Options{URL: adminTLS})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Topics().GetMetadataWithContext(ctx, tn); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("TLS without the CA: %v, want a certificate error", err)
	}
}

// TestTimeout: Options.Timeout bounds a request whose server never
// answers, without the caller's context.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hs.Close()
	defer close(release)
	c, err := New(Options{URL: hs.URL, Timeout: 100 * time.Millisecond, DisableKeepAlives: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tn, _ := utils.GetTopicName("t")
	done := make(chan error, 1)
	go func() {
		_, err := c.Subscriptions().ListWithContext(context.Background(), *tn)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("hung request: %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a request to a server that never answers outlived Options.Timeout by 30 s")
	}
}

// TestResetCursor: a reset to a message id sends its batch index, which
// the library's Subscriptions().ResetCursorToMessageID leaves out: the
// broker then moves the cursor into the entry, where the library's call
// moves it to the entry's start. IsNotFound matches a subscription that
// does not exist.
func TestResetCursor(t *testing.T) {
	rec := newRecorder(t)
	c, err := New(Options{URL: rec.URL, DisableKeepAlives: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tn := newTopic(t, c, 0)
	ctx := context.Background()
	if err := c.Subscriptions().CreateWithContext(ctx, tn, "s", utils.Earliest); err != nil {
		t.Fatal(err)
	}
	u, _ := testenv.PulsarURL(t)
	pc, err := pclient.NewClient(pclient.ClientOptions{URL: u, MetricsRegisterer: prometheus.NewRegistry(), Logger: plog.DefaultNopLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	prod, err := pc.CreateProducer(pclient.ProducerOptions{Topic: tn.String(), BatchingMaxPublishDelay: time.Second, SendTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		prod.SendAsync(ctx, &pclient.ProducerMessage{Payload: []byte{byte(i)}}, func(pclient.MessageID, *pclient.ProducerMessage, error) {})
	}
	if err := prod.FlushWithCtx(ctx); err != nil {
		t.Fatal(err)
	}
	prod.Close()
	lastID, err := c.Topics().GetLastMessageIDWithContext(ctx, tn)
	if err != nil {
		t.Fatal(err)
	}
	id := utils.MessageID{LedgerID: lastID.LedgerID, EntryID: lastID.EntryID, BatchIndex: 1}
	readPosition := func() string {
		t.Helper()
		st, err := c.Topics().GetInternalStatsWithContext(ctx, tn)
		if err != nil {
			t.Fatal(err)
		}
		return st.Cursors["s"].ReadPosition
	}
	// The library's call: the broker gets no batch index and places the
	// cursor at the whole entry.
	if err := c.Subscriptions().ResetCursorToMessageIDWithContext(ctx, tn, "s", id); err != nil {
		t.Fatal(err)
	}
	entry := fmt.Sprintf("%d:%d", id.LedgerID, id.EntryID)
	if got := readPosition(); got != entry {
		t.Errorf("read position after the library's reset = %q, want %q", got, entry)
	}
	// ResetCursor: with batch-index acknowledgement (the test broker's
	// default) the cursor holds the entry with the messages before index 1
	// acknowledged.
	if err := c.ResetCursor(ctx, tn, "s", id); err != nil {
		t.Fatal(err)
	}
	if got := readPosition(); !strings.HasPrefix(got, entry+" (ackSet") {
		t.Errorf("read position after ResetCursor = %q, want %s with an ackSet", got, entry)
	}
	body := fmt.Sprintf(`{"ledgerId":%d,"entryId":%d,"partitionIndex":-1,"batchIndex":1,"isExcluded":false}`, id.LedgerID, id.EntryID)
	if reqs := rec.requests(); !containsSuffix(reqs, "/subscription/s/resetcursor  "+body) {
		t.Errorf("no reset request with the batch index %s among:\n%s", body, strings.Join(reqs, "\n"))
	}
	err = c.ResetCursor(ctx, tn, "absent", id)
	if !IsNotFound(err) {
		t.Errorf("reset of a subscription that does not exist: %v, want IsNotFound", err)
	}
	if IsNotFound(errors.New("404")) || IsNotFound(nil) {
		t.Error("IsNotFound matches an error that is not the admin API's 404")
	}
}

func containsSuffix(ss []string, suffix string) bool {
	for _, s := range ss {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}

// TestSchema: Schema returns a topic's schema by version and the latest
// with its version number, from the real broker's registry; a version or a
// topic without a schema is IsNotFound.
func TestSchema(t *testing.T) {
	_, a := testenv.PulsarURL(t)
	c, err := New(Options{URL: a, DisableKeepAlives: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tn := newTopic(t, c, 0)
	def := `{"type":"record","name":"R","fields":[{"name":"a","type":"long"}]}`
	if err := c.Schemas().CreateSchemaByPayload(tn.String(), utils.PostSchemaPayload{SchemaType: "AVRO", Schema: def}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, v := range []int64{-1, 0} {
		s, err := c.Schema(ctx, tn.String(), v)
		if err != nil {
			t.Fatalf("Schema(%d): %v", v, err)
		}
		if s.Version != 0 || s.SchemaInfo.Type != "AVRO" || !strings.Contains(string(s.SchemaInfo.Schema), `"name":"a"`) {
			t.Errorf("Schema(%d) = version %d, %+v", v, s.Version, s.SchemaInfo)
		}
	}
	if _, err := c.Schema(ctx, tn.String(), 7); !IsNotFound(err) {
		t.Errorf("an absent version: %v, want IsNotFound", err)
	}
	other := newTopic(t, c, 0)
	if _, err := c.Schema(ctx, other.String(), -1); !IsNotFound(err) {
		t.Errorf("a topic without a schema: %v, want IsNotFound", err)
	}
	if _, err := c.Schema(ctx, "a/b", 0); err == nil {
		t.Error("Schema of a bad topic name succeeded")
	}
}
