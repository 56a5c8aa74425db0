package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/internal/pulsaradmin"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/source/pulsar"
)

// resetPoint is where `thalweg offsets reset --to` moves a subscription.
type resetPoint struct {
	kind string // "earliest", "latest", "time", "id"
	at   time.Time
	id   utils.MessageID // BatchIndex -1: the whole entry
}

func (p resetPoint) String() string {
	switch p.kind {
	case "time":
		return p.at.UTC().Format(time.RFC3339Nano)
	case "id":
		return "message " + idString(p.id)
	}
	return p.kind
}

func parseResetPoint(s string) (resetPoint, error) {
	switch s {
	case "earliest", "latest":
		return resetPoint{kind: s}, nil
	case "":
		return resetPoint{}, errors.New("--to is required: earliest, latest, an RFC 3339 time or a message id ledger:entry[:batch]")
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return resetPoint{kind: "time", at: t}, nil
	}
	if id, err := parseMessageID(s); err == nil {
		return resetPoint{kind: "id", id: id}, nil
	}
	return resetPoint{}, fmt.Errorf("--to %q: want earliest, latest, an RFC 3339 time (2026-12-01T10:00:00Z) or a message id ledger:entry[:batch]", s)
}

// resetPartition is one topic-partition a reset concerns, and what it did.
type resetPartition struct {
	name  string // as Pulsar names it, the offset store's partition key
	topic utils.TopicName
	// seq is the position every destination takes: the seq of the last
	// record before the reset point (0: none before it).
	seq uint64
	// next describes the first message at or after the reset point, or
	// why there is none.
	next string
}

const offsetsResetSynopsis = "offsets reset --config pipeline.yaml --to earliest|latest|TIME|LEDGER:ENTRY[:BATCH] [--topic T [--partition N]] [--store DIR] [--yes]"

