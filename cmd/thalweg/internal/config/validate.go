package config

import (
	"math"
	"net"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/iceberg"
)

// Validate checks the whole configuration and returns every problem at
// once as an *Error (nil if there is none). It expects defaults to be
// filled in, as Parse does; on a Config built in Go, start from Default and
// DefaultDestination. Lines are reported for a Config that came from Parse;
// they refer to the parsed text, so after the Config is edited in Go they
// may point at where a field used to be.
//
// Validate never touches the file system or the environment: files named
// by the configuration are opened, and tokens resolved, when the pipeline
// starts (see CheckSecrets for an early check).
func (c *Config) Validate() error {
	ck := checker{lines: c.lines}
	c.checkSource(&ck)
	c.Schema.check(&ck, "schema", c.Source.AdminURL)
	c.checkBatching(&ck)
	c.checkDestinations(&ck)

	if strings.TrimSpace(c.Store.Dir) == "" {
		ck.addf("store.dir", "required (directory of the offset store)")
	}
	positive(&ck, "store.teardown_timeout", c.Store.TeardownTimeout)
	positive(&ck, "shutdown.drain_timeout", c.Shutdown.DrainTimeout)
	if c.Metrics.Listen != "" {
		checkHostPort(&ck, "metrics.listen", c.Metrics.Listen, true)
	} else if c.Metrics.Pprof {
		ck.addf("metrics.pprof", "requires metrics.listen (pprof is served on the metrics listener)")
	}
	c.checkOTLP(&ck)
	if c.Log.StatsInterval < 0 {
		ck.addf("log.stats_interval", "must be >= 0 (0 disables the periodic stats line), got %v", c.Log.StatsInterval)
	}
	ck.enum("log.level", string(c.Log.Level), "debug", "info", "warn", "error")
	ck.enum("log.format", string(c.Log.Format), "text", "json")

	sortByLine(ck.problems)
	return ck.err()
}

// sortByLine puts problems in file order (the check order is the schema
// order, which a file need not follow); problems without a line keep their
// relative order after the others.
func sortByLine(ps []*FieldError) {
	key := func(p *FieldError) int {
		if p.Line == 0 {
			return math.MaxInt
		}
		return p.Line
	}
	sort.SliceStable(ps, func(i, j int) bool { return key(ps[i]) < key(ps[j]) })
}

// written reports whether the key at path was written in the document
// with a non-null value, or, for a Config built in Go, whether nonzero holds.
func (c *Config) written(path string, nonzero bool) bool {
	if c.present == nil {
		return nonzero
	}
	return c.present[path]
}

func (c *Config) checkSource(ck *checker) {
	s := &c.Source
	if s.MaxUnacked <= 0 {
		ck.addf("source.max_unacked", "must be > 0, got %d", s.MaxUnacked)
	}
	switch s.Kind {
	case SourcePulsar:
		c.checkPulsar(ck)
		if c.written("source.generator", false) {
			ck.addf("source.generator", "only allowed with source.kind generator")
		}
	case SourceGenerator:
		c.checkGenerator(ck)
		for _, k := range []struct {
			key     string
			nonzero bool
		}{
			{"url", s.URL != ""},
			{"admin_url", s.AdminURL != ""},
			{"auth", s.Auth != AuthConfig{}},
			{"listener_name", s.ListenerName != ""},
			{"topics", len(s.Topics) > 0},
			{"topics_pattern", s.TopicsPattern != ""},
			{"subscription", s.Subscription.Name != ""},
			{"start", false},
			{"receiver_queue_size", false},
			{"dead_letter_topic", s.DeadLetterTopic != ""},
		} {
			if c.written("source."+k.key, k.nonzero) {
				ck.addf("source."+k.key, "only allowed with source.kind pulsar")
			}
		}
	default:
		ck.enum("source.kind", string(s.Kind), "pulsar", "generator")
	}
}

