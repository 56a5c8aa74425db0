package instruments

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/thalweg/thalweg/observability"
)

// syncMap caches one precomputed reason attribute option per reason string.
// Reasons come from a small closed set in practice (dead-letter causes), so
// the cache stays small; the read path is lock-free.
type syncMap struct {
	m sync.Map // string -> []metric.AddOption
}

func (c *syncMap) get(reason string) []metric.AddOption {
	if v, ok := c.m.Load(reason); ok {
		return v.([]metric.AddOption)
	}
	opts := []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String(observability.AttrReason, reason)))}
	v, _ := c.m.LoadOrStore(reason, opts)
	return v.([]metric.AddOption)
}