// cmdOffsetsReset moves the config's subscription to a reset point through
// the admin REST API, partition by partition, and sets every destination's
// positions of each partition to the seq of the record just before that
// point — the raw anchor's delivered position to the higher of that and
// what the anchor stores (anchorStored) — so that the next start delivers
// the records from the reset point on to every destination: the
// secondaries get what the anchor stores again from the anchor, at once,
// and what it does not from the subscription.
func cmdOffsetsReset(ctx context.Context, args []string, env *cliEnv) int {
	fs := newFlagSet("offsets reset", offsetsResetSynopsis, env)
	path := fs.String("config", "", "the worker's pipeline config (required): source, subscription, destinations, store.dir")
	to := fs.String("to", "", "reset point (required): earliest, latest, an RFC 3339 time, or a message id ledger:entry[:batch] (with one partition)")
	topic := fs.String("topic", "", "only this topic of the config (default: all of them)")
	partition := fs.Int("partition", -1, "only this partition of --topic (default: all)")
	storeDir := fs.String("store", "", "offset store directory (default: the config's store.dir; the worker must be stopped)")
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(env.stderr, "thalweg offsets reset: "+format+"\n", a...)
		return exitUsage
	}
	cfg, code := loadConfig(*path, env)
	if cfg == nil {
		return code
	}
	if cfg.Source.Kind != config.SourcePulsar {
		return usage("source.kind is %s: only a Pulsar subscription can be reset", cfg.Source.Kind)
	}
	if cfg.Source.AdminURL == "" {
		return usage("%s: source.admin_url is required: the brokers' admin REST API (http://host:8080 or https://host:8443) moves the subscription's cursor", *path)
	}
	point, err := parseResetPoint(*to)
	if err != nil {
		return usage("%v", err)
	}
	if *partition >= 0 && *topic == "" && len(cfg.Source.Topics) != 1 {
		return usage("--partition needs --topic (the config has %d topics)", len(cfg.Source.Topics))
	}
	if *storeDir == "" {
		*storeDir = cfg.Store.Dir
	}
	// The store's lock says whether the worker is running: take it before
	// anything else, and hold it until the positions are written.
	store, code := openOffsets(ctx, *storeDir, true, env)
	if store == nil {
		return code
	}
	defer store.Close()

	ao, err := adminOptions(cfg, env)
	if err != nil {
		return usage("%v", err)
	}
	admin, err := pulsaradmin.New(ao)
	if err != nil {
		return usage("%v", err)
	}
	defer admin.Close()

	sub := cfg.Source.Subscription.Name
	parts, err := resetPartitions(ctx, admin, cfg, *topic, *partition)
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg offsets reset: %v\n", err)
		if errors.Is(err, errUsage) {
			return exitUsage
		}
		return exitFail
	}
	if point.kind == "id" && len(parts) != 1 {
		return usage("a message id names a message of one partition: add --topic and --partition (%d partitions selected)", len(parts))
	}
	for _, p := range parts {
		subs, err := admin.Subscriptions().ListWithContext(ctx, p.topic)
		if err != nil {
			fmt.Fprintf(env.stderr, "thalweg offsets reset: subscriptions of %s: %v\n", p.name, err)
			return exitFail
		}
		if !slices.Contains(subs, sub) {
			fmt.Fprintf(env.stderr, "thalweg offsets reset: %s has no subscription %q: nothing to reset (a worker creates it on its first start, at source.start)\n", p.name, sub)
			return exitFail
		}
	}

	dests, err := resetDestinations(cfg, store)
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg offsets reset: %v\n", err)
		return exitFail
	}

	fmt.Fprintf(env.stdout, "reset subscription %q to %s on %d partition(s):\n", sub, point, len(parts))
	for _, p := range parts {
		fmt.Fprintf(env.stdout, "  %s\n", p.name)
	}
	fmt.Fprintf(env.stdout, "and set the positions of %s in %s to the record before it (the raw anchor's delivered position: what it stores, if that is more).\n",
		strings.Join(dests, ", "), *storeDir)
	fmt.Fprintln(env.stdout, "Every worker on this subscription must be stopped (the broker disconnects its consumers).")
	if !*yes && !confirm(env) {
		fmt.Fprintln(env.stderr, "thalweg offsets reset: not confirmed (answer yes, or add --yes); nothing changed")
		return exitUsage
	}

	// What the raw anchor stores stays delivered: the worker takes it as
	// delivered anyway (the source's reconciliation), and with it in the
	// store the secondaries' coverage lags it by the reset range, which
	// the next start catches up from the anchor at once.
	stored, err := anchorStored(ctx, cfg, env)
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg offsets reset: %v; nothing changed\n", err)
		return exitFail
	}

	client, err := dlqClient(cfg, env)
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg offsets reset: pulsar client: %v\n", err)
		return exitFail
	}
	defer client.Close()
	anchor := cfg.RawAnchor().Name
	for i := range parts {
		p := &parts[i]
		if err := resetOne(ctx, admin, client, p, sub, point); err != nil {
			fmt.Fprintf(env.stderr, "thalweg offsets reset: %s: %v\n", p.name, err)
			if i > 0 {
				fmt.Fprintf(env.stderr, "thalweg offsets reset: the %d partition(s) above were reset; run the command again to finish\n", i)
			}
			return exitFail
		}
		delivered := max(p.seq, stored[p.name])
		for _, d := range dests {
			seq := p.seq
			if d == anchor {
				seq = delivered
			}
			if err := store.SetPosition(d, p.name, offsetstore.Position{Seq: seq}); err != nil {
				fmt.Fprintf(env.stderr, "thalweg offsets reset: %s: the cursor was moved, but setting %s's position failed: %v (run the command again)\n", p.name, d, err)
				return exitFail
			}
		}
		fmt.Fprintf(env.stdout, "%s: cursor reset to %s; %s; %s\n", p.name, point, p.next, resetPositions(anchor, dests, p.seq, delivered))
	}
	return exitOK
}

// resetPositions says what a reset set for one partition: the anchor's
// delivered position and every other destination's.
func resetPositions(anchor string, dests []string, seq, delivered uint64) string {
	var others []string
	for _, d := range dests {
		if d != anchor {
			others = append(others, d)
		}
	}
	out := fmt.Sprintf("%s: delivered = seq %d", anchor, delivered)
	if delivered > seq {
		out += " (what it stores)"
	}
	if len(others) > 0 {
		out += fmt.Sprintf("; %s: coverage = seq %d", strings.Join(others, ", "), seq)
		if delivered > seq {
			out += fmt.Sprintf(" (the next start sends them seqs %d..%d again from %s)", seq+1, delivered, anchor)
		}
	}
	return out
}

// anchorStoredTimeout bounds asking the raw anchor for its positions.
const anchorStoredTimeout = 30 * time.Second

