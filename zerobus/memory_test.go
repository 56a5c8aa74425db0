package zerobus

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
)

// TestRetainedBound holds RetainedBound's factors: the encoding an
// ephemeral Sink keeps of a raw-mode batch (random binary payloads from 1
// byte to 16 KiB, the identity columns and a property) stays within the
// bound it reports for the batch's estimated bytes.
func TestRetainedBound(t *testing.T) {
	for _, size := range []int{1, 16, 100, 1024, 16384} {
		var got *batch.Batch
		a, err := batch.NewAssembler(batch.AssemblerOptions{MaxBytes: 1 << 20, Linger: time.Hour,
			Emit: func(b *batch.Batch) { got = b }})
		require.NoError(t, err)
		for i := 0; got == nil; i++ {
			p := make([]byte, size)
			for j := range p {
				p[j] = byte(rand.IntN(256))
			}
			require.NoError(t, a.Add(&batch.Record{Partition: "persistent://public/default/events-partition-0",
				Seq: uint64(i + 1), ID: []byte("0123456789abcdef"), Key: []byte("key-1234"), Payload: p,
				PublishTime: time.Now(), Props: map[string]string{"source": "x"}}))
		}
		est := int64(a.Stats().Bytes)
		require.NoError(t, a.Close())

		frames, err := encodeJSON(got.Rec, DefaultMaxPayload)
		require.NoError(t, err)
		require.LessOrEqual(t, encodedBytes(frames), RetainedBound(ModeEphemeral, EncodingJSON, est), "JSON, %d-byte payloads", size)

		pe, err := newProtoEncoder(got.Rec.Schema())
		require.NoError(t, err)
		frames, err = pe.encode(got.Rec, DefaultMaxPayload)
		require.NoError(t, err)
		require.LessOrEqual(t, encodedBytes(frames), RetainedBound(ModeEphemeral, EncodingProto, est), "proto, %d-byte payloads", size)
		got.Release()
	}
	require.Zero(t, RetainedBound(ModeFlight, EncodingJSON, 1<<20), "Flight mode keeps references only")
}

func encodedBytes(frames []frame) int64 {
	var n int64
	for _, f := range frames {
		for _, r := range f.json {
			n += int64(len(r))
		}
		for _, r := range f.proto {
			n += int64(len(r))
		}
	}
	return n
}
