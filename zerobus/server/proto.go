package server

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/thalweg/thalweg/zerobus/internal/rowjson"
)

// protoRows decodes the records of a PROTO stream with the message type the
// client declared in create_stream.descriptor_proto (a serialized
// google.protobuf.DescriptorProto, nested types inside it) and renders them
// as JSON objects in the same conventions as rowjson.
type protoRows struct {
	md protoreflect.MessageDescriptor
}

// newProtoRows builds the record type from the client's DescriptorProto.
// The official SDK sends, for a generated class, the message's
// DescriptorProto exactly as protoc wrote it into the file's descriptor:
// without the file, so without its package and syntax, but with type names
// qualified by that package (".acme.orders.Order.Item"). The package is
// therefore recovered from those names (descriptorPackage) and the message
// declared in it; a descriptor whose names carry no package (".Order.Item",
// or relative ones) is declared, as before, in no package.
func newProtoRows(raw []byte) (*protoRows, error) {
	var dp descriptorpb.DescriptorProto
	if err := proto.Unmarshal(raw, &dp); err != nil {
		return nil, fmt.Errorf("not a DescriptorProto: %w", err)
	}
	if dp.GetName() == "" {
		return nil, fmt.Errorf("message name is empty")
	}
	pkg, err := descriptorPackage(&dp)
	if err != nil {
		return nil, err
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("zerobus_record.proto"),
		Syntax:      proto.String(descriptorSyntax(&dp)),
		MessageType: []*descriptorpb.DescriptorProto{&dp},
	}
	if pkg != "" {
		fdp.Package = proto.String(pkg)
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		return nil, err
	}
	return &protoRows{md: fd.Messages().Get(0)}, nil
}

// descriptorPackage is the proto package dp was declared in, as its fields'
// fully-qualified type names tell: a name ".P.T" where T is dp or a type
// nested in it ("Order", "Order.Item.Kind") names package P. Every such name
// must name the same package: a descriptor holds only dp and its nested
// types, so a field whose type is declared elsewhere (a sibling message of
// the .proto file, an imported type) cannot be decoded and is refused,
// naming the field. It returns "" when no name is fully qualified.
func descriptorPackage(dp *descriptorpb.DescriptorProto) (string, error) {
	declared := map[string]bool{}
	var declare func(prefix string, m *descriptorpb.DescriptorProto)
	declare = func(prefix string, m *descriptorpb.DescriptorProto) {
		name := prefix + m.GetName()
		declared[name] = true
		for _, e := range m.GetEnumType() {
			declared[name+"."+e.GetName()] = true
		}
		for _, n := range m.GetNestedType() {
			declare(name+".", n)
		}
	}
	declare("", dp)

	// candidates holds the packages every fully-qualified name seen so far
	// allows (nil before the first); first names the field that set them.
	var candidates []string
	var first string
	var walk func(prefix string, m *descriptorpb.DescriptorProto) error
	walk = func(prefix string, m *descriptorpb.DescriptorProto) error {
		name := prefix + m.GetName()
		for _, f := range m.GetField() {
			tn := f.GetTypeName()
			if !strings.HasPrefix(tn, ".") {
				continue // unset, or relative: protodesc resolves it by scope
			}
			field := name + "." + f.GetName()
			parts := strings.Split(tn[1:], ".")
			var pkgs []string
			for i := range parts {
				if declared[strings.Join(parts[i:], ".")] {
					pkgs = append(pkgs, strings.Join(parts[:i], "."))
				}
			}
			if len(pkgs) == 0 {
				return fmt.Errorf("field %s: type %s is not declared in the descriptor (it holds only %s and the types nested in it)",
					field, tn, dp.GetName())
			}
			if candidates == nil {
				candidates, first = pkgs, field
				continue
			}
			kept := slices.DeleteFunc(slices.Clone(candidates), func(p string) bool { return !slices.Contains(pkgs, p) })
			if len(kept) == 0 {
				return fmt.Errorf("field %s: type %s is in package %q, field %s's in %q: the types of one descriptor share one package",
					field, tn, pkgs[0], first, candidates[0])
			}
			candidates = kept
		}
		for _, n := range m.GetNestedType() {
			if err := walk(name+".", n); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk("", dp); err != nil {
		return "", err
	}
	if len(candidates) == 0 {
		return "", nil
	}
	// More than one only in contrived nestings (a type Order.Order.X beside
	// Order.X); the shortest package is the first found per name.
	return candidates[0], nil
}

// descriptorSyntax is "proto3" when dp uses proto3's explicit optional (a
// proto3_optional field, which a proto2 file refuses) and "proto2"
// otherwise: the DescriptorProto does not say which syntax its file had,
// and proto2 decodes every other proto3 message the same way on the wire.
func descriptorSyntax(dp *descriptorpb.DescriptorProto) string {
	if slices.ContainsFunc(dp.GetField(), (*descriptorpb.FieldDescriptorProto).GetProto3Optional) ||
		slices.ContainsFunc(dp.GetNestedType(), func(n *descriptorpb.DescriptorProto) bool { return descriptorSyntax(n) == "proto3" }) {
		return "proto3"
	}
	return "proto2"
}

func (p *protoRows) line(rec []byte, field string) ([]byte, error) {
	m := dynamicpb.NewMessage(p.md)
	if err := (proto.UnmarshalOptions{}).Unmarshal(rec, m); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: does not decode as %s: %v", field, p.md.FullName(), err)
	}
	if err := proto.CheckInitialized(m); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", field, err)
	}
	return appendMessage(nil, m), nil
}