// anchorStored asks the raw anchor for the highest seq it stores per
// partition (the Flight positions action, an Iceberg table's positions)
// when the worker reconciles with it: an ordered subscription whose anchor
// answers positions. Otherwise it returns nil: the worker then goes by its
// store alone and the subscription redelivers the reset range to every
// destination.
func anchorStored(ctx context.Context, cfg *config.Config, env *cliEnv) (map[string]uint64, error) {
	d := cfg.RawAnchor()
	if !orderedSource(cfg) {
		return nil, nil
	}
	var tbl icebergTables
	if d.Kind == config.KindIceberg {
		o, err := destinationOptions(cfg, d, env, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, err
		}
		if tbl, _, err = openIceberg(*o.Iceberg); err != nil {
			return nil, fmt.Errorf("destinations.%s.iceberg: %w", d.Name, err)
		}
		defer tbl.Close()
	}
	_, positions, conn, err := anchorReads(cfg, d, tbl, env, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	if conn != nil {
		defer conn.Close()
	}
	if positions == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, anchorStoredTimeout)
	defer cancel()
	m, err := positions(ctx)
	if err != nil {
		return nil, fmt.Errorf("asking the raw anchor %q for the positions it stores (the secondaries get the reset range again from it): %w", d.Name, err)
	}
	return m, nil
}

// patternNamespace finds the tenant and namespace of a topics_pattern.
var patternNamespace = regexp.MustCompile(`^(?:persistent|non-persistent)://([^/]+)/([^/]+)/`)

// errUsage marks a selection error that is the operator's (exit 2).
var errUsage = errors.New("usage")

// resetPartitions lists the topic-partitions a reset concerns: every
// partition of every topic of the config (topics_pattern: the namespace's
// topics it matches, as the worker subscribes them), or of topic only, or
// its one partition.
func resetPartitions(ctx context.Context, admin *pulsaradmin.Client, cfg *config.Config, topic string, partition int) ([]resetPartition, error) {
	var topics []string
	for _, t := range cfg.Source.Topics {
		n, err := utils.GetTopicName(t)
		if err != nil {
			return nil, fmt.Errorf("source.topics: %w", err)
		}
		topics = append(topics, n.String())
	}
	var matched []string // partitions of the pattern, as the namespace lists them
	if pat := cfg.Source.TopicsPattern; pat != "" {
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, err
		}
		ns := "public/default" // the client's namespace for a pattern without one
		if m := patternNamespace.FindStringSubmatch(pat); m != nil {
			ns = m[1] + "/" + m[2]
		}
		nsName, err := utils.GetNamespaceName(ns)
		if err != nil {
			return nil, fmt.Errorf("source.topics_pattern: %w", err)
		}
		_, names, err := admin.Topics().ListWithContext(ctx, *nsName)
		if err != nil {
			return nil, fmt.Errorf("topics of %s: %w", ns, err)
		}
		matched = patternTopics(names, re)
	}
	var names []string
	if topic != "" {
		want, err := utils.GetTopicName(topic)
		if err != nil {
			return nil, fmt.Errorf("%w: --topic: %w", errUsage, err)
		}
		switch {
		case slices.Contains(topics, want.String()):
			topics = []string{want.String()}
		case slices.Contains(matched, want.String()):
			topics, matched = nil, []string{want.String()}
		default:
			var pm []string
			for _, m := range matched {
				if strings.HasPrefix(m, want.String()+"-partition-") {
					pm = append(pm, m)
				}
			}
			if len(pm) == 0 {
				return nil, fmt.Errorf("%w: --topic %s is not a topic of the config (source.topics %v, source.topics_pattern %q)",
					errUsage, want, cfg.Source.Topics, cfg.Source.TopicsPattern)
			}
			topics, matched = nil, pm
		}
	}
	for _, t := range topics {
		ps, err := partitionsOf(ctx, admin, t)
		if err != nil {
			return nil, err
		}
		names = append(names, ps...)
	}
	names = append(names, matched...)
	slices.Sort(names)
	names = slices.Compact(names)
	if partition >= 0 {
		var one []string
		for _, n := range names {
			if strings.HasSuffix(n, "-partition-"+strconv.Itoa(partition)) {
				one = append(one, n)
			}
		}
		if len(one) != 1 {
			return nil, fmt.Errorf("%w: --partition %d: the topic has %d partition(s) (%s)", errUsage, partition, len(names), strings.Join(names, ", "))
		}
		names = one
	}
	if len(names) == 0 {
		return nil, errors.New("no topic-partition matches the config")
	}
	out := make([]resetPartition, len(names))
	for i, n := range names {
		tn, err := utils.GetTopicName(n)
		if err != nil {
			return nil, err
		}
		out[i].name, out[i].topic = n, *tn
	}
	return out, nil
}

