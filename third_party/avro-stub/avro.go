// Package avro stands in for github.com/hamba/avro/v2 in thalweg's own
// builds, through a replace directive in thalweg's go.mod.
//
// Why: pulsar-client-go imports hamba/avro for its Avro schema support, and
// hamba/avro has known vulnerabilities with no fixed release (GO-2026-5046,
// GO-2026-5047, GO-2026-5048: its decoder, reachable from any program that
// links the package). thalweg consumes payloads as bytes and never uses
// pulsar-client-go's Avro schema (schema.mode pulsar decodes Avro with
// thalweg's own decoder, internal/pulsarschema), so the worker binary
// carries no hamba/avro codec: this package provides the four identifiers
// pulsar-client-go refers to, and every function fails with ErrUnsupported.
//
// A replace directive applies only to thalweg's own module: a program that
// embeds thalweg as a library resolves the real hamba/avro unless it
// replaces it the same way (see docs/operations.md).
package avro

import "errors"

// ErrUnsupported is what every function returns.
var ErrUnsupported = errors.New("avro: Avro schemas are not supported by this build " +
	"(thalweg replaces github.com/hamba/avro/v2 with a stub; see third_party/avro-stub)")

// Schema is an Avro schema. None can be made: Parse always fails.
type Schema interface {
	String() string
}

// Parse returns ErrUnsupported.
func Parse(string) (Schema, error) { return nil, ErrUnsupported }

// Marshal returns ErrUnsupported.
func Marshal(Schema, any) ([]byte, error) { return nil, ErrUnsupported }

// Unmarshal returns ErrUnsupported.
func Unmarshal(Schema, []byte, any) error { return ErrUnsupported }
