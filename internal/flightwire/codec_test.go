package flightwire_test

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/thalweg/thalweg/internal/flightwire"
)

// richRecord has nulls, strings, a list and a struct, so that the IPC body
// has validity bitmaps, offsets and child buffers of odd lengths (padding).
func richRecord(t *testing.T, alloc memory.Allocator, n int) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int16), Nullable: true},
		{Name: "pt", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64}, arrow.Field{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(alloc, schema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	names := b.Field(1).(*array.StringBuilder)
	tags := b.Field(2).(*array.ListBuilder)
	tagv := tags.ValueBuilder().(*array.Int16Builder)
	pt := b.Field(3).(*array.StructBuilder)
	x := pt.FieldBuilder(0).(*array.Float64Builder)
	ok := pt.FieldBuilder(1).(*array.BooleanBuilder)
	for i := range n {
		ids.Append(int64(i) * 7)
		if i%5 == 3 {
			names.AppendNull()
		} else {
			names.Append(strings.Repeat("n", i%13))
		}
		if i%4 == 1 {
			tags.AppendNull()
		} else {
			tags.Append(true)
			for j := range i % 3 {
				tagv.Append(int16(j + i))
			}
		}
		pt.Append(i%6 != 0)
		x.Append(float64(i) / 3)
		if i%2 == 0 {
			ok.Append(i%3 == 0)
		} else {
			ok.AppendNull()
		}
	}
	return b.NewRecordBatch()
}

// reference is the FlightData arrow-go's own Flight writer sends for rec,
// marshalled as the standard gRPC proto codec does.
func reference(t *testing.T, rec arrow.RecordBatch, appMeta []byte, opts []ipc.Option) []byte {
	var sent []*flight.FlightData
	w := flight.NewRecordWriter(captureStream(func(fd *flight.FlightData) { sent = append(sent, proto.Clone(fd).(*flight.FlightData)) }),
		append([]ipc.Option{ipc.WithSchema(rec.Schema())}, opts...)...)
	require.NoError(t, w.WriteWithAppMetadata(rec, appMeta))
	require.NoError(t, w.Close())
	require.Len(t, sent, 2, "schema and one batch")
	b, err := proto.Marshal(sent[1])
	require.NoError(t, err)
	return b
}

type captureStream func(*flight.FlightData)

func (c captureStream) Send(fd *flight.FlightData) error { c(fd); return nil }

// TestEncodeBatchIsFlightWriterBytes: the hand-made FlightData is byte for
// byte the one arrow-go's Flight writer and the proto codec produce, for
// whole, sliced, empty and compressed batches, with and without
// app_metadata; and its body references the Arrow buffers instead of
// copying them.
func TestEncodeBatchIsFlightWriterBytes(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	full := richRecord(t, alloc, 301)
	defer full.Release()
	recs := map[string]arrow.RecordBatch{
		"whole":  full,
		"sliced": full.NewSlice(17, 250), // non-zero offsets: bitmaps and offsets are rebased
		"empty":  full.NewSlice(0, 0),
		"one":    full.NewSlice(300, 301),
	}
	defer func() {
		for k, r := range recs {
			if k != "whole" {
				r.Release()
			}
		}
	}()
	for name, rec := range recs {
		for _, comp := range []string{"", "lz4", "zstd"} {
			for _, meta := range [][]byte{nil, []byte(`{"offset_id":42,"spans":[{"partition":"p","first":1,"last":2}]}`)} {
				t.Run(name+"/"+comp, func(t *testing.T) {
					opts := flightwire.IPCOptions(alloc, comp)
					want := reference(t, rec, meta, opts)
					var tr flightwire.Tracker
					m, err := flightwire.EncodeBatch(rec, meta, opts, &tr)
					require.NoError(t, err)
					require.Equal(t, len(want), m.Len())
					bufs, err := flightwire.Codec{}.Marshal(m)
					require.NoError(t, err)
					got := bufs.Materialize()
					require.True(t, bytes.Equal(want, got), "encoding differs from arrow-go's Flight writer")

					var fd flight.FlightData
					require.NoError(t, proto.Unmarshal(got, &fd))
					require.Equal(t, meta, nilIfEmpty(fd.AppMetadata))
					if comp == "" && rec.NumRows() > 0 {
						requireAliases(t, rec, bufs)
					}
					_, err = flightwire.Codec{}.Marshal(m)
					require.Error(t, err, "a Message is marshalled once")
					require.Equal(t, 1, tr.Live(), "released before gRPC freed the buffers")
					bufs.Free()
					require.Zero(t, tr.Live())
				})
			}
		}
	}
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// requireAliases checks that the large value buffer of the "name" column
// is passed to gRPC as it is: one of the message's buffers starts at the
// same address.
func requireAliases(t *testing.T, rec arrow.RecordBatch, bufs mem.BufferSlice) {
	t.Helper()
	data := rec.Column(1).Data()
	values := data.Buffers()[2].Bytes()
	if data.Offset() != 0 || len(values) == 0 {
		return // rebased: arrow-go copies sliced offsets, values may start later
	}
	for _, b := range bufs {
		d := b.ReadOnlyData()
		if len(d) > 0 && unsafe.SliceData(d) == unsafe.SliceData(values) {
			return
		}
	}
	t.Fatal("the string values buffer was copied, not referenced")
}

// TestMessageFreeReleases: a Message gRPC never took gives its payload
// back with Free (the allocator is back to zero), once.
func TestMessageFreeReleases(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	rec := richRecord(t, alloc, 40)
	var tr flightwire.Tracker
	m, err := flightwire.EncodeBatch(rec, []byte(`{"offset_id":1}`), flightwire.IPCOptions(alloc, "zstd"), &tr)
	require.NoError(t, err)
	rec.Release() // the Message holds its own references
	require.NotZero(t, alloc.CurrentAlloc())
	m.Free()
	m.Free()
	require.Zero(t, tr.Live())
	require.Zero(t, tr.ReleaseAll())
}

// TestTrackerReleasesWhatGRPCDropped: a Message gRPC took but never freed
// (grpc-go drops one queued for a stream it just cleaned up) is released
// by ReleaseAll, once; gRPC freeing it afterwards releases nothing twice.
func TestTrackerReleasesWhatGRPCDropped(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	rec := richRecord(t, alloc, 40)
	defer rec.Release()
	var tr flightwire.Tracker
	var taken []mem.BufferSlice
	for range 3 {
		m, err := flightwire.EncodeBatch(rec, nil, flightwire.IPCOptions(alloc, "lz4"), &tr)
		require.NoError(t, err)
		b, err := flightwire.Codec{}.Marshal(m)
		require.NoError(t, err)
		taken = append(taken, b)
	}
	taken[0].Free() // written and freed as usual
	require.Equal(t, 2, tr.Live())
	require.Equal(t, 2, tr.ReleaseAll())
	require.Zero(t, tr.Live())
	taken[1].Free() // a late free after ReleaseAll: nothing released twice
}

// TestSentinelTracked: the empty last buffer that releases a Message must
// be one gRPC counts references of (above its pooling threshold).
func TestSentinelTracked(t *testing.T) {
	require.False(t, mem.IsBelowBufferPoolingThreshold(64<<10))
}

// TestUnmarshalFlightDataMatchesProto: the server codec's in-place decoder
// gives what proto.Unmarshal gives, aliasing its input, and skips unknown
// fields and known fields of another wire type as proto does.
func TestUnmarshalFlightDataMatchesProto(t *testing.T) {
	in := &flight.FlightData{
		FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"a", "b"}},
		DataHeader:       []byte("header"), AppMetadata: []byte(`{"offset_id":1}`), DataBody: bytes.Repeat([]byte{7}, 5000),
	}
	b, err := proto.Marshal(in)
	require.NoError(t, err)
	extra := []byte{0xa0, 0x1f, 0x05, 0x10, 0x09} // field 500 varint 5, then field 2 as a varint (wrong type)
	for _, wire := range [][]byte{b, append(append([]byte(nil), b...), extra...), {}} {
		var want, got flight.FlightData
		require.NoError(t, proto.Unmarshal(wire, &want))
		require.NoError(t, flightwire.UnmarshalFlightData(wire, &got))
		require.True(t, proto.Equal(&want, &got) || (len(want.ProtoReflect().GetUnknown()) > 0 && sameFields(&want, &got)))
	}
	var got flight.FlightData
	require.NoError(t, flightwire.UnmarshalFlightData(b, &got))
	require.Equal(t, unsafe.SliceData(got.DataBody), &b[len(b)-len(got.DataBody)], "data_body aliases the message")

	for _, bad := range [][]byte{{0x12, 0x05, 'a'}, {0x12}, {0x00}, {0xc2, 0x3e, 0xff, 0xff, 0xff, 0xff, 0x7f}} {
		var fd flight.FlightData
		require.Error(t, proto.Unmarshal(bad, &fd), "%x", bad)
		require.Error(t, flightwire.UnmarshalFlightData(bad, &fd), "%x", bad)
	}
}

