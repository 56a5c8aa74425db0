package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/source/pulsar"
)

// republishSubscription is the subscription `thalweg dlq --republish`
// keeps on the dead-letter topic: a record is acknowledged there once it is
// republished, so a second --republish does not send it again. Listing
// reads without a subscription and shows every dead letter the topic retains.
const republishSubscription = "thalweg-dlq-republish"

// PropRepublishedFrom is set on a republished record: the id of the
// dead-letter message it came from.
const PropRepublishedFrom = "thalweg-dlq-republished-from"

func cmdDLQ(ctx context.Context, args []string, env *cliEnv) int {
	fs := newFlagSet("dlq", "dlq --config pipeline.yaml [--limit N] [--republish --yes [--max N]]", env)
	path := fs.String("config", "", "pipeline config whose source.dead_letter_topic to read (required)")
	limit := fs.Int("limit", 100, "list at most this many dead letters (0: all)")
	republish := fs.Bool("republish", false, "publish the dead letters again to the topic each was consumed from")
	maxN := fs.Int("max", 1000, "with --republish: republish at most this many records")
	yes := fs.Bool("yes", false, "confirm --republish (the records are consumed again by the pipeline)")
	wait := fs.Duration("wait", 2*time.Second, "stop once no further dead letter arrives for this long")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *republish && !*yes {
		fmt.Fprintln(env.stderr, "thalweg dlq: --republish sends the dead letters to their source topic again: add --yes to confirm")
		return exitUsage
	}
	if *republish && *maxN <= 0 {
		fmt.Fprintln(env.stderr, "thalweg dlq: --max must be > 0")
		return exitUsage
	}
	cfg, code := loadConfig(*path, env)
	if cfg == nil {
		return code
	}
	if cfg.Source.Kind != config.SourcePulsar || cfg.Source.DeadLetterTopic == "" {
		fmt.Fprintf(env.stderr, "thalweg dlq: %s has no source.dead_letter_topic (dead letters are then counted in thalweg_dlq_records_total and dropped)\n", *path)
		return exitUsage
	}
	client, err := dlqClient(cfg, env)
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg dlq: %v\n", err)
		return exitUsage
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if *republish {
		n, err := republishDLQ(ctx, client, cfg.Source.DeadLetterTopic, *maxN, *wait, env)
		fmt.Fprintf(env.stdout, "republished %d dead letters from %s\n", n, cfg.Source.DeadLetterTopic)
		if err != nil {
			fmt.Fprintf(env.stderr, "thalweg dlq: republish: %v\n", err)
			return exitFail
		}
		return exitOK
	}
	if err := listDLQ(ctx, client, cfg.Source.DeadLetterTopic, *limit, env); err != nil {
		fmt.Fprintf(env.stderr, "thalweg dlq: %v\n", err)
		return exitFail
	}
	return exitOK
}

// dlqClient connects as the worker would: the source's URL, listener,
// TLS trust and token.
func dlqClient(cfg *config.Config, env *cliEnv) (pclient.Client, error) {
	sc := cfg.Source
	co := pclient.ClientOptions{
		URL: sc.URL, ListenerName: sc.ListenerName, TLSTrustCertsFilePath: sc.Auth.TLSCAFile,
		OperationTimeout: 30 * time.Second, ConnectionTimeout: 10 * time.Second,
		Logger: plog.DefaultNopLogger(), MetricsRegisterer: prometheus.NewRegistry(),
	}
	if sc.Auth.TokenFile != "" {
		co.Authentication = pclient.NewAuthenticationTokenFromFile(sc.Auth.TokenFile)
	} else if tok, err := sc.Auth.Token(lookupEnv(env)); err != nil {
		return nil, err
	} else if t := tok.Reveal(); t != "" {
		co.Authentication = pclient.NewAuthenticationToken(t)
	}
	return pclient.NewClient(co)
}

