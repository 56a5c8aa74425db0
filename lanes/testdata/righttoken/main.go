// Command righttoken is the control for wrongtoken: the same calls with each
// lane paired with its own token kind compile.
package main

import (
	"context"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/lanes"
)

func main() {
	var (
		raw  *lanes.Lane[lanes.RawAnchor]
		cov  *lanes.Lane[lanes.Coverage]
		none *lanes.Lane[lanes.NoCommit]
		b    *batch.Batch
	)
	ctx := context.Background()
	_ = raw.Submit(ctx, b, lanes.RawAnchor{OnDurable: func(error) {}})
	_ = cov.Submit(ctx, b, lanes.Coverage{})
	_ = none.Submit(ctx, b, lanes.NoCommit{})
}
