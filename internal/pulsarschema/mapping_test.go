package pulsarschema_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/thalweg/thalweg/internal/pulsarschema"
)

func orderDef(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/order.avsc")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustCompile(t testing.TB, info pulsarschema.Info) *pulsarschema.Codec {
	t.Helper()
	c, err := pulsarschema.Compile(info)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAvroMapping holds the documented Avro -> Arrow mapping, field by field.
func TestAvroMapping(t *testing.T) {
	c := mustCompile(t, pulsarschema.Info{Type: pulsarschema.TypeAvro, Definition: orderDef(t)})
	want := []struct {
		name, typ string
		nullable  bool
	}{
		{"id", "int64", false},
		{"name", "utf8", false},
		{"note", "utf8", true},
		{"ok", "bool", false},
		{"qty", "int32", false},
		{"price", "float64", false},
		{"ratio", "float32", false},
		{"raw", "binary", false},
		{"color", "utf8", false},
		{"tags", "list<item: utf8>", false},
		{"attrs", "map<utf8, int64, items_non_nullable>", false},
		{"addr", "struct<city: utf8, zip: int32 nullable>", true},
		{"prev", "struct<city: utf8, zip: int32 nullable>", true},
		{"hash", "fixed_size_binary[4]", false},
		{"day", "date32", false},
		{"tod", "time32[ms]", false},
		{"tus", "time64[us]", false},
		{"at", "timestamp[ms, tz=UTC]", false},
		{"atus", "timestamp[us, tz=UTC]", false},
		{"amount", "decimal(10, 2)", false},
		{"famount", "decimal(12, 3)", false},
		{"uid", "utf8", false},
		{"choice", "struct<string: utf8 nullable, long: int64 nullable>", true},
	}
	fs := c.Schema().Fields()
	if len(fs) != len(want) {
		t.Fatalf("schema has %d fields, want %d: %s", len(fs), len(want), c.Schema())
	}
	for i, w := range want {
		f := fs[i]
		if f.Name != w.name || f.Type.String() != w.typ || f.Nullable != w.nullable {
			t.Errorf("field %d = %s %s nullable=%v, want %s %s nullable=%v", i, f.Name, f.Type, f.Nullable, w.name, w.typ, w.nullable)
		}
	}
	// Nested nullability: Addr.zip is a nullable union, Addr.city is not.
	st := fs[11].Type.(*arrow.StructType)
	if st.Field(0).Nullable || !st.Field(1).Nullable {
		t.Errorf("addr children nullability = %v, %v; want false, true", st.Field(0).Nullable, st.Field(1).Nullable)
	}
	if fs[9].Type.(*arrow.ListType).ElemField().Nullable {
		t.Error("tags items are nullable; Avro array of string is not")
	}
	if fs[10].Type.(*arrow.MapType).ItemField().Nullable {
		t.Error("attrs values are nullable; Avro map of long is not")
	}
}

func TestAvroMappingErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name, def string
		is        error
		want      string
	}{
		{"recursive", `{"type":"record","name":"Node","fields":[{"name":"v","type":"int"},
			{"name":"kids","type":{"type":"array","items":"Node"}}]}`, pulsarschema.ErrUnmappable, "field kids[]: recursive type Node"},
		{"recursive via union", `{"type":"record","name":"L","namespace":"x","fields":[
			{"name":"next","type":["null","x.L"]}]}`, pulsarschema.ErrUnmappable, "field next: recursive type x.L"},
		{"unknown type", `{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"record","name":"S",
			"fields":[{"name":"b","type":"Missing"}]}}]}`, pulsarschema.ErrDefinition, `field a.b: unknown type "Missing"`},
		{"big decimal", `{"type":"record","name":"R","fields":[{"name":"d","type":{"type":"bytes",
			"logicalType":"decimal","precision":40}}]}`, pulsarschema.ErrUnmappable, "field d: decimal precision 40"},
		{"not a record", `"string"`, pulsarschema.ErrUnmappable, "want a record"},
		{"not json", `{`, pulsarschema.ErrDefinition, "not JSON"},
		{"union twice named", `{"type":"record","name":"R","fields":[{"name":"u","type":["int","int"]}]}`,
			pulsarschema.ErrUnmappable, "field u: union has two branches named int"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pulsarschema.Compile(pulsarschema.Info{Type: pulsarschema.TypeAvro, Version: 3, Definition: []byte(tc.def)})
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %v containing %q", err, tc.is, tc.want)
			}
			if !strings.Contains(err.Error(), "version 3") {
				t.Errorf("error %q does not name the schema version", err)
			}
		})
	}
}