func (c *Config) checkPulsar(ck *checker) {
	s := &c.Source
	ssl := checkPulsarURL(ck, "source.url", s.URL)

	if s.AdminURL != "" {
		checkAdminURL(ck, "source.admin_url", s.AdminURL)
	}

	a := &s.Auth
	if a.TokenEnv != "" && a.TokenFile != "" {
		ck.addf("source.auth.token_file", "set token_env or token_file, not both")
	}
	if a.TokenEnv != "" {
		checkEnvName(ck, "source.auth.token_env", a.TokenEnv)
	}
	if a.TLSCAFile != "" && !ssl && s.URL != "" && !strings.HasPrefix(s.AdminURL, "https://") {
		ck.addf("source.auth.tls_ca_file", "requires a pulsar+ssl:// url or an https:// admin_url")
	}
	if s.ListenerName != "" && strings.IndexFunc(s.ListenerName, notListenerRune) >= 0 {
		ck.addf("source.listener_name", "want letters, digits, '_' and '-' (a name from the brokers' advertisedListeners), got %q", clip(s.ListenerName))
	}

	if len(s.Topics) == 0 && s.TopicsPattern == "" {
		ck.addf("source.topics", "required: topics and/or topics_pattern")
	}
	seen := map[string]int{}
	for i, t := range s.Topics {
		p := indexPath("source.topics", i)
		if checkTopic(ck, p, t) {
			if j, dup := seen[t]; dup {
				ck.addf(p, "duplicate topic %q (also %s)", clip(t), indexPath("source.topics", j))
			}
			seen[t] = i
		}
	}
	if s.TopicsPattern != "" {
		if _, err := regexp.Compile(s.TopicsPattern); err != nil {
			ck.addf("source.topics_pattern", "want a regular expression: %v", err)
		}
	}

	switch {
	case s.Subscription.Name == "":
		ck.addf("source.subscription.name", "required")
	case strings.IndexFunc(s.Subscription.Name, unicode.IsSpace) >= 0:
		ck.addf("source.subscription.name", "must not contain spaces, got %q", clip(s.Subscription.Name))
	}
	ck.enum("source.subscription.type", string(s.Subscription.Type), "exclusive", "failover", "shared", "key_shared")
	ck.enum("source.start", string(s.Start), "earliest", "latest")
	if s.ReceiverQueueSize <= 0 {
		ck.addf("source.receiver_queue_size", "must be > 0, got %d", s.ReceiverQueueSize)
	}
	if s.DeadLetterTopic != "" {
		checkTopic(ck, "source.dead_letter_topic", s.DeadLetterTopic)
	}
}

// checkOTLP checks metrics.otlp: everything but the endpoint is only
// meaningful with one.
func (c *Config) checkOTLP(ck *checker) {
	o := &c.Metrics.OTLP
	const p = "metrics.otlp"
	ck.enum(p+".protocol", string(o.Protocol), "grpc", "http")
	positive(ck, p+".interval", o.Interval)
	if o.Endpoint == "" {
		for _, k := range []struct {
			key     string
			nonzero bool
		}{
			{"protocol", false}, {"insecure", o.Insecure}, {"headers", len(o.Headers) > 0}, {"interval", false},
		} {
			if c.written(p+"."+k.key, k.nonzero) {
				ck.addf(p+"."+k.key, "requires %s.endpoint", p)
			}
		}
		return
	}
	checkHostPort(ck, p+".endpoint", o.Endpoint, false)
	for k, v := range o.Headers {
		hp := p + ".headers." + k
		if k == "" || strings.IndexFunc(k, notTokenRune) >= 0 {
			ck.addf(hp, "want an HTTP header name (letters, digits and !#$%%&'*+-.^_`|~)")
		}
		if strings.ContainsAny(v, "\r\n") {
			ck.addf(hp, "a header value must not contain a line break")
		}
	}
}

