// Package pulsarschema turns a topic's schema from Pulsar's schema registry
// into an Arrow schema, and decodes the topic's payloads straight into
// Arrow builders against it (no intermediate maps or generic values).
//
// One concept: a Codec is one compiled schema version (Compile(Info)); its
// Schema() is the Arrow schema of the rows, and NewDecoder binds a Decoder
// to the builders of a RecordBuilder. Info is what the broker's admin REST
// API returns for GET /admin/v2/schemas/{tenant}/{namespace}/{topic}/schema
// and .../schema/{version}, taken from the admin client's
// utils.SchemaInfoWithVersion (InfoOf); a Registry fetches it through
// internal/pulsaradmin's Client.Schema (pulsar-client-go's admin client,
// thalweg's one client of that API) and keeps each Codec. docs/pulsar-schemas.md holds the same
// mapping for operators.
//
// # Type mapping
//
// AVRO (the definition is an Avro record; its fields are the columns):
//
//	Avro                              Arrow
//	null                              null
//	boolean                           bool
//	int / long                        int32 / int64
//	float / double                    float32 / float64
//	bytes / string                    binary / utf8
//	record                            struct (fields in order)
//	enum                              utf8 (the symbol; not dictionary-encoded)
//	array                             list<item>
//	map                               map<utf8, value>
//	fixed(n)                          fixed_size_binary[n]
//	[null, T] or [T, null]            T, nullable (the only nullable form)
//	[T1, T2, ...] (several non-null)  struct with one nullable child per
//	                                  branch, named after the branch's type
//	                                  ("string", "long", a record's short
//	                                  name); exactly one child is set, and
//	                                  the struct is null for the null branch
//	date (int)                        date32
//	time-millis (int)                 time32[ms]
//	time-micros (long)                time64[us]
//	timestamp-millis/micros/nanos     timestamp[ms/us/ns, tz=UTC]
//	local-timestamp-millis/micros/nanos timestamp[ms/us/ns] (no zone)
//	decimal(p, s) on bytes or fixed   decimal128(p, s); p > 38 is an error
//	uuid (string)                     utf8
//
// Decimal values are the two's-complement integer the payload holds (up to
// 16 bytes after sign extension); they are not checked against the
// precision. A field whose type is not a union is not nullable; list items and map
// values are nullable only when their Avro type is such a union. Unknown
// or invalid logical types leave the underlying type, as the Avro
// specification asks. Named types may be referenced by (full) name; a type
// that refers to itself (a recursive type) has no finite Arrow form and is
// an ErrUnmappable error naming the field path, e.g. "field kids[]:
// recursive type Node".
//
// JSON (the definition is an Avro record too; payloads are JSON objects,
// decoded by batch's JSON decoder with its rules: unknown keys skipped,
// absent nullable fields null): the Avro mapping narrowed to what JSON
// text can say. timestamp-millis stays timestamp[ms, tz=UTC] (an RFC 3339
// string or epoch milliseconds); other timestamp units and the time types
// are their integers (int64 / int32); fixed is binary; enums are
// utf8 (the JSON string); maps are map<utf8, value> (a JSON object). Decimals,
// fields that are always null and unions of several non-null types are
// ErrUnmappable.
//
// JSON has no bytes type: a bytes (or fixed) field is base64 as the Java
// client (Jackson) and the Go client (encoding/json) write it, or the
// string's UTF-8 bytes as the Python client's JsonSchema writes it
// (bytes.decode()). JSONBytesAuto tells them apart per schema version by
// how it was registered: the Java client's properties (__alwaysAllowNull)
// mean base64, a definition laid out as the Python client's json.dumps(...,
// indent=True) means text, anything else base64 (see JSONBytes; CompileWith
// and RegistryOptions.JSONBytes force one for every version).
//
// PROTOBUF_NATIVE (the definition names a FileDescriptorSet and the root
// message; its fields are the columns):
//
//	protobuf                          Arrow
//	bool                              bool
//	int32, sint32, sfixed32           int32
//	int64, sint64, sfixed64           int64
//	uint32, fixed32 / uint64, fixed64 uint32 / uint64
//	float / double                    float32 / float64
//	string / bytes                    utf8 / binary
//	enum                              utf8: the value's name (the first name
//	                                  of an alias); a number the enum does
//	                                  not define is its decimal string
//	message                           struct, nullable (absent = null)
//	repeated T                        list<item: T> (absent = empty list)
//	map<K, V>                         map<K, V>
//	google.protobuf.Timestamp         timestamp[ns, tz=UTC]
//	google.protobuf.*Value wrappers   the wrapped scalar, nullable
//
// A field with presence (proto2 optional, proto3 optional, a oneof member)
// is nullable and null when absent; a proto3 field without presence is not
// nullable and takes its default (0, "", the enum's zero name) when absent.
// Recursive messages and proto2 groups are ErrUnmappable.
//
// Primitive schemas give one non-nullable column named "value", decoded as
// the Pulsar clients encode them: STRING utf8 (must be valid UTF-8), BYTES
// and NONE binary, BOOLEAN bool (1 byte), INT8..INT64 int8..int64
// (big-endian), FLOAT / DOUBLE float32 / float64 (IEEE 754, big-endian),
// DATE and TIMESTAMP timestamp[ms, tz=UTC] (8-byte epoch milliseconds),
// TIME time32[ms] (8-byte milliseconds, as a time of day in UTC), INSTANT
// timestamp[ns, tz=UTC] (8-byte epoch seconds + 4-byte nanoseconds),
// LOCAL_DATE date32 (8-byte epoch day), LOCAL_TIME time64[ns] (8-byte nano
// of day), LOCAL_DATE_TIME timestamp[ns] (8-byte epoch day + 8-byte nano of
// day). Other types (KEY_VALUE, AUTO_*, the old PROTOBUF) are
// ErrUnsupported.
//
// # Invariants
//
//   - A payload that does not decode leaves the builders as they were
//     (TestAvroFailedPayloadLeavesBuildersAsBefore,
//     TestProtoFailedPayloadLeavesBuildersAsBefore).
//   - Hostile lengths and counts allocate nothing beyond the error
//     (TestAvroHostileLengthsAllocateNothing).
//
// # Decoding
//
// Every decoder validates the whole payload before it appends anything, so
// a payload that does not decode leaves the builders as they were (the
// batch keeps its other rows) and returns a *DecodeError naming the field
// path and the byte offset. Hostile lengths and counts are compared with
// the bytes left before anything is sized by them. Steady state allocates
// nothing per payload. Decoders are not safe for concurrent use; a Codec
// is.
//
// It stays thalweg's own: arrow-go's avro package reads Avro container
// files through hamba/avro (which thalweg's build leaves out, see
// third_party/avro-stub), not single Pulsar payloads, and no library
// decodes Pulsar's JSON and PROTOBUF_NATIVE schemas into Arrow builders.
// The schema itself comes from pulsar-client-go's admin client
// (internal/pulsaradmin).
package pulsarschema
