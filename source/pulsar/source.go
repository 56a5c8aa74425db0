package pulsar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/errlog"
	"github.com/thalweg/thalweg/internal/instruments"
	"github.com/thalweg/thalweg/internal/schemaevo"
	"github.com/thalweg/thalweg/observability"
)

// dedupFlushAge bounds how long acknowledgements of recognised duplicates
// wait to be batched while messages keep arriving.
const dedupFlushAge = 100 * time.Millisecond

// redeliveryDelay is how long after dropping a message it cannot emit yet
// (a Failover message dispatched before activation; a message past a hole)
// the Source asks the broker to send it again (a negative
// acknowledgement), should the broker's own rewind not have.
const redeliveryDelay = 5 * time.Second

// Stats are cumulative counters of one Source.
type Stats struct {
	Received     uint64 // messages taken from the consumer
	Emitted      uint64 // records handed out by Next
	Deduplicated uint64 // received messages recognised as delivered or in flight, not emitted
	Early        uint64 // Failover: messages dispatched before this consumer was made active, left for the broker's redelivery
	Holes        uint64 // Exclusive, Failover: messages dropped because seqs were missing in front of them, asked again
	Discarded    uint64 // messages the Pulsar client discarded (and acknowledged) without handing them out: never stored
	Lost         uint64 // Exclusive, Failover: seqs missing in gaps the client's discards explain: records never stored
	Skipped      uint64 // Exclusive, Failover: seqs missing in gaps the broker made (trim, expiry, skip, reset)
	Acked        uint64 // records covered by Ack (also those whose acknowledgement the broker refused)
	AckErrors    uint64 // acknowledgement requests the client or broker refused
	DeadLettered uint64 // records DeadLetter published
	Outstanding  int    // emitted records not yet covered by Ack

	Reconciled      uint64 // Options.Reconcile calls that answered
	ReconcileErrors uint64 // Options.Reconcile calls that failed (the Source went on with its own positions)
}

// entry is an emitted record awaiting its durable acknowledgement.
type entry struct {
	seq uint64
	id  pclient.MessageID // the id the client handed out: the only kind ever acknowledged
}

// partition is the per topic-partition state. Guarded by Source.mu, except
// reconcileFrom (Next's goroutine only).
type partition struct {
	name string // the topic-partition: Record.Partition and OffsetSpan.Partition

	// durable is the Seq of the newest record known durably delivered: from
	// the PositionStore at Open, raised by Ack and by Options.Reconcile.
	// Used only when the Source is monotone.
	durable uint64
	// last is the Seq of the newest record emitted in this run (monotone
	// only); 0 before the first.
	last uint64

	// out holds the emitted records not yet acknowledged, in the order
	// Next emitted them: ascending Seq when the Source is monotone.
	out entryRing
	// inflight holds the Seqs in out when the Source is not monotone, to
	// recognise a redelivery of a record still in flight.
	inflight map[uint64]struct{}

	// hole, when set, is a hole in front of the messages this (monotone,
	// cumulative) Source has been sent: see holeLocked.
	hole *holeWait

	// reconcileFrom, when set, asks for Options.Reconcile before the next
	// message of the partition is judged: anchor positions fetched at or
	// after this time apply (set at the partition's first message after
	// Open, and when the broker makes this consumer active on it).
	reconcileFrom time.Time
}

// entryRing is a FIFO of entries in a ring buffer that only grows (by
// doubling, when full): a steady stream of pushes and pops reuses its slots
// and allocates nothing, where an appended slice reallocated as it crept
// forward. Its capacity follows the most records the partition ever had
// outstanding, which MaxUnacked bounds. Not safe for concurrent use.
type entryRing struct {
	buf  []entry // len is a power of two, or 0
	head int     // index of the oldest entry
	n    int     // entries held
}

func (r *entryRing) len() int { return r.n }

// front is the oldest entry; the ring must not be empty.
func (r *entryRing) front() *entry { return &r.buf[r.head] }