// notTokenRune reports a rune not allowed in an HTTP header name (RFC 9110 token).
func notTokenRune(r rune) bool {
	return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// notListenerRune reports a rune the broker does not allow in a listener name.
func notListenerRune(r rune) bool {
	return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '_' && r != '-'
}

// checkPulsarURL reports whether u is a pulsar+ssl URL.
func checkPulsarURL(ck *checker, path, u string) (ssl bool) {
	const want = "pulsar://host:port or pulsar+ssl://host:port"
	if u == "" {
		ck.addf(path, "required (%s)", want)
		return false
	}
	rest, ok := strings.CutPrefix(u, "pulsar://")
	if !ok {
		if rest, ok = strings.CutPrefix(u, "pulsar+ssl://"); !ok {
			ck.addf(path, "want %s, got %q", want, clip(u))
			return false
		}
		ssl = true
	}
	// A service URL may list several brokers: pulsar://a:6650,b:6650.
	for _, h := range strings.Split(strings.TrimSuffix(rest, "/"), ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			host, port = h, ""
		}
		if host == "" || strings.ContainsAny(host, "/?# ") || (port != "" && !validPort(port, false)) {
			ck.addf(path, "want %s, got %q", want, clip(u))
			break
		}
	}
	return ssl
}

// checkAdminURL checks a Pulsar admin REST URL: http(s)://host[:port],
// nothing after the authority but an optional "/".
func checkAdminURL(ck *checker, path, u string) {
	const want = "http://host:port or https://host:port (the brokers' admin REST API)"
	rest, ok := strings.CutPrefix(u, "http://")
	if !ok {
		if rest, ok = strings.CutPrefix(u, "https://"); !ok {
			ck.addf(path, "want %s, got %q", want, clip(u))
			return
		}
	}
	host, port, err := net.SplitHostPort(strings.TrimSuffix(rest, "/"))
	if err != nil {
		host, port = strings.TrimSuffix(rest, "/"), ""
	}
	if host == "" || strings.ContainsAny(host, "/?#@, ") || (port != "" && !validPort(port, false)) {
		ck.addf(path, "want %s, got %q", want, clip(u))
	}
}

// checkTopic reports whether t is a plausible Pulsar topic name: a short
// name (topic or tenant/namespace/topic) or persistent:// /
// non-persistent:// with tenant/namespace/topic.
func checkTopic(ck *checker, path, t string) bool {
	parts := strings.Split(t, "/")
	if scheme, rest, ok := strings.Cut(t, "://"); ok {
		parts = strings.Split(rest, "/")
		if (scheme != "persistent" && scheme != "non-persistent") || len(parts) != 3 {
			parts = nil
		}
	} else if len(parts) != 1 && len(parts) != 3 {
		parts = nil
	}
	ok := len(parts) > 0 && strings.IndexFunc(t, unicode.IsSpace) < 0
	for _, p := range parts {
		ok = ok && p != ""
	}
	if !ok {
		if t == "" {
			ck.addf(path, "must not be empty")
		} else {
			ck.addf(path, "want a topic name (topic, tenant/namespace/topic or persistent://tenant/namespace/topic), got %q", clip(t))
		}
	}
	return ok
}

