package server

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	flightpb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

type protoField struct {
	name string
	num  int32
	typ  descriptorpb.FieldDescriptorProto_Type
	req  bool
}

func descriptor(t *testing.T, fields ...protoField) []byte {
	t.Helper()
	dp := &descriptorpb.DescriptorProto{Name: proto.String("Event")}
	for _, f := range fields {
		label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		if f.req {
			label = descriptorpb.FieldDescriptorProto_LABEL_REQUIRED
		}
		dp.Field = append(dp.Field, &descriptorpb.FieldDescriptorProto{Name: proto.String(f.name), Number: proto.Int32(f.num), Type: f.typ.Enum(), Label: label.Enum()})
	}
	b, err := proto.Marshal(dp)
	require.NoError(t, err)
	return b
}

// protoEvoStream opens a PROTO EphemeralStream with desc and sends one record
// (field 1 = id as varint); it returns the stream's final status.
func protoEvoStream(t *testing.T, cc *grpc.ClientConn, desc []byte, id int64) error {
	t.Helper()
	st, err := zerobuspb.NewZerobusClient(cc).EphemeralStream(headers("", testTable))
	require.NoError(t, err)
	req := createReq(testTable, zerobuspb.RecordType_PROTO.Enum())
	req.GetCreateStream().DescriptorProto = desc
	require.NoError(t, st.Send(req))
	if _, err := st.Recv(); err != nil {
		return err
	}
	rec := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(id))
	_ = st.Send(&zerobuspb.EphemeralStreamRequest{Payload: &zerobuspb.EphemeralStreamRequest_IngestRecord{
		IngestRecord: &zerobuspb.IngestRecordRequest{OffsetId: proto.Int64(0),
			Record: &zerobuspb.IngestRecordRequest_ProtoEncodedRecord{ProtoEncodedRecord: rec}}}})
	_, err = finish(t, st)
	return err
}

func jsonStream(t *testing.T, cc *grpc.ClientConn, recs ...string) error {
	t.Helper()
	st, err := zerobuspb.NewZerobusClient(cc).EphemeralStream(headers("", testTable))
	require.NoError(t, err)
	require.NoError(t, st.Send(createReq(testTable, zerobuspb.RecordType_JSON.Enum())))
	if _, err := st.Recv(); err != nil {
		return err
	}
	_ = st.Send(jsonBatch(0, recs...))
	_, err = finish(t, st)
	return err
}

func requireRefused(t *testing.T, err error, want string) {
	t.Helper()
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	msg := status.Convert(err).Message()
	require.Contains(t, msg, want)
	require.Less(t, len(msg), 200, "not short: %s", msg)
}

// TestTableSchemaEvolution: a table's PROTO descriptors, JSON records and
// Flight schemas follow the schema evolution rules (internal/schemaevo):
// an optional field added flows and its records are stored; a type change
// or a required field added is refused with InvalidArgument naming the
// field, also after a restart (the table's schema file).
func TestTableSchemaEvolution(t *testing.T) {
	dir := t.TempDir()
	const (
		i64 = descriptorpb.FieldDescriptorProto_TYPE_INT64
		str = descriptorpb.FieldDescriptorProto_TYPE_STRING
	)
	a := descriptor(t, protoField{"id", 1, i64, false}, protoField{"name", 2, str, false})
	// note inserted before name, renumbering it, as thalweg's sink would.
	b := descriptor(t, protoField{"id", 1, i64, false}, protoField{"note", 2, str, false}, protoField{"name", 3, str, false})
	typeChange := descriptor(t, protoField{"id", 1, str, false}, protoField{"name", 2, str, false})
	required := descriptor(t, protoField{"id", 1, i64, false}, protoField{"name", 2, str, false}, protoField{"must", 4, i64, true})
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	func() {
		srv, cc := startBufconn(t, Options{Dir: dir, Allocator: mem})
		defer func() { cc.Close(); require.NoError(t, srv.Stop()) }()
		require.NoError(t, protoEvoStream(t, cc, a, 1))
		require.NoError(t, protoEvoStream(t, cc, b, 2))
		requireRefused(t, protoEvoStream(t, cc, typeChange, 3), `field "id": type int64 -> string`)
		requireRefused(t, protoEvoStream(t, cc, required, 4), `field "must": non-nullable field added`)

		require.NoError(t, jsonStream(t, cc, `{"id":1,"name":"a"}`, `{"id":2,"name":null,"score":"NaN"}`))
		require.NoError(t, jsonStream(t, cc, `{"id":3,"name":"c","note":"new"}`, `{"id":4}`, `{"id":5,"score":1.5}`))
		requireRefused(t, jsonStream(t, cc, `{"id":6,"name":"f"}`, `{"id":"7"}`), `field "id": type number -> string`)

		got, err := ReadTable(srv.Dir(), testTable)
		require.NoError(t, err)
		require.Equal(t, []string{`{"id":1}`, `{"id":2}`,
			`{"id":1,"name":"a"}`, `{"id":2,"name":null,"score":"NaN"}`,
			`{"id":3,"name":"c","note":"new"}`, `{"id":4}`, `{"id":5,"score":1.5}`}, strs(got)[:7])
	}()

	// After a restart the table still knows its schemas.
	srv, cc := startBufconn(t, Options{Dir: dir, Allocator: mem})
	requireRefused(t, protoEvoStream(t, cc, typeChange, 3), `field "id": type int64 -> string`)
	requireRefused(t, jsonStream(t, cc, `{"note":5}`), `field "note": type string -> number`)
	require.NoError(t, protoEvoStream(t, cc, b, 5))
	got, err := ReadTable(srv.Dir(), testTable)
	require.NoError(t, err)
	require.Equal(t, `{"id":5}`, string(got[len(got)-1]))
}

