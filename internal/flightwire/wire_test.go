package flightwire

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
)

func TestBatchMetaRoundTrip(t *testing.T) {
	spans := []batch.OffsetSpan{{Partition: "persistent://public/default/t-partition-2", First: 10, Last: 20, LastID: []byte("x")},
		{Partition: "gen-1", First: 0, Last: 0}, {Partition: "odd \"name\"\n\u00e9", First: 3, Last: 3}}
	for _, parts := range []int{0, 1, 3} {
		ordered := parts == 3
		b := AppendBatchMeta(nil, 1<<63+5, ordered, spans, parts/2, parts)
		require.True(t, json.Valid(b), "%s", b)
		m, err := ParseBatchMeta(b)
		require.NoError(t, err)
		require.Equal(t, uint64(1<<63+5), m.OffsetID)
		require.Equal(t, ordered, m.Ordered, "%s", b)
		require.Equal(t, []Span{{"persistent://public/default/t-partition-2", 10, 20}, {"gen-1", 0, 0}, {"odd \"name\"\n\u00e9", 3, 3}}, m.Spans)
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
		`{"spans":[]}`, `{"offset_id":1,"spans":[{"partition":"p","first":5,"last":4}]}`,
		`{"offset_id":1,"spans":[{"partition":0,"first":1,"last":4}]}`, `{"offset_id":1,"ordered":1}`,
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
	require.Equal(t, Ack{Offset: 1<<64 - 1, Records: 42, HasRecords: true}, a)
	a, err = ParseAck([]byte(`{"ack_up_to_offset":-1}`))
	require.NoError(t, err)
	require.True(t, a.Ready)
	_, err = ParseAck(nil)
	require.ErrorIs(t, err, ErrEmptyAck)
	for _, in := range []string{``, `{}`, `{"ack_up_to_offset":"x"}`, `{"ack_up_to_offset":1.5}`, `{"ack_up_to_offset":1,"ack_up_to_records":-2}`,
		`{"ack_up_to_offset":-2}`, `{"ack_up_to_offset":1,"close_stream_duration_ms":-1}`} {
		_, err := ParseAck([]byte(in))
		require.Error(t, err, "%q", in)
	}
}

// TestAckBytes pins the exact bytes of every ack form: the receiver, the
// Zerobus server and the official Zerobus SDK depend on them.
func TestAckBytes(t *testing.T) {
	require.Equal(t, `{"ack_up_to_offset":7,"ack_up_to_records":42}`, string(AppendAck(nil, 7, 42)))
	require.Equal(t, `{"ack_up_to_offset":-1,"ack_up_to_records":0}`, string(AppendReady(nil)))
	require.Equal(t, `{"ack_up_to_offset":3,"ack_up_to_records":9,"close_stream_duration_ms":2000}`,
		string(AppendCloseStream(nil, 3, 9, 2*time.Second)))
	require.Equal(t, `{"ack_up_to_offset":-1,"ack_up_to_records":0,"close_stream_duration_ms":0}`,
		string(AppendCloseStream(nil, -1, 0, 0)))
	require.Equal(t, `{"offset_id":5}`, string(AppendBatchMeta(nil, 5, false, nil, 0, 0)))

	a, err := ParseAck(AppendCloseStream(nil, 3, 9, 2*time.Second))
	require.NoError(t, err)
	require.Equal(t, Ack{Offset: 3, Records: 9, HasRecords: true, Close: true, CloseAfter: 2 * time.Second}, a)
	a, err = ParseAck([]byte(`{"ack_up_to_offset":1,"ack_up_to_records":1,"close_stream_duration_ms":99999999999999999999}`))
	require.NoError(t, err)
	require.Equal(t, MaxCloseAfter, a.CloseAfter)
	a, err = ParseAck(AppendReady(nil))
	require.NoError(t, err)
	require.Equal(t, Ack{Ready: true, HasRecords: true}, a)
}

// TestBatchMetaPinnedBytes pins the bytes the sink sends, the wire form
// flight/doc.go documents for third-party peers: a partition is a JSON
// string, "ordered" appears only when true.
func TestBatchMetaPinnedBytes(t *testing.T) {
	spans := []batch.OffsetSpan{{Partition: "persistent://public/default/orders-partition-2", First: 5, Last: 9}}
	require.Equal(t, `{"offset_id":3,"spans":[{"partition":"persistent://public/default/orders-partition-2","first":5,"last":9}]}`,
		string(AppendBatchMeta(nil, 3, false, spans, 0, 0)))
	require.Equal(t, `{"offset_id":3,"ordered":true,"spans":[{"partition":"persistent://public/default/orders-partition-2","first":5,"last":9}],"part":1,"parts":2}`,
		string(AppendBatchMeta(nil, 3, true, spans, 1, 2)))
	require.Equal(t, `{"offset_id":4,"ordered":true}`, string(AppendBatchMeta(nil, 4, true, nil, 0, 0)))
}
