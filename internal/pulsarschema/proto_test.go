package pulsarschema_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/thalweg/thalweg/internal/pulsarschema"
)

// protoInfo is the PROTOBUF_NATIVE schema info of testdata/order.pb with
// root message root, as a Pulsar client registers it.
func protoInfo(t testing.TB, root string) (pulsarschema.Info, protoreflect.MessageDescriptor) {
	t.Helper()
	raw, err := os.ReadFile("testdata/order.pb")
	if err != nil {
		t.Fatal(err)
	}
	def, _ := json.Marshal(map[string]string{
		"fileDescriptorSet": base64.StdEncoding.EncodeToString(raw), "rootMessageTypeName": root,
		"rootFileDescriptorName": "order.proto",
	})
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &fds); err != nil {
		t.Fatal(err)
	}
	files, err := protodesc.NewFiles(&fds)
	if err != nil {
		t.Fatal(err)
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(root))
	if err != nil {
		t.Fatal(err)
	}
	return pulsarschema.Info{Type: pulsarschema.TypeProtobufNative, Definition: def}, d.(protoreflect.MessageDescriptor)
}

func TestProtoMapping(t *testing.T) {
	info, _ := protoInfo(t, "ex.Order")
	c := mustCompile(t, info)
	want := []string{
		"id: type=int64", "name: type=utf8", "ok: type=bool", "price: type=float64", "ratio: type=float32",
		"raw: type=binary", "status: type=utf8", "tags: type=list<item: utf8>",
		"attrs: type=map<utf8, int64, items_non_nullable>", "item: type=struct<sku: utf8, n: int32>, nullable",
		"items: type=list<item: struct<sku: utf8, n: int32>>", "at: type=timestamp[ns, tz=UTC], nullable",
		"maybe: type=int64, nullable", "opt: type=int32, nullable", "s32: type=int32",
		"packed: type=list<item: int32>", "u: type=uint64", "f32: type=uint32", "sf64: type=int64",
		"by_sku: type=map<utf8, struct<sku: utf8, n: int32>, items_nullable>", "notes: type=list<item: utf8>",
		"label: type=utf8, nullable", "code: type=int64, nullable",
	}
	got := c.Schema().String()
	for _, w := range want {
		if !strings.Contains(got, "- "+w+"\n") && !strings.HasSuffix(got, "- "+w) {
			t.Errorf("schema lacks %q:\n%s", w, got)
		}
	}
	if c.Schema().Field(7).Type.(*arrow.ListType).ElemField().Nullable {
		t.Error("repeated string items are nullable; protobuf has no null element")
	}
	info, _ = protoInfo(t, "ex.Node")
	if _, err := pulsarschema.Compile(info); !errors.Is(err, pulsarschema.ErrUnmappable) || !strings.Contains(err.Error(), "field kids: recursive message ex.Node") {
		t.Errorf("recursive message error = %v", err)
	}
	info, _ = protoInfo(t, "ex.Order")
	info.Definition = []byte(strings.Replace(string(info.Definition), "ex.Order", "ex.Missing", 1))
	if _, err := pulsarschema.Compile(info); !errors.Is(err, pulsarschema.ErrDefinition) {
		t.Errorf("missing root error = %v", err)
	}
}