// partitionsOf returns the topic-partitions of topic, named as Pulsar
// names them: "<topic>-partition-N" for each partition of a partitioned
// topic, or the topic itself when it is not partitioned. A topic that does
// not exist is an error.
// patternTopics is what of a namespace's topics (and partitions) the
// worker subscribes for a topics_pattern: the persistent ones the pattern
// matches, as the client's regex consumer does by default; the admin API
// lists non-persistent topics too.
func patternTopics(names []string, re *regexp.Regexp) []string {
	var out []string
	for _, name := range names {
		if strings.HasPrefix(name, "persistent://") && re.MatchString(name) {
			out = append(out, name)
		}
	}
	return out
}

func partitionsOf(ctx context.Context, admin *pulsaradmin.Client, topic string) ([]string, error) {
	tn, err := utils.GetTopicName(topic)
	if err != nil {
		return nil, err
	}
	meta, err := admin.Topics().GetMetadataWithContext(ctx, *tn)
	if err != nil {
		return nil, fmt.Errorf("partitions of %s: %w", topic, err)
	}
	if meta.Partitions == 0 {
		// Also the answer for a topic that does not exist: ask the topic
		// itself (listing its subscriptions creates nothing).
		if _, err := admin.Subscriptions().ListWithContext(ctx, *tn); err != nil {
			return nil, fmt.Errorf("topic %s: %w", topic, err)
		}
		return []string{tn.String()}, nil
	}
	names := make([]string, meta.Partitions)
	for i := range names {
		names[i] = tn.String() + utils.PARTITIONEDTOPICSUFFIX + strconv.Itoa(i)
	}
	return names, nil
}