func (c *Config) checkGenerator(ck *checker) {
	g := &c.Source.Generator
	const p = "source.generator"
	if g.Partitions <= 0 || g.Partitions > 1<<16 {
		ck.addf(p+".partitions", "must be in [1, 65536], got %d", g.Partitions)
	}
	if g.Records < 0 {
		ck.addf(p+".records", "must be >= 0 (0 = unbounded), got %d", g.Records)
	}
	if !(g.Rate >= 0) || math.IsInf(g.Rate, 0) {
		ck.addf(p+".rate", "must be a finite number >= 0 (0 = unlimited), got %v", g.Rate)
	}
	if g.PayloadSize <= 0 || g.PayloadSize > 64*MiB {
		ck.addf(p+".payload_size", "must be in [1B, 64MiB], got %s", g.PayloadSize)
	}
	if !(g.MalformedFraction >= 0 && g.MalformedFraction <= 1) {
		ck.addf(p+".malformed_fraction", "must be in [0, 1], got %v", g.MalformedFraction)
	}
	if g.Mode == GenRaw && g.MalformedFraction != 0 {
		ck.addf(p+".malformed_fraction", "needs mode json (raw payloads cannot be malformed), got %v", g.MalformedFraction)
	}
	if c.Schema.Mode == SchemaPulsar {
		ck.addf("schema.mode", "pulsar needs source.kind pulsar (the generator's payloads have no registry schema)")
	}
	if ck.enum(p+".mode", string(g.Mode), "raw", "json") && g.Mode == GenRaw && c.Schema.Mode == SchemaJSON {
		ck.addf(p+".mode", "must be json when schema.mode is json (raw payloads would all be rejected)")
	}
}

func (c *Config) checkBatching(ck *checker) {
	b := &c.Batching
	if b.MaxRows <= 0 {
		ck.addf("batching.max_rows", "must be > 0, got %d", b.MaxRows)
	}
	if b.MaxBytes <= 0 {
		ck.addf("batching.max_bytes", "must be > 0, got %s", b.MaxBytes)
	}
	positive(ck, "batching.linger", b.Linger)
}

var destNameRE = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

func (c *Config) checkDestinations(ck *checker) {
	if len(c.Destinations) == 0 {
		ck.addf("destinations", "required: at least one destination, exactly one with role raw_anchor")
		return
	}
	names := map[string]int{}
	var anchors []string
	for i := range c.Destinations {
		d := &c.Destinations[i]
		p := indexPath("destinations", i)
		switch {
		case d.Name == "":
			ck.addf(p+".name", "required ([a-z0-9_-]+)")
		case !destNameRE.MatchString(d.Name):
			ck.addf(p+".name", "must match [a-z0-9_-]+ and be at most 64 bytes, got %q", clip(d.Name))
		default:
			if j, dup := names[d.Name]; dup {
				ck.addf(p+".name", "duplicate name %q (also destinations[%d])", d.Name, j)
			}
			names[d.Name] = i
		}
		ck.enum(p+".kind", string(d.Kind), "flight", "zerobus", "iceberg")
		if ck.enum(p+".role", string(d.Role), "raw_anchor", "secondary") && d.Role == RoleRawAnchor {
			anchors = append(anchors, strconv.Quote(d.Name))
		}
		if d.Kind == KindIceberg {
			c.checkIceberg(ck, p, d)
		} else {
			c.checkNetworkSink(ck, p, d)
		}
		c.checkLane(ck, p, d)
	}
	if len(anchors) != 1 {
		ck.addf("destinations", "exactly one destination must have role raw_anchor, found %d%s", len(anchors), listed(anchors))
	}
}

