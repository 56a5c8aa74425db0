package pulsar

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// The client's log messages connWatch reads, verbatim (pulsar-client-go
// v0.19): TestConnWatchContract produces each situation with the real client
// and broker and fails when the client stops writing one of them, so that a
// client upgrade that rewords a line cannot silently blind Health, Open's
// errors or Failover's lost notifications.
const (
	// internal/connection.go, per connection (field remote_addr).
	lineConnecting = "Connecting to broker"
	lineConnReady  = "Connection is ready"
	// consumer_partition.go, per partition consumer (field topic).
	lineReconnecting      = "Reconnecting to broker"
	lineReconnectFailed   = "Failed to create consumer at reconnect"
	lineReconnected       = "Reconnected consumer to broker"
	lineConsumerConnected = "Connected consumer"
	// internal/connection.go: an ActiveConsumerChange for a consumer id the
	// connection has not registered yet (field consumerID).
	lineNotificationLost = "Consumer not found while active consumer change"
	// consumer_partition.go discardCorruptedMessage (Error): the client
	// acknowledged a message it could not read and dropped it (fields topic,
	// msgID, validationError).
	lineDiscarded = "Discarding corrupted message"
	// internal/connection.go, connection failures (Warn), matched by
	// prefix; the cause is in field error, or after ": " for the broker's
	// refusal.
	prefixRefused    = "Failed to establish connection with broker"
	prefixCredential = "Failed to load auth credentials"
	prefixTLSConfig  = "Failed to configure TLS"
	prefixConnect    = "Failed to connect to broker"
	prefixHandshake  = "Failed to perform initial handshake"
)

// connWatch is the slog.Handler the Pulsar client logs through. It passes
// every record the Source's logger wants on to it, and keeps the newest
// reason the client logged for failing to establish a connection: the
// client itself retries until Options.OperationTimeout and then returns only
// "connection error", so without it a wrong token and an untrusted
// certificate would look the same as a broker that is down.
//
// Handlers derived with WithAttrs and WithGroup share the kept reason. Safe
// for concurrent use.
type connWatch struct {
	base  slog.Handler // the Source's handler, before any of the client's WithAttrs
	inner slog.Handler
	attrs []slog.Attr // from WithAttrs: the client adds "error" and "remote_addr" this way
	// grouped is set once WithGroup was called: attributes then no longer
	// sit at the top level, and WithAttrs only appends.
	grouped bool
	last    *connFailure
}

// connFailure is the newest connection failure the client logged, and
// which partition consumers are reconnecting.
type connFailure struct {
	mu     sync.Mutex
	kind   error // ErrAuthentication, ErrTLS or nil
	reason string
	// down holds, per topic-partition, since when its consumer has been
	// reconnecting ("Reconnecting to broker" until "Reconnected consumer
	// to broker").
	down map[string]time.Time
	// connecting holds, per broker address, since when a connection to it
	// has been being established ("Connecting to broker" until
	// "Connection is ready").
	connecting map[string]time.Time
	// lostIDs holds the consumer ids whose active-consumer notification
	// the client dropped because it arrived before the consumer was
	// registered; "Connected consumer" then names their topic to onLost.
	lostIDs map[string]bool
	onLost  func(topic string)
	// onDiscard hears of every message the client discarded: its
	// topic-partition, id (ledger:entry:partition) and the client's reason.
	onDiscard func(topic, id, reason string)
}

func newConnWatch(inner slog.Handler) *connWatch {
	return &connWatch{base: inner, inner: inner, last: &connFailure{
		down: map[string]time.Time{}, connecting: map[string]time.Time{}, lostIDs: map[string]bool{},
	}}
}

// setOnLost makes the watch report the topics whose active-consumer
// notification the client dropped (see activation).
func (h *connWatch) setOnLost(f func(topic string)) {
	h.last.mu.Lock()
	h.last.onLost = f
	h.last.mu.Unlock()
}