func (r *entryRing) push(e entry) {
	if r.n == len(r.buf) {
		grown := make([]entry, max(2*len(r.buf), 64))
		k := copy(grown, r.buf[r.head:])
		copy(grown[k:], r.buf[:r.head])
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = e
	r.n++
}

// pop removes the oldest entry; the ring must not be empty. The slot is
// cleared so that the ring does not keep the message id alive.
func (r *entryRing) pop() entry {
	e := r.buf[r.head]
	r.buf[r.head] = entry{}
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return e
}

func (p *partition) pending() int { return p.out.len() }

func (p *partition) pop() entry { return p.out.pop() }

// Source consumes Pulsar topics as thalweg records. See the package
// documentation for the sequence numbering, deduplication and
// acknowledgement rules.
//
// Goroutine safety: Next must be called from one goroutine at a time;
// DeadLetter from any goroutine (the pipeline calls it from Next's); Ack from
// any goroutine, and calls to it are serialised; Stats from anywhere. Close
// may be called concurrently with the others: it makes a blocked Next return
// ErrClosed and later calls fail with ErrClosed.
type Source struct {
	opts      Options
	log       *slog.Logger
	positions PositionStore
	client    pclient.Client
	consumer  pclient.Consumer
	dlq       pclient.Producer // nil without Options.DeadLetterTopic
	// monotone: the broker dispatches each partition's messages to this
	// consumer in its order, the order of Seq (Exclusive, Failover, or a
	// sole Shared / KeyShared consumer), so every Seq at or below one
	// emitted before was received before too.
	monotone bool

	// outstanding counts the emitted records not yet covered by Ack,
	// at most MaxUnacked. Only Next raises it (one goroutine at a time),
	// so its check and add need no lock; Ack lowers it and then signals
	// freed (capacity 1), which a Next waiting at the bound receives. A
	// channel with a token per record cost a channel operation per record
	// on both sides.
	outstanding atomic.Int64
	freed       chan struct{}
	closing     chan struct{} // closed by Close
	closed      chan struct{} // closed once the client is closed (Done)
	// consumerClosing is set just before Close closes the consumer: from
	// then on no acknowledgement may start (see ackable).
	consumerClosing atomic.Bool
	closeOnce       sync.Once

	unacked *instruments.UnackedWait // times Next's waits for a slot; set last by Open
	loss    *instruments.SourceLoss  // discards and gaps; set by Open before the client starts

	// drops holds, per topic-partition, the messages the client discarded
	// (connWatch hears of them on the client's goroutines) that no gap has
	// accounted for yet: "ledger:entry:partition (reason)". A leaf lock.
	drops struct {
		sync.Mutex
		byTopic map[string][]string
	}

	// nextMu is held by Next for its whole call and by Close; it guards the
	// fields below it, which only Next (and Close, after Next returned) use.
	nextMu   sync.Mutex
	held     pclient.Message // taken (see take), not yet emitted (Next's ctx ended first)
	failed   error           // permanent: every later Next returns it (ErrNoIndex)
	byName   map[string]*partition
	keyBuf   []byte                       // Record.Key of the last Next
	idBuf    []byte                       // Record.ID of the last Next
	earlyRun map[string]int               // per topic-partition: early messages since its last ordinary one
	dedupCum map[string]pclient.MessageID // cumulative: newest duplicate at or below durable, per partition
	dedupIDs []pclient.MessageID          // individual: duplicates at or below durable
	dedupAt  time.Time                    // when the oldest pending duplicate ack was queued
	recon    reconciler                   // Options.Reconcile's answers and backoff
	openedAt time.Time                    // every partition's first message reconciles with answers from after it

	// aside holds, per topic-partition, the messages received while the
	// partition's activation is undecided (activation.judge), in arrival
	// order, and every later message of the partition behind them; asideN
	// counts them. See take.
	aside  map[string][]pclient.Message
	asideN int

	// ackMu serialises Ack so that acknowledgements leave in the order the
	// pipeline released them.
	ackMu sync.Mutex

	mu struct {
		sync.Mutex
		parts  map[string]*partition // by topic-partition name
		closed bool
	}

	// activated holds, per topic-partition, when the broker last made this
	// consumer active on it (Failover), until Next takes it into the
	// partition's reconcileFrom. Written on the client's goroutine, which
	// must not call Options.Reconcile. A leaf lock.
	activated struct {
		sync.Mutex
		at map[string]time.Time
	}
	activatedN atomic.Int32 // len(activated.at), read by Next without the lock

	received, emitted, deduplicated, early, holes, acked, ackErrors, deadLettered atomic.Uint64
	discarded, lost, skipped                                                      atomic.Uint64
	reconciled, reconcileErrors                                                   atomic.Uint64

	// watch sees the client's log: why a connection failed, and which
	// partition consumers are reconnecting (Health).
	watch *connWatch

	// activation recognises messages dispatched before the broker made this
	// consumer active on their partition (Failover only; nil otherwise).
	activation *activation
}

// Open validates opts, connects, reads the durable positions and subscribes.
// Each attempt to create the consumer and dead-letter producer is bounded
// by Options.OperationTimeout. A failure that heals (the broker unreachable
// or still opening its topics, a lookup or an operation that timed out, an
// exclusive subscription another consumer still holds) is retried with
// growing backoff until ctx ends, logged once and then as a periodic
// summary; one that will not (credentials or TLS refused, a topic or name
// the broker refuses, a configuration it does not support) is returned at
// once. The error carries the last connection failure the client gave and
// wraps ErrAuthentication or ErrTLS when that is the cause. The caller must
// Close the returned Source.
func Open(ctx context.Context, opts Options) (*Source, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.withDefaults()
	opts.Topics = append([]string(nil), opts.Topics...)
	s := newSource(opts)
	delivered, err := s.positions.Delivered()
	if err != nil {
		return nil, fmt.Errorf("source/pulsar: read delivered positions: %w", err)
	}
	for name, pos := range delivered {
		s.mu.parts[name] = &partition{name: name, durable: pos.Seq}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// The client retries a failing connection until OperationTimeout and
	// then reports only "connection error"; the reason is in its log lines,
	// which watch keeps so that a failed Open can say why.
	s.watch = newConnWatch(opts.Logger.Handler())
	if s.loss, err = instruments.NewSourceLoss(opts.MeterProvider); err != nil {
		return nil, fmt.Errorf("source/pulsar: Options.MeterProvider: %w", err)
	}
	s.watch.setOnDiscard(s.discard)
	co := pclient.ClientOptions{
		URL:                   opts.URL,
		ListenerName:          opts.ListenerName,
		OperationTimeout:      opts.OperationTimeout,
		ConnectionTimeout:     opts.ConnectionTimeout,
		TLSTrustCertsFilePath: opts.TLSTrustCertsFile,
		Logger:                plog.NewLoggerWithSlog(slog.New(s.watch)),
		// The client's Prometheus collectors stay out of the process-wide
		// registry: thalweg's own metrics are OpenTelemetry instruments.
		MetricsRegisterer: prometheus.NewRegistry(),
	}
	switch {
	case opts.Token != "":
		co.Authentication = pclient.NewAuthenticationToken(opts.Token)
	case opts.TokenFile != "":
		// The client reads the file too (and again on every reconnect);
		// reading it here first turns a missing or empty file into an
		// ErrAuthentication that names it.
		if err := checkTokenFile(opts.TokenFile); err != nil {
			return nil, err
		}
		co.Authentication = pclient.NewAuthenticationTokenFromFile(opts.TokenFile)
	}
	s.client, err = pclient.NewClient(co)
	if err != nil {
		return nil, fmt.Errorf("source/pulsar: client for %s: %w", opts.URL, err)
	}
	if err := s.subscribeRetrying(ctx); err != nil {
		s.client.Close()
		return nil, err
	}
	// Last: no error after it leaves its callback registered.
	if s.unacked, err = instruments.NewUnackedWait(opts.MeterProvider, observability.BoundPulsar); err != nil {
		s.Close()
		return nil, fmt.Errorf("source/pulsar: Options.MeterProvider: %w", err)
	}
	return s, nil
}

// newSource builds a Source for opts (validated, defaulted) without
// connecting: Open adds the client and the consumer.
func newSource(opts Options) *Source {
	s := &Source{
		opts:      opts,
		log:       opts.Logger.With("component", "source/pulsar"),
		positions: opts.Positions,
		monotone:  opts.Type.cumulative() || opts.SoleConsumer,
		freed:     make(chan struct{}, 1),
		closing:   make(chan struct{}),
		closed:    make(chan struct{}),
		byName:    map[string]*partition{},
		dedupCum:  map[string]pclient.MessageID{},
		earlyRun:  map[string]int{},
		openedAt:  time.Now(),
	}
	// Open replaces it with the instruments of Options.MeterProvider.
	s.loss, _ = instruments.NewSourceLoss(noop.NewMeterProvider())
	if s.positions == nil {
		s.positions = memPositions{}
	}
	s.mu.parts = map[string]*partition{}
	s.activated.at = map[string]time.Time{}
	return s
}

// checkTokenFile reports, as ErrAuthentication, a token file that cannot
// be read or holds only whitespace.
func checkTokenFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: token file: %w", ErrAuthentication, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return fmt.Errorf("%w: token file %s is empty", ErrAuthentication, path)
	}
	return nil
}