// orderMsg builds an ex.Order with dynamicpb; proto.Marshal (the official
// implementation) writes the bytes the decoder is checked against.
func orderMsg(t testing.TB, md protoreflect.MessageDescriptor, id int64) []byte {
	t.Helper()
	m := dynamicpb.NewMessage(md)
	f := md.Fields().ByName
	set := func(name string, v protoreflect.Value) { m.Set(f(protoreflect.Name(name)), v) }
	set("id", protoreflect.ValueOfInt64(id))
	set("name", protoreflect.ValueOfString("widget"))
	set("ok", protoreflect.ValueOfBool(true))
	set("price", protoreflect.ValueOfFloat64(9.5))
	set("ratio", protoreflect.ValueOfFloat32(0.25))
	set("raw", protoreflect.ValueOfBytes([]byte{0, 1, 2}))
	set("status", protoreflect.ValueOfEnum(1))
	tags := m.Mutable(f("tags")).List()
	tags.Append(protoreflect.ValueOfString("a"))
	tags.Append(protoreflect.ValueOfString("b"))
	m.Mutable(f("attrs")).Map().Set(protoreflect.ValueOfString("k").MapKey(), protoreflect.ValueOfInt64(-7))
	item := m.Mutable(f("item")).Message()
	item.Set(item.Descriptor().Fields().ByName("sku"), protoreflect.ValueOfString("s1"))
	items := m.Mutable(f("items")).List()
	for _, sku := range []string{"x", "y"} {
		e := items.NewElement()
		e.Message().Set(e.Message().Descriptor().Fields().ByName("sku"), protoreflect.ValueOfString(sku))
		e.Message().Set(e.Message().Descriptor().Fields().ByName("n"), protoreflect.ValueOfInt32(int32(len(sku))))
		items.Append(e)
	}
	at := m.Mutable(f("at")).Message()
	at.Set(at.Descriptor().Fields().ByName("seconds"), protoreflect.ValueOfInt64(tAt.Unix()))
	at.Set(at.Descriptor().Fields().ByName("nanos"), protoreflect.ValueOfInt32(int32(tAt.Nanosecond())))
	maybe := m.Mutable(f("maybe")).Message()
	maybe.Set(maybe.Descriptor().Fields().ByName("value"), protoreflect.ValueOfInt64(77))
	set("s32", protoreflect.ValueOfInt32(-5))
	packed := m.Mutable(f("packed")).List()
	for _, v := range []int32{1, -2, 300} {
		packed.Append(protoreflect.ValueOfInt32(v))
	}
	set("u", protoreflect.ValueOfUint64(1<<63))
	set("f32", protoreflect.ValueOfUint32(7))
	set("sf64", protoreflect.ValueOfInt64(-9))
	bySku := m.Mutable(f("by_sku")).Map()
	v := bySku.NewValue()
	v.Message().Set(v.Message().Descriptor().Fields().ByName("n"), protoreflect.ValueOfInt32(3))
	bySku.Set(protoreflect.ValueOfString("s9").MapKey(), v)
	notes := m.Mutable(f("notes")).List()
	for _, s := range []string{"n1", ""} {
		e := notes.NewElement()
		if s != "" {
			e.Message().Set(e.Message().Descriptor().Fields().ByName("value"), protoreflect.ValueOfString(s))
		}
		notes.Append(e)
	}
	set("code", protoreflect.ValueOfInt64(12))
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProtoDecodeEveryKind(t *testing.T) {
	info, md := protoInfo(t, "ex.Order")
	c := mustCompile(t, info)
	d, rb := decoderFor(t, c)
	full := orderMsg(t, md, 1)
	// The second message: only id, and fields out of order plus an unknown
	// field (number 99) that must be skipped.
	var sparse []byte
	sparse = protowire.AppendTag(sparse, 99, protowire.BytesType)
	sparse = protowire.AppendBytes(sparse, []byte("ignored"))
	sparse = protowire.AppendTag(sparse, 7, protowire.VarintType)
	sparse = protowire.AppendVarint(sparse, 5) // an enum number Status does not define
	sparse = protowire.AppendTag(sparse, 1, protowire.VarintType)
	sparse = protowire.AppendVarint(sparse, 2)
	for _, p := range [][]byte{full, sparse} {
		if _, err := d.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	r := rows(rb)
	defer r.Release()
	check := func(name string, row int, want string) {
		t.Helper()
		if got := col(r, name).ValueStr(row); got != want {
			t.Errorf("%s[%d] = %q, want %q", name, row, got, want)
		}
	}
	for _, c := range []struct{ name, v0, v1 string }{
		{"id", "1", "2"}, {"name", "widget", ""}, {"ok", "true", "false"}, {"price", "9.5", "0"},
		{"ratio", "0.25", "0"}, {"raw", "AAEC", ""}, {"status", "ACTIVE", "5"}, {"tags", `["a","b"]`, `[]`},
		{"item", `{"n":0,"sku":"s1"}`, array.NullValueStr}, {"items", `[{"n":1,"sku":"x"},{"n":1,"sku":"y"}]`, `[]`},
		{"at", "2024-03-05T10:11:12.345Z", array.NullValueStr},
		{"maybe", "77", array.NullValueStr}, {"opt", array.NullValueStr, array.NullValueStr},
		{"s32", "-5", "0"}, {"packed", "[1,-2,300]", "[]"}, {"u", "9223372036854775808", "0"}, {"f32", "7", "0"}, {"sf64", "-9", "0"},
		{"by_sku", `[{"key":"s9","value":{"n":3,"sku":""}}]`, "[]"}, {"notes", `["n1",""]`, "[]"},
		{"label", array.NullValueStr, array.NullValueStr}, {"code", "12", array.NullValueStr},
	} {
		check(c.name, 0, c.v0)
		check(c.name, 1, c.v1)
	}
	attrs := col(r, "attrs").(*array.Map)
	if attrs.Len() != 2 || attrs.Keys().(*array.String).Value(0) != "k" || attrs.Items().(*array.Int64).Value(0) != -7 {
		t.Errorf("attrs = %s", attrs)
	}
}

func TestProtoFailedPayloadLeavesBuildersAsBefore(t *testing.T) {
	info, md := protoInfo(t, "ex.Order")
	c := mustCompile(t, info)
	d, rb := decoderFor(t, c)
	good := orderMsg(t, md, 1)
	if _, err := d.Append(good); err != nil {
		t.Fatal(err)
	}
	before := lens(rb)
	for cut := 1; cut < len(good); cut++ {
		if _, err := d.Append(good[:cut]); err == nil {
			before = lens(rb) // a cut at a field boundary is a valid, shorter message
			continue
		} else if !errors.Is(err, pulsarschema.ErrDecode) {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if !slices.Equal(lens(rb), before) {
			t.Fatalf("cut %d: builders changed", cut)
		}
	}
	// Wrong wire type for a known field names it; invalid UTF-8 too.
	bad := protowire.AppendTag(nil, 2, protowire.VarintType)
	bad = protowire.AppendVarint(bad, 1)
	_, err := d.Append(bad)
	var de *pulsarschema.DecodeError
	if !errors.As(err, &de) || de.Path != "name" || de.Offset != 0 || !strings.Contains(de.Detail, "wire type 0, want 2") {
		t.Errorf("wire type error = %v", err)
	}
	bad = protowire.AppendTag(nil, 10, protowire.BytesType)
	bad = protowire.AppendBytes(bad, protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte{0xc3}))
	if _, err := d.Append(bad); !errors.As(err, &de) || de.Path != "item.sku" || de.Offset != 4 {
		t.Errorf("utf8 error = %v", err)
	}
	ts := protowire.AppendTag(nil, 12, protowire.BytesType)
	ts = protowire.AppendBytes(ts, protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(int64(1e12))))
	if _, err := d.Append(ts); !errors.As(err, &de) || de.Path != "at" || !strings.Contains(de.Detail, "out of the nanosecond range") {
		t.Errorf("timestamp range error = %v", err)
	}
	if !slices.Equal(lens(rb), before) {
		t.Fatal("builders changed")
	}
}
