package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
)

// Secret holds a resolved token. Every way of printing, logging or
// marshalling it yields a redaction marker; Reveal is the only way to read
// it, so a grep for Reveal finds every place a token leaves the process.
// The zero Secret is empty.
type Secret struct{ v string }

const (
	redacted    = "[REDACTED]"
	redactEmpty = "[EMPTY]"
)

// NewSecret wraps v.
func NewSecret(v string) Secret { return Secret{v: v} }

// Reveal returns the token, for the one call that sends it.
func (s Secret) Reveal() string { return s.v }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.v == "" }

// String returns [REDACTED], or [EMPTY] for an empty secret.
func (s Secret) String() string {
	if s.v == "" {
		return redactEmpty
	}
	return redacted
}

// GoString redacts %#v.
func (s Secret) GoString() string { return "config.Secret(" + s.String() + ")" }

// Format redacts every verb, including %d and %x, which would otherwise
// print the unexported field.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, s.GoString())
		return
	}
	_, _ = io.WriteString(f, s.String())
}

// LogValue redacts the secret in log/slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText redacts the secret in JSON, YAML and text encodings.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ErrSecret matches every failure to resolve a token.
var ErrSecret = errors.New("token unavailable")

// maxTokenFile bounds token_file reads: a token is small, and a wrong path
// must not read a disk image into memory.
const maxTokenFile = 64 << 10

// Token resolves the Pulsar token from TokenEnv or TokenFile. It returns
// the zero Secret and nil when neither is set. lookupEnv nil means
// os.LookupEnv. Errors wrap ErrSecret and name the variable or file, never
// the content.
func (a AuthConfig) Token(lookupEnv func(string) (string, bool)) (Secret, error) {
	switch {
	case a.TokenEnv != "":
		return tokenFromEnv(a.TokenEnv, lookupEnv)
	case a.TokenFile != "":
		return tokenFromFile(a.TokenFile)
	}
	return Secret{}, nil
}

// IcebergSecret resolves one of the iceberg section's *_env keys (its
// value, the variable's name): an empty name is an empty Secret.
func IcebergSecret(name string, lookupEnv func(string) (string, bool)) (Secret, error) {
	if name == "" {
		return Secret{}, nil
	}
	return tokenFromEnv(name, lookupEnv)
}

// Token resolves the destination's bearer token from TokenEnv; the zero
// Secret and nil when TokenEnv is empty. lookupEnv nil means os.LookupEnv.
func (d *DestinationConfig) Token(lookupEnv func(string) (string, bool)) (Secret, error) {
	if d.TokenEnv == "" {
		return Secret{}, nil
	}
	return tokenFromEnv(d.TokenEnv, lookupEnv)
}

// CheckSecrets resolves every configured token and reports each one that
// is unavailable, together with every problem CheckFiles finds, as one
// *Error with field paths. The tokens are discarded; the pipeline resolves
// them again when it connects. `thalweg run` calls it before starting
// anything (a reload, before draining the running pipeline), so a missing
// variable or file fails fast.
func (c *Config) CheckSecrets(lookupEnv func(string) (string, bool)) error {
	ck := checker{lines: c.lines}
	c.checkFiles(&ck) // the token file with the others
	if c.Source.Kind == SourcePulsar && c.Source.Auth.TokenEnv != "" {
		if _, err := c.Source.Auth.Token(lookupEnv); err != nil {
			ck.addErr("source.auth.token_env", err)
		}
	}
	for i := range c.Destinations {
		d := &c.Destinations[i]
		p := indexPath("destinations", i)
		if _, err := d.Token(lookupEnv); err != nil {
			ck.addErr(p+".token_env", err)
		}
		if d.Kind != KindIceberg {
			continue
		}
		for _, k := range []struct{ key, env string }{
			{".iceberg.catalog.token_env", d.Iceberg.Catalog.TokenEnv},
			{".iceberg.catalog.credential_env", d.Iceberg.Catalog.CredentialEnv},
			{".iceberg.s3.secret_access_key_env", d.Iceberg.S3.SecretAccessKeyEnv},
			{".iceberg.s3.session_token_env", d.Iceberg.S3.SessionTokenEnv},
		} {
			if _, err := IcebergSecret(k.env, lookupEnv); err != nil {
				ck.addErr(p+k.key, err)
			}
		}
	}
	return c.fileErr(ck.err())
}

