package pulsaradmin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin/config"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/rest"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"
)

// ErrOptions is wrapped by New for invalid Options.
var ErrOptions = errors.New("pulsaradmin: invalid options")

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

// Client is the library's admin client (Topics, Subscriptions,
// Namespaces, Schemas, ...) over thalweg's transport, with the two calls
// the library does not make as thalweg needs them (ResetCursor, Schema).
// Safe for concurrent use; Close releases its idle connections.
type Client struct {
	admin.Client
	rest *rest.Client
	tr   *http.Transport
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
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	auth := &authTransport{next: tr, token: o.Token, tokenFile: o.TokenFile, timeout: timeout}
	base := strings.TrimRight(o.URL, "/")
	ac, err := admin.NewPulsarClientWithAuthProvider(&config.Config{WebServiceURL: base, PulsarAPIVersion: config.V2}, auth)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	rc := &rest.Client{ServiceURL: base, VersionInfo: admin.ReleaseVersion, HTTPClient: &http.Client{Transport: auth}}
	return &Client{Client: ac, rest: rc, tr: tr}, nil
}

// Close releases idle connections. The Client stays usable.
func (c *Client) Close() { c.tr.CloseIdleConnections() }

// IsNotFound says whether err is the admin API's answer 404: the topic,
// partition, subscription or schema does not exist.
func IsNotFound(err error) bool {
	var re rest.Error
	return errors.As(err, &re) && re.Code == http.StatusNotFound
}

// ResetCursor moves subscription sub of one topic-partition (or a
// non-partitioned topic) so that id is the next message delivered. With a
// batch index (id.BatchIndex >= 0) the broker delivers that entry again
// from that index on when batch-index acknowledgement is enabled, the
// whole entry otherwise.
func (c *Client) ResetCursor(ctx context.Context, topic utils.TopicName, sub string, id utils.MessageID) error {
	body := struct {
		Ledger     int64 `json:"ledgerId"`
		Entry      int64 `json:"entryId"`
		Partition  int   `json:"partitionIndex"`
		Batch      int   `json:"batchIndex"`
		IsExcluded bool  `json:"isExcluded"`
	}{id.LedgerID, id.EntryID, -1, max(id.BatchIndex, -1), false}
	p := "/admin/v2/" + topic.GetRestPath() + "/subscription/" + url.PathEscape(sub) + "/resetcursor"
	return c.rest.PostWithContext(ctx, p, body)
}

// Schema returns version (the latest when version < 0) of topic's schema
// in the schema registry, with its version number. The schema of a
// partition is its topic's: pass the topic's name. A topic or version
// without a schema fails with an error IsNotFound matches.
func (c *Client) Schema(ctx context.Context, topic string, version int64) (*utils.SchemaInfoWithVersion, error) {
	tn, err := utils.GetTopicName(topic)
	if err != nil {
		return nil, err
	}
	var r utils.GetSchemaResponse
	p := "/admin/v2/schemas/" + url.PathEscape(tn.GetTenant()) + "/" + url.PathEscape(tn.GetNamespace()) + "/" + url.PathEscape(tn.GetLocalName()) + "/schema"
	if version >= 0 {
		p += "/" + strconv.FormatInt(version, 10)
	}
	if err := c.rest.GetWithContext(ctx, p, &r); err != nil {
		return nil, err
	}
	if version >= 0 {
		r.Version = version
	}
	return utils.ConvertGetSchemaResponseToSchemaInfoWithVersion(tn, r), nil
}

// authTransport is the library's auth.Provider for a bearer token read on
// every request, over a transport that bounds each request by timeout.
type authTransport struct {
	next             http.RoundTripper
	token, tokenFile string
	timeout          time.Duration
}

// RoundTrip sends req with the token, its context bounded by the timeout
// until its body is closed.
func (a *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok := a.token
	if a.tokenFile != "" {
		b, err := os.ReadFile(a.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("pulsaradmin: token file: %w", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	ctx, cancel := context.WithTimeout(req.Context(), a.timeout)
	req = req.Clone(ctx)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := a.next.RoundTrip(req)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// Transport is the transport under the token.
func (a *authTransport) Transport() http.RoundTripper { return a.next }

// WithTransport replaces the transport under the token.
func (a *authTransport) WithTransport(t http.RoundTripper) { a.next = t }

// cancelBody ends a request's timeout when its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