// checkNetworkSink checks the keys of a flight or zerobus destination.
func (c *Config) checkNetworkSink(ck *checker, p string, d *DestinationConfig) {
	checkHostPort(ck, p+".endpoint", d.Endpoint, false)
	if c.written(p+".iceberg", false) {
		ck.addf(p+".iceberg", "only allowed for kind iceberg")
	}

	switch d.Kind { // with an unknown kind, kind-specific keys cannot be judged
	case KindFlight:
		if len(d.Path) == 0 && d.Name != "" {
			ck.addf(p+".path", "must not be empty (default [name])")
		}
		for j, e := range d.Path {
			if e == "" {
				ck.addf(indexPath(p+".path", j), "must not be empty")
			}
		}
		if d.Table != "" {
			ck.addf(p+".table", "only allowed for kind zerobus")
		}
		if d.Mode != "" {
			ck.addf(p+".mode", "only allowed for kind zerobus")
		}
	case KindZerobus:
		if c.written(p+".path", len(d.Path) > 0) {
			ck.addf(p+".path", "only allowed for kind flight (zerobus uses table)")
		}
		checkTable(ck, p+".table", d.Table)
		ck.enum(p+".mode", string(d.Mode), "ephemeral", "flight")
		if d.Mode == ZerobusEphemeral && c.written(p+".compression", d.Compression != CompressionNone) {
			ck.addf(p+".compression", "not used by kind zerobus in mode ephemeral (it sends JSON or protobuf records, not Arrow IPC): remove it, or set mode: flight")
		}
	}

	checkTLS(ck, p+".tls", &d.TLS)
	if d.TokenEnv != "" {
		checkEnvName(ck, p+".token_env", d.TokenEnv)
	}
	ck.enum(p+".compression", string(d.Compression), "none", "lz4", "zstd")
	minSize := MinMessageSize
	if d.Kind == KindZerobus {
		minSize = 2 * MinMessageSize // 64KiB of it is the request envelope
	}
	if d.MaxMessageSize < minSize || d.MaxMessageSize > MaxMessageSize {
		ck.addf(p+".max_message_size", "must be in [%s, %s], got %s", minSize, "2GiB-1", d.MaxMessageSize)
	}
	positive(ck, p+".silence_timeout", d.SilenceTimeout)
}

// checkLane checks destinations[].lane.
func (c *Config) checkLane(ck *checker, p string, d *DestinationConfig) {
	if d.Lane.Capacity <= 0 || d.Lane.Capacity > MaxLaneCapacity {
		ck.addf(p+".lane.capacity", "must be in [1, %d], got %d", MaxLaneCapacity, d.Lane.Capacity)
	}
	if d.Lane.MaxBytes <= 0 {
		ck.addf(p+".lane.max_bytes", "must be > 0, got %s", d.Lane.MaxBytes)
	}
	positive(ck, p+".lane.ack_timeout", d.Lane.AckTimeout)
	if d.Lane.MaxRetries < 0 {
		ck.addf(p+".lane.max_retries", "must be >= 0, got %d", d.Lane.MaxRetries)
	}
	if d.Lane.PermanentBudget == 0 {
		ck.addf(p+".lane.permanent_budget", "must be > 0, or negative to never give up, got 0")
	}
}

