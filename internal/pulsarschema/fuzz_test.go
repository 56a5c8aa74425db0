package pulsarschema_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/internal/pulsarschema"
)

// fuzzDecode asserts, for one arbitrary payload: no panic; an error is a
// *DecodeError and leaves every builder's length and the Arrow memory in
// use exactly as before; success adds exactly one row; nothing leaks.
func fuzzDecode(t *testing.T, c *pulsarschema.Codec, payload []byte) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rb := array.NewRecordBuilder(mem, c.Schema())
	defer rb.Release()
	d, err := c.NewDecoder(rb, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // twice: the second append runs on grown builders
		before, inUse := lens(rb), mem.CurrentAlloc()
		_, err := d.Append(payload)
		var de *pulsarschema.DecodeError
		switch {
		case err == nil:
			for i, n := range lens(rb) {
				if n != before[i]+1 {
					t.Fatalf("field %d: %d values after one row on %d", i, n, before[i])
				}
			}
		case !errors.As(err, &de):
			t.Fatalf("error %v is not a *DecodeError", err)
		default:
			if !slices.Equal(lens(rb), before) || mem.CurrentAlloc() != inUse {
				t.Fatalf("failed payload (%v) changed the builders or allocated Arrow memory", err)
			}
		}
	}
	r := rb.NewRecordBatch()
	r.Release()
}

func FuzzAvroDecode(f *testing.F) {
	def := orderDef(f)
	for _, p := range [][]byte{encodeAvro(f, def, orderNative(1, false)), encodeAvro(f, def, orderNative(2, true))} {
		f.Add(p)
		f.Add(p[:len(p)/2])
	}
	f.Add(avroVarint(nil, 1<<62))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	c := mustCompile(f, pulsarschema.Info{Type: pulsarschema.TypeAvro, Definition: def})
	f.Fuzz(func(t *testing.T, payload []byte) { fuzzDecode(t, c, payload) })
}

func FuzzProtoDecode(f *testing.F) {
	info, md := protoInfo(f, "ex.Order")
	good := orderMsg(f, md, 1)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	c := mustCompile(f, info)
	f.Fuzz(func(t *testing.T, payload []byte) { fuzzDecode(t, c, payload) })
}