// listDLQ prints up to limit dead letters of topic, oldest first, with the
// reason and origin source/pulsar wrote on each.
func listDLQ(ctx context.Context, client pclient.Client, topic string, limit int, env *cliEnv) error {
	r, err := client.CreateReader(pclient.ReaderOptions{Topic: topic, StartMessageID: pclient.EarliestMessageID()})
	if err != nil {
		return fmt.Errorf("reader on %s: %w", topic, err)
	}
	defer r.Close()
	tw := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MESSAGE-ID\tPUBLISHED\tSOURCE-TOPIC\tPARTITION\tSEQ\tREASON\tPAYLOAD")
	n := 0
	for (limit == 0 || n < limit) && r.HasNext() {
		m, err := r.Next(ctx)
		if err != nil {
			return err
		}
		p := m.Properties()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.ID(), m.PublishTime().UTC().Format(time.RFC3339),
			orDash(p[pulsar.PropSourceTopic]), orDash(p[pulsar.PropSourcePartition]), orDash(p[pulsar.PropSourceSeq]),
			orDash(oneLineText(p[pulsar.PropReason], 120)), oneLineText(string(m.Payload()), 60))
		n++
	}
	if n == 0 {
		fmt.Fprintln(tw, "(empty)\t\t\t\t\t\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	more := ""
	if limit > 0 && n == limit && r.HasNext() {
		more = " (more: raise --limit)"
	}
	fmt.Fprintf(env.stderr, "%d dead letters on %s%s\n", n, topic, more)
	return nil
}

// partitionSuffix is how Pulsar names the partitions of a partitioned topic.
var partitionSuffix = regexp.MustCompile(`-partition-\d+$`)

// republishDLQ sends up to maxN dead letters not yet republished back to
// the topic each was consumed from (its partitioned topic, not the one
// partition: the producer routes by key as the original producer did), with
// the original key, event time and properties, and acknowledges each on
// republishSubscription once the broker has persisted the copy. It stops
// when no dead letter arrives for wait.
func republishDLQ(ctx context.Context, client pclient.Client, topic string, maxN int, wait time.Duration, env *cliEnv) (int, error) {
	cons, err := client.Subscribe(pclient.ConsumerOptions{
		Topic: topic, SubscriptionName: republishSubscription, Type: pclient.Exclusive,
		SubscriptionInitialPosition: pclient.SubscriptionPositionEarliest,
	})
	if err != nil {
		return 0, fmt.Errorf("subscribe %s to %s: %w", republishSubscription, topic, err)
	}
	defer cons.Close()
	producers := map[string]pclient.Producer{}
	defer func() {
		for _, p := range producers {
			p.Close()
		}
	}()
	n := 0
	for n < maxN {
		rctx, cancel := context.WithTimeout(ctx, wait)
		m, err := cons.Receive(rctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return n, nil // drained
		}
		if err != nil {
			return n, err
		}
		src := partitionSuffix.ReplaceAllString(m.Properties()[pulsar.PropSourceTopic], "")
		if src == "" {
			return n, fmt.Errorf("dead letter %s has no %s property: not written by thalweg", m.ID(), pulsar.PropSourceTopic)
		}
		prod := producers[src]
		if prod == nil {
			if prod, err = client.CreateProducer(pclient.ProducerOptions{Topic: src, SendTimeout: -1}); err != nil {
				return n, fmt.Errorf("producer on %s: %w", src, err)
			}
			producers[src] = prod
		}
		props := maps.Clone(m.Properties())
		maps.DeleteFunc(props, func(k, _ string) bool { return strings.HasPrefix(k, "thalweg-dlq-") })
		props[PropRepublishedFrom] = m.ID().String()
		if _, err := prod.Send(ctx, &pclient.ProducerMessage{Payload: m.Payload(), Key: m.Key(),
			Properties: props, EventTime: m.EventTime()}); err != nil {
			return n, fmt.Errorf("republish %s to %s: %w", m.ID(), src, err)
		}
		if err := cons.Ack(m); err != nil {
			return n, fmt.Errorf("ack %s on %s (it was republished and may be again): %w", m.ID(), topic, err)
		}
		n++
		fmt.Fprintf(env.stderr, "republished %s -> %s (reason: %s)\n", m.ID(), src, oneLineText(m.Properties()[pulsar.PropReason], 120))
	}
	return n, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLineText clips s to max runes on one line, quoting what a terminal would mangle.
func oneLineText(s string, max int) string {
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	q := strconv.Quote(s)
	if q[1:len(q)-1] == s && !strings.ContainsAny(s, " \t") {
		return s
	}
	return q
}
