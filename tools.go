//go:build tools

// Package thalweg pins, for go mod tidy, the modules that packages under
// construction will import. Removed once every import is real.
package thalweg

import (
	_ "github.com/apache/arrow-go/v18/arrow/flight"
	_ "github.com/apache/pulsar-client-go/pulsar"
	_ "github.com/bytedance/sonic"
	_ "github.com/cockroachdb/pebble/v2"
	_ "github.com/cockroachdb/pebble/v2/vfs/errorfs"
	_ "github.com/goccy/go-json"
	_ "github.com/stretchr/testify/require"
	_ "go.opentelemetry.io/otel/exporters/prometheus"
	_ "go.opentelemetry.io/otel/sdk/metric"
	_ "go.uber.org/goleak"
	_ "google.golang.org/grpc"
	_ "gopkg.in/yaml.v3"
)
