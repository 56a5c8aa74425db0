package schemaevo

import (
	"google.golang.org/protobuf/reflect/protoreflect"
)

// FromProto converts a proto message's fields to the neutral form. A field
// is nullable unless it is a proto2 required field: a record written before
// an optional (or proto3) field existed decodes with the field unset. The
// type is the field's kind and cardinality ("int64", "repeated string",
// "enum Color", "map"); field numbers do not count: each stream's records
// are decoded with that stream's descriptor and stored by field name, so a
// field inserted in the middle (which renumbers the fields after it, as
// thalweg's Zerobus sink numbers fields by position) is an addition. A
// message field's children are its message's fields (a message that
// contains itself is compared by name below its first occurrence).
func FromProto(md protoreflect.MessageDescriptor) []Field {
	return fromProtoMessage(md, map[protoreflect.FullName]bool{})
}

func fromProtoMessage(md protoreflect.MessageDescriptor, open map[protoreflect.FullName]bool) []Field {
	open[md.FullName()] = true
	defer delete(open, md.FullName())
	fds := md.Fields()
	out := make([]Field, fds.Len())
	for i := range fds.Len() {
		fd := fds.Get(i)
		f := Field{Name: string(fd.Name()), Nullable: fd.Cardinality() != protoreflect.Required}
		kind := fd.Kind().String()
		switch {
		case fd.IsMap():
			kind = "map"
		case fd.Kind() == protoreflect.EnumKind:
			kind = "enum " + string(fd.Enum().FullName().Name())
		}
		if fd.Cardinality() == protoreflect.Repeated && !fd.IsMap() {
			kind = "repeated " + kind
		}
		f.Type = kind
		if m := fd.Message(); m != nil {
			if open[m.FullName()] {
				f.Type += " " + string(m.Name())
			} else {
				f.Children = fromProtoMessage(m, open)
			}
		}
		out[i] = f
	}
	return out
}
