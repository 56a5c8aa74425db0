// Command wrongtoken must NOT compile: it hands a raw-anchor token to a
// coverage lane. token_test.go builds it and expects a type error.
package main

import (
	"context"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/lanes"
)

func main() {
	var cov *lanes.Lane[lanes.Coverage]
	var b *batch.Batch
	_ = cov.Submit(context.Background(), b, lanes.RawAnchor{OnDurable: func(error) {}})
}