func tokenFromEnv(name string, lookupEnv func(string) (string, bool)) (Secret, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	v, ok := lookupEnv(name)
	if !ok {
		return Secret{}, fmt.Errorf("%w: environment variable %s is not set", ErrSecret, name)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return Secret{}, fmt.Errorf("%w: environment variable %s is empty", ErrSecret, name)
	}
	return Secret{v: v}, nil
}

func tokenFromFile(path string) (Secret, error) {
	f, err := os.Open(path)
	if err != nil {
		return Secret{}, tokenFileError(path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return Secret{}, tokenFileError(path, err)
	}
	if len(b) > maxTokenFile {
		return Secret{}, fmt.Errorf("%w: token file %s is larger than %d bytes", ErrSecret, path, maxTokenFile)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return Secret{}, fmt.Errorf("%w: token file %s is empty", ErrSecret, path)
	}
	return Secret{v: v}, nil
}

// tokenFileError names the token file and the reason once: "token file
// /run/tok: permission denied" (the *fs.PathError stays reachable through
// errors.As, and ErrSecret through errors.Is).
func tokenFileError(path string, err error) error {
	reason := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		reason = pe.Err
	}
	return &tokenError{path: path, reason: reason, err: err}
}

type tokenError struct {
	path   string
	reason error
	err    error
}

func (e *tokenError) Error() string {
	return ErrSecret.Error() + ": token file " + e.path + ": " + e.reason.Error()
}
func (e *tokenError) Unwrap() []error { return []error{ErrSecret, e.err} }

// tokenSource describes where a token comes from, never the token.
func tokenSource(env, file string) string {
	switch {
	case env != "":
		return "env:" + env
	case file != "":
		return "file:" + file
	}
	return "none"
}

// LogValue shows where the token comes from (env:NAME, file:PATH, none),
// never a token.
func (a AuthConfig) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("token", tokenSource(a.TokenEnv, a.TokenFile))}
	if a.TLSCAFile != "" {
		attrs = append(attrs, slog.String("tls_ca_file", a.TLSCAFile))
	}
	return slog.GroupValue(attrs...)
}

// LogValue summarises the destination for logs; the token appears as its
// source (env:NAME), never its value.
func (d DestinationConfig) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("name", d.Name),
		slog.String("kind", string(d.Kind)),
		slog.String("role", string(d.Role)),
		slog.String("endpoint", d.Endpoint),
		slog.Bool("tls", d.TLS.Enabled),
		slog.String("token", tokenSource(d.TokenEnv, "")),
		slog.String("compression", string(d.Compression)),
		slog.Int("lane_capacity", d.Lane.Capacity),
		slog.String("lane_max_bytes", d.Lane.MaxBytes.String()),
	}
	switch d.Kind {
	case KindFlight:
		attrs = append(attrs, slog.Any("path", d.Path))
	case KindZerobus:
		attrs = append(attrs, slog.String("table", d.Table), slog.String("mode", string(d.Mode)))
	}
	return slog.GroupValue(attrs...)
}

// LogValue summarises the configuration for the startup log line.
func (c *Config) LogValue() slog.Value {
	src := []slog.Attr{slog.String("kind", string(c.Source.Kind))}
	if c.Source.Kind == SourcePulsar {
		src = append(src,
			slog.String("url", c.Source.URL),
			slog.Any("topics", c.Source.Topics),
			slog.String("subscription", c.Source.Subscription.Name),
			slog.Any("auth", c.Source.Auth),
		)
		if c.Source.ListenerName != "" {
			src = append(src, slog.String("listener_name", c.Source.ListenerName))
		}
	}
	attrs := []slog.Attr{
		slog.Any("source", slog.GroupValue(src...)),
		slog.String("schema", string(c.Schema.Mode)),
		slog.Int("max_rows", c.Batching.MaxRows),
		slog.String("max_bytes", c.Batching.MaxBytes.String()),
		slog.Duration("linger", c.Batching.Linger),
		slog.String("store", c.Store.Dir),
	}
	for _, d := range c.Destinations {
		attrs = append(attrs, slog.Any("destination."+d.Name, d))
	}
	return slog.GroupValue(attrs...)
}