func (s *Source) subscribe(ctx context.Context) error {
	o := s.opts
	co := pclient.ConsumerOptions{
		Topics:                      o.Topics,
		TopicsPattern:               o.TopicsPattern,
		AutoDiscoveryPeriod:         o.PatternDiscovery,
		SubscriptionName:            o.Subscription,
		Type:                        clientType(o.Type),
		SubscriptionInitialPosition: pclient.SubscriptionPositionEarliest,
		Name:                        o.ConsumerName,
		ReceiverQueueSize:           o.ReceiverQueueSize,
		// Acknowledgements are sent when the broker confirms them, so Ack
		// reports refusals instead of losing them in the grouping tracker.
		AckWithResponse: true,
		// An acknowledgement with response bypasses the client's grouping
		// tracker, so grouping would only cost: by default every partition
		// runs a 100 ms ticker and checks every message against the
		// tracker's empty state under a lock. Size 1 makes it a no-op.
		AckGroupingOptions: &pclient.AckGroupingOptions{MaxSize: 1},
		// The channel in front of Next, with room for a batch instead of
		// the client's 10 (doc.go, "Prefetch").
		MessageChannel: make(chan pclient.ConsumerMessage, o.ChannelSize),
	}
	if o.Type == Failover {
		// The queue of every partition, the channel in front of Next and
		// the messages Next sets aside (at most MaxUnacked).
		s.activation = newActivation(s.log, max(1<<16, 4*(o.ReceiverQueueSize*len(o.Topics)+o.ChannelSize+o.MaxUnacked)), o.FailoverHold)
		if s.reconciling() {
			s.activation.onActive = s.markActivated
		}
		s.watch.setOnLost(s.activation.lost)
		co.EventListener = s.activation
		co.Interceptors = pclient.ConsumerInterceptors{s.activation}
	}
	if o.Type.cumulative() {
		// Early messages and messages past a hole are negatively
		// acknowledged (see Next), so that a rewind that does not come
		// cannot leave them undelivered.
		co.NackRedeliveryDelay = redeliveryDelay
	}
	if o.StartLatest {
		co.SubscriptionInitialPosition = pclient.SubscriptionPositionLatest
	}
	var err error
	if s.consumer, err = s.client.Subscribe(co); err != nil {
		return fmt.Errorf("source/pulsar: subscribe %q (%v) to %s: %w", o.Subscription, o.Type, s.topicsString(), err)
	}
	if err := ctx.Err(); err != nil {
		s.consumer.Close()
		return err
	}
	if o.DeadLetterTopic != "" {
		s.dlq, err = s.client.CreateProducer(pclient.ProducerOptions{
			Topic: o.DeadLetterTopic,
			// One record at a time, each waited for: no batching delay.
			DisableBatching: true,
			// DeadLetter bounds each Send with a context instead; the
			// client's send-timeout goroutine would outlive Close by up
			// to the timeout.
			SendTimeout: -1,
		})
		if err != nil {
			s.consumer.Close()
			return fmt.Errorf("source/pulsar: dead-letter producer for %q: %w", o.DeadLetterTopic, err)
		}
	}
	return nil
}

// subscribeRetrying subscribes, retrying a failure that heals (see Open)
// with growing backoff until ctx ends.
func (s *Source) subscribeRetrying(ctx context.Context) error {
	retries := errlog.Throttle{Log: s.log, What: "cannot subscribe yet; retrying"}
	for attempt := 0; ; attempt++ {
		err := s.subscribe(ctx)
		if err == nil {
			retries.Clear()
			return nil
		}
		err = s.watch.explain(err)
		if ctx.Err() != nil || !heals(err) {
			return err
		}
		// A broker answers a lookup for a listener it does not have with
		// ServiceNotReady, as it does while it starts: with a listener
		// named, a few of them are taken at their word.
		if s.opts.ListenerName != "" && attempt >= listenerAttempts-1 && strings.Contains(err.Error(), "ServiceNotReady") {
			return fmt.Errorf("%w (after %d attempts; does the broker have a listener named %q?)", err, attempt+1, s.opts.ListenerName)
		}
		retries.Fail(err, "topics", s.topicsString(), "subscription", s.opts.Subscription)
		t := time.NewTimer(subscribeBackoff(attempt))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (while retrying: %w)", ctx.Err(), err)
		}
	}
}

