package pulsarschema_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/internal/pulsaradmin"
	"github.com/thalweg/thalweg/internal/pulsarschema"
)

// newRegistry is a Registry of the admin API at url, through the
// pulsaradmin client the worker uses (without idle connections, as the
// worker's).
func newRegistry(t testing.TB, url string) *pulsarschema.Registry {
	t.Helper()
	admin, err := pulsaradmin.New(pulsaradmin.Options{URL: url, Timeout: pulsarschema.DefaultRegistryTimeout, DisableKeepAlives: true})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := pulsarschema.NewRegistry(pulsarschema.RegistryOptions{Admin: admin})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// decoderFor returns a decoder of c writing into a fresh record builder on a
// checked allocator that the test asserts is empty at the end.
func decoderFor(t testing.TB, c *pulsarschema.Codec) (pulsarschema.Decoder, *array.RecordBuilder) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	rb := array.NewRecordBuilder(mem, c.Schema())
	t.Cleanup(rb.Release)
	d, err := c.NewDecoder(rb, 0)
	if err != nil {
		t.Fatal(err)
	}
	return d, rb
}

// rows builds the record of what was appended; the caller releases it.
func rows(rb *array.RecordBuilder) arrow.RecordBatch { return rb.NewRecordBatch() }

// lens is the length of every field builder (top level), to show that a
// failed payload left them as they were.
func lens(rb *array.RecordBuilder) []int {
	out := make([]int, len(rb.Fields()))
	for i, b := range rb.Fields() {
		out[i] = b.Len()
	}
	return out
}

func col(r arrow.RecordBatch, name string) arrow.Array {
	idx := r.Schema().FieldIndices(name)
	if len(idx) != 1 {
		panic("no column " + name)
	}
	return r.Column(idx[0])
}
