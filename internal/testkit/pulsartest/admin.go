// Package pulsartest is what tests of several packages need from a real
// Pulsar broker's admin REST API: topics in public/default and their
// subscription backlogs. Every method fails the test on an error.
package pulsartest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// client keeps no idle connections, so no net/http goroutine outlives a
// test (goleak).
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// Admin talks to the admin API at URL (e.g. testenv.PulsarURL's second
// result). The zero value is not usable.
type Admin struct {
	URL string
}

// Do sends a request to path (from /admin/v2/...) with body as JSON, and
// decodes the answer into out when out is not nil. A transport error or a
// status of 300 or more fails t.
func (a Admin) Do(t testing.TB, method, path string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(a.URL, "/")+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %s: %s", method, path, resp.Status, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
}

// CreatePartitioned creates persistent://public/default/<short> with n
// partitions.
func (a Admin) CreatePartitioned(t testing.TB, short string, n int) {
	t.Helper()
	a.Do(t, http.MethodPut, "/admin/v2/persistent/public/default/"+short+"/partitions", n, nil)
}

// Backlog returns the backlog of subscription sub on
// persistent://public/default/<short>, summed over its partitions when
// partitioned. A missing subscription fails t.
func (a Admin) Backlog(t testing.TB, short, sub string, partitioned bool) int64 {
	t.Helper()
	var stats struct {
		Subscriptions map[string]struct {
			MsgBacklog int64 `json:"msgBacklog"`
		} `json:"subscriptions"`
	}
	path := "/admin/v2/persistent/public/default/" + short + "/stats"
	if partitioned {
		path = "/admin/v2/persistent/public/default/" + short + "/partitioned-stats"
	}
	a.Do(t, http.MethodGet, path, nil, &stats)
	s, ok := stats.Subscriptions[sub]
	if !ok {
		t.Fatalf("topic %s has no subscription %q", short, sub)
	}
	return s.MsgBacklog
}

// WaitBacklog waits until the backlog is want, failing t after 20 s.
func (a Admin) WaitBacklog(t testing.TB, short, sub string, partitioned bool, want int64) {
	t.Helper()
	const timeout = 20 * time.Second
	deadline := time.Now().Add(timeout)
	for {
		got := a.Backlog(t, short, sub, partitioned)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("backlog of %s/%s = %d, want %d after %v", short, sub, got, want, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
