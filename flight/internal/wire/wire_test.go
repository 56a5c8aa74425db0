package wire

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
)

func TestBatchMetaRoundTrip(t *testing.T) {
	spans := []batch.OffsetSpan{{Partition: 2, First: 10, Last: 20, LastID: []byte("x")}, {Partition: -1, First: 0, Last: 0}}
	for _, parts := range []int{0, 1, 3} {
		b := AppendBatchMeta(nil, 1<<63+5, spans, parts/2, parts)
		require.True(t, json.Valid(b), "%s", b)
		m, err := ParseBatchMeta(b)
		require.NoError(t, err)
		require.Equal(t, uint64(1<<63+5), m.OffsetID)
		require.Equal(t, []Span{{2, 10, 20}, {-1, 0, 0}}, m.Spans)
		if parts > 1 {
			require.Equal(t, 1, m.Part)
			require.Equal(t, 3, m.Parts)
		} else {
			require.Zero(t, m.Parts)
		}
	}
	m, err := ParseBatchMeta([]byte(`{"offset_id":7,"extra":{"a":1}}`))
	require.NoError(t, err)
	require.Equal(t, BatchMeta{OffsetID: 7}, m)
}

func TestBatchMetaRejects(t *testing.T) {
	for _, in := range []string{
		``, ` `, `null`, `[]`, `{"offset_id":-1}`, `{"offset_id":"1"}`, `{"offset_id":1.5}`,
		`{"spans":[]}`, `{"offset_id":1,"spans":[{"partition":0,"first":5,"last":4}]}`,
		`{"offset_id":1,"part":0}`, `{"offset_id":1,"part":3,"parts":3}`, `{"offset_id":1,"part":-1,"parts":3}`,
		`{"offset_id":18446744073709551616}`, `{"offset_id":1`,
	} {
		_, err := ParseBatchMeta([]byte(in))
		require.Error(t, err, "%q", in)
	}
}

func TestAck(t *testing.T) {
	a, err := ParseAck(AppendAck(nil, 1<<64-1, 42))
	require.NoError(t, err)
	require.Equal(t, Ack{Offset: 1<<64 - 1, Records: 42}, a)
	a, err = ParseAck([]byte(`{"ack_up_to_offset":-1}`))
	require.NoError(t, err)
	require.True(t, a.Ready)
	for _, in := range []string{``, `{}`, `{"ack_up_to_offset":"x"}`, `{"ack_up_to_offset":1.5}`, `{"ack_up_to_offset":1,"ack_up_to_records":-2}`} {
		_, err := ParseAck([]byte(in))
		require.Error(t, err, "%q", in)
	}
}
