package batch

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// RowSchema is one schema version of ModeDecoded: the Arrow schema of its
// rows and a way to decode its payloads into builders. A source resolves
// one per record (Record.Schema); records whose RowSchema is the same value
// (==) share batches, so a source hands out one value per version.
// Implementations must be comparable and safe for concurrent use.
type RowSchema interface {
	// Schema is the Arrow schema of the rows, metadata included (e.g. the
	// schema version, so that stored rows keep it). Batches prepend the
	// IncludeMeta columns.
	Schema() *arrow.Schema
	// NewRowDecoder binds a decoder to the builders of rb's fields skip,
	// skip+1, ...: Schema()'s fields.
	NewRowDecoder(rb *array.RecordBuilder, skip int) (RowDecoder, error)
}

// RowDecoder appends one payload as one row. Append must leave the builders
// as they were when it fails, and its error should be a *RejectError (its
// Kind, Path, Expected, Offset and Detail reach the dead-letter reason);
// any other error is wrapped as RejectUndecodable.
type RowDecoder interface {
	Append(payload []byte) (size int, err error)
}

// decodedState is ModeDecoded's current schema version: the RowSchema the
// record builder was made for, and its decoder.
type decodedState struct {
	rs  RowSchema
	dec RowDecoder
}

// addDecodedLocked decodes rec in ModeDecoded, switching the batch's schema
// first when rec's version differs from the current batch's (flushing what
// is buffered: one batch, one schema). A record without a usable schema, or
// whose payload does not decode, is rejected.
func (a *Assembler) addDecodedLocked(rec *Record, ps *partState) {
	if rec.Schema == nil {
		a.rejectLocked(rec, &RejectError{Kind: RejectNoSchema, Detail: "the source resolved no schema for the record"})
		return
	}
	if rec.Schema != a.mu.cur.rs {
		if err := a.switchSchemaLocked(rec.Schema); err != nil {
			a.rejectLocked(rec, &RejectError{Kind: RejectNoSchema, Detail: err.Error()})
			return
		}
	}
	size, err := a.mu.cur.dec.Append(rec.Payload)
	if err != nil {
		var re *RejectError
		if !errors.As(err, &re) {
			re = &RejectError{Kind: RejectUndecodable, Detail: err.Error()}
		}
		a.rejectLocked(rec, re)
		return
	}
	a.mu.bytes += size + a.appendMetaLocked(rec, ps)
	a.mu.rows++
}

// bindMetaLocked points the IncludeMeta builders at rb's first fields and
// returns how many there are; appendMetaLocked fills them. ModeJSON and
// ModeDecoded both use the pair.
func (a *Assembler) bindMetaLocked(rb *array.RecordBuilder) (skip int) {
	a.mu.meta.topic, a.mu.meta.partition, a.mu.meta.seq, a.mu.meta.messageID = nil, nil, nil, nil
	if !a.opts.IncludeMeta {
		return 0
	}
	a.mu.meta.topic = rb.Field(0).(*array.StringBuilder)
	a.mu.meta.partition = rb.Field(1).(*array.Int32Builder)
	a.mu.meta.seq = rb.Field(2).(*array.Uint64Builder)
	a.mu.meta.messageID = rb.Field(3).(*array.BinaryBuilder)
	return 4
}

// appendMetaLocked appends rec's IncludeMeta values, if any, and returns
// their estimated bytes.
func (a *Assembler) appendMetaLocked(rec *Record, ps *partState) int {
	if a.mu.meta.partition == nil {
		return 0
	}
	a.mu.meta.topic.Append(ps.topic)
	a.mu.meta.partition.Append(ps.index)
	a.mu.meta.seq.Append(rec.Seq)
	a.mu.meta.messageID.Append(rec.ID)
	return 4 + 8 + 2*4 + len(ps.topic) + len(rec.ID)
}

// switchSchemaLocked flushes the buffered records (FlushSchema) and makes
// the record builder and decoder of rs. On error the current schema stays.
func (a *Assembler) switchSchemaLocked(rs RowSchema) error {
	user := rs.Schema()
	if user == nil {
		return errors.New("schema version has no Arrow schema")
	}
	out, err := jsonOutputSchema(user, a.opts.IncludeMeta)
	if err != nil {
		return err
	}
	rb := array.NewRecordBuilder(a.opts.Allocator, out)
	skip := 0
	if a.opts.IncludeMeta {
		skip = out.NumFields() - user.NumFields()
	}
	dec, err := rs.NewRowDecoder(rb, skip)
	if err != nil {
		rb.Release()
		return err
	}
	if a.mu.records > 0 {
		a.flushLocked(FlushSchema)
		a.startBatchLocked() // the batch of this record starts now
	}
	if a.mu.rb != nil {
		a.mu.rb.Release()
	}
	a.mu.rb, a.mu.cur = rb, decodedState{rs: rs, dec: dec}
	a.bindMetaLocked(rb)
	return nil
}

// rejectLocked counts rec as rejected and hands it to OnReject.
func (a *Assembler) rejectLocked(rec *Record, reason *RejectError) {
	a.mu.rejected++
	if a.opts.OnReject != nil {
		a.opts.OnReject(rec, reason)
	}
}
