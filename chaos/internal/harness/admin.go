package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Admin drives the Pulsar admin REST API (v2) of one broker. It keeps no
// idle connections, so no net/http goroutine outlives a test.
type Admin struct {
	base string
	hc   *http.Client
}

// NewAdmin returns an admin client for the broker's HTTP URL, e.g.
// http://127.0.0.1:8080.
func NewAdmin(url string) *Admin {
	return &Admin{base: strings.TrimRight(url, "/"),
		hc: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
}

// do sends one request; a status >= 300 is an error carrying the body.
func (a *Admin) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return fmt.Errorf("pulsar admin %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("pulsar admin %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("pulsar admin %s %s: decode %.200q: %w", method, path, data, err)
		}
	}
	return nil
}

// Retention of a namespace's topics.
type Retention int

const (
	// Pruning: no retention. An acknowledged message may be deleted by the
	// broker at any time (in practice when its ledger is trimmed): once
	// the subscription moved past it, it is gone for good.
	Pruning Retention = iota
	// Retaining: unlimited retention (time and size -1). Acknowledged
	// messages stay, and a cursor can be rewound over them.
	Retaining
)

func (r Retention) String() string {
	if r == Retaining {
		return "retaining"
	}
	return "pruning"
}

// Namespace creates public/<prefix>-<random> with the given retention and
// registers a cleanup that deletes it with its topics. It returns the
// namespace as "public/<name>".
func (a *Admin) Namespace(t testing.TB, prefix string, ret Retention) string {
	t.Helper()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	ns := "public/" + prefix + "-" + hex.EncodeToString(rnd[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.do(ctx, http.MethodPut, "/admin/v2/namespaces/"+ns, nil, nil); err != nil {
		t.Fatalf("harness: %v", err)
	}
	pol := map[string]int{"retentionTimeInMinutes": 0, "retentionSizeInMB": 0}
	if ret == Retaining {
		pol = map[string]int{"retentionTimeInMinutes": -1, "retentionSizeInMB": -1}
	}
	if err := a.do(ctx, http.MethodPost, "/admin/v2/namespaces/"+ns+"/retention", pol, nil); err != nil {
		t.Fatalf("harness: %v", err)
	}
	var got struct {
		Time int `json:"retentionTimeInMinutes"`
		Size int `json:"retentionSizeInMB"`
	}
	if err := a.do(ctx, http.MethodGet, "/admin/v2/namespaces/"+ns+"/retention", nil, &got); err != nil {
		t.Fatalf("harness: %v", err)
	}
	if got.Time != pol["retentionTimeInMinutes"] || got.Size != pol["retentionSizeInMB"] {
		t.Fatalf("harness: namespace %s retention is %+v, want %v", ns, got, pol)
	}
	t.Cleanup(func() { a.deleteNamespace(t, ns) })
	return ns
}

// deleteNamespace deletes ns and its topics, best effort: a leftover
// namespace is only litter on a development broker.
func (a *Admin) deleteNamespace(t testing.TB, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var parted []string
	_ = a.do(ctx, http.MethodGet, "/admin/v2/persistent/"+ns+"/partitioned", nil, &parted)
	for _, topic := range parted {
		_ = a.do(ctx, http.MethodDelete, "/admin/v2/"+restPath(topic)+"/partitions?force=true", nil, nil)
	}
	var topics []string
	_ = a.do(ctx, http.MethodGet, "/admin/v2/namespaces/"+ns+"/topics", nil, &topics)
	for _, topic := range topics {
		_ = a.do(ctx, http.MethodDelete, "/admin/v2/"+restPath(topic)+"?force=true", nil, nil)
	}
	if err := a.do(ctx, http.MethodDelete, "/admin/v2/namespaces/"+ns, nil, nil); err != nil {
		t.Logf("harness: namespace %s left behind: %v", ns, err)
	}
}

// restPath turns persistent://tenant/ns/topic into persistent/tenant/ns/topic.
func restPath(topic string) string { return strings.Replace(topic, "://", "/", 1) }

// Topic is a partitioned topic created by CreateTopic.
type Topic struct {
	Name       string // persistent://tenant/ns/name
	Partitions int
}

// CreateTopic creates the partitioned topic persistent://<ns>/<name>.
func (a *Admin) CreateTopic(t testing.TB, ns, name string, partitions int) Topic {
	t.Helper()
	tp := Topic{Name: "persistent://" + ns + "/" + name, Partitions: partitions}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.do(ctx, http.MethodPut, "/admin/v2/"+restPath(tp.Name)+"/partitions", partitions, nil); err != nil {
		t.Fatalf("harness: %v", err)
	}
	return tp
}

// SubStats is one partition's view of a subscription.
type SubStats struct {
	MsgBacklog         int64  `json:"msgBacklog"`
	ActiveConsumerName string `json:"activeConsumerName"`
	Consumers          []struct {
		ConsumerName    string `json:"consumerName"`
		UnackedMessages int64  `json:"unackedMessages"`
	} `json:"consumers"`
}

type topicStats struct {
	Subscriptions map[string]SubStats `json:"subscriptions"`
}

// PartitionStats returns the subscription's stats on every partition of tp,
// by partition index. A partition without the subscription yet has zero stats.
func (a *Admin) PartitionStats(ctx context.Context, tp Topic, sub string) ([]SubStats, error) {
	out := make([]SubStats, tp.Partitions)
	for i := range out {
		var st topicStats
		path := "/admin/v2/" + restPath(tp.Name) + "-partition-" + strconv.Itoa(i) + "/stats"
		if err := a.do(ctx, http.MethodGet, path, nil, &st); err != nil {
			return nil, err
		}
		out[i] = st.Subscriptions[sub]
	}
	return out, nil
}

// ErrNoSubscription is returned by Backlog before the first consumer created
// the subscription.
var ErrNoSubscription = errors.New("harness: no such subscription")

// Backlog returns the subscription's backlog summed over tp's partitions.
func (a *Admin) Backlog(ctx context.Context, tp Topic, sub string) (int64, error) {
	var st topicStats
	if err := a.do(ctx, http.MethodGet, "/admin/v2/"+restPath(tp.Name)+"/partitioned-stats", nil, &st); err != nil {
		return 0, err
	}
	s, ok := st.Subscriptions[sub]
	if !ok {
		return 0, fmt.Errorf("%w: topic %s, subscription %q", ErrNoSubscription, tp.Name, sub)
	}
	return s.MsgBacklog, nil
}

// WaitBacklog polls until the subscription's backlog is 0, failing the test
// after timeout with the last value seen. It fails early if stop is closed
// (e.g. the worker that should drain the backlog exited).
func (a *Admin) WaitBacklog(t testing.TB, tp Topic, sub string, timeout time.Duration, stop <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last int64 = -1
	var lastErr error
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		n, err := a.Backlog(ctx, tp, sub)
		cancel()
		if err == nil && n == 0 {
			return
		}
		last, lastErr = n, err
		if time.Now().After(deadline) {
			t.Fatalf("harness: subscription %q on %s still has backlog %d after %v (err %v)", sub, tp.Name, last, timeout, lastErr)
		}
		select {
		case <-stop:
			t.Fatalf("harness: stopped waiting for the backlog of %q on %s at %d: the draining process exited", sub, tp.Name, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ResetCursor rewinds (or forwards) the subscription on every partition of
// tp to the first message published at or after ts. The broker disconnects
// the subscription's consumers to do so; call it while none is attached.
func (a *Admin) ResetCursor(t testing.TB, tp Topic, sub string, ts time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := fmt.Sprintf("/admin/v2/%s/subscription/%s/resetcursor/%d", restPath(tp.Name), sub, ts.UnixMilli())
	if err := a.do(ctx, http.MethodPost, path, nil, nil); err != nil {
		t.Fatalf("harness: %v", err)
	}
}