func sameFields(a, b *flight.FlightData) bool {
	return proto.Equal(a.FlightDescriptor, b.FlightDescriptor) && bytes.Equal(a.DataHeader, b.DataHeader) &&
		bytes.Equal(a.AppMetadata, b.AppMetadata) && bytes.Equal(a.DataBody, b.DataBody)
}

// FuzzUnmarshalFlightData: on any input the in-place decoder accepts
// exactly what proto.Unmarshal accepts, with the same four fields.
func FuzzUnmarshalFlightData(f *testing.F) {
	b, _ := proto.Marshal(&flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("c")},
		DataHeader: []byte("h"), DataBody: []byte("body")})
	f.Add(b)
	f.Add([]byte{0x12, 0x00, 0x0a, 0x00, 0x0a, 0x02, 0x08, 0x01})
	f.Fuzz(func(t *testing.T, in []byte) {
		var want, got flight.FlightData
		errWant := proto.Unmarshal(in, &want)
		errGot := flightwire.UnmarshalFlightData(in, &got)
		if (errWant == nil) != (errGot == nil) {
			t.Fatalf("proto: %v, flightwire: %v", errWant, errGot)
		}
		if errWant == nil && !sameFields(&want, &got) {
			t.Fatalf("decoded differently: %v vs %v", &want, &got)
		}
	})
}

