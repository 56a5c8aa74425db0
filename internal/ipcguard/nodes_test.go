package ipcguard_test

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/internal/ipcguard"
)

// TestFieldNodes checks SchemaNodes against what arrow-go writes for nested
// types, as FieldNodes reads it back.
func TestFieldNodes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1)
	b.Field(1).AppendNull()
	b.Field(2).AppendNull()
	b.Field(3).AppendNull()
	rec := b.NewRecordBatch()
	defer rec.Release()
	p, err := ipc.GetRecordBatchPayload(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	m := p.Meta()
	defer m.Release()
	var body bytes.Buffer
	if err := p.SerializeBody(&body); err != nil {
		t.Fatal(err)
	}
	if err := ipcguard.CheckMessage(m.Bytes(), body.Len()); err != nil {
		t.Fatal(err)
	}
	n, err := ipcguard.FieldNodes(m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if want := ipcguard.SchemaNodes(sc); n != want || n != 9 {
		t.Fatalf("FieldNodes %d, SchemaNodes %d, want 9", n, want)
	}
}
