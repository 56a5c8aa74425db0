package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/thalweg/thalweg/internal/config"
)

// demoPulsarSource produces the demo's records to a fresh topic on the
// broker at url and points cfg at it, so that the demo runs the real Pulsar
// source. It returns nothing to verify against by partition/seq (the source
// assigns seqs); the demo then checks that every produced payload reached
// the sink by record count.
func demoPulsarSource(ctx context.Context, cfg *config.Config, url, topic string, records int64, _ int, env *cliEnv) (map[int32]uint64, error) {
	topic = fmt.Sprintf("%s-%d", topic, time.Now().UnixNano())
	client, err := pclient.NewClient(pclient.ClientOptions{URL: url, OperationTimeout: 30 * time.Second,
		Logger: plog.DefaultNopLogger()})
	if err != nil {
		return nil, err
	}
	defer client.Close()
	prod, err := client.CreateProducer(pclient.ProducerOptions{Topic: topic, BatchingMaxMessages: 1000})
	if err != nil {
		return nil, fmt.Errorf("producer on %s: %w", topic, err)
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
		return nil, err
	}
	select {
	case err := <-errs:
		return nil, fmt.Errorf("produce: %w", err)
	default:
	}
	cfg.Source.Kind = config.SourcePulsar
	cfg.Source.URL = url
	cfg.Source.Topics = []string{topic}
	cfg.Source.Subscription = config.SubscriptionConfig{Name: "thalweg-demo", Type: config.SubFailover}
	cfg.Schema = config.SchemaConfig{Mode: config.SchemaRaw}
	return nil, nil
}
