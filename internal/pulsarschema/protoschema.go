package pulsarschema

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// pout is what a protobuf field appends.
type pout uint8

const (
	pBool pout = iota + 1
	pI32
	pI64
	pU32
	pU64
	pF32
	pF64
	pStr
	pBin
	pEnumName
	pMsg
	pTimestamp // google.protobuf.Timestamp -> timestamp[ns, UTC]
)

// pfield is one compiled protobuf field (or map key/value, or list item).
type pfield struct {
	name     string
	num      protowire.Number
	kind     protoreflect.Kind
	out      pout
	dt       arrow.DataType
	nullable bool // has presence: absent is null, not the default
	list     bool // repeated (not a map)
	wrapper  bool // a google.protobuf.*Value: the value is field 1 inside
	isMap    bool
	key, val *pfield          // map entry fields
	msg      *pmsg            // pMsg
	enum     map[int32]string // pEnumName
	b        array.Builder    // bound by a Decoder
	lb       array.Builder    // the list or map builder when list/isMap

	// Set by bindProto so that decoding allocates nothing: the map entry
	// message (key = 1, value = 2), and a wrapper's value as field 1 of its
	// message.
	entry    *pmsg
	inner    *pfield
	innerMsg *pmsg
}

// pmsg is one compiled message.
type pmsg struct {
	fields []*pfield
	byNum  map[protowire.Number]int
}

func (m *pmsg) clone() *pmsg {
	c := &pmsg{byNum: m.byNum, fields: make([]*pfield, len(m.fields))}
	for i, f := range m.fields {
		c.fields[i] = f.clone()
	}
	return c
}

func (f *pfield) clone() *pfield {
	if f == nil {
		return nil
	}
	c := *f
	c.key, c.val = f.key.clone(), f.val.clone()
	if f.msg != nil {
		c.msg = f.msg.clone()
	}
	return &c
}

// compileProtoNative decodes a PROTOBUF_NATIVE schema definition and maps
// its root message.
func compileProtoNative(def []byte) (*pmsg, *arrow.Schema, error) {
	var d struct {
		FileDescriptorSet      string `json:"fileDescriptorSet"`
		RootMessageTypeName    string `json:"rootMessageTypeName"`
		RootFileDescriptorName string `json:"rootFileDescriptorName"`
	}
	if err := json.Unmarshal(def, &d); err != nil {
		return nil, nil, fmt.Errorf("%w: PROTOBUF_NATIVE definition is not JSON: %w", ErrDefinition, err)
	}
	raw, err := base64.StdEncoding.DecodeString(d.FileDescriptorSet)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: fileDescriptorSet is not base64: %w", ErrDefinition, err)
	}
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &fds); err != nil {
		return nil, nil, fmt.Errorf("%w: fileDescriptorSet: %w", ErrDefinition, err)
	}
	files, err := protodesc.NewFiles(&fds)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: fileDescriptorSet: %w", ErrDefinition, err)
	}
	desc, err := files.FindDescriptorByName(protoreflect.FullName(d.RootMessageTypeName))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: root message %q: %w", ErrDefinition, d.RootMessageTypeName, err)
	}
	md, ok := desc.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, nil, fmt.Errorf("%w: root %q is not a message", ErrDefinition, d.RootMessageTypeName)
	}
	return compileProtoMessage(md)
}

// compileProtoMessage maps md (the root message) to Arrow.
func compileProtoMessage(md protoreflect.MessageDescriptor) (*pmsg, *arrow.Schema, error) {
	m, st, err := protoMsg(md, "", map[protoreflect.FullName]bool{})
	if err != nil {
		return nil, nil, err
	}
	return m, arrow.NewSchema(st.Fields(), nil), nil
}

