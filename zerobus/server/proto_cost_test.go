package server

import (
	"bytes"
	"runtime"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestProtoCostBoundsDecoding: for the shapes that expand most when decoded
// (packed and unpacked repeated scalars, repeated empty messages, strings
// that need escaping), the wire-form estimate is at least what decoding
// and rendering the record really allocate, so MaxDecodedRecordBytes
// bounds real memory.
func TestProtoCostBoundsDecoding(t *testing.T) {
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	dp := &descriptorpb.DescriptorProto{
		Name: proto.String("R"),
		Field: []*descriptorpb.FieldDescriptorProto{
			{Name: proto.String("v"), Number: proto.Int32(1), Type: descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum(), Label: rep},
			{Name: proto.String("s"), Number: proto.Int32(2), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: opt},
			{Name: proto.String("m"), Number: proto.Int32(3), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(".R"), Label: rep},
			{Name: proto.String("d"), Number: proto.Int32(4), Type: descriptorpb.FieldDescriptorProto_TYPE_DOUBLE.Enum(), Label: rep},
		},
	}
	pr, err := newProtoRows(marshal(t, dp))
	if err != nil {
		t.Fatal(err)
	}
	unpacked := []byte{}
	for range 100_000 {
		unpacked = protowire.AppendTag(unpacked, 1, protowire.VarintType)
		unpacked = append(unpacked, 1)
	}
	empties := bytes.Repeat([]byte{0x1a, 0x00}, 50_000) // field 3, length 0
	str := protowire.AppendTag(nil, 2, protowire.BytesType)
	str = protowire.AppendBytes(str, bytes.Repeat([]byte{0x01, 'a'}, 500_000))
	plain := protowire.AppendTag(nil, 2, protowire.BytesType)
	plain = protowire.AppendBytes(plain, bytes.Repeat([]byte("abcdefgh"), 125_000))
	doubles := protowire.AppendTag(nil, 4, protowire.BytesType)
	doubles = protowire.AppendBytes(doubles, make([]byte, 8*100_000))
	for name, rec := range map[string][]byte{
		"packed int32":   packedInt32Record(200_000),
		"unpacked int32": unpacked,
		"empty messages": empties,
		"escaped string": str,
		"plain string":   plain,
		"packed doubles": doubles,
	} {
		cost, err := pr.cost(rec, "r")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := pr.line(rec, "r"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		runtime.ReadMemStats(&after)
		alloc := int64(after.TotalAlloc - before.TotalAlloc)
		t.Logf("%-15s %8d wire bytes: estimate %10d, allocated %10d (%.0f× wire)", name, len(rec), cost, alloc, float64(alloc)/float64(len(rec)))
		if cost < alloc {
			t.Errorf("%s: estimate %d below the %d bytes decoding allocated", name, cost, alloc)
		}
	}
}
