package gen

import (
	"math/big"
	"testing"
	"time"
)

// TestDueAfterNeverEarly: record i is never due before i/rate, exactly (in
// rational arithmetic), and at most a nanosecond plus floating-point error
// after it. The truncating formula it replaced failed at record 1001, rate 1000.
func TestDueAfterNeverEarly(t *testing.T) {
	for _, rate := range []float64{1000, 3, 7.5, 333.33, 1e6, 123456.789} {
		r := new(big.Rat).SetFloat64(rate)
		for i := uint64(0); i < 20000; i++ {
			got := dueAfter(i, rate)
			exact := new(big.Rat).Quo(new(big.Rat).SetInt64(int64(i)*int64(time.Second)), r)
			if new(big.Rat).SetInt64(int64(got)).Cmp(exact) < 0 {
				t.Fatalf("rate %v, record %d: due after %d ns, before %s ns", rate, i, got, exact.FloatString(3))
			}
			late := new(big.Rat).Sub(new(big.Rat).SetInt64(int64(got)), exact)
			if late.Cmp(big.NewRat(2, 1)) > 0 {
				t.Fatalf("rate %v, record %d: due %s ns late", rate, i, late.FloatString(3))
			}
		}
	}
}