func protoMsg(md protoreflect.MessageDescriptor, path string, open map[protoreflect.FullName]bool) (*pmsg, *arrow.StructType, error) {
	if open[md.FullName()] {
		return nil, nil, unmappable(path, "recursive message %s (Arrow types are finite)", md.FullName())
	}
	open[md.FullName()] = true
	defer delete(open, md.FullName())
	fds := md.Fields()
	m := &pmsg{byNum: make(map[protowire.Number]int, fds.Len())}
	fields := make([]arrow.Field, 0, fds.Len())
	for i := range fds.Len() {
		fd := fds.Get(i)
		p := joinPath(path, string(fd.Name()))
		f, err := protoField(fd, p, open)
		if err != nil {
			return nil, nil, err
		}
		m.byNum[f.num] = len(m.fields)
		m.fields = append(m.fields, f)
		fields = append(fields, arrow.Field{Name: f.name, Type: f.dt, Nullable: f.nullable})
	}
	return m, arrow.StructOf(fields...), nil
}

func protoField(fd protoreflect.FieldDescriptor, path string, open map[protoreflect.FullName]bool) (*pfield, error) {
	if fd.IsMap() {
		k, err := protoScalar(fd.MapKey(), path+"{key}", open)
		if err != nil {
			return nil, err
		}
		v, err := protoScalar(fd.MapValue(), path+"{}", open)
		if err != nil {
			return nil, err
		}
		k.nullable = false
		mt := arrow.MapOf(k.dt, v.dt)
		mt.SetItemNullable(v.nullable)
		return &pfield{name: string(fd.Name()), num: fd.Number(), isMap: true, key: k, val: v, dt: mt}, nil
	}
	f, err := protoScalar(fd, path, open)
	if err != nil {
		return nil, err
	}
	if fd.IsList() {
		item := f.clone()
		item.name = "item"
		item.nullable = false
		return &pfield{name: f.name, num: f.num, kind: f.kind, list: true, val: item,
			dt: arrow.ListOfField(arrow.Field{Name: "item", Type: item.dt})}, nil
	}
	return f, nil
}

// protoScalar maps one field's value type (ignoring repetition).
func protoScalar(fd protoreflect.FieldDescriptor, path string, open map[protoreflect.FullName]bool) (*pfield, error) {
	f := &pfield{name: string(fd.Name()), num: fd.Number(), kind: fd.Kind(), nullable: fd.HasPresence()}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		f.out, f.dt = pBool, arrow.FixedWidthTypes.Boolean
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		f.out, f.dt = pI32, arrow.PrimitiveTypes.Int32
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		f.out, f.dt = pI64, arrow.PrimitiveTypes.Int64
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		f.out, f.dt = pU32, arrow.PrimitiveTypes.Uint32
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		f.out, f.dt = pU64, arrow.PrimitiveTypes.Uint64
	case protoreflect.FloatKind:
		f.out, f.dt = pF32, arrow.PrimitiveTypes.Float32
	case protoreflect.DoubleKind:
		f.out, f.dt = pF64, arrow.PrimitiveTypes.Float64
	case protoreflect.StringKind:
		f.out, f.dt = pStr, arrow.BinaryTypes.String
	case protoreflect.BytesKind:
		f.out, f.dt = pBin, arrow.BinaryTypes.Binary
	case protoreflect.EnumKind:
		f.out, f.dt = pEnumName, arrow.BinaryTypes.String
		f.enum = map[int32]string{}
		vals := fd.Enum().Values()
		for i := range vals.Len() {
			v := vals.Get(i)
			if _, dup := f.enum[int32(v.Number())]; !dup { // aliases: the first name
				f.enum[int32(v.Number())] = string(v.Name())
			}
		}
	case protoreflect.MessageKind:
		md := fd.Message()
		f.nullable = true
		switch md.FullName() {
		case "google.protobuf.Timestamp":
			f.out, f.dt = pTimestamp, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
			return f, nil
		case "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int64Value",
			"google.protobuf.UInt64Value", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
			"google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue":
			inner, err := protoScalar(md.Fields().ByNumber(1), path, open)
			if err != nil {
				return nil, err
			}
			inner.name, inner.num, inner.nullable, inner.wrapper = f.name, f.num, true, true
			return inner, nil
		}
		m, st, err := protoMsg(md, path, open)
		if err != nil {
			return nil, err
		}
		f.out, f.dt, f.msg = pMsg, st, m
	default: // GroupKind
		return nil, unmappable(path, "proto2 group fields are not supported")
	}
	return f, nil
}

// wireType is the wire type a value of kind k is written with (unpacked).
func wireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	}
	return protowire.VarintType
}
