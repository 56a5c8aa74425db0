// Package pulsar is thalweg's Apache Pulsar source: a pulsar-client-go
// consumer that turns messages into batch.Records identified by their
// topic-partition and broker entry index, acknowledges upstream only what
// the pipeline reports durably delivered, and recognises messages the broker
// delivers again.
//
// # Invariants
//
//   - Identity: a record is (topic-partition, broker entry index + 1),
//     never given to two records, whatever the subscription type
//     ("Sequence numbers"; TestConsumeAckEachType,
//     TestSharedIdentityNeverCollides).
//   - No index, no records: a message without a broker entry index stops the
//     Source for good instead of being numbered locally
//     (TestNoIndexIsPermanent).
//   - Recognised redeliveries: in a monotone Source a message at or below
//     the durable position is acknowledged again and not emitted, one in
//     flight is not emitted twice ("Recognising redeliveries";
//     TestRestartDedupe, TestRedeliveryInFlight, TestMonotoneJudgesBySeq).
//   - Failover takeover without a gap: messages dispatched before this
//     consumer was active are left to the broker's redelivery, never
//     emitted and acknowledged ("Failover: messages dispatched before
//     activation"; TestActivationTagsInWireOrder, TestFailoverTakeoverNoGap).
//   - A partition whose activation is undecided holds back only its own
//     messages, emitted in order or dropped as early once decided
//     (TestHoldIsPerPartition).
//   - Bounded: at most Options.MaxUnacked records are outstanding; with
//     the messages kept aside for an undecided partition, at most
//     MaxUnacked+1 (TestBackpressure, TestHoldIsPerPartition).
//
// # Connecting
//
// Options.URL names the brokers, pulsar:// or pulsar+ssl://; with TLS the
// broker's certificate is verified against Options.TLSTrustCertsFile (or the
// system roots). Options.Token or Options.TokenFile authenticate with a JWT;
// the file is reread on every reconnect, so a rotated token is picked up.
// Options.ListenerName names the advertised listener whose addresses the
// brokers' lookups return, for deployments where the brokers are reached
// through a network other than their internal one.
//
// The client retries a failing connection until Options.OperationTimeout.
// Open then tries the subscription again, with growing backoff (500 ms to
// 30 s) until its context ends, while the failure may heal: the broker
// unreachable or still opening its topics (a whole deployment restarted
// at once), a lookup that timed out, an exclusive subscription still held.
// It logs that once ("cannot subscribe yet; retrying", then a summary per
// interval and "recovered"). With Options.ListenerName set, a broker's
// ServiceNotReady, which is also its answer for a listener it does not
// have, ends Open after three attempts, naming the listener. A failure
// that will not heal ends Open at
// once with the last reason the client gave, wrapping ErrAuthentication for
// refused or unreadable credentials and ErrTLS for a certificate that
// cannot be verified (TestOpenRetriesUntilTheBrokerIsReachable, TestHeals, TestListenerName).
// Once open, the client re-establishes
// a broken connection by itself, with backoff, for as long as the Source is
// open; Next blocks meanwhile, and the messages that were delivered but not
// acknowledged come again and are recognised as described below.
//
// Health reports ErrDisconnected while a connection is being established
// or a partition consumer is reconnecting, with the newest connection
// failure. pulsar-client-go v0.19 exposes neither through its API (no
// per-consumer connection state; its Prometheus counters say nothing of a
// partition or a cause), so both, like Open's reasons, are read from the
// client's log lines (connwatch.go lists each line it reads).
// TestConnWatchContract produces every one of those situations with the
// real client against the real broker — a connection cut and refused
// through a fault proxy, a token file gone at a reconnect, a refused token,
// an untrusted certificate, an unusable TLS configuration, a dropped
// active-consumer notification — and fails, naming the line, when the
// client stops writing it: check it first when upgrading the client.
//
// # Sequence numbers
//
// A record's identity is (Record.Partition, Record.Seq), the same on every
// worker, after any restart, lost store, reset or failover, and under every
// subscription type:
//
//   - Record.Partition is the topic-partition name exactly as Pulsar names
//     it: "persistent://public/default/orders-partition-2" for a partition
//     of a partitioned topic, the topic itself when it is not partitioned
//     (batch.SplitPartition splits the name into topic and index);
//   - Record.Seq is the broker's entry index of the message + 1
//     (pulsar-client-go Message.Index; +1 so that 0 keeps meaning
//     "nothing"). The broker assigns the index per topic-partition, in its
//     order, contiguous and starting at 0, so Seq is strictly increasing in
//     broker order and never given to another record. It skips only where
//     the broker skipped messages (TTL expiry, a cursor moved forward); such
//     a jump is not an error (see "Holes" below for how an Exclusive or
//     Failover Source tells it from messages the broker still owes). A topic deleted and created again under the
//     same name starts its index at 0 again: its positions in the offset
//     store and at the anchor must be reset with it, or its records up to
//     the old positions are taken as delivered.
//
// Record.ID is the serialized message id (MessageID.Serialize), so Seq - 1
// and the id each join a stored row back to Pulsar.
//
// The broker sets the index only with the entry-index interceptor on and
// exposed to clients (scripts/pulsar.sh runs it so):
//
//	brokerEntryMetadataInterceptors=org.apache.pulsar.common.intercept.AppendIndexMetadataInterceptor
//	exposingBrokerEntryMetadataToClientEnabled=true
//
// A message without an index is refused: Next returns an error wrapping
// ErrNoIndex that names both settings and the topic, and returns it again on
// every later call (the pipeline stops; `thalweg run` exits 2, the class of
// configuration errors). There is no fallback: any counter of this process
// would collide with another worker's or a restart's.
//
// Next keeps Seq → message id for every emitted record until Ack covers it;
// the id kept is the one the client handed out, which carries the client's
// batch and consumer tracking. Ids are never rebuilt from bytes to
// acknowledge. [StorePositions] is the PositionStore over thalweg's offset
// store (the raw anchor's delivered positions, by partition name); a nil
// Options.Positions starts with nothing delivered.
//
// # Acknowledgement (docs/design.md#durable-before-upstream)
//
// Ack is called only with spans the offset store made durable. Exclusive and
// Failover subscriptions acknowledge cumulatively, once per partition and
// call, with the newest covered id; Shared and KeyShared acknowledge every
// covered id with AckIDList. Acknowledgements are sent with AckWithResponse,
// so refusals are reported; a call's cumulative acknowledgements are sent
// all at once, so that it waits one round trip to the broker, not one per
// partition (TestAckAcknowledgesPartitionsConcurrently). An acknowledgement
// with response bypasses the client's grouping tracker, so the tracker is
// sized to nothing: otherwise every partition would run a 100 ms ticker and
// check every message against it for nothing
// (TestNoAckGroupingTickerPerPartition). The Source negatively acknowledges only the
// Failover messages it drops as dispatched before activation (below).
//
// Backpressure: at most Options.MaxUnacked records are outstanding (emitted,
// not acknowledged); Next blocks beyond that until Ack frees room. The
// pipeline must therefore flush partially filled batches on a timer, not only
// when Next returns. The time Next waits there is the
// thalweg.source.unacked_wait{bound="pulsar"} counter (Options.MeterProvider),
// timed only when Next actually waits.
//
// # Recognising redeliveries
//
// The broker delivers a message again after a reconnect, a consumer restart
// or a failover, whenever its acknowledgement had not reached the broker —
// in particular after a crash between the offset store's commit and the
// upstream acknowledgement. Such messages must not reach the sinks twice.
//
// The Source is monotone when the broker hands each partition's messages to
// it in broker order: Exclusive and Failover always, Shared and KeyShared
// only with Options.SoleConsumer. Then, per partition, by Seq:
//
//   - a message at or below the durable position (the PositionStore's
//     position at Open, raised by Ack and by Options.Reconcile, see below)
//     was delivered: it is acknowledged again, so that the backlog drains,
//     and not emitted;
//   - a message above it but at or below the newest emitted one is in
//     flight: it is not emitted, and the acknowledgement of the record
//     emitted first covers it;
//   - anything else is new and emitted.
//
// This is sound because in a monotone Source every message below an emitted
// one was itself received earlier, so it was emitted (or recognised) then:
// the durable position Seq N covers every record of the partition up to N.
// Seqs compare as numbers; no stored message id is decoded.
//
// # Holes (Exclusive, Failover)
//
// That argument needs the broker to send each partition from its
// acknowledged position without skipping. It does not always: when the
// active Failover consumer changes while the broker's read for the old one
// is still pending, the read completes to the new consumer and the cursor
// is not rewound, so the new consumer gets messages past ones the old one
// held unacknowledged — and acknowledging those cumulatively would
// acknowledge the held ones too, which nobody delivered. So a message whose
// Seq is past max(durable, newest emitted)+1 is not emitted: it is dropped
// and negatively acknowledged (Stats.Holes, one log line per hole), and
// after redeliveryDelay the client asks the broker to send again, which
// rewinds an active consumer's cursor. What comes then fills the hole, or
// comes past it a second time — a message sent twice proves the broker
// has nothing in between for this subscription — and the Seqs go on from it.
// Nothing is known before a partition's first position, so the first
// message of a new partition is never held.
//
// # Messages the client drops
//
// pulsar-client-go discards, and acknowledges itself, a message it cannot
// read (a checksum mismatch, a payload that does not decompress, a batch
// that does not parse). It logs each one; the Source reads that line from
// the client's log (connWatch) and counts it (Stats.Discarded,
// thalweg.source.discarded, an ERROR naming the partition and message id),
// on every subscription type. A hole the broker sent past twice is then
// accounted for once (thalweg.source.gap_records): as records lost
// (Stats.Lost, cause client, an ERROR naming the seqs and the discarded ids)
// when the client discarded messages of that partition since the last gap,
// as records the broker no longer has (Stats.Skipped, cause broker: a
// retention or TTL deletion, a skip, a reset forward; a WARN) otherwise.
// The Source goes on after either: the client acknowledged what it
// dropped, so nothing would bring it back. docs/design.md, "What the Pulsar
// client can drop", lists every path.
//
// The stored message id (Record.ID) of a message sent on its own has batch
// index -1, as its producer's id (only thalweg's copy of the client,
// third_party/pulsar-client-go, tells it from a batch of one), and a
// message without an event time has the zero Record.EventTime (the client
// gives time.Unix(0, 0) for none). See msgid.go.
//
// A Source that is not monotone (several consumers on a Shared or KeyShared
// subscription) can receive a lower Seq for the first time after a higher
// one, when another consumer disconnects, and then emits it after the higher
// one: Seqs of one partition are then not in emission order (Ack's
// documentation says how spans cover them). It recognises only redeliveries
// of records it holds in flight (the exact Seq); after a restart it may
// emit records again. Duplicates are allowed end to end, gaps never, and the
// identity still never names two records.
//
// # Reconciling with the anchor
//
// A worker's own store knows only what that worker delivered. With
// Options.Reconcile (cmd wires it to the raw anchor's "positions" Flight
// action) a monotone Source asks the anchor before it judges the first
// message of each partition after Open, and again whenever the broker makes
// it the active consumer of a Failover partition (BecameActive, or a
// dropped notification decided as this consumer's: see below), and takes
// max(own durable position, anchor's) as the durable position. So a worker
// started with an empty or lost store, and one that takes over a dead
// worker's partitions, acknowledges what the anchor has — including
// batches the other worker stored but had not acknowledged — without
// emitting it (Stats.Deduplicated, Stats.Reconciled).
//
// The activation is noted on the client's goroutine (the event listener)
// and the call made by Next, bounded by Options.OperationTimeout; one answer
// serves every partition that asked before the call began. A failed call is
// one warning (then at most one per 5 minutes while failures last; counted
// in Stats.ReconcileErrors), the partition goes on with its own position,
// and no call is made before a backoff of 1 s, doubling per failure up to 1
// min, has passed. Records the anchor has may then be sent to it again; for
// an ordered subscription its idempotent append keeps it free of
// duplicates.
//
// # Failover: messages dispatched before activation
//
// The rules above need the monotone Source to receive each partition's
// messages contiguously from the subscription's acknowledged position. When
// the broker moves a Failover partition to this consumer it makes the
// consumer active at once but rewinds the cursor only after its failover
// delay; a read that completes in between is dispatched from the cursor's
// read position, past the messages the previous consumer held
// unacknowledged. Emitting those and acknowledging them cumulatively would
// acknowledge the previous consumer's messages, which nobody delivered.
// So, for Failover only, the Source watches the broker's active-consumer
// notifications and tags every message that arrives (in wire order) after
// a notification naming another consumer and before the next one naming
// this one; Next drops tagged messages unemitted and unacknowledged
// (Stats.Early), and the rewind redelivers them after the notification.
// See activation for the ordering argument. Each dropped message is also
// negatively acknowledged: should the rewind not come (the broker made this
// consumer active before the dispatch, so nothing more happens on its side),
// the client asks the broker after earlyRedeliveryDelay to send it again,
// which rewinds the cursor of an active consumer; whatever comes twice is
// recognised by seq. Without it such a message stayed unacknowledged — a
// backlog that never drained — until the next change of active consumer
// (seen once in the scale-out chaos scenario).
//
// pulsar-client-go drops the notification the broker sends while a
// consumer subscribes (it registers the consumer only after the answer); the
// Source learns of the drop from the client's log (the notifications it
// does deliver arrive through ConsumerOptions.EventListener, BecameActive
// and BecameInactive; the drop has no such hook). The first messages of
// such a partition wait up to Options.FailoverHold: a notification within it
// makes them early; without one they are this consumer's (the broker made it
// active at once and has nothing more to say). Next keeps them aside
// meanwhile, in arrival order with every later message of the partition
// behind them, and goes on with the other partitions: a partition waiting
// for its notification holds back only its own messages. When the hold
// ends they are emitted, in order, before anything of the partition
// received after them (Seq order and the hole check hold as for any other
// message); when the notification comes they are dropped as early. Messages
// kept aside count against Options.MaxUnacked with the outstanding records:
// while together they reach it, Next takes no further message (the client's
// queues keep what the broker sent, within ReceiverQueueSize) and a record
// in hand waits for Ack, unless nothing is outstanding (no Ack would come),
// so together they stay within MaxUnacked+1.
//
// Not covered: a consumer that reconnects while it stays active gets no
// "not active" notification in between, so an early dispatch to its new
// connection is not recognised.
//
// Recognised messages are counted in Stats.Deduplicated. Their
// acknowledgements are batched and sent before Next blocks, when AckBatch of
// them wait, or after 100ms.
//
// # Prefetch
//
// The client prefetches Options.ReceiverQueueSize messages per partition,
// and a goroutine per partition moves them, one at a time, into the channel
// that Next reads. That channel holds Options.ChannelSize messages (one
// batch of records by default; the client's own holds 10), and a message
// that enters it frees a permit of its partition, so the Source prefetches
// up to ReceiverQueueSize per partition plus ChannelSize. With 10, Next
// and the partitions' goroutines wait on each other every few messages, the
// assembler flushes more batches early (its anchor goes idle while it waits)
// and the CPU per record grows with the partitions; one batch of room
// removed more than half of that growth (BENCHMARKS.md, "Cost as
// partitions grow"; TestChannelSizeSizesTheChannel).
//
// # Dead letters
//
// DeadLetter publishes a rejected record to Options.DeadLetterTopic with a
// producer that does not batch, and returns only after the broker's receipt,
// so the pipeline can let the record's offset be acknowledged afterwards.
// Beside the record's own properties the message carries, as strings:
// PropReason; PropSourceTopic, the topic-partition name; PropSourcePartition,
// the Pulsar partition index (-1 for a topic that is not partitioned);
// PropSourceSeq, Record.Seq (the broker index + 1); and PropSourceID, the
// message id as "ledger:entry:batch:partition".
//
// # Shutdown
//
// Close wakes a blocked Next, sends pending acknowledgements of recognised
// duplicates, then closes the consumer, the dead-letter producer and the
// client. Outstanding records are not acknowledged; the broker redelivers
// them to the next consumer. Close is bounded whatever the broker does: an
// acknowledgement waits for the broker's answer without a deadline (the
// client holds it while its consumer reconnects), and closing the consumer
// ends that wait, so a pipeline that abandoned an Ack at its drain deadline
// can close the Source under it (the Ack returns an error).
package pulsar
