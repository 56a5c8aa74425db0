package config

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// SchemaMode says how payloads become columns.
type SchemaMode string

const (
	// SchemaRaw keeps each payload as an opaque binary column next to the
	// record metadata; the layout belongs to package batch. Default.
	SchemaRaw SchemaMode = "raw"
	// SchemaJSON parses each payload as a JSON object into typed columns
	// described by Fields; a payload that does not fit is rejected to the
	// dead-letter path.
	SchemaJSON SchemaMode = "json"
	// SchemaPulsar takes each message's schema from the topic's schema in
	// Pulsar's registry, by the version the message names (AVRO, JSON,
	// PROTOBUF_NATIVE and the primitive schemas; docs/pulsar-schemas.md),
	// fetched from RegistryURL. Source kind pulsar only.
	SchemaPulsar SchemaMode = "pulsar"
)

// JSONBytesMode is how a registry JSON schema's bytes fields are written.
type JSONBytesMode string

const (
	JSONBytesAuto   JSONBytesMode = "auto" // by how the version was registered; default
	JSONBytesBase64 JSONBytesMode = "base64"
	JSONBytesText   JSONBytesMode = "text" // the string's UTF-8 bytes
)

// FieldType is the type of one JSON-schema field.
type FieldType string

// The field types and the Arrow types they map to.
const (
	TypeBool      FieldType = "bool"      // Boolean
	TypeInt8      FieldType = "int8"      // Int8
	TypeInt16     FieldType = "int16"     // Int16
	TypeInt32     FieldType = "int32"     // Int32
	TypeInt64     FieldType = "int64"     // Int64
	TypeUint8     FieldType = "uint8"     // Uint8
	TypeUint16    FieldType = "uint16"    // Uint16
	TypeUint32    FieldType = "uint32"    // Uint32
	TypeUint64    FieldType = "uint64"    // Uint64
	TypeFloat32   FieldType = "float32"   // Float32
	TypeFloat64   FieldType = "float64"   // Float64
	TypeString    FieldType = "string"    // String (UTF-8)
	TypeBinary    FieldType = "binary"    // Binary
	TypeTimestamp FieldType = "timestamp" // Timestamp(Unit, "UTC")
	TypeDate      FieldType = "date"      // Date32 (days since the epoch)
	TypeStruct    FieldType = "struct"    // Struct of Fields
	TypeList      FieldType = "list"      // List of Items
)

var fieldTypes = []FieldType{
	TypeBool, TypeInt8, TypeInt16, TypeInt32, TypeInt64,
	TypeUint8, TypeUint16, TypeUint32, TypeUint64, TypeFloat32, TypeFloat64,
	TypeString, TypeBinary, TypeTimestamp, TypeDate, TypeStruct, TypeList,
}

// TimeUnit is the unit of a timestamp column; JSON numbers for that field
// count this unit since the Unix epoch.
type TimeUnit string

const (
	UnitSecond      TimeUnit = "s"
	UnitMillisecond TimeUnit = "ms" // default
	UnitMicrosecond TimeUnit = "us"
	UnitNanosecond  TimeUnit = "ns"

	DefaultTimeUnit = UnitMillisecond
)

// ArrowUnit maps u to the Arrow time unit; ok is false for an unknown unit.
func (u TimeUnit) ArrowUnit() (unit arrow.TimeUnit, ok bool) {
	switch u {
	case UnitSecond:
		return arrow.Second, true
	case UnitMillisecond:
		return arrow.Millisecond, true
	case UnitMicrosecond:
		return arrow.Microsecond, true
	case UnitNanosecond:
		return arrow.Nanosecond, true
	}
	return 0, false
}

// maxFieldDepth bounds struct/list nesting, which keeps every recursion
// over a schema (validation, defaults, ArrowSchema) shallow.
const maxFieldDepth = 32

// SchemaConfig says how payloads become Arrow columns.
type SchemaConfig struct {
	// Mode is raw, json or pulsar. Default raw.
	Mode SchemaMode `yaml:"mode"`
	// RegistryURL is, for mode pulsar, the brokers' admin REST API that
	// serves the schema registry, http://host:port or https://host:port,
	// reached as source.admin_url is, with source.auth's token and CA (a
	// token_file is reread on every request). Default source.admin_url: one
	// of the two is required for mode pulsar; not allowed otherwise.
	RegistryURL string `yaml:"registry_url"`
	// JSONBytes is, for mode pulsar, how a JSON schema's bytes fields are
	// written: auto (default) decides per schema version by how it was
	// registered — text for the Pulsar Python client's JsonSchema, base64
	// for the Java and Go clients (docs/pulsar-schemas.md); base64 or text
	// apply to every JSON schema version the worker reads.
	JSONBytes JSONBytesMode `yaml:"json_bytes"`
	// Fields are the top-level columns of mode json (required there, not
	// allowed in mode raw). Names are unique per level.
	Fields []FieldConfig `yaml:"fields"`
}

