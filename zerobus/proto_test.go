package zerobus_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/zerobus"
	"github.com/thalweg/thalweg/zerobus/server"
)

// TestProtoMatchesJSON sends the same nested rows (no nulls and no empty
// lists or maps, which protobuf cannot tell from absent fields) once as JSON and once as protobuf records
// with the descriptor derived from the schema; the server stores both as
// JSON lines, which must be identical.
func TestProtoMatchesJSON(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "ratio", Type: arrow.PrimitiveTypes.Float32},
		{Name: "raw", Type: arrow.BinaryTypes.Binary},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "props", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String)},
		{Name: "point", Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64},
			arrow.Field{Name: "labels", Type: arrow.ListOf(arrow.PrimitiveTypes.Int16)})},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	for i := 0; i < 5; i++ {
		b.Field(0).(*array.Int32Builder).Append(int32(i - 2))
		b.Field(1).(*array.BooleanBuilder).Append(i%2 == 0)
		b.Field(2).(*array.Float32Builder).Append(float32(i) / 8)
		b.Field(3).(*array.BinaryBuilder).Append([]byte{byte(i), 0xff})
		b.Field(4).(*array.Date32Builder).Append(arrow.Date32(19000 + i))
		mb := b.Field(5).(*array.MapBuilder)
		mb.Append(true)
		for k := 0; k < i%3+1; k++ {
			mb.KeyBuilder().(*array.StringBuilder).Append(string(rune('a' + k)))
			mb.ItemBuilder().(*array.StringBuilder).Append("v\"")
		}
		sb := b.Field(6).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int64Builder).Append(int64(i) << 40)
		lb := sb.FieldBuilder(1).(*array.ListBuilder)
		lb.Append(true)
		for k := 0; k <= i; k++ {
			lb.ValueBuilder().(*array.Int16Builder).Append(int16(-k))
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()

	stored := map[zerobus.Encoding][]string{}
	for _, enc := range []zerobus.Encoding{zerobus.EncodingJSON, zerobus.EncodingProto} {
		h := startServer(t, server.Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := zerobus.Dial(ctx, zerobus.Options{
			Endpoint: h.addr, Table: table, TLS: zerobus.TLSOptions{Insecure: true},
			Encoding: enc, Schema: sc, Allocator: mem,
		})
		require.NoError(t, err)
		require.NoError(t, s.Send(ctx, 1, &batch.Batch{Rec: rec}))
		require.NoError(t, s.WaitDurable(ctx, 1))
		require.NoError(t, s.Close())
		cancel()
		lines, err := server.ReadTable(h.srv.Dir(), table)
		require.NoError(t, err)
		for _, l := range lines {
			stored[enc] = append(stored[enc], string(l))
		}
	}
	require.Len(t, stored[zerobus.EncodingJSON], 5)
	require.Equal(t, stored[zerobus.EncodingJSON], stored[zerobus.EncodingProto])
	require.Equal(t, `{"id":0,"ok":true,"ratio":0.25,"raw":"Av8=","day":19002,"props":{"a":"v\"","b":"v\"","c":"v\""},"point":{"x":2199023255552,"labels":[0,-1,-2]}}`, stored[zerobus.EncodingProto][2])
}
