package pulsarschema

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/thalweg/thalweg/internal/pulsaradmin"
)

// ErrNoSchema is matched by the Registry error for a topic (or version)
// the registry has no schema for: it will not heal by retrying.
var ErrNoSchema = errors.New("pulsarschema: no such schema in the registry")

// ErrRegistryInvalidOptions is wrapped by NewRegistry's errors.
var ErrRegistryInvalidOptions = errors.New("pulsarschema: invalid registry options")

// DefaultRegistryTimeout is the per-request timeout (the Admin client's
// Options.Timeout) the worker gives the registry's admin API requests.
const DefaultRegistryTimeout = 10 * time.Second

// RegistryOptions configures a Registry.
type RegistryOptions struct {
	// Admin is the client of the brokers' admin REST API the schemas are
	// fetched with (Client.Schema); it brings the URL, the token and the
	// CA. Required. The Registry does not close it.
	Admin *pulsaradmin.Client
	// JSONBytes is how JSON schemas' bytes fields are read. Default
	// JSONBytesAuto: per version, by how it was registered (see JSONBytes).
	JSONBytes JSONBytes
}

// Registry fetches topics' schemas from the admin REST API by version and
// keeps each compiled Codec, per topic and version, for its lifetime
// (schema versions are immutable in Pulsar).
//
// Safe for concurrent use; concurrent lookups of one version share one
// request. A failed request is not cached (the next lookup retries it); a
// schema that does not compile, or is absent (ErrNoSchema), is.
type Registry struct {
	opts RegistryOptions
	mu   struct {
		sync.Mutex
		entries map[regKey]*regEntry
	}
}

type regKey struct {
	topic   string // tenant/namespace/topic, no partition suffix
	version int64  // -1: latest
}

type regEntry struct {
	done  chan struct{}
	codec *Codec
	err   error
}

// NewRegistry validates o and returns a Registry.
func NewRegistry(o RegistryOptions) (*Registry, error) {
	var errs []error
	if o.Admin == nil {
		errs = append(errs, errors.New("RegistryOptions.Admin (the admin API client) is required"))
	}
	if o.JSONBytes > JSONBytesText {
		errs = append(errs, fmt.Errorf("RegistryOptions.JSONBytes %d is not one of JSONBytesAuto, JSONBytesBase64, JSONBytesText", o.JSONBytes))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrRegistryInvalidOptions, errors.Join(errs...))
	}
	r := &Registry{opts: o}
	r.mu.entries = map[regKey]*regEntry{}
	return r, nil
}

// VersionFromMessage converts a message's schema version, as the Pulsar
// clients expose it (Message.SchemaVersion(): the broker's 8-byte
// big-endian version), to the registry's version number; -1 (the latest
// version) when the message carries none.
func VersionFromMessage(v []byte) (int64, error) {
	switch len(v) {
	case 0:
		return -1, nil
	case 8:
		return int64(binary.BigEndian.Uint64(v)), nil
	}
	return 0, fmt.Errorf("pulsarschema: schema version of %d bytes, want 8", len(v))
}

var partitionSuffix = regexp.MustCompile(`-partition-[0-9]+$`)

// topicPath turns a topic name (persistent://t/n/x, t/n/x or a short name
// in public/default; a partition's name is its topic's) into
// tenant/namespace/topic.
func topicPath(topic string) (string, error) {
	t := topic
	if i := strings.Index(t, "://"); i >= 0 {
		t = t[i+3:]
	}
	t = partitionSuffix.ReplaceAllString(t, "")
	switch parts := strings.Split(t, "/"); {
	case len(parts) == 1 && parts[0] != "":
		return "public/default/" + parts[0], nil
	case len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != "":
		return t, nil
	}
	return "", fmt.Errorf("pulsarschema: topic name %q is not [persistent://]tenant/namespace/topic", topic)
}

// Codec returns the compiled schema version of topic (-1: the latest).
// Errors: ErrNoSchema (permanent), a Compile error (permanent), or a
// transport or server error (may heal: retry later). ctx bounds the wait,
// also for a request another caller started.
func (r *Registry) Codec(ctx context.Context, topic string, version int64) (*Codec, error) {
	path, err := topicPath(topic)
	if err != nil {
		return nil, err
	}
	k := regKey{topic: path, version: version}
	r.mu.Lock()
	e, ok := r.mu.entries[k]
	if !ok {
		e = &regEntry{done: make(chan struct{})}
		r.mu.entries[k] = e
		r.mu.Unlock()
		e.codec, e.err = r.fetch(ctx, k)
		if e.err != nil && !errors.Is(e.err, ErrNoSchema) && !isCompileError(e.err) {
			r.mu.Lock()
			delete(r.mu.entries, k) // transient: the next lookup asks again
			r.mu.Unlock()
		}
		close(e.done)
	} else {
		r.mu.Unlock()
	}
	select {
	case <-e.done:
		return e.codec, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func isCompileError(err error) bool {
	return errors.Is(err, ErrUnsupported) || errors.Is(err, ErrUnmappable) || errors.Is(err, ErrDefinition)
}

func (r *Registry) fetch(ctx context.Context, k regKey) (*Codec, error) {
	s, err := r.opts.Admin.Schema(ctx, k.topic, k.version)
	switch {
	case pulsaradmin.IsNotFound(err):
		return nil, fmt.Errorf("%w: %s version %d: %w", ErrNoSchema, k.topic, k.version, err)
	case err != nil:
		return nil, fmt.Errorf("pulsarschema: schema of %s version %d: %w", k.topic, k.version, err)
	}
	info, err := InfoOf(s)
	if err != nil {
		return nil, err
	}
	return CompileWith(info, r.opts.JSONBytes)
}
