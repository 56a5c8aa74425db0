package pulsarschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// ParseAdminResponse parses the JSON body of the admin API's GET schema
// response: {"version": N, "type": "AVRO", "timestamp": ..., "data": "...",
// "properties": {...}}.
func ParseAdminResponse(body []byte) (Info, error) {
	var r struct {
		Version    *int64            `json:"version"`
		Type       string            `json:"type"`
		Data       string            `json:"data"`
		Properties map[string]string `json:"properties"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return Info{}, fmt.Errorf("%w: admin schema response: %w", ErrDefinition, err)
	}
	if r.Type == "" {
		return Info{}, fmt.Errorf("%w: admin schema response has no type", ErrDefinition)
	}
	info := Info{Type: Type(strings.ToUpper(r.Type)), Definition: []byte(r.Data), Properties: r.Properties}
	if r.Version != nil {
		info.Version = *r.Version
	}
	return info, nil
}