// listenerAttempts is how many ServiceNotReady answers Open takes, with
// Options.ListenerName set, before it reports the listener.
const listenerAttempts = 3

// subscribeBackoff is the wait after the failed attempt n (from 0): 500 ms
// doubling to 30 s.
func subscribeBackoff(n int) time.Duration {
	return min(30*time.Second, 500*time.Millisecond<<min(n, 6))
}

// heals reports whether a failed subscription may succeed when tried
// again: anything but refused credentials or TLS and the client results
// that name a request the broker will never accept.
func heals(err error) bool {
	if errors.Is(err, ErrAuthentication) || errors.Is(err, ErrTLS) {
		return false
	}
	var pe *pclient.Error
	if !errors.As(err, &pe) {
		return true
	}
	switch pe.Result() {
	case pclient.InvalidConfiguration, pclient.AuthenticationError, pclient.AuthorizationError,
		pclient.ErrorGettingAuthenticationData, pclient.InvalidTopicName, pclient.InvalidURL,
		pclient.TopicNotFound, pclient.SubscriptionNotFound, pclient.OperationNotSupported,
		pclient.UnsupportedVersionError, pclient.TopicTerminated, pclient.CryptoError:
		return false
	}
	return true
}

func (s *Source) topicsString() string {
	if s.opts.TopicsPattern != "" {
		return "pattern " + strconv.Quote(s.opts.TopicsPattern)
	}
	return fmt.Sprintf("%q", s.opts.Topics)
}

func clientType(t SubscriptionType) pclient.SubscriptionType {
	switch t {
	case Exclusive:
		return pclient.Exclusive
	case Shared:
		return pclient.Shared
	case KeyShared:
		return pclient.KeyShared
	default:
		return pclient.Failover
	}
}

// Next fills rec with the next record that was not delivered before. It
// blocks until a message arrives, MaxUnacked records are outstanding (until
// Ack frees some), ctx ends (ctx.Err()) or Close is called (ErrClosed).
//
// rec.Payload and rec.Props belong to the message, rec.ID and rec.Key to the
// Source; all are read-only and stay valid until the next call of Next (the
// assembler copies what it keeps). A message received when ctx ends is kept
// and returned by the next call: nothing is skipped.
//
// A message without a broker entry index ends the Source: Next returns an
// error wrapping ErrNoIndex, and so does every later call; nothing further
// is emitted or acknowledged.
func (s *Source) Next(ctx context.Context, rec *batch.Record) error {
	s.nextMu.Lock()
	defer s.nextMu.Unlock()
	select {
	case <-s.closing:
		return ErrClosed
	default:
	}
	if s.failed != nil {
		return s.failed
	}
	for {
		msg, err := s.take(ctx)
		if err != nil {
			return err
		}
		if len(s.earlyRun) > 0 {
			if n := s.earlyRun[msg.Topic()]; n > 0 {
				delete(s.earlyRun, msg.Topic())
				s.log.Info("left messages dispatched before this consumer was active to the broker's redelivery",
					"topic", msg.Topic(), "messages", n)
			}
		}
		seq, err := SeqOf(msg)
		if err != nil {
			// Permanent: without the index there is no identity to give
			// the record, and guessing one would collide.
			s.failed = err
			return err
		}
		p := s.partitionFor(msg.Topic())
		if err := s.reconcileIfDue(ctx, p); err != nil {
			s.held = msg
			return err
		}
		schema, err := s.schemaFor(ctx, msg) // nil without Options.Schemas
		if errors.Is(err, schemaevo.ErrIncompatible) {
			s.failed = err // permanent, like ErrNoIndex
			return err
		}
		if err != nil {
			s.held = msg
			return err
		}
		id := msg.ID()

		s.mu.Lock()
		if s.holeLocked(p, seq, msg) {
			s.mu.Unlock()
			s.consumer.Nack(msg)
			s.holes.Add(1)
			continue
		}
		dup, covered := s.classifyLocked(p, seq)
		emitted := false
		if !dup && !s.atBound() {
			s.outstanding.Add(1)
			s.pushLocked(p, seq, id)
			emitted = true
		}
		s.mu.Unlock()

		if dup {
			s.deduplicated.Add(1)
			if covered {
				s.queueDedupAck(p.name, id)
			}
			if !s.dedupAt.IsZero() && time.Since(s.dedupAt) >= dedupFlushAge {
				s.flushDedup()
			}
			continue
		}
		if !emitted {
			// Backpressure: MaxUnacked records await Ack. Acknowledge what
			// was recognised first, so nothing of ours holds the broker.
			s.flushDedup()
			w := s.unacked.Begin() // only here, at the bound: never per record
			for s.atBound() {
				select {
				case <-s.freed: // a stale token only costs one more check
				case <-ctx.Done():
					w.End()
					s.held = msg
					return ctx.Err()
				case <-s.closing:
					w.End()
					s.held = msg
					return ErrClosed
				}
			}
			w.End()
			s.outstanding.Add(1)
			s.mu.Lock()
			s.pushLocked(p, seq, id)
			s.mu.Unlock()
		}
		s.emitted.Add(1)
		rec.Partition = p.name
		rec.Seq = seq
		s.idBuf = appendID(s.idBuf[:0], id, unbatchedOf(msg))
		rec.ID = s.idBuf
		if k := msg.Key(); k != "" {
			s.keyBuf = append(s.keyBuf[:0], k...)
			rec.Key = s.keyBuf
		} else {
			rec.Key = nil
		}
		rec.EventTime = eventTimeOf(msg)
		rec.PublishTime = msg.PublishTime()
		rec.Props = msg.Properties()
		rec.Payload = msg.Payload()
		rec.Schema = schema
		return nil
	}
}

