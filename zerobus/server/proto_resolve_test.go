package server

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

// Builders for hand-written descriptors, in the form protoc writes them.
func scalarField(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
	return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(),
		Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
}

func typedField(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, typeName string, repeated bool) *descriptorpb.FieldDescriptorProto {
	f := scalarField(name, num, typ)
	f.TypeName = proto.String(typeName)
	if repeated {
		f.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	}
	return f
}

// ordersDescriptor is acme.orders.Order as protoc describes it, with every
// type name qualified by prefix (".acme.orders." as protoc writes it, "."
// for a message in no package): a nested message with a nested enum, an
// enum, a map<string,string> and a map<string,Item>.
func ordersDescriptor(prefix string) *descriptorpb.DescriptorProto {
	const (
		tMsg  = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
		tEnum = descriptorpb.FieldDescriptorProto_TYPE_ENUM
		tStr  = descriptorpb.FieldDescriptorProto_TYPE_STRING
		tI32  = descriptorpb.FieldDescriptorProto_TYPE_INT32
		tI64  = descriptorpb.FieldDescriptorProto_TYPE_INT64
	)
	enum := func(name string, values ...string) *descriptorpb.EnumDescriptorProto {
		e := &descriptorpb.EnumDescriptorProto{Name: proto.String(name)}
		for i, v := range values {
			e.Value = append(e.Value, &descriptorpb.EnumValueDescriptorProto{Name: proto.String(v), Number: proto.Int32(int32(i))})
		}
		return e
	}
	entry := func(name string, value *descriptorpb.FieldDescriptorProto) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{Name: proto.String(name),
			Field:   []*descriptorpb.FieldDescriptorProto{scalarField("key", 1, tStr), value},
			Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)}}
	}
	return &descriptorpb.DescriptorProto{
		Name: proto.String("Order"),
		Field: []*descriptorpb.FieldDescriptorProto{
			scalarField("id", 1, tI64),
			typedField("status", 2, tEnum, prefix+"Order.Status", false),
			typedField("items", 3, tMsg, prefix+"Order.Item", true),
			typedField("attributes", 4, tMsg, prefix+"Order.AttributesEntry", true),
			typedField("by_sku", 5, tMsg, prefix+"Order.BySkuEntry", true),
		},
		NestedType: []*descriptorpb.DescriptorProto{
			{
				Name: proto.String("Item"),
				Field: []*descriptorpb.FieldDescriptorProto{
					scalarField("sku", 1, tStr),
					scalarField("quantity", 2, tI32),
					typedField("kind", 3, tEnum, prefix+"Order.Item.Kind", false),
				},
				EnumType: []*descriptorpb.EnumDescriptorProto{enum("Kind", "KIND_UNKNOWN", "GOODS")},
			},
			entry("AttributesEntry", scalarField("value", 2, tStr)),
			entry("BySkuEntry", typedField("value", 2, tMsg, prefix+"Order.Item", false)),
		},
		EnumType: []*descriptorpb.EnumDescriptorProto{enum("Status", "STATUS_UNKNOWN", "PLACED")},
	}
}

// orderRecord encodes one Order with every kind of field set, through md.
func orderRecord(t *testing.T, md protoreflect.MessageDescriptor) []byte {
	t.Helper()
	m := dynamicpb.NewMessage(md)
	f := md.Fields()
	m.Set(f.ByName("id"), protoreflect.ValueOfInt64(7))
	m.Set(f.ByName("status"), protoreflect.ValueOfEnum(1))
	itemMD := f.ByName("items").Message()
	item := dynamicpb.NewMessage(itemMD)
	item.Set(itemMD.Fields().ByName("sku"), protoreflect.ValueOfString("a-1"))
	item.Set(itemMD.Fields().ByName("quantity"), protoreflect.ValueOfInt32(3))
	item.Set(itemMD.Fields().ByName("kind"), protoreflect.ValueOfEnum(1))
	m.Mutable(f.ByName("items")).List().Append(protoreflect.ValueOfMessage(item))
	attrs := m.Mutable(f.ByName("attributes")).Map()
	attrs.Set(protoreflect.ValueOfString("region").MapKey(), protoreflect.ValueOfString("eu"))
	attrs.Set(protoreflect.ValueOfString("channel").MapKey(), protoreflect.ValueOfString("web"))
	m.Mutable(f.ByName("by_sku")).Map().Set(protoreflect.ValueOfString("a-1").MapKey(), protoreflect.ValueOfMessage(item))
	b, err := proto.Marshal(m)
	require.NoError(t, err)
	return b
}

const orderRow = `{"id":7,"status":1,"items":[{"sku":"a-1","quantity":3,"kind":1}],` +
	`"attributes":{"channel":"web","region":"eu"},"by_sku":{"a-1":{"sku":"a-1","quantity":3,"kind":1}}}`