// TestReceivedDataPooled: ServerCodec decodes a message split over several
// gRPC buffers into a ReceivedData with the fields proto.Unmarshal gives,
// over one buffer from RecvPool; the last Release gives it back (and, in
// the race-detector builds the tests run in, overwrites it), Retain defers
// that, and one Release too many panics.
func TestReceivedDataPooled(t *testing.T) {
	in := &flight.FlightData{
		DataHeader: []byte("header"), AppMetadata: []byte(`{"offset_id":1}`), DataBody: bytes.Repeat([]byte{7}, 3<<20),
	}
	b, err := proto.Marshal(in)
	require.NoError(t, err)
	var data mem.BufferSlice
	for rest := b; len(rest) > 0; {
		n := min(len(rest), 16<<10)
		data = append(data, mem.SliceBuffer(rest[:n]))
		rest = rest[n:]
	}
	var rd flightwire.ReceivedData
	require.NoError(t, flightwire.ServerCodec{}.Unmarshal(data, &rd))
	require.True(t, sameFields(in, &rd.FlightData))
	body := rd.DataBody

	rd.Retain()
	rd.Release()
	require.Equal(t, byte(7), body[0], "a held reference keeps the buffer")
	rd.Release()
	if flightwire.PoisonReleased {
		require.NotEqual(t, byte(7), body[0], "the last Release gives the buffer back, overwritten")
	}
	require.Panics(t, rd.Release)

	// Anything but a ReceivedData goes to the proto codec.
	var pr flight.PutResult
	pb, err := proto.Marshal(&flight.PutResult{AppMetadata: []byte("x")})
	require.NoError(t, err)
	require.NoError(t, flightwire.ServerCodec{}.Unmarshal(mem.BufferSlice{mem.SliceBuffer(pb)}, &pr))
	require.Equal(t, []byte("x"), pr.AppMetadata)
}
