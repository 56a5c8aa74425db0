// Package gen is a deterministic, seeded record source for the demo, tests
// and benchmarks.
//
// A Generator with a given Options produces the same sequence of records on
// every run and every machine: partition choice, payloads, keys, times and
// malformed records all derive from Seed (times from Options.Start, never
// from the clock). Partitions are named PartitionName(p); per partition, Seq
// starts at 1 and increases by one.
//
// Only Run consults the clock, to honour Rate; Next never blocks.
package gen

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/thalweg/thalweg/batch"
)

// Mode selects the payload format.
type Mode uint8

const (
	// ModeRaw produces PayloadSize bytes of opaque printable data.
	ModeRaw Mode = iota
	// ModeJSON produces JSON objects matching JSONSchema.
	ModeJSON
)

func (m Mode) String() string {
	switch m {
	case ModeRaw:
		return "raw"
	case ModeJSON:
		return "json"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ErrInvalidOptions is wrapped by errors from New.
var ErrInvalidOptions = errors.New("gen: invalid options")

// DefaultStart is the default Options.Start.
var DefaultStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Options configures a Generator. Zero values take the documented defaults.
type Options struct {
	Seed       uint64
	Partitions int    // number of partitions, records spread uniformly at random; default 1
	Records    uint64 // total records; 0 = unbounded
	Rate       float64
	// PayloadSize is the payload length in ModeRaw; default 100. ModeJSON
	// payloads are 200–300 bytes and ignore it.
	PayloadSize int
	Mode        Mode
	// MalformedFraction is the probability, in [0, 1], that a ModeJSON
	// record is malformed (invalid JSON, a type mismatch, a missing required
	// field, or trailing data) so that an assembler rejects it. Must be 0 in
	// ModeRaw, where nothing can be malformed.
	MalformedFraction float64
	// Start is the event time of the first record; each record's event time
	// is 1ms after the previous one's. Default DefaultStart.
	Start time.Time
}

func (o Options) withDefaults() Options {
	if o.Partitions == 0 {
		o.Partitions = 1
	}
	if o.PayloadSize == 0 {
		o.PayloadSize = 100
	}
	if o.Start.IsZero() {
		o.Start = DefaultStart
	}
	return o
}

func (o *Options) validate() error {
	switch {
	case o.Partitions < 0 || o.Partitions > math.MaxInt32:
		return fmt.Errorf("%w: Partitions %d", ErrInvalidOptions, o.Partitions)
	case o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0):
		return fmt.Errorf("%w: Rate %v", ErrInvalidOptions, o.Rate)
	case o.PayloadSize < 0:
		return fmt.Errorf("%w: PayloadSize %d", ErrInvalidOptions, o.PayloadSize)
	case o.Mode != ModeRaw && o.Mode != ModeJSON:
		return fmt.Errorf("%w: Mode %v", ErrInvalidOptions, o.Mode)
	case !(o.MalformedFraction >= 0 && o.MalformedFraction <= 1):
		return fmt.Errorf("%w: MalformedFraction %v not in [0, 1]", ErrInvalidOptions, o.MalformedFraction)
	case o.Mode == ModeRaw && o.MalformedFraction != 0:
		return fmt.Errorf("%w: MalformedFraction needs ModeJSON", ErrInvalidOptions)
	}
	return nil
}

// JSONSchema is the schema ModeJSON payloads follow: ten top-level fields
// including a nested struct and a list.
func JSONSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "event", Type: arrow.BinaryTypes.String},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "user", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "name", Type: arrow.BinaryTypes.String},
			arrow.Field{Name: "age", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "vip", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		)},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "count", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "sig", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
}

var (
	events = []string{"click", "view", "purchase", "signup", "logout", "search"}
	names  = []string{"ada", "grace", "linus", "barbara", "ken", "margaret", "dennis", "frances"}
	tags   = []string{"mobile", "web", "beta", "eu", "us", "returning", "new"}
)

// Generator produces records. It is not safe for concurrent use.
type Generator struct {
	opts Options
	rng  *rand.Rand

	seqs      []uint64 // last Seq per partition
	produced  uint64
	malformed uint64

	// Reused buffers: the record Next fills points into them.
	id, key, payload, scratch []byte
	pool                      []byte // random printable bytes raw payloads are cut from
	props                     map[string]string
	partNames                 []string // the "partition" property per partition
	names                     []string // Record.Partition per partition, PartitionName(p)
	last                      int      // partition of the last record Next produced
}

// PartitionName is the name of partition p in Record.Partition and
// OffsetSpan.Partition: "gen-<p>", stable across runs like a Pulsar
// topic-partition name.
func PartitionName(p int) string { return "gen-" + strconv.Itoa(p) }

// New validates opts and returns a Generator.
func New(opts Options) (*Generator, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	g := &Generator{
		opts:  opts,
		rng:   rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		seqs:  make([]uint64, opts.Partitions),
		props: map[string]string{"source": "gen", "partition": "", "mode": opts.Mode.String()},
	}
	for p := range opts.Partitions {
		g.partNames = append(g.partNames, strconv.Itoa(p))
		g.names = append(g.names, PartitionName(p))
	}
	if opts.Mode == ModeRaw {
		const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "
		g.pool = make([]byte, 4096+opts.PayloadSize)
		for i := range g.pool {
			g.pool[i] = alphabet[g.rng.IntN(len(alphabet))]
		}
	}
	return g, nil
}

// Produced is the number of records Next has returned.
func (g *Generator) Produced() uint64 { return g.produced }

// Malformed is the number of malformed records among them.
func (g *Generator) Malformed() uint64 { return g.malformed }

