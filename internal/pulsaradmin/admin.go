package pulsaradmin

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrOptions is wrapped by New for invalid Options.
var ErrOptions = errors.New("pulsaradmin: invalid options")

// ErrNotFound is matched (errors.Is) by a *StatusError with HTTP status 404:
// the topic, partition or subscription does not exist.
var ErrNotFound = errors.New("not found")

// DefaultTimeout bounds one request when Options.Timeout is 0.
const DefaultTimeout = 30 * time.Second

// Options configure a Client.
type Options struct {
	// URL of the admin service: http://host:port or https://host:port
	// (the broker's webServicePort / webServicePortTls). Required.
	URL string
	// Token is a bearer token (JWT) sent on every request. At most one of
	// Token and TokenFile. Default: none (anonymous).
	Token string
	// TokenFile holds the token (surrounding whitespace trimmed); it is
	// reread on every request.
	TokenFile string
	// TLSCAFile is a PEM bundle that verifies an https:// URL's
	// certificate. Empty: the system roots.
	TLSCAFile string
	// Timeout bounds each request. Default DefaultTimeout.
	Timeout time.Duration
	// DisableKeepAlives closes each connection after its request. For a
	// Client that asks rarely over a long life (the worker's schema
	// registry) and is never closed: it then holds no idle connection.
	// Default false: idle connections are kept until Close.
	DisableKeepAlives bool
}

// Client calls the admin API. Safe for concurrent use; Close releases its
// idle connections.
type Client struct {
	base    string // URL without a trailing slash
	opts    Options
	http    *http.Client
	timeout time.Duration
}

// New validates o and returns a Client. It does not contact the broker.
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("%w: URL: want http://host:port or https://host:port, got %q", ErrOptions, o.URL)
	}
	if o.Token != "" && o.TokenFile != "" {
		return nil, fmt.Errorf("%w: set Token or TokenFile, not both", ErrOptions)
	}
	if o.Timeout < 0 {
		return nil, fmt.Errorf("%w: Timeout must be >= 0, got %v", ErrOptions, o.Timeout)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = o.DisableKeepAlives
	if u.Scheme == "https" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.TLSCAFile != "" {
			pem, err := os.ReadFile(o.TLSCAFile)
			if err != nil {
				return nil, fmt.Errorf("%w: TLSCAFile: %w", ErrOptions, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%w: TLSCAFile %s holds no PEM certificate", ErrOptions, o.TLSCAFile)
			}
			cfg.RootCAs = pool
		}
		tr.TLSClientConfig = cfg
	} else if o.TLSCAFile != "" {
		return nil, fmt.Errorf("%w: TLSCAFile requires an https:// URL", ErrOptions)
	}
	c := &Client{base: strings.TrimRight(o.URL, "/"), opts: o, http: &http.Client{Transport: tr}, timeout: o.Timeout}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	return c, nil
}

// Close releases idle connections. The Client stays usable.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// StatusError is an answer of the admin API with a status of 300 or more.
type StatusError struct {
	Method, Path string
	Code         int    // HTTP status
	Reason       string // the broker's reason, or the body
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("pulsaradmin: %s %s: %d %s: %s", e.Method, e.Path, e.Code, http.StatusText(e.Code), e.Reason)
}

// Is matches ErrNotFound for a 404.
func (e *StatusError) Is(target error) bool {
	return target == ErrNotFound && e.Code == http.StatusNotFound
}

// do sends one request to path (from /admin/v2) with body as JSON when not
// nil, and decodes a 2xx answer into out when not nil.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	data, err := c.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("pulsaradmin: %s %s: decoding %.100q: %w", method, path, data, err)
		}
	}
	return nil
}

