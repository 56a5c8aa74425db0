package server

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

func newProtoRows(raw []byte) (*protoRows, error) {
	var dp descriptorpb.DescriptorProto
	if err := proto.Unmarshal(raw, &dp); err != nil {
		return nil, fmt.Errorf("not a DescriptorProto: %w", err)
	}
	if dp.GetName() == "" {
		return nil, fmt.Errorf("message name is empty")
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("zerobus_record.proto"),
		Syntax:      proto.String("proto2"),
		MessageType: []*descriptorpb.DescriptorProto{&dp},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		return nil, err
	}
	return &protoRows{md: fd.Messages().Get(0)}, nil
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