// TestAvroInvalidLogicalTypeFallsBack: the Avro specification says an
// invalid logical type is ignored in favour of the underlying type.
func TestAvroInvalidLogicalTypeFallsBack(t *testing.T) {
	c := mustCompile(t, pulsarschema.Info{Type: pulsarschema.TypeAvro, Definition: []byte(`{"type":"record","name":"R","fields":[
		{"name":"a","type":{"type":"bytes","logicalType":"decimal","precision":2,"scale":5}},
		{"name":"b","type":{"type":"string","logicalType":"timestamp-millis"}},
		{"name":"c","type":{"type":"long","logicalType":"no-such-type"}}]}`)})
	got := c.Schema().String()
	for _, w := range []string{"a: type=binary", "b: type=utf8", "c: type=int64"} {
		if !strings.Contains(got, w) {
			t.Errorf("schema %s lacks %q", got, w)
		}
	}
}

func TestJSONMapping(t *testing.T) {
	c := mustCompile(t, pulsarschema.Info{Type: pulsarschema.TypeJSON, Definition: []byte(`{"type":"record","name":"R","fields":[
		{"name":"a","type":["null","long"]},{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"us","type":{"type":"long","logicalType":"timestamp-micros"}},{"name":"tags","type":{"type":"array","items":"string"}},
		{"name":"e","type":{"type":"enum","name":"E","symbols":["X"]}}]}`)})
	want := "a: type=int64, nullable, at: type=timestamp[ms, tz=UTC], us: type=int64, tags: type=list<item: utf8>, e: type=utf8"
	got := strings.Join(strings.Split(strings.TrimPrefix(c.Schema().String(), "schema:\n  fields: 5\n"), "\n"), "")
	got = strings.ReplaceAll(strings.ReplaceAll(got, "    - ", ", "), ", a:", "a:")
	if !strings.Contains(got, want) {
		t.Errorf("schema = %q, want %q", got, want)
	}
	_, err := pulsarschema.Compile(pulsarschema.Info{Type: pulsarschema.TypeJSON, Definition: []byte(`{"type":"record","name":"R","fields":[
		{"name":"s","type":{"type":"record","name":"S","fields":[{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":4}}]}}]}`)})
	if !errors.Is(err, pulsarschema.ErrUnmappable) || !strings.Contains(err.Error(), "field s.d: decimal") {
		t.Errorf("JSON decimal error = %v", err)
	}
	c = mustCompile(t, pulsarschema.Info{Type: pulsarschema.TypeJSON, Definition: []byte(`{"type":"record","name":"R","fields":[
		{"name":"m","type":{"type":"map","values":["null","int"]}}]}`)})
	if got := c.Schema().Field(0).Type.String(); got != "map<utf8, int32, items_nullable>" {
		t.Errorf("JSON map = %s, want map<utf8, int32, items_nullable>", got)
	}
}

func TestPrimitiveMapping(t *testing.T) {
	for typ, want := range map[pulsarschema.Type]string{
		pulsarschema.TypeString: "utf8", pulsarschema.TypeBytes: "binary", pulsarschema.TypeNone: "binary",
		pulsarschema.TypeBoolean: "bool", pulsarschema.TypeInt8: "int8", pulsarschema.TypeInt16: "int16",
		pulsarschema.TypeInt32: "int32", pulsarschema.TypeInt64: "int64", pulsarschema.TypeFloat: "float32",
		pulsarschema.TypeDouble: "float64", pulsarschema.TypeDate: "timestamp[ms, tz=UTC]", pulsarschema.TypeTime: "time32[ms]",
		pulsarschema.TypeTimestamp: "timestamp[ms, tz=UTC]", pulsarschema.TypeInstant: "timestamp[ns, tz=UTC]",
		pulsarschema.TypeLocalDate: "date32", pulsarschema.TypeLocalTime: "time64[ns]", pulsarschema.TypeLocalDateTime: "timestamp[ns]",
	} {
		c := mustCompile(t, pulsarschema.Info{Type: typ})
		if f := c.Schema().Field(0); f.Name != "value" || f.Type.String() != want || f.Nullable {
			t.Errorf("%s -> %s %s nullable=%v, want value %s", typ, f.Name, f.Type, f.Nullable, want)
		}
	}
	if _, err := pulsarschema.Compile(pulsarschema.Info{Type: "KEY_VALUE"}); !errors.Is(err, pulsarschema.ErrUnsupported) {
		t.Errorf("KEY_VALUE error = %v, want ErrUnsupported", err)
	}
}

func TestInfoOf(t *testing.T) {
	info, err := pulsarschema.InfoOf(&utils.SchemaInfoWithVersion{Version: 2, SchemaInfo: &utils.SchemaInfo{
		Type: "avro", Schema: []byte(`{"type":"record","name":"R","fields":[]}`), Properties: map[string]string{"k": "v"}}})
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != 2 || info.Type != pulsarschema.TypeAvro || string(info.Definition) != `{"type":"record","name":"R","fields":[]}` || info.Properties["k"] != "v" {
		t.Errorf("info = %+v", info)
	}
	if _, err := pulsarschema.InfoOf(&utils.SchemaInfoWithVersion{Version: 2, SchemaInfo: &utils.SchemaInfo{}}); !errors.Is(err, pulsarschema.ErrDefinition) {
		t.Errorf("typeless response error = %v", err)
	}
}
