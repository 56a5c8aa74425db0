package flight

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/thalweg/thalweg/batch"
)

// Rebuild returns a pipeline.RebuildFunc (the pipeline's rebuild from the
// raw anchor) that reads the dataset at path of a thalweg Flight receiver
// (package flight/receiver) with DoGet and a partition/seq-range Ticket. Batches the sink split into parts
// are put back together (concatenated) so that each returned batch carries
// its spans exactly once; a split batch served incompletely is dropped —
// it can only lie past the durable range. Batches are allocated from mem.
// opts are passed to every DoGet (e.g. BearerToken).
func Rebuild(c arrowflight.FlightServiceClient, path []string, mem memory.Allocator, opts ...grpc.CallOption) func(ctx context.Context, partition string, from, to uint64) ([]*batch.Batch, error) {
	path = append([]string(nil), path...)
	return func(ctx context.Context, partition string, from, to uint64) ([]*batch.Batch, error) {
		if from > to {
			return nil, fmt.Errorf("flight: rebuild partition %q: from %d > to %d", partition, from, to)
		}
		t := Ticket{Path: path, Partition: &partition, FromSeq: &from, ToSeq: &to}
		stored, err := Get(ctx, c, t, mem, opts...)
		if err != nil {
			return nil, fmt.Errorf("flight: rebuild partition %q seq %d..%d from %v: %w", partition, from, to, path, err)
		}
		out, err := joinParts(stored, mem)
		if err != nil {
			return nil, fmt.Errorf("flight: rebuild partition %q seq %d..%d from %v: %w", partition, from, to, path, err)
		}
		return out, nil
	}
}

// joinParts turns served batches into pipeline batches, concatenating the
// parts of split batches. It takes ownership of every record in stored.
func joinParts(stored []Stored, mem memory.Allocator) (out []*batch.Batch, err error) {
	defer func() {
		ReleaseAll(stored)
		if err != nil {
			for _, b := range out {
				b.Release()
			}
			out = nil
		}
	}()
	for i := 0; i < len(stored); {
		s := stored[i]
		if s.Parts <= 1 {
			s.Rec.Retain()
			out = append(out, &batch.Batch{Rec: s.Rec, Spans: s.Spans})
			i++
			continue
		}
		// A split batch: parts 0..Parts-1 in a row, sharing OffsetID.
		j := i
		for j < len(stored) && stored[j].OffsetID == s.OffsetID && stored[j].Parts == s.Parts && stored[j].Part == j-i {
			j++
		}
		if j-i != s.Parts || s.Part != 0 {
			i = max(j, i+1) // incomplete: skip it
			continue
		}
		rec, err := concatRecords(stored[i:j], mem)
		if err != nil {
			return out, err
		}
		out = append(out, &batch.Batch{Rec: rec, Spans: s.Spans})
		i = j
	}
	return out, nil
}

func concatRecords(parts []Stored, mem memory.Allocator) (arrow.RecordBatch, error) {
	schema := parts[0].Rec.Schema()
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var rows int64
	arrs := make([]arrow.Array, len(parts))
	for _, p := range parts {
		if !p.Rec.Schema().Equal(schema) {
			return nil, errors.New("parts of one split batch have different schemas")
		}
		rows += p.Rec.NumRows()
	}
	for f := range cols {
		for k, p := range parts {
			arrs[k] = p.Rec.Column(f)
		}
		c, err := array.Concatenate(arrs, mem)
		if err != nil {
			return nil, fmt.Errorf("concatenating column %q: %w", schema.Field(f).Name, err)
		}
		cols[f] = c
	}
	return array.NewRecordBatch(schema, cols, rows), nil
}
