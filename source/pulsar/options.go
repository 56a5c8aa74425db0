package pulsar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/thalweg/thalweg/batch"
)

// Defaults of the Options fields that have one.
const (
	DefaultType              = Failover
	DefaultReceiverQueueSize = 1000
	DefaultChannelSize       = batch.DefaultMaxRows
	DefaultMaxUnacked        = 10000
	DefaultAckBatch          = 1000
	DefaultPatternDiscovery  = 30 * time.Second
	DefaultOperationTimeout  = 30 * time.Second
	DefaultConnectionTimeout = 10 * time.Second
	DefaultFailoverHold      = 3 * time.Second
)

// DLQ message properties written by Source.DeadLetter beside the original
// record's own properties.
const (
	PropReason          = "thalweg-dlq-reason"           // why the record was rejected
	PropSourceTopic     = "thalweg-dlq-source-topic"     // topic-partition name it was consumed from
	PropSourcePartition = "thalweg-dlq-source-partition" // Pulsar partition index (decimal; -1: not partitioned)
	PropSourceSeq       = "thalweg-dlq-source-seq"       // Record.Seq: the broker entry index + 1 (decimal)
	PropSourceID        = "thalweg-dlq-source-id"        // Pulsar message id, "ledger:entry:batch:partition"
)

var (
	// ErrInvalidOptions wraps every Options validation error.
	ErrInvalidOptions = errors.New("source/pulsar: invalid options")
	// ErrClosed is returned by calls on a closed Source.
	ErrClosed = errors.New("source/pulsar: source closed")
	// ErrNoDeadLetterTopic is returned by DeadLetter when Options.DeadLetterTopic is empty.
	ErrNoDeadLetterTopic = errors.New("source/pulsar: no dead-letter topic configured")
	// ErrNoIndex wraps Next's error for a message that carries no broker
	// entry index, the identity every record is given (see the package
	// documentation). It is permanent: the broker's configuration must
	// change, and the Source emits nothing more.
	ErrNoIndex = errors.New("source/pulsar: message without a broker entry index; the broker must run with " +
		"brokerEntryMetadataInterceptors=org.apache.pulsar.common.intercept.AppendIndexMetadataInterceptor and " +
		"exposingBrokerEntryMetadataToClientEnabled=true")
	// ErrAuthentication wraps an Open that failed because the broker
	// refused the client's credentials (a wrong or expired token) or the
	// token could not be read.
	ErrAuthentication = errors.New("source/pulsar: authentication failed")
	// ErrTLS wraps an Open that failed because no TLS connection could be
	// established: a broker certificate the trusted CAs do not sign or that
	// does not name the host, or an unreadable Options.TLSTrustCertsFile.
	ErrTLS = errors.New("source/pulsar: TLS failed")
	// ErrDisconnected wraps Health's report of partition consumers that
	// lost their broker connection and are reconnecting.
	ErrDisconnected = errors.New("source/pulsar: not connected to the broker")
)

// listenerName is what the broker accepts as a listener name.
var listenerName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// SubscriptionType is the Pulsar subscription type. Its zero value selects
// DefaultType.
type SubscriptionType uint8

const (
	// Exclusive: one consumer; acknowledged cumulatively per partition.
	Exclusive SubscriptionType = iota + 1
	// Failover: one active consumer per partition, standbys take over;
	// acknowledged cumulatively per partition.
	Failover
	// Shared: messages spread over consumers; acknowledged individually.
	Shared
	// KeyShared: messages spread over consumers by key; acknowledged individually.
	KeyShared
)

func (t SubscriptionType) String() string {
	switch t {
	case Exclusive:
		return "exclusive"
	case Failover:
		return "failover"
	case Shared:
		return "shared"
	case KeyShared:
		return "key_shared"
	default:
		return fmt.Sprintf("SubscriptionType(%d)", uint8(t))
	}
}

// cumulative reports whether the type allows (and the Source uses)
// cumulative acknowledgement.
func (t SubscriptionType) cumulative() bool { return t == Exclusive || t == Failover }

// ParseSubscriptionType maps "exclusive", "failover", "shared" and
// "key_shared" (case-insensitive; "keyshared" and "key-shared" too) to a type.
func ParseSubscriptionType(s string) (SubscriptionType, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "exclusive":
		return Exclusive, nil
	case "failover":
		return Failover, nil
	case "shared":
		return Shared, nil
	case "key_shared", "keyshared", "key-shared":
		return KeyShared, nil
	}
	return 0, fmt.Errorf("%w: subscription type %q: want exclusive, failover, shared or key_shared", ErrInvalidOptions, s)
}