func appendMessage(dst []byte, m protoreflect.Message) []byte {
	dst = append(dst, '{')
	fields := m.Descriptor().Fields()
	n := 0
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if !m.Has(fd) {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = rowjson.AppendString(dst, string(fd.Name()))
		dst = append(dst, ':')
		v := m.Get(fd)
		switch {
		case fd.IsMap():
			// Protobuf maps are unordered; emit keys sorted so that the
			// stored line does not depend on map iteration order.
			mp := v.Map()
			keys := make([]protoreflect.MapKey, 0, mp.Len())
			mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
				keys = append(keys, k)
				return true
			})
			slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return strings.Compare(a.String(), b.String()) })
			dst = append(dst, '{')
			for j, k := range keys {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = rowjson.AppendString(dst, k.String())
				dst = append(dst, ':')
				dst = appendValue(dst, fd.MapValue(), mp.Get(k))
			}
			dst = append(dst, '}')
		case fd.IsList():
			dst = append(dst, '[')
			l := v.List()
			for j := 0; j < l.Len(); j++ {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendValue(dst, fd, l.Get(j))
			}
			dst = append(dst, ']')
		default:
			dst = appendValue(dst, fd, v)
		}
	}
	return append(dst, '}')
}

func appendValue(dst []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) []byte {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return strconv.AppendBool(dst, v.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return strconv.AppendInt(dst, v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.AppendUint(dst, v.Uint(), 10)
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		bits := 64
		if fd.Kind() == protoreflect.FloatKind {
			bits = 32
		}
		return rowjson.AppendFloat(dst, v.Float(), bits)
	case protoreflect.StringKind:
		return rowjson.AppendString(dst, v.String())
	case protoreflect.BytesKind:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.Bytes())
		return append(dst, '"')
	case protoreflect.EnumKind:
		return strconv.AppendInt(dst, int64(v.Enum()), 10)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return appendMessage(dst, v.Message())
	default:
		return append(dst, "null"...)
	}
}