// Next fills rec with the next record and reports whether there was one
// (false once Options.Records have been produced). rec's ID, Key, Payload
// and Props point into buffers the Generator reuses: they are valid until
// the next call to Next and must not be modified. In steady state Next
// allocates nothing.
func (g *Generator) Next(rec *batch.Record) bool {
	if g.opts.Records > 0 && g.produced >= g.opts.Records {
		return false
	}
	p := 0
	if len(g.seqs) > 1 {
		p = g.rng.IntN(len(g.seqs))
	}
	g.seqs[p]++
	seq := g.seqs[p]
	g.last = p
	n := g.produced
	g.produced++

	g.id = binary.BigEndian.AppendUint32(g.id[:0], uint32(p))
	g.id = binary.BigEndian.AppendUint64(g.id, seq)
	g.key = strconv.AppendUint(append(g.key[:0], "key-"...), g.rng.Uint64N(1000), 10)
	ev := g.opts.Start.Add(time.Duration(n) * time.Millisecond)
	g.props["partition"] = g.partNames[p]

	*rec = batch.Record{
		Partition:   g.names[p],
		Seq:         seq,
		ID:          g.id,
		Key:         g.key,
		EventTime:   ev,
		PublishTime: ev.Add(time.Duration(g.rng.IntN(5000)) * time.Microsecond),
		Props:       g.props,
	}
	if g.opts.Mode == ModeRaw {
		off := g.rng.IntN(len(g.pool) - g.opts.PayloadSize + 1)
		rec.Payload = g.pool[off : off+g.opts.PayloadSize : off+g.opts.PayloadSize]
	} else {
		rec.Payload = g.jsonPayload(n, ev)
	}
	return true
}

// jsonPayload writes record n's JSON object into g.payload.
func (g *Generator) jsonPayload(n uint64, ev time.Time) []byte {
	r := g.rng
	malformed := g.opts.MalformedFraction > 0 && r.Float64() < g.opts.MalformedFraction
	variant := -1
	if malformed {
		g.malformed++
		variant = r.IntN(5)
	}
	b := g.payload[:0]
	b = append(b, `{"id":`...)
	if variant == 1 { // type mismatch: the id as a string
		b = append(b, '"')
		b = strconv.AppendUint(b, n, 10)
		b = append(b, '"')
	} else {
		b = strconv.AppendUint(b, n, 10)
	}
	if variant != 2 { // missing required field
		b = append(b, `,"event":"`...)
		b = append(b, events[r.IntN(len(events))]...)
		b = append(b, '"')
	}
	b = append(b, `,"ts":"`...)
	b = ev.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, `","day":"`...)
	b = ev.AppendFormat(b, time.DateOnly)
	b = append(b, `","user":{"name":"`...)
	b = append(b, names[r.IntN(len(names))]...)
	b = append(b, `","age":`...)
	if r.IntN(10) == 0 {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(18+r.IntN(70)), 10)
	}
	b = append(b, `,"vip":`...)
	b = strconv.AppendBool(b, r.IntN(4) == 0)
	b = append(b, `},"amount":`...)
	b = strconv.AppendFloat(b, float64(r.IntN(1_000_000))/100, 'f', -1, 64)
	b = append(b, `,"count":`...)
	b = strconv.AppendUint(b, r.Uint64N(1<<40), 10)
	b = append(b, `,"score":`...)
	b = strconv.AppendFloat(b, float64(float32(r.Float64())), 'g', -1, 32)
	b = append(b, `,"tags":[`...)
	for i := range r.IntN(4) {
		if i > 0 {
			b = append(b, ',')
		}
		if variant == 4 && i == 0 { // nested type mismatch
			b = append(b, "42"...)
			continue
		}
		b = append(b, '"')
		b = append(b, tags[r.IntN(len(tags))]...)
		b = append(b, '"')
	}
	if variant == 4 && len(b) > 0 && b[len(b)-1] == '[' {
		b = append(b, "42"...)
	}
	b = append(b, `],"sig":"`...)
	g.scratch = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(g.scratch[:0], r.Uint64()), r.Uint64())
	b = base64.StdEncoding.AppendEncode(b, g.scratch)
	b = append(b, `"}`...)
	switch variant {
	case 0: // invalid JSON: truncated
		b = b[:len(b)/2]
	case 3: // trailing data
		b = append(b, `}`...)
	}
	g.payload = b
	return b
}

// Run calls fn with each record until the generator is exhausted (nil), fn
// returns an error (that error), or ctx ends (ctx.Err()). With Rate > 0,
// record i is not produced before i/Rate seconds after Run started, as
// measured by the time package; Run never sleeps otherwise. The record passed
// to fn is only valid during the call. Run is synchronous and starts no
// goroutine of its own.
func (g *Generator) Run(ctx context.Context, fn func(*batch.Record) error) error {
	var rec batch.Record
	start := time.Now()
	now := start
	for i := uint64(0); ; i++ {
		if i%64 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if g.opts.Rate > 0 {
			due := start.Add(dueAfter(i, g.opts.Rate))
			if due.After(now) {
				now = time.Now()
			}
			if due.After(now) {
				if err := sleep(ctx, due.Sub(now)); err != nil {
					return err
				}
				now = time.Now()
			}
		}
		if !g.Next(&rec) {
			return nil
		}
		if err := fn(&rec); err != nil {
			return err
		}
	}
}

// dueAfter is when record i is due after the start, at rate records per
// second: i/rate rounded up to the nanosecond. Truncating instead let
// record i out up to 1ns early (record 1001 at 1000/s came out at
// 1 000 999 999 ns), which TestRunRate catches when the bubble's clock
// stands on that nanosecond.
func dueAfter(i uint64, rate float64) time.Duration {
	return time.Duration(math.Ceil(float64(i) * float64(time.Second) / rate))
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