// TestProtoDescriptorPackageResolved: a descriptor whose type names carry
// the package protoc qualifies them with (nested message, nested enum,
// enum, map entries) resolves, its records decode and render; the forms
// accepted before (no package, relative names) still do.
func TestProtoDescriptorPackageResolved(t *testing.T) {
	relative := ordersDescriptor("")
	cases := []struct {
		name string
		dp   *descriptorpb.DescriptorProto
		full protoreflect.FullName
	}{
		{"package-qualified", ordersDescriptor(".acme.orders."), "acme.orders.Order"},
		{"one-component package", ordersDescriptor(".acme."), "acme.Order"},
		{"no package", ordersDescriptor("."), "Order"},
		{"relative names", relative, "Order"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr, err := newProtoRows(marshal(t, tc.dp))
			require.NoError(t, err)
			require.Equal(t, tc.full, pr.md.FullName())
			f := pr.md.Fields()
			require.Equal(t, tc.full+".Item", f.ByName("items").Message().FullName())
			require.Equal(t, tc.full+".Status", f.ByName("status").Enum().FullName())
			require.True(t, f.ByName("attributes").IsMap())
			require.Equal(t, tc.full+".Item", f.ByName("by_sku").MapValue().Message().FullName())
			require.Equal(t, tc.full+".Item.Kind", f.ByName("items").Message().Fields().ByName("kind").Enum().FullName())
			line, err := pr.line(orderRecord(t, pr.md), "ingest_record")
			require.NoError(t, err)
			require.JSONEq(t, orderRow, string(line))
		})
	}
}

// TestProtoDescriptorUnresolvable: a type name that names no type of the
// descriptor (a sibling message of the .proto file, an imported type, a
// second package) is refused with a message naming the field, and through
// create_stream with InvalidArgument.
func TestProtoDescriptorUnresolvable(t *testing.T) {
	sibling := ordersDescriptor(".acme.orders.")
	sibling.NestedType[0].Field = append(sibling.NestedType[0].Field,
		typedField("customer", 9, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".acme.orders.Customer", false))
	imported := ordersDescriptor(".acme.orders.")
	imported.Field = append(imported.Field,
		typedField("placed_at", 9, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".google.protobuf.Timestamp", false))
	mixed := ordersDescriptor(".acme.orders.")
	mixed.Field[2].TypeName = proto.String(".acme.billing.Order.Item")
	cases := []struct {
		name string
		dp   *descriptorpb.DescriptorProto
		want string
	}{
		{"sibling message", sibling, "field Order.Item.customer: type .acme.orders.Customer is not declared in the descriptor"},
		{"imported type", imported, "field Order.placed_at: type .google.protobuf.Timestamp is not declared in the descriptor"},
		{"two packages", mixed, `field Order.items: type .acme.billing.Order.Item is in package "acme.billing", field Order.status's in "acme.orders"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newProtoRows(marshal(t, tc.dp))
			require.ErrorContains(t, err, tc.want)

			_, cc := startBufconn(t, Options{Token: testToken})
			st, err := zerobuspb.NewZerobusClient(cc).EphemeralStream(headers(testToken, testTable))
			require.NoError(t, err)
			req := createReq(testTable, zerobuspb.RecordType_PROTO.Enum())
			req.GetCreateStream().DescriptorProto = marshal(t, tc.dp)
			require.NoError(t, st.Send(req))
			_, err = st.Recv()
			require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
			require.Contains(t, status.Convert(err).Message(), "create_stream.descriptor_proto: "+tc.want)
		})
	}
}

// TestProtoDescriptorProto3Optional: a message of a proto3 file with an
// explicit optional field (proto3_optional, a synthetic oneof) is accepted
// though the DescriptorProto does not say its file's syntax.
func TestProtoDescriptorProto3Optional(t *testing.T) {
	f := scalarField("note", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING)
	f.Proto3Optional, f.OneofIndex = proto.Bool(true), proto.Int32(0)
	dp := &descriptorpb.DescriptorProto{Name: proto.String("Row"),
		Field:     []*descriptorpb.FieldDescriptorProto{f, scalarField("n", 2, descriptorpb.FieldDescriptorProto_TYPE_INT64)},
		OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("_note")}}}
	pr, err := newProtoRows(marshal(t, dp))
	require.NoError(t, err)
	line, err := pr.line([]byte{0x0a, 0x00, 0x10, 0x05}, "ingest_record") // note="" (present), n=5
	require.NoError(t, err)
	require.JSONEq(t, `{"note":"","n":5}`, string(line))
}

// TestProtoDescriptorNestedNamedLikeMessage: thalweg's sink names a struct
// column's message after the column, so ".Record.Record" can name a type
// nested in Record, in no package (or Record in package "Record"): the
// shortest package wins, as every name of the descriptor allows it.
func TestProtoDescriptorNestedNamedLikeMessage(t *testing.T) {
	dp := &descriptorpb.DescriptorProto{
		Name: proto.String("Record"),
		Field: []*descriptorpb.FieldDescriptorProto{
			typedField("record", 1, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".Record.Record", false),
		},
		NestedType: []*descriptorpb.DescriptorProto{{Name: proto.String("Record"),
			Field: []*descriptorpb.FieldDescriptorProto{scalarField("x", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64)}}},
	}
	pr, err := newProtoRows(marshal(t, dp))
	require.NoError(t, err)
	require.Equal(t, protoreflect.FullName("Record"), pr.md.FullName())
	require.Equal(t, protoreflect.FullName("Record.Record"), pr.md.Fields().ByName("record").Message().FullName())
	line, err := pr.line([]byte{0x0a, 0x02, 0x08, 0x07}, "ingest_record") // record{x: 7}
	require.NoError(t, err)
	require.JSONEq(t, `{"record":{"x":7}}`, string(line))
}