// flightStream writes one batch with schema {id: idType, name: utf8,
// extra...} on the Flight variant and returns the final status.
func flightStream(t *testing.T, cc *grpc.ClientConn, mem memory.Allocator, idType arrow.DataType, extra ...arrow.Field) error {
	t.Helper()
	sc := arrow.NewSchema(append([]arrow.Field{{Name: "id", Type: idType}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, extra...), nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	switch fb := b.Field(0).(type) {
	case *array.Int64Builder:
		fb.Append(1)
	case *array.StringBuilder:
		fb.Append("1")
	}
	for i := 1; i < sc.NumFields(); i++ {
		b.Field(i).AppendNull()
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	st, err := flightpb.NewFlightServiceClient(cc).DoPut(headers("", testTable))
	require.NoError(t, err)
	if _, err := st.Recv(); err != nil { // the ready ack
		return err
	}
	w := flight.NewRecordWriter(st, ipc.WithSchema(sc), ipc.WithAllocator(mem))
	_ = w.WriteWithAppMetadata(rec, []byte(`{"offset_id":0}`))
	_ = w.Close()
	_ = st.CloseSend()
	for {
		if _, err := st.Recv(); err != nil {
			if err.Error() == "EOF" {
				return nil
			}
			return err
		}
	}
}

func TestTableFlightSchema(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, cc := startBufconn(t, Options{Allocator: mem})
	require.NoError(t, flightStream(t, cc, mem, arrow.PrimitiveTypes.Int64))
	require.NoError(t, flightStream(t, cc, mem, arrow.PrimitiveTypes.Int64, arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}))
	requireRefused(t, flightStream(t, cc, mem, arrow.BinaryTypes.String), `field "id": type int64 -> utf8`)
	requireRefused(t, flightStream(t, cc, mem, arrow.PrimitiveTypes.Int64, arrow.Field{Name: "must", Type: arrow.PrimitiveTypes.Int32}),
		`field "must": non-nullable field added`)
}

func TestTopLevelKinds(t *testing.T) {
	rec := []byte(` { "a\"b" : 1.5e3 , "c":{"x":"}","y":[1]},"d":[1,"]",{}],"e":null,"f":"NaN","g":true,"h":"s\"t","i":-2}`)
	require.True(t, json.Valid(rec))
	var got []string
	require.NoError(t, topLevel(rec, func(name []byte, kind string) error {
		got = append(got, string(name)+"="+kind)
		return nil
	}))
	require.Equal(t, []string{`a"b=number`, "c=object", "d=array", "e=", "f=", "g=bool", "h=string", "i=number"}, got)
}

// scanCases are records for the one-pass scanner: valid and invalid JSON,
// non-objects, escapes, numbers at the edges of the grammar.
var scanCases = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":1}{}`, `{"a":1} x`, `[1]`, `"s"`, `1`, ``, `{`,
	`{"a":-0.5e+3,"b":0,"c":-0,"d":1E9}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":+1}`,
	`{"a":true,"b":false,"c":null}`, `{"a":tru}`, `{"a":nul}`, `{"a":nulll}`,
	`{"a":"x\"y","b\u0041":"\u00e9\n","c":"\ud800"}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}",
	`{"a":{"b":[1,{"c":[]},"]"]},"d":[]}`, `{"a":[1,]}`, `{"a":[1 2]}`, `{"a":{"b"}}`, `{"a":{"b":1,}}`,
	`{"a":"NaN","b":"Infinity","c":"-Infinity","d":"nan"}`, `{"a":1,"a":"x"}`,
	"{\n\t\"a\" :\r 1 \n}", `{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
}

// checkScan: whenever the one-pass scan takes a record, json.Valid accepts
// it and topLevel names the same fields with the same kinds.
func checkScan(t *testing.T, rec []byte) {
	c := &jsonChecker{}
	if !utf8.Valid(rec) || !c.scan(rec) {
		return
	}
	require.True(t, json.Valid(rec), "scan took invalid JSON %q", rec)
	l, err := jsonLine(rec, "f")
	require.NoError(t, err, "%q", rec)
	var want []nameKind
	require.NoError(t, topLevel(l, func(name []byte, kind string) error {
		want = append(want, nameKind{name: append([]byte(nil), name...), kind: kind})
		return nil
	}))
	require.Equal(t, len(want), len(c.pairs), "%q", rec)
	for i := range want {
		require.Equal(t, string(want[i].name), string(c.pairs[i].name), "%q", rec)
		require.Equal(t, want[i].kind, c.pairs[i].kind, "%q", rec)
	}
}

// TestScanMatchesTwoPass: the one-pass scanner takes the valid objects of
// scanCases (not the rest) and agrees with json.Valid + topLevel on them.
func TestScanMatchesTwoPass(t *testing.T) {
	for _, rec := range scanCases {
		c := &jsonChecker{}
		valid := json.Valid([]byte(rec)) && strings.HasPrefix(strings.TrimSpace(rec), "{")
		deep := strings.Count(rec, "[") > maxScanDepth
		require.Equal(t, valid && !deep, c.scan([]byte(rec)), "%q", rec)
		checkScan(t, []byte(rec))
	}
}

func FuzzScanMatchesTwoPass(f *testing.F) {
	for _, rec := range scanCases {
		f.Add([]byte(rec))
	}
	f.Fuzz(checkScan)
}
