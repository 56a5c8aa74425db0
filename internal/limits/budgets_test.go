package limits

import (
	"strings"
	"testing"
)

// The defaults derive from the largest message and the server-wide budget,
// and a broken relation names the server's own field.
func TestBudgets(t *testing.T) {
	b := Budgets{MaxMessage: 64 << 20}
	b.WithDefaults()
	if b.Pending != DefaultMaxPendingBytes || b.StreamPending != DefaultMaxPendingBytes/2 ||
		b.DecodedMessage != 256<<20 || b.DecodedBuffer != 256<<20 {
		t.Fatalf("defaults %+v", b)
	}
	if errs := b.Relations(Budgets{}, "MaxMessageSize"); len(errs) != 0 {
		t.Fatalf("defaults break a relation: %v", errs)
	}
	set := Budgets{MaxMessage: 64 << 20, Pending: 1 << 20}
	e := set
	e.WithDefaults()
	if e.StreamPending != e.Pending {
		t.Fatalf("stream budget %d: half of a budget below the message should be all of it", e.StreamPending)
	}
	errs := e.Relations(set, "MaxMessageBytes")
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "Options.MaxPendingBytes 1048576 is below Options.MaxMessageBytes 67108864") ||
		!strings.Contains(errs[1].Error(), "Options.MaxStreamPendingBytes 0 (default 1048576)") {
		t.Fatalf("relations: %v", errs)
	}
}