// Estimates of what decoding a PROTO record (dynamicpb) and rendering it
// as JSON allocate, per element of its wire form, from
// TestProtoCostBoundsDecoding's measurements (every allocation counted,
// slice growth included): a scalar element, packed or not, ~140 bytes (a
// packed int32 is 1 wire byte); an empty nested message (2 wire bytes)
// ~250; a string byte ~4 and each byte needing a JSON escape ~40 more.
const (
	protoMessageCost = 320
	protoValueCost   = 160
	protoByteCost    = 4  // per string or bytes byte: the copy and its JSON (base64 for bytes)
	protoEscapeCost  = 40 // per string byte rowjson escapes
	// protoMaxDepth is proto.UnmarshalOptions' default recursion limit.
	protoMaxDepth = 10000
)

// cost estimates the memory decoding and rendering rec takes, from its wire
// form and without allocating, and checks that every string field is UTF-8
// (proto2 parsing does not). Malformed wire data is left to the decoder.
func (p *protoRows) cost(rec []byte, field string) (int64, error) {
	c, err := scanCost(rec, p.md, 0)
	if err != nil {
		return 0, status.Errorf(codes.InvalidArgument, "%s: %v", field, err)
	}
	return c, nil
}

func scanCost(b []byte, md protoreflect.MessageDescriptor, depth int) (int64, error) {
	if depth > protoMaxDepth {
		return 0, fmt.Errorf("messages nest deeper than %d", protoMaxDepth)
	}
	cost := int64(protoMessageCost)
	fields := md.Fields()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return cost + int64(len(b)), nil // the decoder reports it
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return cost + int64(len(b)), nil
		}
		val := b[:m]
		b = b[m:]
		fd := fields.ByNumber(num)
		want, packable := wireType(fd)
		switch {
		case fd == nil || (typ != want && !(packable && typ == protowire.BytesType && fd.IsList())):
			cost += int64(m) + protoValueCost // kept as unknown bytes
		case typ == protowire.BytesType && packable:
			v, _ := protowire.ConsumeBytes(val)
			cost += packedCount(v, want) * protoValueCost
		case fd.Kind() == protoreflect.StringKind:
			v, _ := protowire.ConsumeBytes(val)
			if !utf8.Valid(v) {
				return 0, fmt.Errorf("field %s is not valid UTF-8", fd.FullName())
			}
			cost += protoValueCost + protoByteCost*int64(len(v)) + protoEscapeCost*escapes(v)
		case fd.Kind() == protoreflect.BytesKind:
			v, _ := protowire.ConsumeBytes(val)
			cost += protoValueCost + protoByteCost*int64(len(v))
		case fd.Kind() == protoreflect.MessageKind:
			v, _ := protowire.ConsumeBytes(val)
			sub, err := scanCost(v, fd.Message(), depth+1)
			if err != nil {
				return 0, err
			}
			cost += protoValueCost + sub
		case fd.Kind() == protoreflect.GroupKind:
			cost += protoMessageCost + int64(m)*protoValueCost // rare: bounded coarsely
		default:
			cost += protoValueCost
		}
	}
	return cost, nil
}

// escapes is the number of bytes of v that rowjson.AppendString escapes.
func escapes(v []byte) int64 {
	var n int64
	for _, c := range v {
		if c < 0x20 || c == '"' || c == '\\' {
			n++
		}
	}
	return n
}

// wireType is the wire type of fd's values and whether a repeated fd may
// also come packed.
func wireType(fd protoreflect.FieldDescriptor) (protowire.Type, bool) {
	if fd == nil {
		return -1, false
	}
	switch fd.Kind() {
	case protoreflect.BoolKind, protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Int64Kind,
		protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return protowire.VarintType, true
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type, true
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type, true
	case protoreflect.GroupKind:
		return protowire.StartGroupType, false
	default:
		return protowire.BytesType, false
	}
}

// packedCount is the number of elements of a packed field's payload.
func packedCount(v []byte, typ protowire.Type) int64 {
	switch typ {
	case protowire.Fixed32Type:
		return int64(len(v) / 4)
	case protowire.Fixed64Type:
		return int64(len(v) / 8)
	}
	var n int64
	for _, c := range v {
		if c < 0x80 {
			n++
		}
	}
	return n
}