// resetDestinations is every destination whose positions a reset sets: the
// config's, and any other the store holds positions for.
func resetDestinations(cfg *config.Config, store *offsetstore.Store) ([]string, error) {
	var out []string
	for _, d := range cfg.Destinations {
		out = append(out, d.Name)
	}
	held, err := store.Destinations()
	if err != nil {
		return nil, err
	}
	for _, d := range held {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// confirm asks on stdin; anything but "yes" (or no terminal) is a no.
func confirm(env *cliEnv) bool {
	if env.stdin == nil {
		return false
	}
	fmt.Fprint(env.stdout, "Reset? Type yes to continue: ")
	line, _ := bufio.NewReader(env.stdin).ReadString('\n')
	return strings.TrimSpace(line) == "yes"
}

// resetReadTimeout bounds reading one partition's first message after the
// reset point.
const resetReadTimeout = 30 * time.Second

// resetOne moves sub's cursor on p to point, then reads where the broker
// put it: p.seq is the seq before the first message at or after the reset
// point (pulsar.SeqOf - 1), or past the end the last message's seq.
func resetOne(ctx context.Context, admin *pulsaradmin.Client, client pclient.Client, p *resetPartition, sub string, point resetPoint) error {
	var err error
	switch point.kind {
	case "earliest":
		// Timestamp 0: the earliest message the partition retains.
		err = admin.Subscriptions().ResetCursorToTimestampWithContext(ctx, p.topic, sub, 0)
	case "latest":
		// Everything published so far counts as consumed (skip_all).
		err = admin.Subscriptions().ClearBacklogWithContext(ctx, p.topic, sub)
	case "time":
		// The broker places the cursor after the last entry published at
		// or before the time.
		err = admin.Subscriptions().ResetCursorToTimestampWithContext(ctx, p.topic, sub, max(point.at.UnixMilli(), 0))
	case "id":
		err = admin.ResetCursor(ctx, p.topic, sub, point.id)
	}
	if err != nil {
		return fmt.Errorf("moving the cursor of %q: %w", sub, err)
	}
	at := point.id
	if point.kind != "id" {
		// The entry the broker chose: reading from it gives exactly the
		// messages the subscription delivers next.
		if at, err = readPosition(ctx, admin, p.topic, sub); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, resetReadTimeout)
	defer cancel()
	first, err := readOne(ctx, client, p.name, pclient.NewMessageID(at.LedgerID, max(at.EntryID, 0), int32(at.BatchIndex), 0))
	if err != nil {
		return err
	}
	if first != nil {
		seq, err := pulsar.SeqOf(first)
		if err != nil {
			return err
		}
		p.seq = seq - 1
		p.next = fmt.Sprintf("next record: seq %d (message %s, published %s)", seq, messageID(first), first.PublishTime().UTC().Format(time.RFC3339Nano))
		return nil
	}
	last, err := readOne(ctx, client, p.name, pclient.LatestMessageID())
	if err != nil {
		return err
	}
	if last == nil {
		p.seq, p.next = 0, "the partition holds no message"
		return nil
	}
	seq, err := pulsar.SeqOf(last)
	if err != nil {
		return err
	}
	p.seq = seq
	p.next = fmt.Sprintf("past the last record (seq %d, message %s)", seq, messageID(last))
	return nil
}

// readOne returns the message at start (inclusive) of partition, or nil
// when there is none.
func readOne(ctx context.Context, client pclient.Client, partition string, start pclient.MessageID) (pclient.Message, error) {
	r, err := client.CreateReader(pclient.ReaderOptions{Topic: partition, StartMessageID: start, StartMessageIDInclusive: true})
	if err != nil {
		return nil, fmt.Errorf("reader on %s: %w", partition, err)
	}
	defer r.Close()
	if !r.HasNext() {
		return nil, nil
	}
	m, err := r.Next(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading %s at %v: %w", partition, start, err)
	}
	return m, nil
}

// messageID spells m's id as --to takes it: ledger:entry[:batch].
func messageID(m pclient.Message) string {
	id := m.ID()
	b := id.BatchIdx()
	if id.BatchSize() <= 1 {
		b = -1
	}
	return idString(utils.MessageID{LedgerID: id.LedgerID(), EntryID: id.EntryID(), BatchIndex: int(b)})
}

// readPosition returns the entry sub reads next on one topic-partition:
// its cursor's read position (internal stats), BatchIndex -1. Right after
// a reset it is the reset point the broker chose; past the last entry it
// names an entry that does not exist yet (EntryID may be -1 on a ledger
// without entries).
func readPosition(ctx context.Context, admin *pulsaradmin.Client, topic utils.TopicName, sub string) (utils.MessageID, error) {
	st, err := admin.Topics().GetInternalStatsWithContext(ctx, topic)
	if err != nil {
		return utils.MessageID{}, fmt.Errorf("internal stats: %w", err)
	}
	cur, ok := st.Cursors[sub]
	if !ok {
		return utils.MessageID{}, fmt.Errorf("internal stats: no cursor %q", sub)
	}
	l, e, ok := strings.Cut(cur.ReadPosition, ":")
	ledger, err1 := strconv.ParseInt(l, 10, 64)
	entry, err2 := strconv.ParseInt(e, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return utils.MessageID{}, fmt.Errorf("internal stats: read position of %q: want ledger:entry, got %q", sub, cur.ReadPosition)
	}
	return utils.MessageID{LedgerID: ledger, EntryID: entry, PartitionIndex: -1, BatchIndex: -1}, nil
}

// parseMessageID parses --to's message id, "ledger:entry" or
// "ledger:entry:batch" (the third part is a batch index, not the
// partition index utils.ParseMessageID takes it for).
func parseMessageID(s string) (utils.MessageID, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return utils.MessageID{}, fmt.Errorf("message id: want ledger:entry[:batch], got %q", s)
	}
	l, err1 := strconv.ParseInt(parts[0], 10, 64)
	e, err2 := strconv.ParseInt(parts[1], 10, 64)
	id := utils.MessageID{LedgerID: l, EntryID: e, PartitionIndex: -1, BatchIndex: -1}
	if err := errors.Join(err1, err2); err != nil || l < 0 || e < 0 {
		return utils.MessageID{}, fmt.Errorf("message id: want ledger:entry[:batch] with non-negative numbers, got %q", s)
	}
	if len(parts) == 3 {
		b, err := strconv.ParseInt(parts[2], 10, 32)
		if err != nil || b < 0 {
			return utils.MessageID{}, fmt.Errorf("message id: batch index: want a non-negative number, got %q", s)
		}
		id.BatchIndex = int(b)
	}
	return id, nil
}

// idString spells id as --to takes it: ledger:entry, and :batch when
// BatchIndex >= 0.
func idString(id utils.MessageID) string {
	if id.BatchIndex < 0 {
		return fmt.Sprintf("%d:%d", id.LedgerID, id.EntryID)
	}
	return fmt.Sprintf("%d:%d:%d", id.LedgerID, id.EntryID, id.BatchIndex)
}