// send sends one request to path (from /admin/v2) with body as JSON when
// not nil, and returns a 2xx answer's body (at most 16 MiB); any other
// status is a *StatusError.
func (c *Client) send(ctx context.Context, method, path string, body any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("pulsaradmin: %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("pulsaradmin: %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	tok, err := c.token()
	if err != nil {
		return nil, err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// url.Error repeats the URL, which holds no secret.
		return nil, fmt.Errorf("pulsaradmin: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("pulsaradmin: %s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		se := &StatusError{Method: method, Path: path, Code: resp.StatusCode, Reason: strings.TrimSpace(string(data))}
		var r struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(data, &r) == nil && r.Reason != "" {
			se.Reason = r.Reason
		}
		if len(se.Reason) > 300 {
			se.Reason = se.Reason[:300] + "…"
		}
		return nil, se
	}
	return data, nil
}

func (c *Client) token() (string, error) {
	if c.opts.TokenFile == "" {
		return c.opts.Token, nil
	}
	b, err := os.ReadFile(c.opts.TokenFile)
	if err != nil {
		return "", fmt.Errorf("pulsaradmin: token file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Partitions returns the topic-partitions of topic, named as Pulsar names
// them: "<topic>-partition-N" for each partition of a partitioned topic,
// or the topic itself when it is not partitioned. A topic that does not
// exist fails with an error matching ErrNotFound.
func (c *Client) Partitions(ctx context.Context, topic string) ([]string, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return nil, err
	}
	var meta struct {
		Partitions int `json:"partitions"`
	}
	if err := c.do(ctx, http.MethodGet, "/admin/v2/"+t.path()+"/partitions", nil, &meta); err != nil {
		return nil, err
	}
	if meta.Partitions == 0 {
		// Also the answer for a topic that does not exist: ask the topic
		// itself (listing its subscriptions creates nothing).
		if _, err := c.Subscriptions(ctx, t.String()); err != nil {
			return nil, err
		}
		return []string{t.String()}, nil
	}
	names := make([]string, meta.Partitions)
	for i := range names {
		names[i] = t.String() + "-partition-" + strconv.Itoa(i)
	}
	return names, nil
}

// Topics returns the topics of namespace ("tenant/namespace") in domain
// "persistent", partitions of partitioned topics by their partition names.
func (c *Client) Topics(ctx context.Context, namespace string) ([]string, error) {
	return c.topicList(ctx, namespace, "")
}

// Subscriptions returns the subscriptions of one topic-partition (or
// non-partitioned topic).
func (c *Client) Subscriptions(ctx context.Context, partition string) ([]string, error) {
	t, err := ParseTopic(partition)
	if err != nil {
		return nil, err
	}
	var subs []string
	err = c.do(ctx, http.MethodGet, "/admin/v2/"+t.path()+"/subscriptions", nil, &subs)
	return subs, err
}

// ResetToTime moves subscription sub of one topic-partition to the first
// message published after t (the broker's rule: it finds the last entry
// published at or before t and places the cursor after it); a t before
// every retained message moves it to the earliest one, a t after the last
// to the end. Messages after the new position are delivered again (or
// skipped, when it is ahead).
func (c *Client) ResetToTime(ctx context.Context, partition, sub string, t time.Time) error {
	p, err := c.subPath(partition, sub)
	if err != nil {
		return err
	}
	ms := max(t.UnixMilli(), 0)
	return c.do(ctx, http.MethodPost, p+"/resetcursor/"+strconv.FormatInt(ms, 10), nil, nil)
}

// ResetToEarliest moves sub to the earliest message the partition retains
// (a reset to the timestamp 0).
func (c *Client) ResetToEarliest(ctx context.Context, partition, sub string) error {
	return c.ResetToTime(ctx, partition, sub, time.UnixMilli(0))
}

// ResetToLatest moves sub to the end of the partition: everything
// published so far counts as consumed (the broker's skip_all, "clear
// backlog").
func (c *Client) ResetToLatest(ctx context.Context, partition, sub string) error {
	p, err := c.subPath(partition, sub)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, p+"/skip_all", nil, nil)
}

// MessageID is a Pulsar message id within one topic-partition.
type MessageID struct {
	Ledger, Entry int64
	// Batch is the index inside a batched entry; -1 (or any negative
	// value) for the whole entry.
	Batch int32
}

// ParseMessageID parses "ledger:entry" or "ledger:entry:batch".
func ParseMessageID(s string) (MessageID, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return MessageID{}, fmt.Errorf("pulsaradmin: message id: want ledger:entry[:batch], got %q", s)
	}
	l, err1 := strconv.ParseInt(parts[0], 10, 64)
	e, err2 := strconv.ParseInt(parts[1], 10, 64)
	id := MessageID{Ledger: l, Entry: e, Batch: -1}
	if err := errors.Join(err1, err2); err != nil || l < 0 || e < 0 {
		return MessageID{}, fmt.Errorf("pulsaradmin: message id: want ledger:entry[:batch] with non-negative numbers, got %q", s)
	}
	if len(parts) == 3 {
		b, err := strconv.ParseInt(parts[2], 10, 32)
		if err != nil || b < 0 {
			return MessageID{}, fmt.Errorf("pulsaradmin: message id: batch index: want a non-negative number, got %q", s)
		}
		id.Batch = int32(b)
	}
	return id, nil
}

func (id MessageID) String() string {
	if id.Batch < 0 {
		return fmt.Sprintf("%d:%d", id.Ledger, id.Entry)
	}
	return fmt.Sprintf("%d:%d:%d", id.Ledger, id.Entry, id.Batch)
}

// ResetToMessageID moves sub of one topic-partition so that the message id
// is the next one delivered (inclusive). With a batch index the broker
// delivers that entry again from that index on when batch-index
// acknowledgement is enabled, the whole entry otherwise.
func (c *Client) ResetToMessageID(ctx context.Context, partition, sub string, id MessageID) error {
	p, err := c.subPath(partition, sub)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, p+"/resetcursor", positionBody(id), nil)
}

func (c *Client) subPath(partition, sub string) (string, error) {
	t, err := ParseTopic(partition)
	if err != nil {
		return "", err
	}
	if sub == "" {
		return "", errors.New("pulsaradmin: empty subscription name")
	}
	return "/admin/v2/" + t.path() + "/subscription/" + url.PathEscape(sub), nil
}

// TopicName is a topic name in its parts.
type TopicName struct {
	Domain, Tenant, Namespace, Local string
}

// ParseTopic parses a full name (persistent://tenant/ns/topic), a
// tenant/ns/topic name or a short one (topic, in public/default), as the
// Pulsar client does.
func ParseTopic(s string) (TopicName, error) {
	t := TopicName{Domain: "persistent"}
	rest := s
	if d, r, ok := strings.Cut(s, "://"); ok {
		t.Domain, rest = d, r
	}
	parts := strings.Split(rest, "/")
	switch len(parts) {
	case 1:
		t.Tenant, t.Namespace, t.Local = "public", "default", parts[0]
	case 3:
		t.Tenant, t.Namespace, t.Local = parts[0], parts[1], parts[2]
	default:
		return TopicName{}, fmt.Errorf("pulsaradmin: topic: want [persistent://]tenant/namespace/topic or a short name, got %q", s)
	}
	if (t.Domain != "persistent" && t.Domain != "non-persistent") || t.Tenant == "" || t.Namespace == "" || t.Local == "" {
		return TopicName{}, fmt.Errorf("pulsaradmin: topic: want [persistent://]tenant/namespace/topic or a short name, got %q", s)
	}
	return t, nil
}

// String is the full name, domain://tenant/namespace/topic.
func (t TopicName) String() string {
	return t.Domain + "://" + t.Tenant + "/" + t.Namespace + "/" + t.Local
}

func (t TopicName) path() string {
	return t.Domain + "/" + url.PathEscape(t.Tenant) + "/" + url.PathEscape(t.Namespace) + "/" + url.PathEscape(t.Local)
}

// ReadPosition returns the entry subscription sub of one topic-partition
// reads next: its cursor's read position (internal stats), Batch -1. Right
// after a reset it is the reset point the broker chose; past the last
// entry it names an entry that does not exist yet (Entry may be -1 on a
// ledger without entries).
func (c *Client) ReadPosition(ctx context.Context, partition, sub string) (MessageID, error) {
	read, _, err := c.cursor(ctx, partition, sub)
	return read, err
}

// MarkDeletePosition returns the entry up to which subscription sub of one
// topic-partition has acknowledged everything (its cursor's mark-delete
// position, internal stats), Batch -1: it rises as the subscription's
// consumers acknowledge.
func (c *Client) MarkDeletePosition(ctx context.Context, partition, sub string) (MessageID, error) {
	_, md, err := c.cursor(ctx, partition, sub)
	return md, err
}

// cursor returns the read and mark-delete positions of sub's cursor on one
// topic-partition.
func (c *Client) cursor(ctx context.Context, partition, sub string) (read, markDelete MessageID, err error) {
	t, err := ParseTopic(partition)
	if err != nil {
		return read, markDelete, err
	}
	var stats struct {
		Cursors map[string]struct {
			ReadPosition       string `json:"readPosition"`
			MarkDeletePosition string `json:"markDeletePosition"`
		} `json:"cursors"`
	}
	path := "/admin/v2/" + t.path() + "/internalStats"
	if err := c.do(ctx, http.MethodGet, path, nil, &stats); err != nil {
		return read, markDelete, err
	}
	cur, ok := stats.Cursors[sub]
	if !ok {
		return read, markDelete, &StatusError{Method: http.MethodGet, Path: path, Code: http.StatusNotFound,
			Reason: fmt.Sprintf("subscription %s not found for topic %s", sub, t)}
	}
	parse := func(what, pos string) (MessageID, error) {
		l, e, ok := strings.Cut(pos, ":")
		ledger, err1 := strconv.ParseInt(l, 10, 64)
		entry, err2 := strconv.ParseInt(e, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return MessageID{}, fmt.Errorf("pulsaradmin: GET %s: %s of %s: want ledger:entry, got %q", path, what, sub, pos)
		}
		return MessageID{Ledger: ledger, Entry: entry, Batch: -1}, nil
	}
	if read, err = parse("read position", cur.ReadPosition); err != nil {
		return read, markDelete, err
	}
	markDelete, err = parse("mark-delete position", cur.MarkDeletePosition)
	return read, markDelete, err
}

// Schema returns version (the latest when version < 0) of topic's schema in
// the schema registry (GET /admin/v2/schemas/{tenant}/{namespace}/{topic}/schema[/{version}]):
// the answer's JSON (type, data, properties and, for the latest, version)
// as the broker sent it. The schema of a partition is its topic's: pass
// the topic's name. A topic or version without a schema fails with a
// *StatusError matching ErrNotFound.
func (c *Client) Schema(ctx context.Context, topic string, version int64) ([]byte, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return nil, err
	}
	path := "/admin/v2/schemas/" + url.PathEscape(t.Tenant) + "/" + url.PathEscape(t.Namespace) + "/" + url.PathEscape(t.Local) + "/schema"
	if version >= 0 {
		path += "/" + strconv.FormatInt(version, 10)
	}
	return c.send(ctx, http.MethodGet, path, nil)
}