// checkIceberg checks a kind iceberg destination: its iceberg section,
// and none of the keys of the network sinks, which it would ignore.
func (c *Config) checkIceberg(ck *checker, p string, d *DestinationConfig) {
	for _, k := range []struct {
		key string
		set bool
	}{
		{"endpoint", d.Endpoint != ""}, {"path", len(d.Path) > 0}, {"table", d.Table != ""}, {"mode", d.Mode != ""},
		{"tls", d.TLS != (TLSConfig{})}, {"token_env", d.TokenEnv != ""},
		{"compression", d.Compression != CompressionNone}, {"max_message_size", false}, {"silence_timeout", false},
	} {
		if c.written(p+"."+k.key, k.set) {
			hint := ""
			switch k.key {
			case "table":
				hint = " (the table is iceberg.table)"
			case "token_env":
				hint = " (a rest catalog's token is iceberg.catalog.token_env)"
			case "endpoint":
				hint = " (the catalog is iceberg.catalog.uri)"
			}
			ck.addf(p+"."+k.key, "not used by kind iceberg%s: remove it", hint)
		}
	}
	ic := &d.Iceberg
	q := p + ".iceberg"
	if ck.enum(q+".catalog.type", string(ic.Catalog.Type), "sql", "rest") {
		switch {
		case ic.Catalog.URI == "" && ic.Catalog.Type == CatalogREST:
			ck.addf(q+".catalog.uri", "required for a rest catalog (http://host:port)")
		case ic.Catalog.URI == "":
			ck.addf(q+".catalog.uri", "required (the SQLite file; default next to store.dir)")
		case ic.Catalog.Type == CatalogREST && !strings.HasPrefix(ic.Catalog.URI, "http://") && !strings.HasPrefix(ic.Catalog.URI, "https://"):
			ck.addf(q+".catalog.uri", "want the rest catalog's http:// or https:// URL, got %q", clip(ic.Catalog.URI))
		case ic.Catalog.Type == CatalogSQL && strings.Contains(ic.Catalog.URI, "://"):
			ck.addf(q+".catalog.uri", "want the path of the SQLite file, got %q", clip(ic.Catalog.URI))
		}
		if ic.Catalog.Type == CatalogSQL {
			for _, k := range []struct {
				key string
				set bool
			}{{"token_env", ic.Catalog.TokenEnv != ""}, {"credential_env", ic.Catalog.CredentialEnv != ""}} {
				if c.written(q+".catalog."+k.key, k.set) {
					ck.addf(q+".catalog."+k.key, "only used by a rest catalog")
				}
			}
		}
	}
	if ic.Catalog.Name == "" {
		ck.addf(q+".catalog.name", "must not be empty (default %s)", DefaultIcebergCatalogName)
	}
	for _, k := range []struct{ key, v string }{
		{q + ".catalog.token_env", ic.Catalog.TokenEnv}, {q + ".catalog.credential_env", ic.Catalog.CredentialEnv},
		{q + ".s3.secret_access_key_env", ic.S3.SecretAccessKeyEnv}, {q + ".s3.session_token_env", ic.S3.SessionTokenEnv},
	} {
		if k.v != "" {
			checkEnvName(ck, k.key, k.v)
		}
	}
	w := ic.Warehouse
	local := w != "" && (!strings.Contains(w, "://") || strings.HasPrefix(w, "file:///"))
	if w == "" && ic.Catalog.Type != CatalogREST {
		ck.addf(q+".warehouse", "required for a sql catalog (a path, file:///path or s3://bucket/prefix)")
	} else if w != "" && !local && !strings.HasPrefix(w, "s3://") && !strings.HasPrefix(w, "s3a://") {
		ck.addf(q+".warehouse", "want a path, file:///path or s3://bucket/prefix, got %q", clip(w))
	} else if err := iceberg.CheckLocalWarehouse(w); local && err != nil {
		ck.addf(q+".warehouse", "%v, got %q", err, clip(w))
	}
	if parts := strings.Split(ic.Table, "."); ic.Table == "" {
		ck.addf(q+".table", "required (namespace.table)")
	} else if iceberg.IsTemplate(ic.Table) {
		c.checkTableTemplate(ck, q+".table", ic.Table)
	} else if len(parts) < 2 || slices.Contains(parts, "") || strings.IndexFunc(ic.Table, unicode.IsSpace) >= 0 {
		ck.addf(q+".table", "want namespace.table, got %q", clip(ic.Table))
	} else if err := iceberg.CheckLocalTable(ic.Table); local && err != nil {
		ck.addf(q+".table", "%v, got %q", err, clip(ic.Table))
	}
	if (ic.S3.AccessKeyID == "") != (ic.S3.SecretAccessKeyEnv == "") {
		if ic.S3.AccessKeyID == "" {
			ck.addf(q+".s3.access_key_id", "required with secret_access_key_env")
		} else {
			ck.addf(q+".s3.secret_access_key_env", "required with access_key_id")
		}
	}
	if ic.S3.SessionTokenEnv != "" && ic.S3.AccessKeyID == "" {
		ck.addf(q+".s3.session_token_env", "requires access_key_id")
	}
	if e := ic.S3.Endpoint; e != "" && !strings.HasPrefix(e, "http://") && !strings.HasPrefix(e, "https://") {
		ck.addf(q+".s3.endpoint", "want http://host:port or https://host:port, got %q", clip(e))
	}
	positive(ck, q+".commit_interval", ic.CommitInterval)
	if ic.TargetFileSize < MinMessageSize {
		ck.addf(q+".target_file_size", "must be >= %s, got %s", MinMessageSize, ic.TargetFileSize)
	}
	c.checkPartitionBy(ck, q, ic)
	checkMaintenance(ck, q, ic)
}

