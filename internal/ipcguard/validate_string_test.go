package ipcguard

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// stringArray builds a String array over raw offsets, values and validity,
// as a hostile IPC message could declare them, sliced to [off, off+n).
func stringArray(offsets []int32, values, validity []byte, nulls, off, n int) *array.String {
	ob := make([]byte, 4*len(offsets))
	for i, o := range offsets {
		binary.LittleEndian.PutUint32(ob[4*i:], uint32(o))
	}
	var vb, db *memory.Buffer
	if validity != nil {
		vb = memory.NewBufferBytes(validity)
	}
	if values != nil {
		db = memory.NewBufferBytes(values)
	}
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{vb, memory.NewBufferBytes(ob), db}, nil, nulls, off)
	defer d.Release()
	return array.NewStringData(d)
}

// randomStrings makes offsets and values of n strings mixing ASCII and
// multi-byte runes, then, with some probability, damages them: a byte
// flipped, an offset moved into a rune, made to decrease or negative.
func randomStrings(rng *rand.Rand, n int) ([]int32, []byte) {
	runes := []string{"a", "z", "é", "ß", "€", "𝄞", "\u0000"}
	var values []byte
	offsets := []int32{0}
	for range n {
		for range rng.IntN(6) {
			values = append(values, runes[rng.IntN(len(runes))]...)
		}
		offsets = append(offsets, int32(len(values)))
	}
	switch rng.IntN(6) {
	case 0:
		if len(values) > 0 {
			values[rng.IntN(len(values))] ^= byte(1 << rng.IntN(8))
		}
	case 1:
		if n > 1 {
			i := 1 + rng.IntN(n-1)
			offsets[i] += int32(rng.IntN(3)) - 1
		}
	case 2:
		offsets[0] = -int32(rng.IntN(2))
	}
	return offsets, values
}

// noPanic runs validate as ValidateBatch does: a panic (arrow-go's
// ValidateFull slices past the values for some damaged offsets) is a
// refusal.
func noPanic(validate func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return validate()
}

// TestValidateStringMatchesArrow: the one-pass check accepts exactly the
// String arrays arrow-go's ValidateFull accepts (valid and damaged, sliced,
// with and without validity bitmaps, right and wrong null counts).
func TestValidateStringMatchesArrow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	accepted, refused := 0, 0
	for i := range 20000 {
		n := rng.IntN(12)
		offsets, values := randomStrings(rng, n)
		var validity []byte
		nulls := 0
		if rng.IntN(2) == 0 {
			validity = make([]byte, (n+7)/8+1)
			for j := range n {
				if rng.IntN(4) != 0 {
					validity[j/8] |= 1 << (j % 8)
				} else {
					nulls++
				}
			}
		}
		off, length := 0, n
		if n > 0 && rng.IntN(3) == 0 {
			off = rng.IntN(n)
			length = rng.IntN(n - off + 1)
			nulls = array.UnknownNullCount
		}
		if rng.IntN(8) == 0 {
			nulls++ // a wrong count
		}
		if len(values) == 0 && rng.IntN(2) == 0 {
			values = nil // no data buffer
		}
		a := stringArray(offsets, values, validity, nulls, off, length)
		want := noPanic(func() error { return array.ValidateFull(a) })
		got := noPanic(func() error { return validateString(a) })
		if (got == nil) != (want == nil) {
			t.Fatalf("case %d: offsets %v values %q validity %v nulls %d slice [%d,+%d): validateString %v, arrow-go %v",
				i, offsets, values, validity, nulls, off, length, got, want)
		}
		if want == nil {
			accepted++
		} else {
			refused++
		}
		a.Release()
	}
	if accepted < 1000 || refused < 1000 {
		t.Fatalf("%d accepted and %d refused: the cases do not exercise both verdicts", accepted, refused)
	}
}

// FuzzValidateStringMatchesArrow is the same comparison over fuzzed bytes.
func FuzzValidateStringMatchesArrow(f *testing.F) {
	f.Add([]byte("héllo€"), []byte{0, 1, 3, 6, 9})
	f.Add([]byte{0xC3, 0xA9}, []byte{0, 1, 2})
	f.Fuzz(func(t *testing.T, values, offs []byte) {
		if len(offs) == 0 {
			return
		}
		offsets := make([]int32, len(offs))
		for i, o := range offs {
			offsets[i] = int32(int8(o)) // small, sometimes negative
		}
		var a *array.String
		if noPanic(func() error { a = stringArray(offsets, values, nil, 0, 0, len(offsets)-1); return nil }) != nil {
			return // arrow-go refuses to build it (an IPC reader does too)
		}
		defer a.Release()
		want := noPanic(func() error { return array.ValidateFull(a) })
		got := noPanic(func() error { return validateString(a) })
		if (got == nil) != (want == nil) {
			t.Fatalf("offsets %v values %q: validateString %v, arrow-go %v", offsets, values, got, want)
		}
	})
}

// BenchmarkValidateString compares arrow-go's ValidateFull with the
// one-pass check on a raw batch's topic column (8 192 rows of a 46-byte
// topic name), ABBA.
func BenchmarkValidateString(b *testing.B) {
	bld := array.NewStringBuilder(memory.NewGoAllocator())
	topic := "persistent://public/default/e2e-bench-1234567"
	for range 8192 {
		bld.Append(topic)
	}
	a := bld.NewStringArray()
	defer a.Release()
	if !utf8.ValidString(topic) {
		b.Fatal("topic")
	}
	for round := range 2 {
		modes := []string{"arrow", "onepass"}
		if round == 1 {
			modes = []string{"onepass", "arrow"}
		}
		for _, m := range modes {
			b.Run(fmt.Sprint(m), func(b *testing.B) {
				for b.Loop() {
					var err error
					if m == "arrow" {
						err = array.ValidateFull(a)
					} else {
						err = validateString(a)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/8192, "ns/row")
			})
		}
	}
}
