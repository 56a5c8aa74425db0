package schemaevo_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/thalweg/thalweg/internal/schemaevo"
)

func sch(fs ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fs, nil) }

func TestMergeArrow(t *testing.T) {
	id := arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64}
	amount := arrow.Field{Name: "amount", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	note := arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}
	nested := func(children ...arrow.Field) arrow.Field {
		return arrow.Field{Name: "payload", Type: arrow.StructOf(children...), Nullable: true}
	}
	md := arrow.NewMetadata([]string{"k"}, []string{"v"})
	cases := []struct {
		name   string
		old    *arrow.Schema
		next   *arrow.Schema
		errSub string // "" = compatible
	}{
		{"same", sch(id, amount), sch(id, amount), ""},
		{"nullable added at the end", sch(id, amount), sch(id, amount, note), ""},
		{"nullable added first", sch(id, amount), sch(note, id, amount), ""},
		{"reordered", sch(id, amount), sch(amount, id), ""},
		{"metadata differs", sch(id), arrow.NewSchema([]arrow.Field{id}, &md), ""},
		{"relaxed to nullable", sch(id), sch(arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), ""},
		{"tightened to non-nullable", sch(amount), sch(arrow.Field{Name: "amount", Type: arrow.PrimitiveTypes.Int64}), ""},
		{"nullable omitted", sch(id, amount), sch(id), ""},
		{"nested nullable added", sch(nested(id)), sch(nested(id, note)), ""},
		{"type change", sch(id, amount), sch(id, arrow.Field{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true}),
			`field "amount": type int64 -> float64`},
		{"non-nullable added", sch(id), sch(id, arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int32}), `field "n": non-nullable field added`},
		{"non-nullable removed", sch(id, amount), sch(amount), `field "id": non-nullable field removed`},
		{"nested type change", sch(nested(id)), sch(nested(arrow.Field{Name: "id", Type: arrow.BinaryTypes.String})),
			`field "payload.id": type int64 -> utf8`},
		{"list element change", sch(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)}),
			sch(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}), `field "l.item": type int32 -> int64`},
		{"list to large list", sch(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)}),
			sch(arrow.Field{Name: "l", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Int32)}), `field "l": type list -> large_list`},
		{"duplicate", sch(id), sch(id, amount, amount), `field "amount": appears twice`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := schemaevo.MergeArrow(nil, c.old)
			if err != nil {
				t.Fatal(err)
			}
			_, err = schemaevo.MergeArrow(m, c.next)
			if c.errSub == "" {
				if err != nil {
					t.Fatalf("want compatible, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.errSub) || !errors.Is(err, schemaevo.ErrIncompatible) {
				t.Fatalf("want an incompatible error with %q, got %v", c.errSub, err)
			}
			if len(err.Error()) > 160 {
				t.Fatalf("error is %d bytes long: %s", len(err.Error()), err)
			}
		})
	}
}

// TestMergeKeepsUnion checks that the merged schema remembers a field a
// later schema omitted: its type is still held against the next one.
func TestMergeKeepsUnion(t *testing.T) {
	a := sch(arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64}, arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	b := sch(arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64})
	c := sch(arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64}, arrow.Field{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true})
	m, _ := schemaevo.MergeArrow(nil, a)
	m, err := schemaevo.MergeArrow(m, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schemaevo.MergeArrow(m, c); err == nil || !strings.Contains(err.Error(), `field "x": type int64 -> utf8`) {
		t.Fatalf("got %v", err)
	}
}

func TestLongTypeIsShortened(t *testing.T) {
	long := arrow.Field{Name: "u", Type: arrow.DenseUnionOf([]arrow.Field{
		{Name: "aaaaaaaaaaaaaaaaaaaaaaaaaaa", Type: arrow.PrimitiveTypes.Int64},
		{Name: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", Type: arrow.BinaryTypes.String}}, []arrow.UnionTypeCode{0, 1}), Nullable: true}
	m, _ := schemaevo.MergeArrow(nil, sch(arrow.Field{Name: "u", Type: arrow.PrimitiveTypes.Int8, Nullable: true}))
	_, err := schemaevo.MergeArrow(m, sch(long))
	if err == nil || len(err.Error()) > 160 {
		t.Fatalf("got %v", err)
	}
}

func protoMsg(t *testing.T, fields ...*descriptorpb.FieldDescriptorProto) []schemaevo.Field {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("t.proto"), Syntax: proto.String("proto2"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("M"), Field: fields}},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		t.Fatal(err)
	}
	return schemaevo.FromProto(fd.Messages().Get(0))
}

func pf(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label) *descriptorpb.FieldDescriptorProto {
	return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum()}
}

func TestMergeProto(t *testing.T) {
	const (
		i64 = descriptorpb.FieldDescriptorProto_TYPE_INT64
		str = descriptorpb.FieldDescriptorProto_TYPE_STRING
		opt = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		req = descriptorpb.FieldDescriptorProto_LABEL_REQUIRED
	)
	base := protoMsg(t, pf("id", 1, i64, req), pf("amount", 2, i64, opt))
	m, err := schemaevo.Merge(nil, base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schemaevo.Merge(m, protoMsg(t, pf("id", 1, i64, req), pf("amount", 2, i64, opt), pf("note", 3, str, opt))); err != nil {
		t.Fatalf("optional field added: %v", err)
	}
	// Inserted in the middle, renumbering the field after it.
	if _, err := schemaevo.Merge(m, protoMsg(t, pf("id", 1, i64, req), pf("note", 2, str, opt), pf("amount", 3, i64, opt))); err != nil {
		t.Fatalf("optional field inserted: %v", err)
	}
	for _, c := range []struct {
		next   []schemaevo.Field
		errSub string
	}{
		{protoMsg(t, pf("id", 1, i64, req), pf("amount", 2, str, opt)), `field "amount": type int64 -> string`},
		{protoMsg(t, pf("id", 1, i64, req), pf("amount", 2, i64, opt), pf("n", 3, i64, req)), `field "n": non-nullable field added`},
	} {
		if _, err := schemaevo.Merge(m, c.next); err == nil || !strings.Contains(err.Error(), c.errSub) {
			t.Errorf("want %q, got %v", c.errSub, err)
		}
	}
}
