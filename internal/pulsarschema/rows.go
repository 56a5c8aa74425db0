package pulsarschema

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/schemaevo"
)

// Schema metadata keys every ModeDecoded batch carries, so that stored rows
// keep the schema version they were decoded with.
const (
	MetaTopic         = "pulsar.topic"          // the topic (without partition suffix)
	MetaSchemaType    = "pulsar.schema.type"    // e.g. "AVRO"
	MetaSchemaVersion = "pulsar.schema.version" // the registry's version number
)

// rowSchema adapts a Codec of one topic to batch.RowSchema.
type rowSchema struct {
	codec  *Codec
	schema *arrow.Schema // the codec's, with the Meta* metadata
}

func (r *rowSchema) Schema() *arrow.Schema { return r.schema }

func (r *rowSchema) NewRowDecoder(rb *array.RecordBuilder, skip int) (batch.RowDecoder, error) {
	d, err := r.codec.NewDecoder(rb, skip)
	if err != nil {
		return nil, err
	}
	return rowDecoder{d}, nil
}

// rowDecoder turns DecodeErrors into the batch.RejectError the dead-letter
// path reports.
type rowDecoder struct{ d Decoder }

func (r rowDecoder) Append(payload []byte) (int, error) {
	n, err := r.d.Append(payload)
	if err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			return 0, &batch.RejectError{Kind: batch.RejectUndecodable, Path: de.Path, Expected: de.Expected, Offset: de.Offset, Detail: de.Detail}
		}
		return 0, &batch.RejectError{Kind: batch.RejectUndecodable, Detail: err.Error()}
	}
	return n, nil
}

// refused is the RowSchema of a schema version that will never decode (no
// such schema, not mappable, an incompatible change): its records go to the
// dead-letter path with err as their reason.
type refused struct{ err error }

func (r *refused) Schema() *arrow.Schema { return arrow.NewSchema(nil, nil) }

func (r *refused) NewRowDecoder(*array.RecordBuilder, int) (batch.RowDecoder, error) {
	return nil, r.err
}

// Resolver turns a message's (topic, schema version) into the
// batch.RowSchema its payload decodes with, for source/pulsar's
// Options.Schemas: one value per version (so batches group by version), and
// the evolution rules of internal/schemaevo applied per topic in the order
// versions are first seen. A version that is compatible with what the
// topic already had (e.g. a new nullable field) flows. An incompatible one
// is a permanent error wrapping schemaevo.ErrIncompatible that names the
// field: source/pulsar's Next returns it and the run ends, since every
// record of that version would otherwise leave the pipeline. A schema that
// does not map to Arrow, or a version the registry does not have, becomes
// a RowSchema that rejects every record of it with the reason (to the
// dead-letter topic). Other errors may heal (the admin API is
// unreachable): the caller retries.
//
// Safe for concurrent use.
type Resolver struct {
	reg *Registry
	mu  struct {
		sync.Mutex
		rows   map[regKey]batch.RowSchema
		merged map[string][]schemaevo.Field // per topic
	}
}

// NewResolver returns a Resolver over reg.
func NewResolver(reg *Registry) *Resolver {
	r := &Resolver{reg: reg}
	r.mu.rows = map[regKey]batch.RowSchema{}
	r.mu.merged = map[string][]schemaevo.Field{}
	return r
}

// Resolve implements source/pulsar's Options.Schemas: version is the
// message's SchemaVersion().
func (r *Resolver) Resolve(ctx context.Context, topic string, version []byte) (batch.RowSchema, error) {
	path, err := topicPath(topic)
	if err != nil {
		return &refused{err: err}, nil
	}
	v, err := VersionFromMessage(version)
	if err != nil {
		return &refused{err: err}, nil
	}
	k := regKey{topic: path, version: v}
	r.mu.Lock()
	rs, ok := r.mu.rows[k]
	r.mu.Unlock()
	if ok {
		return rs, nil
	}
	codec, err := r.reg.Codec(ctx, path, v)
	switch {
	case err == nil:
	case errors.Is(err, ErrNoSchema) || isCompileError(err):
		return r.keep(k, &refused{err: err}), nil
	default:
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rs, ok := r.mu.rows[k]; ok { // resolved concurrently
		return rs, nil
	}
	merged, err := schemaevo.MergeArrow(r.mu.merged[path], codec.Schema())
	if err != nil {
		// Permanent, and not the records' fault: an operator must decide
		// (a new dataset, or a compatible version). Not cached, so every
		// later message of the version gets the same answer.
		return nil, fmt.Errorf("topic %s schema version %d: %w", path, codec.Info().Version, err)
	} else {
		r.mu.merged[path] = merged
		info := codec.Info()
		md := arrow.NewMetadata([]string{MetaTopic, MetaSchemaType, MetaSchemaVersion},
			[]string{path, string(info.Type), strconv.FormatInt(info.Version, 10)})
		rs = &rowSchema{codec: codec, schema: arrow.NewSchema(codec.Schema().Fields(), &md)}
	}
	r.mu.rows[k] = rs
	return rs, nil
}

func (r *Resolver) keep(k regKey, rs batch.RowSchema) batch.RowSchema {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.mu.rows[k]; ok {
		return old
	}
	r.mu.rows[k] = rs
	return rs
}
