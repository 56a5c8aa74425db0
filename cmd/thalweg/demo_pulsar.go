package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/internal/pulsaradmin"
)

// demoPulsarSource produces the demo's records to topic on the broker at
// url and points cfg at it, so that the demo runs the real Pulsar source.
// Every run uses the same topic and a subscription of its own, created at
// the topic's end before producing, so that it reads exactly this run's
// records; the returned cleanup removes that subscription again (call it
// once the pipeline has stopped), so repeated runs leave nothing behind but
// the one topic. It returns nothing to verify against by partition/seq (the
// source assigns seqs); the demo then checks that every produced payload
// reached the sink by record count.
func demoPulsarSource(ctx context.Context, cfg *config.Config, url, adminURL, topic string, records int64, _ int, env *cliEnv) (map[string]uint64, func(), error) {
	sub := fmt.Sprintf("thalweg-demo-%d", time.Now().UnixNano())
	client, err := pclient.NewClient(pclient.ClientOptions{URL: url, OperationTimeout: 30 * time.Second,
		Logger: plog.DefaultNopLogger()})
	if err != nil {
		return nil, nil, err
	}
	defer client.Close()
	// The subscription exists (at the end of the topic) before the first
	// record is produced; the source resumes it there.
	cons, err := client.Subscribe(pclient.ConsumerOptions{Topic: topic, SubscriptionName: sub, Type: pclient.Failover,
		SubscriptionInitialPosition: pclient.SubscriptionPositionLatest})
	if err != nil {
		return nil, nil, fmt.Errorf("subscribe %s on %s: %w", sub, topic, err)
	}
	cons.Close()
	cleanup := func() {
		if err := deleteSubscription(adminURL, topic, sub); err != nil {
			fmt.Fprintf(env.stderr, "thalweg demo: removing subscription %s of %s: %v\n", sub, topic, err)
		}
	}
	// SendTimeout -1: no timeout goroutine that outlives Close; FlushWithCtx
	// bounds the wait instead.
	prod, err := client.CreateProducer(pclient.ProducerOptions{Topic: topic, BatchingMaxMessages: 1000, SendTimeout: -1})
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("producer on %s: %w", topic, err)
	}
	defer prod.Close()
	fmt.Fprintf(env.stderr, "thalweg demo: producing %d records to %s\n", records, topic)
	errs := make(chan error, 1)
	for i := int64(1); i <= records; i++ {
		payload := []byte(`{"id":` + strconv.FormatInt(i, 10) + `,"event":"demo","ts":1735689600000}`)
		prod.SendAsync(ctx, &pclient.ProducerMessage{Payload: payload, Key: strconv.FormatInt(i%16, 10)},
			func(_ pclient.MessageID, _ *pclient.ProducerMessage, err error) {
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			})
	}
	if err := prod.FlushWithCtx(ctx); err != nil {
		cleanup()
		return nil, nil, err
	}
	select {
	case err := <-errs:
		cleanup()
		return nil, nil, fmt.Errorf("produce: %w", err)
	default:
	}
	cfg.Source.Kind = config.SourcePulsar
	cfg.Source.URL = url
	cfg.Source.Topics = []string{topic}
	cfg.Source.Subscription = config.SubscriptionConfig{Name: sub, Type: config.SubFailover}
	cfg.Schema = config.SchemaConfig{Mode: config.SchemaRaw}
	return nil, cleanup, nil
}

// deleteSubscription removes sub from topic (in public/default unless topic
// is a full persistent:// name) through the broker's admin REST API at
// adminURL. (pulsar-client-go's Consumer.Unsubscribe leaves the consumer's
// event loop running.)
func deleteSubscription(adminURL, topic, sub string) error {
	tn, err := utils.GetTopicName(topic)
	if err != nil {
		return err
	}
	admin, err := pulsaradmin.New(pulsaradmin.Options{URL: adminURL, DisableKeepAlives: true})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), pulsaradmin.DefaultTimeout)
	defer cancel()
	if err := admin.Subscriptions().DeleteWithContext(ctx, *tn, sub); err != nil {
		return fmt.Errorf("deleting subscription %q of %s: %w", sub, tn, err)
	}
	return nil
}

// defaultAdminURL is the admin REST address of a standalone broker whose
// binary protocol is at pulsarURL: the same host, port 8080.
func defaultAdminURL(pulsarURL string) string {
	u, err := url.Parse(pulsarURL)
	if err != nil || u.Hostname() == "" {
		return "http://127.0.0.1:8080"
	}
	scheme := "http"
	if u.Scheme == "pulsar+ssl" {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(u.Hostname(), "8080")
}