// atBound reports whether Next must wait for Ack before it emits another
// record: MaxUnacked records are outstanding or set aside. Messages set
// aside count against the bound (their memory is the records'), but never
// hold a record back alone: with nothing outstanding no Ack would come.
// Next's goroutine only.
func (s *Source) atBound() bool {
	out := s.outstanding.Load()
	return out >= int64(s.opts.MaxUnacked) || out > 0 && out+int64(s.asideN) >= int64(s.opts.MaxUnacked)
}

// take returns the next message Next may emit (unless it is a duplicate or
// past a hole): the one kept from the previous call, one set aside whose
// partition turned out this consumer's, or one received. On a Failover
// subscription it drops (and negatively acknowledges) early messages, and
// sets aside, per partition and in arrival order, the messages of a
// partition whose activation is undecided (activation.judge), with every
// later message of that partition behind them; the other partitions go on
// meanwhile. Next's goroutine only.
func (s *Source) take(ctx context.Context) (pclient.Message, error) {
	if msg := s.held; msg != nil {
		s.held = nil
		return msg, nil
	}
	for {
		var wake time.Time // the earliest hold that ends, while messages are aside
		if s.asideN > 0 {
			var msg pclient.Message
			if msg, wake = s.fromAside(); msg != nil {
				return msg, nil
			}
		}
		msg, err := s.receive(ctx, wake)
		if err != nil {
			return nil, err
		}
		if msg == nil {
			continue // a run was decided, a hold ended or Ack freed room
		}
		s.received.Add(1)
		if s.activation == nil {
			return msg, nil
		}
		topic := msg.Topic()
		if s.asideN > 0 {
			if q := s.aside[topic]; len(q) > 0 {
				s.aside[topic] = append(q, msg) // behind the partition's older ones
				s.asideN++
				continue
			}
		}
		switch v, _ := s.activation.judge(msg); v {
		case verdictOurs:
			return msg, nil
		case verdictEarly:
			s.dropEarly(msg)
		default:
			if s.aside == nil {
				s.aside = map[string][]pclient.Message{}
			}
			s.aside[topic] = append(s.aside[topic], msg)
			s.asideN++
		}
	}
}

// fromAside returns the oldest message set aside of a partition whose
// activation is decided as this consumer's, dropping early ones on the
// way; or nil and the earliest time a partition still waiting is decided
// by the end of its hold. Next's goroutine only.
func (s *Source) fromAside() (pclient.Message, time.Time) {
	var wake time.Time
	for topic, q := range s.aside {
		for len(q) > 0 {
			v, deadline := s.activation.judge(q[0])
			if v == verdictUndecided {
				if wake.IsZero() || deadline.Before(wake) {
					wake = deadline
				}
				break
			}
			msg := q[0]
			q[0] = nil // the slice must not keep it alive
			q = q[1:]
			s.asideN--
			if v == verdictEarly {
				s.dropEarly(msg)
				continue
			}
			if len(q) == 0 {
				delete(s.aside, topic)
			} else {
				s.aside[topic] = q
			}
			return msg, time.Time{}
		}
		if len(q) == 0 {
			delete(s.aside, topic)
		} else {
			s.aside[topic] = q
		}
	}
	return nil, wake
}

// dropEarly leaves a message dispatched before this consumer was active on
// its partition to the broker. Next's goroutine only.
func (s *Source) dropEarly(msg pclient.Message) {
	// Not ours yet: the broker's rewind redelivers it once we are the
	// active consumer (see activation). The negative acknowledgement is the
	// safety net for a rewind that does not come (the broker made this
	// consumer active before the dispatch and has nothing more to say):
	// after redeliveryDelay it asks the broker, which rewinds the cursor if
	// this consumer is active by then and ignores it otherwise. What comes
	// again is recognised by seq, so an extra rewind costs reads, never a
	// duplicate.
	s.consumer.Nack(msg)
	s.early.Add(1)
	if s.earlyRun[msg.Topic()]++; s.earlyRun[msg.Topic()] == 1 {
		s.log.Info("holding back messages dispatched before this consumer was active: the broker sends them again once it is",
			"topic", msg.Topic(), "redelivery_after", redeliveryDelay)
	}
}

// SeqOf is msg's Seq: its broker entry index + 1, so that 0 keeps meaning
// "nothing". The index is the broker's, per topic-partition, the same for
// every consumer and subscription; a message without one is refused with
// ErrNoIndex. Every reader that turns a Pulsar message into a position
// calls it.
func SeqOf(msg pclient.Message) (uint64, error) {
	idx := msg.Index()
	if idx == nil {
		return 0, fmt.Errorf("%w; topic %s, message %s", ErrNoIndex, msg.Topic(), msg.ID())
	}
	if *idx == math.MaxUint64 {
		return 0, fmt.Errorf("%w; topic %s, message %s: index %d leaves no Seq", ErrNoIndex, msg.Topic(), msg.ID(), *idx)
	}
	return *idx + 1, nil
}

// receive takes the next message, acknowledging pending duplicates before
// it blocks. Next's goroutine only.
//
// With messages set aside (wake is their earliest hold's end; zero when
// none) it also returns, with a nil message, when a partition's activation
// is decided, at wake, or when Ack frees room; and it takes no message
// while the records outstanding and the messages set aside reach
// MaxUnacked.
func (s *Source) receive(ctx context.Context, wake time.Time) (pclient.Message, error) {
	ch := s.consumer.Chan()
	if s.asideN > 0 && s.outstanding.Load()+int64(s.asideN) >= int64(s.opts.MaxUnacked) {
		ch = nil // held messages fill the bound: wait for a decision or an Ack
	}
	select {
	case cm := <-ch:
		return cm.Message, nil
	default:
	}
	s.flushDedup()
	if s.asideN == 0 {
		select {
		case cm := <-ch:
			return cm.Message, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.closing:
			return nil, ErrClosed
		}
	}
	var timeout <-chan time.Time
	if !wake.IsZero() {
		t := time.NewTimer(time.Until(wake))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case cm := <-ch:
		return cm.Message, nil
	case <-s.activation.decided:
	case <-timeout:
	case <-s.freed: // a stale token only costs one more check where it is read
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.closing:
		return nil, ErrClosed
	}
	return nil, nil
}

