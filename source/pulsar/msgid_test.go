package pulsar

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	pclient "github.com/apache/pulsar-client-go/pulsar"
)

// TestAppendIDMatchesSerialize: appendID writes exactly what the client's
// Serialize writes, for batched and unbatched ids, partitioned or not, at
// the edges of every field, and the result deserializes to the same
// position; for a message sent on its own it writes the id of batch index
// -1.
func TestAppendIDMatchesSerialize(t *testing.T) {
	ids := []pclient.MessageID{
		pclient.NewMessageID(0, 0, 0, 0),
		pclient.NewMessageID(0, 0, -1, -1), // not batched, not partitioned
		pclient.NewMessageID(1, 2, -1, 3),
		pclient.NewMessageID(17, 4242, 0, -1),
		pclient.NewMessageID(math.MaxInt64, math.MaxInt64, math.MaxInt32, math.MaxInt32),
		pclient.NewMessageID(-1, -1, 5, -1), // the client's "latest" sentinel entry
		pclient.EarliestMessageID(),
		pclient.LatestMessageID(),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		ids = append(ids, pclient.NewMessageID(r.Int64N(1<<40), r.Int64N(1<<30),
			r.Int32N(1000)-1, r.Int32N(64)-1))
	}
	prefix := []byte("prefix")
	for _, id := range ids {
		want := id.Serialize()
		got := appendID(nil, id, false)
		if !bytes.Equal(got, want) {
			t.Fatalf("appendID(%v) = %x, Serialize = %x", id, got, want)
		}
		// Appending keeps what dst held.
		if got := appendID(append([]byte(nil), prefix...), id, false); !bytes.Equal(got, append(append([]byte(nil), prefix...), want...)) {
			t.Fatalf("appendID after a prefix = %x", got)
		}
		back, err := pclient.DeserializeMessageID(got)
		if err != nil {
			t.Fatalf("DeserializeMessageID(appendID(%v)): %v", id, err)
		}
		if back.LedgerID() != id.LedgerID() || back.EntryID() != id.EntryID() || back.BatchIdx() != id.BatchIdx() ||
			back.PartitionIdx() != id.PartitionIdx() {
			t.Fatalf("round trip of %v gave %v", id, back)
		}
		// A message sent on its own: the id its producer has, batch
		// index -1, whatever batch index the client gave it.
		single := pclient.NewMessageID(id.LedgerID(), id.EntryID(), -1, id.PartitionIdx())
		if got, want := appendID(nil, id, true), single.Serialize(); !bytes.Equal(got, want) {
			t.Fatalf("appendID(%v, unbatched) = %x, want %x", id, got, want)
		}
	}
}

func BenchmarkAppendID(b *testing.B) {
	id := pclient.NewMessageID(123456, 987654, 17, 3)
	b.Run("Serialize", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = id.Serialize()
		}
	})
	b.Run("appendID", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = appendID(buf[:0], id, false)
		}
	})
}