// FieldConfig is one column, or one member of a struct, or the element of
// a list.
type FieldConfig struct {
	// Name of the column and the JSON key it is read from. Required, except
	// for list items where it defaults to "item".
	Name string `yaml:"name"`
	// Type is one of bool, int8, int16, int32, int64, uint8, uint16, uint32,
	// uint64, float32, float64, string, binary, timestamp, date, struct,
	// list. Required.
	Type FieldType `yaml:"type"`
	// Nullable says the value may be null or absent. Default true; nil
	// means true (see IsNullable).
	Nullable *bool `yaml:"nullable"`
	// Fields are the members of a struct (required for struct, not
	// allowed otherwise).
	Fields []FieldConfig `yaml:"fields"`
	// Items is the element of a list (required for list, not allowed
	// otherwise).
	Items *FieldConfig `yaml:"items"`
	// Unit of a timestamp: s, ms, us or ns (not allowed for other types).
	// Default ms.
	Unit TimeUnit `yaml:"unit"`
}

// IsNullable reports the effective nullability (default true).
func (f *FieldConfig) IsNullable() bool { return f.Nullable == nil || *f.Nullable }

// ErrRawSchema is returned by ArrowSchema in mode raw: the raw layout is
// defined by package batch, not by the configuration.
var ErrRawSchema = errors.New("config: schema mode raw has no configured Arrow schema")

// ArrowSchema builds the Arrow schema of mode json. It checks the schema
// first, so it is safe on a SchemaConfig that was never validated: every
// problem comes back as an *Error. In mode raw it returns ErrRawSchema.
// Timestamps carry time zone "UTC"; list elements are named after
// Items.Name (default "item").
func (s *SchemaConfig) ArrowSchema() (*arrow.Schema, error) {
	if s.Mode == SchemaRaw || s.Mode == "" {
		return nil, ErrRawSchema
	}
	var ck checker
	s.check(&ck, "schema", "")
	if err := ck.err(); err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(s.Fields))
	for i := range s.Fields {
		fields[i] = s.Fields[i].arrowField("")
	}
	return arrow.NewSchema(fields, nil), nil
}

// arrowField converts a checked field; defaultName is used when Name is
// empty (list items).
func (f *FieldConfig) arrowField(defaultName string) arrow.Field {
	name := f.Name
	if name == "" {
		name = defaultName
	}
	return arrow.Field{Name: name, Type: f.arrowType(), Nullable: f.IsNullable()}
}

// arrowType maps a field checked by checkField; it never sees an unknown type.
func (f *FieldConfig) arrowType() arrow.DataType {
	switch f.Type {
	case TypeBool:
		return arrow.FixedWidthTypes.Boolean
	case TypeInt8:
		return arrow.PrimitiveTypes.Int8
	case TypeInt16:
		return arrow.PrimitiveTypes.Int16
	case TypeInt32:
		return arrow.PrimitiveTypes.Int32
	case TypeInt64:
		return arrow.PrimitiveTypes.Int64
	case TypeUint8:
		return arrow.PrimitiveTypes.Uint8
	case TypeUint16:
		return arrow.PrimitiveTypes.Uint16
	case TypeUint32:
		return arrow.PrimitiveTypes.Uint32
	case TypeUint64:
		return arrow.PrimitiveTypes.Uint64
	case TypeFloat32:
		return arrow.PrimitiveTypes.Float32
	case TypeFloat64:
		return arrow.PrimitiveTypes.Float64
	case TypeString:
		return arrow.BinaryTypes.String
	case TypeBinary:
		return arrow.BinaryTypes.Binary
	case TypeTimestamp:
		unit := DefaultTimeUnit
		if f.Unit != "" {
			unit = f.Unit
		}
		u, _ := unit.ArrowUnit()
		return &arrow.TimestampType{Unit: u, TimeZone: "UTC"}
	case TypeDate:
		return arrow.FixedWidthTypes.Date32
	case TypeStruct:
		members := make([]arrow.Field, len(f.Fields))
		for i := range f.Fields {
			members[i] = f.Fields[i].arrowField("")
		}
		return arrow.StructOf(members...)
	case TypeList:
		return arrow.ListOfField(f.Items.arrowField("item"))
	}
	panic(fmt.Sprintf("config: arrowType on unchecked field type %q", f.Type))
}

