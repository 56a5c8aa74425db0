package zerobus

import "github.com/apache/arrow-go/v18/arrow"

// EncodeJSONForBench exposes the JSON encoder to the external benchmarks.
func EncodeJSONForBench(rec arrow.RecordBatch) {
	if _, err := encodeJSON(rec, DefaultMaxPayload); err != nil {
		panic(err)
	}
}