// setOnDiscard makes the watch report the messages the client discarded.
func (h *connWatch) setOnDiscard(f func(topic, id, reason string)) {
	h.last.mu.Lock()
	h.last.onDiscard = f
	h.last.mu.Unlock()
}

// Enabled is true at Info and above, where the client logs connection
// failures and reconnections, whatever the wrapped handler's level.
func (h *connWatch) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.inner.Enabled(ctx, l)
}

func (h *connWatch) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelInfo {
		h.observe(r)
	}
	if !h.inner.Enabled(ctx, r.Level) {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

// WithAttrs adds as. The client adds the same field again on derived
// loggers (serviceURL on lookups), and slog would then write the key twice
// in one line: a key already there takes the new value instead, by
// deriving the handler afresh from base.
func (h *connWatch) WithAttrs(as []slog.Attr) slog.Handler {
	merged := h.attrs[:len(h.attrs):len(h.attrs)]
	replaced := false
	for _, a := range as {
		i := slices.IndexFunc(merged, func(b slog.Attr) bool { return b.Key == a.Key })
		if i < 0 {
			merged = append(merged, a)
			continue
		}
		if !replaced {
			merged, replaced = slices.Clone(merged), true
		}
		merged[i] = a
	}
	inner := h.inner.WithAttrs(as)
	if replaced && !h.grouped {
		inner = h.base.WithAttrs(merged)
	}
	return &connWatch{base: h.base, inner: inner, attrs: merged, grouped: h.grouped, last: h.last}
}

func (h *connWatch) WithGroup(name string) slog.Handler {
	return &connWatch{base: h.base, inner: h.inner.WithGroup(name), attrs: h.attrs, grouped: true, last: h.last}
}

// observe keeps r's reason when r is one of the client's connection
// failures (pulsar-client-go v0.19 internal/connection.go).
func (h *connWatch) observe(r slog.Record) {
	var cause, remote, topic, consumerID, msgID, validation string
	find := func(a slog.Attr) bool {
		switch a.Key {
		case "msgID":
			msgID = formatMsgID(a.Value.Any())
		case "validationError":
			validation = fmt.Sprint(a.Value.Any())
		case "consumerID":
			consumerID = a.Value.String()
		case "error":
			cause = a.Value.String()
		case "remote_addr":
			remote = a.Value.String()
		case "topic":
			topic = a.Value.String()
		}
		return true
	}
	for _, a := range h.attrs {
		find(a)
	}
	r.Attrs(find)

	// Connection state: a connection's (internal/connection.go) and a
	// partition consumer's (consumer_partition.go). A broken connection is
	// not logged above Debug; the new one the client opens at once is, and
	// a consumer only once its first reconnection attempt failed.
	switch {
	case r.Message == lineDiscarded:
		h.last.mu.Lock()
		onDiscard := h.last.onDiscard
		h.last.mu.Unlock()
		if onDiscard != nil {
			onDiscard(topic, msgID, validation)
		}
		return
	case r.Message == lineConnecting:
		h.last.mu.Lock()
		if _, ok := h.last.connecting[remote]; !ok {
			h.last.connecting[remote] = r.Time
		}
		h.last.mu.Unlock()
		return
	case r.Message == lineConnReady:
		h.last.mu.Lock()
		delete(h.last.connecting, remote)
		h.last.mu.Unlock()
		return
	case r.Message == lineReconnecting, r.Message == lineReconnectFailed:
		h.last.mu.Lock()
		if _, ok := h.last.down[topic]; !ok {
			h.last.down[topic] = r.Time
		}
		h.last.mu.Unlock()
		return
	case r.Message == lineNotificationLost:
		// The broker notified a consumer the client registers only after
		// the subscription's answer (internal/connection.go).
		h.last.mu.Lock()
		h.last.lostIDs[consumerID] = true
		h.last.mu.Unlock()
		return
	case r.Message == lineReconnected, r.Message == lineConsumerConnected:
		h.last.mu.Lock()
		delete(h.last.down, topic)
		var onLost func(string)
		if r.Message == lineConsumerConnected && h.last.lostIDs[consumerID] {
			delete(h.last.lostIDs, consumerID)
			onLost = h.last.onLost
		}
		h.last.mu.Unlock()
		if onLost != nil {
			onLost(topic)
		}
		return
	}
	if r.Level < slog.LevelWarn {
		return
	}

	var kind error
	var reason string
	switch {
	case strings.HasPrefix(r.Message, prefixRefused):
		// The broker answered the handshake with an error; the client logs
		// only the broker's message, e.g. 'Failed to authenticate'.
		_, msg, _ := strings.Cut(r.Message, ": ")
		reason = "the broker refused the connection: " + strings.Trim(msg, "'")
		if strings.Contains(strings.ToLower(msg), "authenticat") {
			kind = ErrAuthentication
		}
	case strings.HasPrefix(r.Message, prefixCredential):
		reason, kind = "cannot read the token: "+cause, ErrAuthentication
	case strings.HasPrefix(r.Message, prefixTLSConfig):
		reason, kind = "TLS configuration: "+cause, ErrTLS
	case strings.HasPrefix(r.Message, prefixConnect):
		reason = cause
		if strings.HasPrefix(cause, "tls:") || strings.Contains(cause, "x509:") {
			kind = ErrTLS
		}
	case strings.HasPrefix(r.Message, prefixHandshake):
		reason = "handshake: " + cause
		if strings.HasPrefix(cause, "tls:") || strings.Contains(cause, "x509:") {
			kind = ErrTLS
		}
	default:
		return
	}
	if remote != "" {
		reason = remote + ": " + reason
	}
	h.last.mu.Lock()
	h.last.kind, h.last.reason = kind, reason
	h.last.mu.Unlock()
}

// formatMsgID writes the client's message id protobuf (MessageIdData) as
// the client's MessageID.String does: ledger:entry:partition.
func formatMsgID(v any) string {
	id, ok := v.(interface {
		GetLedgerId() uint64
		GetEntryId() uint64
		GetPartition() int32
	})
	if !ok {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%d:%d:%d", int64(id.GetLedgerId()), int64(id.GetEntryId()), id.GetPartition())
}

// health reports the partition consumers that are reconnecting, with the
// newest connection failure the client logged; nil when none is.
func (h *connWatch) health() error {
	h.last.mu.Lock()
	defer h.last.mu.Unlock()
	var err error
	switch {
	case len(h.last.down) > 0:
		topic, since := oldest(h.last.down)
		err = fmt.Errorf("%w: %d partition consumer(s) reconnecting, %s since %s", ErrDisconnected,
			len(h.last.down), topic, since.UTC().Format(time.RFC3339))
	case len(h.last.connecting) > 0:
		addr, since := oldest(h.last.connecting)
		err = fmt.Errorf("%w: connecting to %s since %s", ErrDisconnected, addr, since.UTC().Format(time.RFC3339))
	default:
		return nil
	}
	if h.last.reason != "" {
		err = fmt.Errorf("%w (last connection failure: %s)", err, h.last.reason)
	}
	return err
}

// oldest returns the key of m's earliest time, and the time.
func oldest(m map[string]time.Time) (key string, at time.Time) {
	for k, t := range m {
		if at.IsZero() || t.Before(at) {
			key, at = k, t
		}
	}
	return key, at
}

// explain adds the newest connection failure to err, the error of an Open
// step. Without one it returns err unchanged.
func (h *connWatch) explain(err error) error {
	h.last.mu.Lock()
	kind, reason := h.last.kind, h.last.reason
	h.last.mu.Unlock()
	switch {
	case reason == "":
		return err
	case kind != nil:
		return fmt.Errorf("%w: %s: %w", kind, reason, err)
	default:
		return fmt.Errorf("%w (last connection failure: %s)", err, reason)
	}
}