// checkTableTemplate checks a table template (iceberg.ParseTemplate):
// known placeholders, no empty part, nothing outside a placeholder the
// catalogs refuse. The generator's partitions (gen-N) are no Pulsar
// topic's: a {tenant} or {namespace} of theirs is empty. Every source
// mode's batches carry identity columns (raw rows always; json and pulsar
// rows with the _topic, _partition, _seq the worker adds), so a batch of
// several topics can always be split by table.
func (c *Config) checkTableTemplate(ck *checker, p, tmpl string) {
	if err := iceberg.ParseTemplate(tmpl); err != nil {
		ck.addf(p, "%s", strings.TrimPrefix(err.Error(), iceberg.ErrTemplate.Error()+" "))
		return
	}
	if c.Source.Kind == SourceGenerator {
		for _, ph := range []string{iceberg.PlaceholderTenant, iceberg.PlaceholderNamespace} {
			if strings.Contains(tmpl, ph) {
				ck.addf(p, "%s is empty for source.kind generator (its partitions are no Pulsar topic's): use {topic}", ph)
				return
			}
		}
	}
}

// checkPartitionBy checks an iceberg destination's partition_by terms:
// each parses (a known transform, a width >= 1), none is named twice, and
// with schema.mode raw each names a column of batch.RawSchema its
// transform applies to. The columns of a json or pulsar schema are known
// at the first batch only: the Sink checks them when it creates the table.
func (c *Config) checkPartitionBy(ck *checker, q string, ic *IcebergConfig) {
	seen := map[string]int{}
	for i, s := range ic.PartitionBy {
		p := indexPath(q+".partition_by", i)
		t, err := iceberg.ParsePartitionTerm(s)
		if err != nil {
			ck.addf(p, "%s", strings.TrimPrefix(err.Error(), iceberg.ErrPartitionBy.Error()+" "))
			continue
		}
		key := t.Transform.String() + "(" + t.Column + ")"
		if j, ok := seen[key]; ok {
			ck.addf(p, "%s is named twice (also %s)", key, indexPath(q+".partition_by", j))
			continue
		}
		seen[key] = i
		if c.Schema.Mode == SchemaRaw {
			if err := iceberg.CheckPartitionColumns([]iceberg.PartitionTerm{t}, batch.RawSchema()); err != nil {
				ck.addf(p, "%s (schema.mode raw)", strings.TrimPrefix(err.Error(), iceberg.ErrPartitionBy.Error()+" "))
			}
		}
	}
}

// checkMaintenance checks an iceberg destination's maintenance keys
// against each other and against the commit interval.
func checkMaintenance(ck *checker, q string, ic *IcebergConfig) {
	m := &ic.Maintenance
	mq := q + ".maintenance"
	for _, k := range []struct {
		key string
		d   time.Duration
	}{{"interval", m.Interval}, {"snapshot_max_age", m.SnapshotMaxAge}, {"orphan_age", m.OrphanAge},
		{"orphan_interval", m.OrphanInterval}, {"timeout", m.Timeout}, {"lease_ttl", m.LeaseTTL}} {
		positive(ck, mq+"."+k.key, k.d)
	}
	if m.LeaseTTL > 0 && ic.CommitInterval > 0 && m.LeaseTTL <= 2*ic.CommitInterval {
		ck.addf(mq+".lease_ttl", "must exceed twice commit_interval (%v), got %v", ic.CommitInterval, m.LeaseTTL)
	}
	if m.CompactMinFiles == 1 || m.CompactMinFiles < 0 {
		ck.addf(mq+".compact_min_files", "must be 0 (off) or >= 2, got %d", m.CompactMinFiles)
	}
	if m.MinSnapshots < 1 {
		ck.addf(mq+".min_snapshots", "must be >= 1 (the current snapshot is always kept), got %d", m.MinSnapshots)
	}
	if m.SnapshotMaxAge > 0 && ic.CommitInterval > 0 && m.SnapshotMaxAge <= ic.CommitInterval {
		ck.addf(mq+".snapshot_max_age", "must exceed commit_interval (%v), got %v", ic.CommitInterval, m.SnapshotMaxAge)
	}
	if m.OrphanAge > 0 && m.SnapshotMaxAge > 0 && m.OrphanAge <= m.SnapshotMaxAge {
		ck.addf(mq+".orphan_age", "must exceed snapshot_max_age (%v), got %v", m.SnapshotMaxAge, m.OrphanAge)
	} else if m.OrphanAge > 0 && m.OrphanAge <= DefaultIcebergCommitTimeout {
		ck.addf(mq+".orphan_age", "must exceed the commit timeout (%v), got %v", DefaultIcebergCommitTimeout, m.OrphanAge)
	}
}

