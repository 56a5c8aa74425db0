package ipcguard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

type capture struct{ fds []*flight.FlightData }

func (c *capture) Send(fd *flight.FlightData) error { c.fds = append(c.fds, fd); return nil }

var schemaMeta = arrow.NewMetadata([]string{"schema"}, []string{"meta"})

var rich = arrow.NewSchema([]arrow.Field{
	{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: arrow.NewMetadata([]string{"k"}, []string{"v"})},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}},
	{Name: "sv", Type: arrow.BinaryTypes.StringView},
	{Name: "l", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.BinaryTypes.String}))},
	{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64)},
	{Name: "u", Type: arrow.SparseUnionOf([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}}, []arrow.UnionTypeCode{5})},
}, &schemaMeta)

// messages encodes a schema and one batch of rich (with long string views,
// which need variadic buffers) the way a Flight writer sends them.
func messages(t testing.TB, opts ...ipc.Option) []*flight.FlightData {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	row := `{"i":1,"ts":"2024-01-01T00:00:00Z","sv":"a string view longer than twelve bytes","l":[{"a":"x"}],"m":[{"key":"k","value":1.5}],"u":[5,7]}`
	rec, _, err := array.RecordFromJSON(mem, rich, strings.NewReader("["+row+","+row+","+row+"]"))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	var c capture
	w := flight.NewRecordWriter(&c, append([]ipc.Option{ipc.WithSchema(rich), ipc.WithAllocator(mem)}, opts...)...)
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return c.fds
}

func TestValidMessagesPass(t *testing.T) {
	for _, opts := range [][]ipc.Option{nil, {ipc.WithLZ4()}, {ipc.WithZstd()}} {
		for i, fd := range messages(t, opts...) {
			if err := CheckMessage(fd.DataHeader, len(fd.DataBody)); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		}
	}
}

func TestHostileHeadersRejected(t *testing.T) {
	fds := messages(t)
	schema, rb := fds[0].DataHeader, fds[1]
	// Find the u32 length of the schema.fields vector (6 fields) and
	// inflate it: arrow-go would make([]arrow.Field, n) from it.
	mutate := func(b []byte, n uint32) []byte {
		out := bytes.Clone(b)
		c := &checker{b: out}
		root, _ := c.u32(0)
		msg, err := c.table(int(root), "message")
		if err != nil {
			t.Fatal(err)
		}
		h, _, err := c.subtable(msg, 2, "header")
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.deref(h, 1, "fields")
		if err != nil || p == 0 {
			t.Fatalf("schema.fields not found: %v", err)
		}
		binary.LittleEndian.PutUint32(out[p:], n)
		return out
	}
	cases := map[string]struct {
		hdr  []byte
		body int
	}{
		"empty":             {nil, 0},
		"short":             {[]byte{1, 2, 3}, 0},
		"root out of range": {[]byte{0xff, 0xff, 0, 0, 0, 0, 0, 0}, 0},
		"huge field count":  {mutate(schema, 0x7fffffff), 0},
		"truncated schema":  {schema[:len(schema)/2], 0},
		"body too short":    {rb.DataHeader, len(rb.DataBody) / 2},
	}
	for name, tc := range cases {
		err := CheckMessage(tc.hdr, tc.body)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

// FuzzCheckMessage: CheckMessage never panics, and whatever it accepts
// arrow-go can at least start decoding without a fatal error (its own
// panics are recovered by its reader).
func FuzzCheckMessage(f *testing.F) {
	for _, fd := range messages(f) {
		f.Add(fd.DataHeader, len(fd.DataBody))
	}
	for _, fd := range messages(f, ipc.WithZstd()) {
		f.Add(fd.DataHeader, len(fd.DataBody))
	}
	f.Fuzz(func(t *testing.T, hdr []byte, bodyLen int) {
		err := CheckMessage(hdr, bodyLen)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
	})
}
