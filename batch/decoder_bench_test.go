package batch_test

import (
	"bytes"
	stdjson "encoding/json"
	"io"
	"testing"
	"unsafe"

	"github.com/bytedance/sonic/ast"
	gojson "github.com/goccy/go-json"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/source/gen"
)

// BenchmarkJSONDecoders is the measurement behind the choice of JSON
// decoder. "thalweg-decode-only" is phase 1 of the ModeJSON path: tokenize,
// validate against the schema, convert values onto the tape. Each other
// candidate only tokenizes the gen.JSONSchema payloads
// (visiting every value, building nothing), which is a lower bound on the
// cost of a schema-directed decoder built on it; "thalweg" is the complete
// ModeJSON path (decode, validate, append to Arrow builders). A candidate
// would only be worth building on if its bare tokenizing beat that.
func BenchmarkJSONDecoders(b *testing.B) {
	recs := benchRecords(b, gen.ModeJSON, 4096)
	payloads := make([][]byte, len(recs))
	var total int
	for i, r := range recs {
		payloads[i] = r.Payload
		total += len(r.Payload)
	}
	run := func(b *testing.B, fn func(p []byte) error) {
		b.SetBytes(int64(total / len(payloads)))
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := testenv.ProcessCPU().Seconds()
		for i := range b.N {
			if err := fn(payloads[i%len(payloads)]); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		reportRate(b, b.N, cpu0)
	}
	b.Run("thalweg-assemble", func(b *testing.B) {
		runAssemble(b, batch.AssemblerOptions{Mode: batch.ModeJSON, Schema: gen.JSONSchema()}, recs)
	})
	b.Run("thalweg-decode-only", func(b *testing.B) {
		decode, err := batch.JSONDecodeFunc(gen.JSONSchema())
		if err != nil {
			b.Fatal(err)
		}
		run(b, decode)
	})
	b.Run("sonic-ast-visitor", func(b *testing.B) {
		var v nopVisitor
		run(b, func(p []byte) error { return ast.Preorder(unsafe.String(unsafe.SliceData(p), len(p)), &v, nil) })
	})
	b.Run("goccy-token", func(b *testing.B) {
		r := bytes.NewReader(nil)
		run(b, func(p []byte) error {
			r.Reset(p)
			dec := gojson.NewDecoder(r)
			for {
				if _, err := dec.Token(); err == io.EOF {
					return nil
				} else if err != nil {
					return err
				}
			}
		})
	})
	b.Run("encoding-json-token", func(b *testing.B) {
		r := bytes.NewReader(nil)
		run(b, func(p []byte) error {
			r.Reset(p)
			dec := stdjson.NewDecoder(r)
			for {
				if _, err := dec.Token(); err == io.EOF {
					return nil
				} else if err != nil {
					return err
				}
			}
		})
	})
}

type nopVisitor struct{ n int }

func (v *nopVisitor) OnNull() error                           { v.n++; return nil }
func (v *nopVisitor) OnBool(bool) error                       { v.n++; return nil }
func (v *nopVisitor) OnString(string) error                   { v.n++; return nil }
func (v *nopVisitor) OnInt64(int64, stdjson.Number) error     { v.n++; return nil }
func (v *nopVisitor) OnFloat64(float64, stdjson.Number) error { v.n++; return nil }
func (v *nopVisitor) OnObjectBegin(int) error                 { return nil }
func (v *nopVisitor) OnObjectKey(string) error                { return nil }
func (v *nopVisitor) OnObjectEnd() error                      { return nil }
func (v *nopVisitor) OnArrayBegin(int) error                  { return nil }
func (v *nopVisitor) OnArrayEnd() error                       { return nil }