func listed(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

func checkTable(ck *checker, path, t string) {
	if t == "" {
		ck.addf(path, "required for kind zerobus (catalog.schema.table)")
		return
	}
	parts := strings.Split(t, ".")
	ok := len(parts) == 3 && strings.IndexFunc(t, unicode.IsSpace) < 0
	for _, p := range parts {
		ok = ok && p != ""
	}
	if !ok {
		ck.addf(path, "want catalog.schema.table, got %q", clip(t))
	}
}

func checkTLS(ck *checker, path string, t *TLSConfig) {
	if !t.Enabled {
		for _, f := range []struct {
			key string
			set bool
		}{
			{"ca_file", t.CAFile != ""}, {"cert_file", t.CertFile != ""}, {"key_file", t.KeyFile != ""},
			{"server_name", t.ServerName != ""}, {"insecure_skip_verify", t.InsecureSkipVerify},
		} {
			if f.set {
				ck.addf(path+"."+f.key, "requires %s.enabled: true", path)
			}
		}
		return
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		if t.CertFile == "" {
			ck.addf(path+".cert_file", "required with key_file (mutual TLS needs both)")
		} else {
			ck.addf(path+".key_file", "required with cert_file (mutual TLS needs both)")
		}
	}
	if t.InsecureSkipVerify && t.CAFile != "" {
		ck.addf(path+".insecure_skip_verify", "contradicts ca_file: set one or the other")
	}
}

// checkEnvName checks a token_env value. The value is never echoed: a
// misplaced literal token is the most likely reason it is not a name.
func checkEnvName(ck *checker, path, name string) {
	if !isEnvName(name) {
		ck.addf(path, "want the name of an environment variable ([A-Za-z_][A-Za-z0-9_]*); the value is not shown in case it is a literal token")
	}
}

// checkHostPort checks host:port; metrics allows an empty host (all
// interfaces) and port 0 (any free port).
func checkHostPort(ck *checker, path, v string, listen bool) {
	if v == "" {
		ck.addf(path, "required (host:port)")
		return
	}
	if strings.Contains(v, "://") {
		ck.addf(path, "want host:port without a scheme (TLS is set with tls.enabled), got %q", clip(v))
		return
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || (host == "" && !listen) || !validPort(port, listen) || strings.ContainsAny(host, "/ ") {
		ck.addf(path, "want host:port, got %q", clip(v))
	}
}

func validPort(p string, allowZero bool) bool {
	n, err := strconv.Atoi(p)
	if err != nil || n > 65535 || n < 0 || (n == 0 && !allowZero) {
		return false
	}
	return p[0] != '+' && p[0] != '-'
}

func positive(ck *checker, path string, d time.Duration) {
	if d <= 0 {
		ck.addf(path, "must be > 0, got %v", d)
	}
}