// classifyLocked decides whether the message with seq of p was delivered (or
// is in flight) already. covered reports that it is at or below the durable
// position and must be acknowledged again, since the broker still has it.
func (s *Source) classifyLocked(p *partition, seq uint64) (dup, covered bool) {
	if !s.monotone {
		_, dup = p.inflight[seq]
		return dup, false
	}
	if seq <= p.durable {
		return true, true
	}
	// Above durable but not above the newest emitted: in flight, and its
	// acknowledgement will come with the record emitted first.
	return seq <= p.last, false
}

// holeWait is a partition's wait for the broker to fill a hole.
type holeWait struct {
	next    uint64 // the seq expected when the hole was seen
	seen    uint64 // the seq of the newest message dropped behind it
	rewound bool   // the broker has sent a message again since: it rewound
}

// holeLocked reports whether the message of seq must not be emitted yet
// because seqs are missing in front of it. An Exclusive or Failover
// subscription sends each partition's messages in order from its
// acknowledged position, so a message past max(durable, last)+1 means the
// broker sent past messages nobody received — a Failover takeover whose
// cursor was not rewound (a read still pending when the active consumer
// changed) — and acknowledging it cumulatively would acknowledge them too.
// Such messages are dropped and negatively acknowledged (Next), which
// rewinds the cursor; what comes then fills the hole, or comes past it
// again (a message sent twice: seq <= seen), which proves the broker has
// nothing there (TTL, a skip, a reset forward) and the seqs go on from it.
// Only for cumulative subscriptions; nothing is known before the first
// position, so the first message of a new partition is never held.
//
// A gap the broker sent past again is accounted for (gapLocked): as records
// the client lost when it discarded messages of the partition since the
// last gap, as records the broker no longer has otherwise.
func (s *Source) holeLocked(p *partition, seq uint64, msg pclient.Message) bool {
	if !s.opts.Type.cumulative() {
		return false
	}
	known := max(p.durable, p.last)
	h := p.hole
	if h != nil && seq <= h.seen {
		h.rewound = true
	}
	if known == 0 || seq <= known+1 {
		if seq == known+1 {
			p.hole = nil // filled
		}
		return false
	}
	if h != nil && h.next == known+1 && h.rewound {
		p.hole = nil // sent past it again after a rewind: a real gap
		s.gapLocked(p, known+1, seq-1, msg)
		return false
	}
	if h == nil || h.next != known+1 {
		h = &holeWait{next: known + 1}
		p.hole = h
		s.log.Info("messages are missing in front of the ones the broker sent; asking it to send again",
			"topic", p.name, "expected", known+1, "got", seq)
	}
	h.seen = seq
	return true
}

// gapLocked accounts for the seqs from..to of p, which the broker sent past
// twice, and goes on after them. When the client discarded messages of p
// (discard) that no earlier gap accounted for, they are the gap: the
// records are lost, and an ERROR names them. Otherwise the broker has no
// messages there: trimmed by retention, expired by a TTL, skipped, or
// passed by a reset of the cursor.
func (s *Source) gapLocked(p *partition, from, to uint64, next pclient.Message) {
	n := to - from + 1
	s.drops.Lock()
	dropped := s.drops.byTopic[p.name]
	delete(s.drops.byTopic, p.name)
	s.drops.Unlock()
	if len(dropped) > 0 {
		s.lost.Add(n)
		s.loss.Gap(context.Background(), observability.GapClient, int64(n))
		s.log.Error("records lost: the Pulsar client discarded messages the broker holds, and acknowledged them; "+
			"they are not stored, going on after them (see docs/operations.md, \"Records lost by the client\")",
			"topic", p.name, "from", from, "to", to, "records", n, "discarded", dropped, "next", next.ID().String())
		return
	}
	s.skipped.Add(n)
	s.loss.Gap(context.Background(), observability.GapBroker, int64(n))
	s.log.Warn("the broker has no messages in a hole of seqs (trimmed, expired, skipped or reset); going on after it",
		"topic", p.name, "from", from, "to", to, "records", n, "next", next.ID().String())
}

// discard hears of a message the client discarded: connWatch calls it on
// the client's goroutine, before the client hands out the messages after
// it. It is counted and logged for every subscription type; on an ordered
// one the gap it leaves is accounted for as lost (gapLocked).
func (s *Source) discard(topic, id, reason string) {
	s.discarded.Add(1)
	s.loss.Discarded(context.Background(), reason)
	s.log.Error("the Pulsar client discarded a message it could not read and acknowledged it: it is not stored",
		"topic", topic, "message_id", id, "reason", reason)
	if !s.opts.Type.cumulative() {
		return
	}
	s.drops.Lock()
	if s.drops.byTopic == nil {
		s.drops.byTopic = map[string][]string{}
	}
	s.drops.byTopic[topic] = append(s.drops.byTopic[topic], id+" ("+reason+")")
	s.drops.Unlock()
}

// Loss reports the messages the client discarded, the records lost in the
// gaps they left, and the records missing in gaps the broker made (Stats:
// Discarded, Lost, Skipped), for the run summary. Safe for concurrent use.
func (s *Source) Loss() (discarded, lost, skipped uint64) {
	return s.discarded.Load(), s.lost.Load(), s.skipped.Load()
}

func (s *Source) pushLocked(p *partition, seq uint64, id pclient.MessageID) {
	p.out.push(entry{seq: seq, id: id})
	if s.monotone {
		p.last = seq
	} else {
		p.inflight[seq] = struct{}{}
	}
}