// Options configures Open.
type Options struct {
	// URL of the broker, pulsar://host:port or pulsar+ssl://host:port. Required.
	URL string
	// Token authenticates with a JWT. At most one of Token and TokenFile.
	Token string
	// TokenFile names a file holding the JWT; the client rereads it when it
	// reconnects, so a rotated token is picked up.
	TokenFile string
	// TLSTrustCertsFile is a PEM bundle of CAs that sign the broker's
	// certificate (pulsar+ssl:// only). Default: the system roots.
	TLSTrustCertsFile string
	// ListenerName selects which of the brokers' advertised listeners
	// (broker setting advertisedListeners) topic lookups answer with. A
	// broker can advertise one address per network it is reachable on — an
	// internal one, one behind NAT or a load balancer, one through a proxy
	// — and a client reaches the broker that owns a topic only at the
	// address of the listener it names. URL must itself be reachable from
	// this network. Letters, digits, '_' and '-'. Default: none, the
	// brokers' internal listener.
	ListenerName string

	// Topics to consume. Exactly one of Topics and TopicsPattern.
	// Partitioned topics are consumed partition by partition.
	Topics []string
	// TopicsPattern is a regular expression over full topic names of one
	// namespace, e.g. "persistent://public/default/orders-.*".
	TopicsPattern string
	// PatternDiscovery is how often TopicsPattern is re-evaluated.
	// Default DefaultPatternDiscovery.
	PatternDiscovery time.Duration

	// Subscription name. Required.
	Subscription string
	// Type of the subscription. Default DefaultType (Failover).
	Type SubscriptionType
	// StartLatest makes a new subscription start at the end of the topic
	// instead of its beginning. It has no effect on an existing subscription.
	StartLatest bool
	// ConsumerName is shown in the broker's stats. Default: chosen by the client.
	ConsumerName string

	// DeadLetterTopic receives rejected records (DeadLetter). Optional; when
	// empty DeadLetter returns ErrNoDeadLetterTopic.
	DeadLetterTopic string

	// FailoverHold (Failover only) is how long the first messages of a
	// partition whose active-consumer notification the client dropped wait
	// for one before they count as this consumer's; see the package
	// documentation. It must exceed the broker's
	// activeConsumerFailoverDelayTimeMillis (1 s by default). Default
	// DefaultFailoverHold.
	FailoverHold time.Duration
	// ReceiverQueueSize is the client's prefetch per partition.
	// Default DefaultReceiverQueueSize.
	ReceiverQueueSize int
	// ChannelSize is the room of the channel between the client's
	// partitions and Next, in messages: the client moves a message into it
	// (and asks its partition's broker for another) as soon as there is
	// room, so the Source prefetches up to ReceiverQueueSize per partition
	// plus ChannelSize. One batch of records (the assembler's MaxRows)
	// lets Next fill a batch without waiting on the client's goroutines.
	// Default DefaultChannelSize, one batch at batch.DefaultMaxRows.
	ChannelSize int
	// MaxUnacked bounds the records handed out by Next and not yet covered
	// by Ack; Next blocks while it is reached. Failover messages kept aside
	// while their partition's activation is undecided count against it
	// (see the package documentation). For Shared and KeyShared keep
	// MaxUnacked + ReceiverQueueSize + ChannelSize + AckBatch below the broker's
	// maxUnackedMessagesPerConsumer (50000 by default), or the broker stops
	// dispatching first. Default DefaultMaxUnacked.
	MaxUnacked int
	// AckBatch is the most message ids sent in one acknowledgement request.
	// Default DefaultAckBatch.
	AckBatch int

	// Positions is the durable store of delivered positions per
	// topic-partition: StorePositions(store, anchor) for thalweg's offset
	// store. When nil, nothing is recognised as already delivered after a
	// restart (unless Reconcile says so).
	Positions PositionStore
	// SoleConsumer asserts, for Shared and KeyShared, that this Source is
	// the only consumer of the subscription. Only then is the broker's
	// dispatch order per partition the broker's (Seq) order, which the restart
	// deduplication relies on; without it a Shared/KeyShared Source
	// recognises only redeliveries of records it still holds, and a restart
	// may repeat records (never lose them). Exclusive and Failover ignore it.
	SoleConsumer bool

	// Reconcile, when set, returns the raw anchor's positions: per
	// topic-partition name, the highest Seq the anchor holds (cmd wires it
	// to flight.Positions of the anchor's dataset). The Source calls it
	// before it judges the first message of a partition after Open, and
	// again after the broker makes it the active consumer of a Failover
	// partition (a takeover), and takes the higher of its own durable
	// position and the anchor's as delivered: messages at or below it are
	// acknowledged and not emitted (Stats.Deduplicated). So a worker with
	// an empty or lost store, or one taking over another's partitions,
	// does not send the anchor what it has. It is called from Next's
	// goroutine, with a context bounded by OperationTimeout and ended by
	// Close; the Source only reads the returned map. When it fails the
	// Source logs a warning (one per run of failures, then at most one per
	// 5 minutes), goes on with its own positions, and does not call it
	// again for a backoff that grows from 1 s to 1 min. Used only by a
	// monotone Source (Exclusive, Failover, or SoleConsumer; see the
	// package documentation): for other subscriptions a position says
	// nothing of the records below it. Default nil: no reconciliation.
	Reconcile func(ctx context.Context) (map[string]uint64, error)

	// OperationTimeout bounds the client's lookups and producer/consumer
	// creation, and each Reconcile call. Default DefaultOperationTimeout.
	OperationTimeout time.Duration
	// ConnectionTimeout bounds establishing a TCP connection.
	// Default DefaultConnectionTimeout.
	ConnectionTimeout time.Duration

	// Logger receives the Source's and the Pulsar client's log lines.
	// Default: slog.Default().
	Logger *slog.Logger
	// MeterProvider receives thalweg.source.unacked_wait{bound="pulsar"}:
	// the time Next waits at MaxUnacked. Default: a no-op provider.
	MeterProvider metric.MeterProvider

	// Schemas, when set, resolves the schema version of every message
	// (batch.ModeDecoded): Next sets Record.Schema to what it returns for
	// the message's topic and SchemaVersion(). An error wrapping
	// schemaevo.ErrIncompatible (a version incompatible with the topic's
	// earlier ones) is permanent: Next returns it, and so does every later
	// call. Every other error is taken as one that may heal: Next retries
	// it with growing backoff (see schema.go) until it succeeds or ctx
	// ends; a version that will never decode is a RowSchema that rejects
	// its records, not an error.
	// internal/pulsarschema's Resolver.Resolve is the implementation.
	Schemas func(ctx context.Context, topic string, version []byte) (batch.RowSchema, error)
}

