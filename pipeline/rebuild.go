package pipeline

import (
	"context"

	"github.com/thalweg/thalweg/batch"
)

// RebuildFunc reads batches back from the raw anchor
// (docs/design.md#rebuild-from-raw): every stored batch with records of partition whose seqs
// intersect [from, to], in stored order, each with the spans it was stored
// with. Batches may hold rows outside the range and of other partitions;
// the secondary skips what it already has and takes duplicates at the seam
// over gaps. The pipeline only asks for ranges the anchor's delivered
// watermark already covers, so everything asked for is durable there.
//
// The caller owns the returned batches and releases each. On error nothing
// is returned. It is called from the secondaries' forwarder goroutines,
// possibly concurrently, and must honour ctx.
//
// The pipeline knows no transport: flight.Rebuild is the implementation for
// a thalweg Flight receiver anchor.
type RebuildFunc func(ctx context.Context, partition string, from, to uint64) ([]*batch.Batch, error)
