package server_test

import (
	"context"
	"net"
	"strings"
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

// TestSinkSchemaChange drives the server with thalweg's own Zerobus sink in
// each of its encodings (JSON records, PROTO records with the descriptor it
// derives from the Arrow schema, the Flight variant), as a worker restarted
// with a changed schema would: a nullable field inserted before the last
// one is accepted and both schemas' rows are stored; a type change is
// refused with a message naming the field.
func TestSinkSchemaChange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srv, err := server.New(server.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	defer func() { require.NoError(t, srv.Stop()); <-done }()

	id := arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64}
	name := arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}
	note := arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}
	a := arrow.NewSchema([]arrow.Field{id, name}, nil)
	b := arrow.NewSchema([]arrow.Field{id, note, name}, nil)
	changed := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}, name}, nil)

	for _, tc := range []struct {
		mode    zerobus.Mode
		enc     zerobus.Encoding
		table   string
		refusal string
	}{
		{zerobus.ModeEphemeral, zerobus.EncodingJSON, "main.evo.json", `field "id": type number -> string`},
		{zerobus.ModeEphemeral, zerobus.EncodingProto, "main.evo.proto", `field "id": type int64 -> string`},
		{zerobus.ModeFlight, zerobus.EncodingJSON, "main.evo.flight", `field "id": type int64 -> utf8`},
	} {
		t.Run(tc.table, func(t *testing.T) {
			send := func(sc *arrow.Schema, first int) error {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				s, err := zerobus.Dial(ctx, zerobus.Options{Endpoint: lis.Addr().String(), Table: tc.table,
					TLS: zerobus.TLSOptions{Insecure: true}, Mode: tc.mode, Encoding: tc.enc, Schema: sc, Allocator: mem})
				if err != nil {
					return err
				}
				defer s.Close()
				rec := rows(mem, sc, first, 3)
				defer rec.Release()
				if err := s.Send(ctx, 1, &batch.Batch{Rec: rec}); err != nil {
					return err
				}
				return s.WaitDurable(ctx, 1)
			}
			require.NoError(t, send(a, 0))
			require.NoError(t, send(b, 3))
			err := send(changed, 6)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.refusal)
			require.Contains(t, err.Error(), "InvalidArgument")

			got, err := server.ReadTable(srv.Dir(), tc.table)
			require.NoError(t, err)
			require.Len(t, got, 6)
			require.Contains(t, string(got[4]), `"note":"note-4"`)
			require.NotContains(t, string(got[0]), "note")
		})
	}
}

// rows builds n rows of sc from id first: id (int64 or string), name,
// note ("note-<id>" when present).
func rows(mem memory.Allocator, sc *arrow.Schema, first, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := first; i < first+n; i++ {
		for f, fld := range sc.Fields() {
			switch fb := b.Field(f).(type) {
			case *array.Int64Builder:
				fb.Append(int64(i))
			case *array.StringBuilder:
				switch fld.Name {
				case "id":
					fb.Append(strings.Repeat("x", i))
				case "note":
					fb.Append("note-" + string(rune('0'+i)))
				default:
					fb.Append("n")
				}
			}
		}
	}
	return b.NewRecordBatch()
}