// check validates the schema section; path is "schema", adminURL is
// source.admin_url (RegistryURL's default).
func (s *SchemaConfig) check(ck *checker, path, adminURL string) {
	if s.Mode != SchemaPulsar && s.RegistryURL != "" {
		ck.addf(path+".registry_url", "only used with schema.mode pulsar")
	}
	// Empty is auto (a Config built without Default).
	if s.JSONBytes != "" && ck.enum(path+".json_bytes", string(s.JSONBytes), string(JSONBytesAuto), string(JSONBytesBase64), string(JSONBytesText)) &&
		s.Mode != SchemaPulsar && s.JSONBytes != JSONBytesAuto {
		ck.addf(path+".json_bytes", "only used with schema.mode pulsar")
	}
	switch s.Mode {
	case SchemaPulsar:
		if len(s.Fields) > 0 {
			ck.addf(path+".fields", "not allowed with schema.mode pulsar (the topic's registry schema gives the columns)")
		}
		switch {
		case s.RegistryURL != "":
			checkAdminURL(ck, path+".registry_url", s.RegistryURL)
		case adminURL == "":
			ck.addf(path+".registry_url", "required with schema.mode pulsar unless source.admin_url is set (the brokers' admin REST API, http://host:port)")
		}
	case SchemaRaw:
		if len(s.Fields) > 0 {
			ck.addf(path+".fields", "not allowed with schema.mode raw (set mode: json)")
		}
	case SchemaJSON:
		if len(s.Fields) == 0 {
			ck.addf(path+".fields", "required with schema.mode json (at least one field)")
		}
		checkFields(ck, s.Fields, path+".fields", 1)
	default:
		ck.enum(path+".mode", string(s.Mode), "raw", "json", "pulsar")
	}
}

func checkFields(ck *checker, fs []FieldConfig, path string, depth int) {
	seen := make(map[string]int, len(fs))
	for i := range fs {
		p := indexPath(path, i)
		if fs[i].Name != "" {
			if j, dup := seen[fs[i].Name]; dup {
				ck.addf(p+".name", "duplicate field name %q (also %s)", fs[i].Name, indexPath(path, j))
			} else {
				seen[fs[i].Name] = i
			}
		}
		checkField(ck, &fs[i], p, depth, false)
	}
}

func checkField(ck *checker, f *FieldConfig, path string, depth int, isItem bool) {
	if depth > maxFieldDepth {
		ck.addf(path, "nested deeper than %d levels", maxFieldDepth)
		return
	}
	if f.Name == "" && !isItem {
		ck.addf(path+".name", "required")
	}
	known := false
	for _, t := range fieldTypes {
		if f.Type == t {
			known = true
		}
	}
	if !known {
		if f.Type == "" {
			ck.addf(path+".type", "required (one of %s)", joinTypes())
		} else {
			ck.addf(path+".type", "must be one of %s, got %q", joinTypes(), f.Type)
		}
	}
	if f.Type == TypeStruct {
		if len(f.Fields) == 0 {
			ck.addf(path+".fields", "required for type struct (at least one field)")
		}
		checkFields(ck, f.Fields, path+".fields", depth+1)
	} else if len(f.Fields) > 0 {
		ck.addf(path+".fields", "only allowed for type struct, got type %q", f.Type)
	}
	if f.Type == TypeList {
		if f.Items == nil {
			ck.addf(path+".items", "required for type list")
		} else {
			checkField(ck, f.Items, path+".items", depth+1, true)
		}
	} else if f.Items != nil {
		ck.addf(path+".items", "only allowed for type list, got type %q", f.Type)
	}
	if f.Type == TypeTimestamp {
		if f.Unit != "" {
			ck.enum(path+".unit", string(f.Unit), "s", "ms", "us", "ns")
		}
	} else if f.Unit != "" {
		ck.addf(path+".unit", "only allowed for type timestamp, got type %q", f.Type)
	}
}

func joinTypes() string {
	s := ""
	for i, t := range fieldTypes {
		if i > 0 {
			s += "|"
		}
		s += string(t)
	}
	return s
}