func (o *Options) validate() error {
	var errs []error
	switch {
	case o.URL == "":
		errs = append(errs, errors.New("Options.URL is required"))
	case !strings.HasPrefix(o.URL, "pulsar://") && !strings.HasPrefix(o.URL, "pulsar+ssl://"):
		errs = append(errs, fmt.Errorf("Options.URL %q: want pulsar://host:port or pulsar+ssl://host:port", o.URL))
	}
	if o.Token != "" && o.TokenFile != "" {
		errs = append(errs, errors.New("Options.Token and Options.TokenFile are mutually exclusive"))
	}
	if o.TLSTrustCertsFile != "" && !strings.HasPrefix(o.URL, "pulsar+ssl://") {
		errs = append(errs, errors.New("Options.TLSTrustCertsFile needs a pulsar+ssl:// Options.URL"))
	}
	if o.ListenerName != "" && !listenerName.MatchString(o.ListenerName) {
		errs = append(errs, fmt.Errorf("Options.ListenerName %q: want letters, digits, '_' and '-'", o.ListenerName))
	}
	switch {
	case len(o.Topics) == 0 && o.TopicsPattern == "":
		errs = append(errs, errors.New("one of Options.Topics and Options.TopicsPattern is required"))
	case len(o.Topics) > 0 && o.TopicsPattern != "":
		errs = append(errs, errors.New("Options.Topics and Options.TopicsPattern are mutually exclusive"))
	}
	for i, t := range o.Topics {
		if strings.TrimSpace(t) == "" {
			errs = append(errs, fmt.Errorf("Options.Topics[%d] is empty", i))
		}
	}
	if o.TopicsPattern != "" {
		if _, err := regexp.Compile(o.TopicsPattern); err != nil {
			errs = append(errs, fmt.Errorf("Options.TopicsPattern: %w", err))
		}
	}
	if o.Subscription == "" {
		errs = append(errs, errors.New("Options.Subscription is required"))
	}
	if o.Type > KeyShared {
		errs = append(errs, fmt.Errorf("Options.Type %v is not a subscription type", o.Type))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Options.ReceiverQueueSize", o.ReceiverQueueSize}, {"Options.ChannelSize", o.ChannelSize},
		{"Options.MaxUnacked", o.MaxUnacked},
		{"Options.AckBatch", o.AckBatch}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s must be >= 0, got %d", f.name, f.v))
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"Options.PatternDiscovery", o.PatternDiscovery}, {"Options.OperationTimeout", o.OperationTimeout},
		{"Options.ConnectionTimeout", o.ConnectionTimeout}, {"Options.FailoverHold", o.FailoverHold}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s must be >= 0, got %v", f.name, f.v))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

func (o *Options) withDefaults() {
	if o.Type == 0 {
		o.Type = DefaultType
	}
	if o.ReceiverQueueSize == 0 {
		o.ReceiverQueueSize = DefaultReceiverQueueSize
	}
	if o.ChannelSize == 0 {
		o.ChannelSize = DefaultChannelSize
	}
	if o.FailoverHold == 0 {
		o.FailoverHold = DefaultFailoverHold
	}
	if o.MaxUnacked == 0 {
		o.MaxUnacked = DefaultMaxUnacked
	}
	if o.AckBatch == 0 {
		o.AckBatch = DefaultAckBatch
	}
	if o.PatternDiscovery == 0 {
		o.PatternDiscovery = DefaultPatternDiscovery
	}
	if o.OperationTimeout == 0 {
		o.OperationTimeout = DefaultOperationTimeout
	}
	if o.ConnectionTimeout == 0 {
		o.ConnectionTimeout = DefaultConnectionTimeout
	}
	if o.MeterProvider == nil {
		o.MeterProvider = noop.NewMeterProvider()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}
