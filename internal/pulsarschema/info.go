package pulsarschema

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"
)

// Type is a Pulsar schema type as the registry names it (SchemaInfo.type).
type Type string

// The schema types this package maps. Others (KEY_VALUE, AUTO_CONSUME,
// PROTOBUF, ...) are refused by Compile with ErrUnsupported.
const (
	TypeNone           Type = "NONE" // no schema: the payload is opaque bytes
	TypeString         Type = "STRING"
	TypeBytes          Type = "BYTES"
	TypeBoolean        Type = "BOOLEAN"
	TypeInt8           Type = "INT8"
	TypeInt16          Type = "INT16"
	TypeInt32          Type = "INT32"
	TypeInt64          Type = "INT64"
	TypeFloat          Type = "FLOAT"
	TypeDouble         Type = "DOUBLE"
	TypeDate           Type = "DATE"
	TypeTime           Type = "TIME"
	TypeTimestamp      Type = "TIMESTAMP"
	TypeInstant        Type = "INSTANT"
	TypeLocalDate      Type = "LOCAL_DATE"
	TypeLocalTime      Type = "LOCAL_TIME"
	TypeLocalDateTime  Type = "LOCAL_DATE_TIME"
	TypeAvro           Type = "AVRO"
	TypeJSON           Type = "JSON"
	TypeProtobufNative Type = "PROTOBUF_NATIVE"
)

var (
	// ErrUnsupported is matched by every Compile error for a schema type this
	// package does not map.
	ErrUnsupported = errors.New("pulsarschema: unsupported schema type")
	// ErrUnmappable is matched by every Compile error for a definition that
	// has no Arrow form (a recursive type, a union of several non-null
	// types, ...); the error names the field path.
	ErrUnmappable = errors.New("pulsarschema: schema cannot be mapped to Arrow")
	// ErrDefinition is matched by every Compile error for a definition that
	// is not valid for its type (malformed Avro JSON, an unknown named
	// type, a descriptor set without the root message, ...).
	ErrDefinition = errors.New("pulsarschema: invalid schema definition")
)

// Info is one version of a topic's schema, as the broker's admin REST API
// returns it from GET /admin/v2/schemas/{tenant}/{namespace}/{topic}/schema
// (the latest version) or .../schema/{version}.
type Info struct {
	// Version is the registry's version number of this schema.
	Version int64
	// Type is the schema type, e.g. TypeAvro.
	Type Type
	// Definition is the schema data: the Avro record definition (JSON) for
	// AVRO and JSON; for PROTOBUF_NATIVE the JSON document
	// {"fileDescriptorSet": base64, "rootMessageTypeName": ...,
	// "rootFileDescriptorName": ...}; empty for the primitive types.
	Definition []byte
	// Properties are the schema's user properties (informational).
	Properties map[string]string
}

// InfoOf is the Info of a schema version as the admin client returns it
// (the registry's type, data, properties and version).
func InfoOf(s *utils.SchemaInfoWithVersion) (Info, error) {
	if s == nil || s.SchemaInfo == nil || s.SchemaInfo.Type == "" {
		return Info{}, fmt.Errorf("%w: admin schema response has no type", ErrDefinition)
	}
	return Info{
		Version:    s.Version,
		Type:       Type(strings.ToUpper(s.SchemaInfo.Type)),
		Definition: s.SchemaInfo.Schema,
		Properties: s.SchemaInfo.Properties,
	}, nil
}
