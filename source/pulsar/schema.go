package pulsar

import (
	"context"
	"errors"
	"fmt"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/schemaevo"
)

// Backoff of Options.Schemas retries: the registry (the broker's admin API)
// being unreachable heals, so Next waits for it rather than rejecting
// records it could decode.
const (
	schemaRetryMin = 100 * time.Millisecond
	schemaRetryMax = 10 * time.Second
)

// schemaFor resolves msg's schema version with Options.Schemas (nil
// without it), retrying with growing backoff; an error wrapping
// schemaevo.ErrIncompatible is permanent and returned at once. It logs the first failure of
// a streak and its healing, never each retry. Next's goroutine only.
func (s *Source) schemaFor(ctx context.Context, msg pclient.Message) (batch.RowSchema, error) {
	if s.opts.Schemas == nil {
		return nil, nil
	}
	wait := schemaRetryMin
	var first time.Time
	for {
		rs, err := s.opts.Schemas(ctx, msg.Topic(), msg.SchemaVersion())
		if err == nil {
			if !first.IsZero() {
				s.log.Info("schema registry reachable again", "topic", msg.Topic(), "after", time.Since(first).Round(time.Millisecond))
			}
			return rs, nil
		}
		if errors.Is(err, schemaevo.ErrIncompatible) {
			return nil, fmt.Errorf("source/pulsar: %w", err)
		}
		if first.IsZero() {
			first = time.Now()
			s.log.Warn("cannot resolve the message's schema version; retrying with backoff", "topic", msg.Topic(), "error", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-s.closing:
			t.Stop()
			return nil, ErrClosed
		}
		wait = min(2*wait, schemaRetryMax)
	}
}