// partitionFor returns the state of a topic-partition, created on first
// sight. Next's goroutine only.
func (s *Source) partitionFor(name string) *partition {
	if p, ok := s.byName[name]; ok {
		return p
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.mu.parts[name]
	if p == nil {
		p = &partition{name: name}
		s.mu.parts[name] = p
	}
	if !s.monotone {
		p.inflight = map[uint64]struct{}{}
	}
	if s.reconciling() {
		p.reconcileFrom = s.openedAt
	}
	s.byName[name] = p
	return p
}

// queueDedupAck schedules the acknowledgement of a message recognised as at
// or below the durable position, so that the backlog drains. Next's
// goroutine only.
func (s *Source) queueDedupAck(partition string, id pclient.MessageID) {
	if s.dedupAt.IsZero() {
		s.dedupAt = time.Now()
	}
	if s.opts.Type.cumulative() {
		s.dedupCum[partition] = id
		return
	}
	s.dedupIDs = append(s.dedupIDs, id)
	if len(s.dedupIDs) >= s.opts.AckBatch {
		s.flushDedup()
	}
}

// ackable reports whether an acknowledgement may still be handed to the
// client. pulsar-client-go answers an acknowledgement only if it reached the
// partition consumer before the consumer's close did: one queued behind
// the close is never answered, and its caller waits for ever. So none may
// start once Close is about to close the consumer; those already waiting
// are answered (with an error while the broker is away) as the close is
// processed.
func (s *Source) ackable() bool { return !s.consumerClosing.Load() }

// flushDedup sends the pending acknowledgements of duplicates. Their
// positions are durable already, so a refusal is only counted: the message
// comes back and is recognised again. Next's goroutine (or Close) only.
func (s *Source) flushDedup() {
	if s.dedupAt.IsZero() {
		return
	}
	s.dedupAt = time.Time{}
	for name, id := range s.dedupCum {
		if !s.ackable() {
			break // redelivered again, and recognised again
		}
		if err := s.consumer.AckIDCumulative(id); err != nil {
			s.ackErrors.Add(1)
			s.log.Warn("acknowledging redelivered messages failed", "partition", name, "id", id.String(), "err", err)
		}
	}
	clear(s.dedupCum)
	if err := s.ackList(s.dedupIDs); err != nil {
		s.log.Warn("acknowledging redelivered messages failed", "err", err)
	}
	clear(s.dedupIDs)
	s.dedupIDs = s.dedupIDs[:0]
}

// ackList acknowledges ids individually, AckBatch at a time.
func (s *Source) ackList(ids []pclient.MessageID) error {
	var errs []error
	for len(ids) > 0 {
		if !s.ackable() {
			return errors.Join(append(errs, ErrClosed)...)
		}
		n := min(len(ids), s.opts.AckBatch)
		if err := s.consumer.AckIDList(ids[:n]); err != nil {
			s.ackErrors.Add(1)
			errs = append(errs, err)
		}
		ids = ids[n:]
	}
	return errors.Join(errs...)
}

// Ack acknowledges upstream every outstanding record a span covers. The
// caller must only pass spans whose delivery is durable (the offset store's
// durable callback): an acknowledged message is gone from the subscription.
//
// A monotone Source (see the package documentation) takes a span to cover
// every outstanding record of its partition with a Seq at or below Last.
// Otherwise records of a partition may be emitted out of Seq order, and a
// span covers the outstanding records from the oldest up to the one whose
// Seq is Last, in the order Next emitted them (the assembler's spans end at
// the last record of the partition it added); a span whose Last is not
// outstanding covers nothing.
//
// Exclusive and Failover acknowledge cumulatively, once per partition, with
// the id the client handed out for the newest covered record, every
// partition at once (one round trip for all of them); Shared and
// KeyShared acknowledge each record, AckBatch ids per request. The records
// count as acknowledged even when the broker refuses (the error is returned
// and counted in Stats.AckErrors): their positions are durable, and a
// redelivery is recognised as described in the package documentation.
func (s *Source) Ack(spans []batch.OffsetSpan) error {
	s.ackMu.Lock()
	defer s.ackMu.Unlock()
	cumulative := s.opts.Type.cumulative()
	var (
		newest = map[string]pclient.MessageID{}
		ids    []pclient.MessageID
		n      int
	)
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	for _, sp := range spans {
		p := s.mu.parts[sp.Partition]
		if p == nil {
			continue
		}
		if !s.monotone {
			if _, ok := p.inflight[sp.Last]; !ok {
				continue
			}
		}
		for p.pending() > 0 {
			if s.monotone && p.out.front().seq > sp.Last {
				break
			}
			e := p.pop()
			n++
			if s.monotone {
				p.durable = max(p.durable, e.seq)
			} else {
				delete(p.inflight, e.seq)
			}
			if cumulative {
				newest[p.name] = e.id
			} else {
				ids = append(ids, e.id)
			}
			if !s.monotone && e.seq == sp.Last {
				break
			}
		}
	}
	s.mu.Unlock()
	if n > 0 {
		s.outstanding.Add(-int64(n))
		select {
		case s.freed <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
	s.acked.Add(uint64(n))

	errs := s.ackCumulative(newest)
	if err := s.ackList(ids); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("source/pulsar: acknowledge: %w", errors.Join(errs...))
	}
	return nil
}

// ackCumulative acknowledges each partition of newest up to its message,
// all partitions at once: each acknowledgement waits for the broker's
// answer (AckWithResponse), and one after another they would hold the
// records of the last partition for a round trip per partition before it.
func (s *Source) ackCumulative(newest map[string]pclient.MessageID) []error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for name, id := range newest {
		wg.Go(func() {
			err := ErrClosed
			if s.ackable() {
				if err = s.consumer.AckIDCumulative(id); err != nil {
					s.ackErrors.Add(1)
				}
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s up to %s: %w", name, id, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// DeadLetter publishes rec to Options.DeadLetterTopic and returns once the
// broker has persisted it, or with an error when ctx ends or
// Options.OperationTimeout passes first (the record may then still arrive,
// later, possibly twice).
// The message carries rec's payload, key, event time and properties plus,
// as strings, PropReason, PropSourceTopic (the topic-partition name),
// PropSourcePartition (the Pulsar partition index, -1 when not
// partitioned), PropSourceSeq (the broker index + 1) and PropSourceID (the
// message id). rec is only read during the call.
func (s *Source) DeadLetter(ctx context.Context, rec *batch.Record, reason string) error {
	if s.dlq == nil {
		return ErrNoDeadLetterTopic
	}
	s.mu.Lock()
	closed := s.mu.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	props := make(map[string]string, len(rec.Props)+5)
	maps.Copy(props, rec.Props)
	props[PropReason] = reason
	_, index := batch.SplitPartition(rec.Partition)
	props[PropSourcePartition] = strconv.FormatInt(int64(index), 10)
	props[PropSourceSeq] = strconv.FormatUint(rec.Seq, 10)
	if rec.Partition != "" {
		props[PropSourceTopic] = rec.Partition
	}
	if len(rec.ID) > 0 {
		if id, err := pclient.DeserializeMessageID(rec.ID); err == nil {
			props[PropSourceID] = id.String()
		}
	}
	payload := rec.Payload
	if payload == nil {
		payload = []byte{}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.OperationTimeout)
	defer cancel()
	_, err := s.dlq.Send(ctx, &pclient.ProducerMessage{
		Payload:    payload,
		Key:        string(rec.Key),
		Properties: props,
		EventTime:  rec.EventTime,
	})
	if err != nil {
		return fmt.Errorf("source/pulsar: dead-letter partition %s seq %d to %q: %w",
			rec.Partition, rec.Seq, s.opts.DeadLetterTopic, err)
	}
	s.deadLettered.Add(1)
	return nil
}

// Done is closed once Close has closed the client, which may be after
// Close returned (see Close).
func (s *Source) Done() <-chan struct{} { return s.closed }

// Health reports whether every partition consumer is connected to the
// broker: nil, or an error wrapping ErrDisconnected that names the oldest
// one reconnecting and the newest connection failure. A connection that
// stalls without closing counts only once the client's keepalive gives it
// up. Safe for concurrent use.
func (s *Source) Health() error { return s.watch.health() }

// Stats returns the counters so far.
func (s *Source) Stats() Stats {
	return Stats{
		Received:     s.received.Load(),
		Emitted:      s.emitted.Load(),
		Deduplicated: s.deduplicated.Load(),
		Early:        s.early.Load(),
		Holes:        s.holes.Load(),
		Discarded:    s.discarded.Load(),
		Lost:         s.lost.Load(),
		Skipped:      s.skipped.Load(),
		Acked:        s.acked.Load(),
		AckErrors:    s.ackErrors.Load(),
		DeadLettered: s.deadLettered.Load(),
		Outstanding:  int(s.outstanding.Load()),

		Reconciled:      s.reconciled.Load(),
		ReconcileErrors: s.reconcileErrors.Load(),
	}
}

// closeFlushWait bounds how long Close lets the acknowledgements of
// recognised duplicates take before it closes the consumer under them, and
// closeWait how long it waits for a connected client to close.
const (
	closeFlushWait = 5 * time.Second
	closeWait      = 2 * time.Second
)

// Close stops the Source: a blocked Next returns ErrClosed, pending
// acknowledgements of recognised duplicates are sent (while every consumer
// is connected, for at most closeFlushWait), then the consumer, the
// dead-letter producer and the client are closed, in that order. Records
// emitted but not acknowledged stay unacknowledged upstream and are
// redelivered to the next consumer. Close is idempotent and returns nil.
//
// Close may be called while an Ack is in progress, and is bounded whatever
// the broker does. While its broker is away the client waits for the
// answer to an acknowledgement without a deadline, and its consumer, busy
// reconnecting, only takes the close once the lookup it is in gives up
// (Options.OperationTimeout). Closing the consumer ends that wait: the Ack
// in progress returns an error then. Close waits for the client to close
// for at most closeWait, and not at all when a consumer is disconnected
// (Health); the client then finishes closing in the background, within
// OperationTimeout, and Done is closed when it has.
func (s *Source) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		flushed := make(chan struct{})
		go func() {
			defer close(flushed)
			s.nextMu.Lock() // Next has returned and will not run again
			defer s.nextMu.Unlock()
			// A broker that is away would hold the flush until the consumer
			// is closed; the duplicates come back and are recognised again.
			if s.Health() == nil {
				s.flushDedup()
			}
		}()
		select {
		case <-flushed:
		case <-time.After(closeFlushWait):
			s.log.Warn("closing: acknowledging recognised duplicates took too long; closing the consumer under them (they are redelivered and recognised again)")
		}
		s.mu.Lock()
		s.mu.closed = true // an Ack that starts from here returns ErrClosed
		s.mu.Unlock()
		away := s.Health()
		go func() {
			defer close(s.closed)
			// Ends an acknowledgement waiting for an absent broker: Ack's,
			// or the flush's (or Next's) above.
			s.consumerClosing.Store(true)
			s.consumer.Close()
			<-flushed
			// The Ack in progress, if any, returns before the client under
			// it closes.
			s.ackMu.Lock()
			if s.dlq != nil {
				s.dlq.Close()
			}
			s.client.Close()
			s.ackMu.Unlock()
		}()
		wait := closeWait
		if away != nil {
			wait = 0
		}
		t := time.NewTimer(wait)
		select {
		case <-s.closed:
		case <-t.C:
			s.log.Warn("closing: the Pulsar client is still reconnecting to its broker; it finishes closing in the background (an acknowledgement in progress fails then)",
				"within", s.opts.OperationTimeout, "broker", away)
		}
		t.Stop()
		if s.unacked != nil {
			_ = s.unacked.Close() // only a broken MeterProvider fails to unregister
		}
	})
	return nil
}
