package main

import (
	"fmt"
	"strings"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/zerobus"
)

// The worker's memory bound (docs/operations.md#memory): what the heap can
// hold at most, as a sum of terms each computed from the config, so that an
// operator can size the container from `thalweg validate` and the worker
// can derive its GC memory limit from the same figure (gc.go).

const (
	// memRuntimeBase is the fixed part: the Go runtime, goroutine stacks,
	// the gRPC connections, the OpenTelemetry SDK and the offset store's
	// Pebble instance (its default 8 MiB block cache and two 4 MiB
	// memtables). Measured: `thalweg run` with a generator at 100
	// records/s and two destinations sits at 58 MiB RSS.
	memRuntimeBase = 64 << 20
	// memBinary is the thalweg binary's code and read-only data, which the
	// kernel maps from its file: every page of it may be resident (in the
	// long Iceberg run all 84 MiB of linux/amd64's were, most in huge
	// pages), and the Go memory limit does not govern it (gc.go). It is
	// the binary's file-backed loadable segments and room for them to grow;
	// TestBinaryWithinMemoryTerm holds it.
	memBinary = 96 << 20
	// memAssumedMessage is the mean Pulsar message size assumed for the
	// client's receiver queue: the config bounds no message size.
	memAssumedMessage = 1 << 10
)

// memTerm is one term of the bound.
type memTerm struct {
	Name    string   // what it counts, e.g. "lane raw"
	Formula string   // how, in the config's figures
	Keys    []string // the configuration keys it depends on
	Bytes   int64
}

// memBound is the bound: its terms and their sum.
type memBound struct {
	Terms []memTerm
	Total int64
}

func (m *memBound) add(name string, bytes int64, formula string, keys ...string) {
	m.Terms = append(m.Terms, memTerm{Name: name, Formula: formula, Keys: keys, Bytes: bytes})
	m.Total += bytes
}

// batchBytes is the memory of one batch at batching.max_bytes.
func batchBytes(cfg *config.Config) int64 { return batch.BatchMemory(int64(cfg.Batching.MaxBytes)) }

// times renders how many times of unit the term n is, for a formula.
func times(n, unit int64) int64 { return n / max(unit, 1) }

// memoryBound computes the bound of cfg (a loaded, valid config). Batches
// are shared by reference between the anchor lane and the secondaries'
// queues, so the bound counts each place a batch can be held and is an
// upper bound, not an estimate: a healthy pipeline holds a fraction of it.
// The terms that depend on a destination name it.
func memoryBound(cfg *config.Config) memBound {
	var m memBound
	b := batchBytes(cfg)
	bs := mib(b)
	m.add("runtime base", memRuntimeBase, "fixed (Go runtime, gRPC, metrics, offset store)")
	m.add("binary", memBinary, "fixed (the thalweg binary's code and read-only data, mapped from its file)")
	asm := batch.AssemblerMemory(b)
	m.add("assembler", asm, fmt.Sprintf("%d × batch %s (the batch being built + its buffer pool of %d)", times(asm, b), bs, times(asm, b)-1), "batching.max_bytes")
	if cfg.Source.Kind == config.SourcePulsar {
		topics := max(1, len(cfg.Source.Topics)+btoi(cfg.Source.TopicsPattern != ""))
		m.add("pulsar receiver queue", int64(cfg.Source.ReceiverQueueSize)*int64(topics)*memAssumedMessage,
			fmt.Sprintf("receiver_queue_size %d × %d topic(s) × 1KiB assumed per message (no message size bound in the config; count a partitioned topic once per partition)",
				cfg.Source.ReceiverQueueSize, topics),
			"source.receiver_queue_size", "source.topics", "source.topics_pattern")
		// pulsar.Options.ChannelSize: one batch of records between the
		// client's partitions and the source loop.
		m.add("pulsar channel", int64(cfg.Batching.MaxRows)*memAssumedMessage,
			fmt.Sprintf("max_rows %d × 1KiB assumed per message (the channel in front of the source loop)", cfg.Batching.MaxRows),
			"batching.max_rows")
	}
	for i := range cfg.Destinations {
		d := &cfg.Destinations[i]
		capa, maxb := int64(d.Lane.Capacity), int64(d.Lane.MaxBytes)
		held := lanes.HeldMemory(int(capa), maxb, b)
		heldFormula := fmt.Sprintf("min(capacity %d × batch %s, max(max_bytes %s, batch))", capa, bs, mib(maxb))
		if d.Kind == config.KindIceberg {
			// A batch leaves the lane when the snapshot commit that covers
			// it succeeds: what waits for a commit is in the lane.
			heldFormula += " (batches wait here for the commit that covers them)"
		}
		m.add("lane "+d.Name, held, heldFormula,
			"destinations[].lane.capacity", "destinations[].lane.max_bytes", "batching.max_bytes")
		if d.Role != config.RoleRawAnchor {
			// pipeline.Destination.Queue and QueueBytes: their defaults
			// are the only values the config gives.
			q := pipeline.QueueMemory(int(capa), maxb, b)
			f := pipeline.DefaultQueueFactor
			m.add("queue "+d.Name, q,
				fmt.Sprintf("min(%d × capacity %d × batch %s, max(%d × max_bytes %s, batch)) (secondary queue)", f, capa, bs, f, mib(maxb)),
				"destinations[].lane.capacity", "destinations[].lane.max_bytes", "batching.max_bytes")
			cu := pipeline.CatchUpMemory(b)
			m.add("catch-up "+d.Name, cu, fmt.Sprintf("%d × batch %s (one batch read back from the raw anchor)", times(cu, b), bs), "batching.max_bytes")
		}
		if d.Kind == config.KindZerobus {
			mode := zerobus.ModeEphemeral
			if d.Mode == config.ZerobusFlight {
				mode = zerobus.ModeFlight
			}
			// The frames kept grow with the batches the lane holds.
			if kept := zerobus.RetainedBound(mode, zerobus.EncodingJSON, held); kept > 0 {
				m.add("zerobus frames "+d.Name, kept,
					fmt.Sprintf("%d × the lane's %s (JSON encoding of its batches, kept until written)", kept/held, mib(held)),
					"destinations[].lane.capacity", "destinations[].lane.max_bytes", "batching.max_bytes", "destinations[].mode")
			}
		}
		if d.Kind == config.KindIceberg {
			partitioned := len(d.Iceberg.PartitionBy) > 0
			// iceberg.DefaultEncoders is min(GOMAXPROCS, MaxEncoders): the
			// bound counts the most, whatever the cores of the host.
			w := iceberg.WriteMemory(b, partitioned, iceberg.MaxEncoders)
			what := "a batch converted to the table's types, and its encoded Parquet pages"
			if partitioned {
				what += ", and the rows of the one partition value being written (one data file open at a time)"
			}
			formula := fmt.Sprintf("%d × batch %s (%s, by each of up to %d encoders at once)", times(w, b), bs, what, iceberg.MaxEncoders)
			if iceberg.IsTemplate(d.Iceberg.Table) {
				// The tables' encoders (one per table) encode in parallel,
				// each a part of a batch the lane holds, copied by the
				// Router.
				w = iceberg.RoutedWriteMemory(held, partitioned)
				formula = fmt.Sprintf("%d × the lane's %s (%s, by every table's encoder at once, each a part of a batch the lane holds; and those parts, copied per table: table template)",
					times(w, held), mib(held), what)
			}
			m.add("iceberg write "+d.Name, w, formula,
				"batching.max_bytes", "destinations[].iceberg.partition_by", "destinations[].iceberg.table",
				"destinations[].lane.capacity", "destinations[].lane.max_bytes")
			m.addIcebergMetadata(d)
			// iceberg.Options.Ordered, as icebergOptions sets it.
			if kept := iceberg.RetainedMemory(d.Role == config.RoleRawAnchor && orderedSource(cfg), held); kept > 0 {
				m.add("iceberg retained "+d.Name, kept,
					"the lane's "+mib(held)+" again (an ordered anchor keeps the rows of each batch until its commit, to write them again without what another worker committed first)",
					"destinations[].lane.capacity", "destinations[].lane.max_bytes", "batching.max_bytes", "source.subscription.type")
			}
			continue
		}
		msg := b
		if mm := int64(d.MaxMessageSize); mm > 0 && mm < msg {
			msg = mm
		}
		compressed := d.Compression != config.CompressionNone && d.Compression != ""
		switch {
		case d.Kind == config.KindZerobus && d.Mode != config.ZerobusFlight:
			send := zerobus.SendMemory(zerobus.ModeEphemeral, msg)
			m.add("send "+d.Name, send,
				fmt.Sprintf("%d × min(batch, max_message_size) %s (copies on the way to the socket)", times(send, msg), mib(msg)),
				"batching.max_bytes", "destinations[].max_message_size")
		case compressed:
			m.add("send "+d.Name, flightwire.SendMemory(true, msg),
				fmt.Sprintf("min(batch, max_message_size) %s (the compressed body) + %dKiB gRPC write buffer", mib(msg), flightwire.WriteBufferSize>>10),
				"batching.max_bytes", "destinations[].max_message_size", "destinations[].compression", "destinations[].mode")
		default:
			m.add("send "+d.Name, flightwire.SendMemory(false, msg),
				fmt.Sprintf("%dKiB gRPC write buffer (the body is sent from the batch's own buffers)", flightwire.WriteBufferSize>>10),
				"destinations[].compression", "destinations[].mode")
		}
	}
	batches := m.Total - memRuntimeBase - memBinary
	m.add(memHeadroomTerm, batches*memLimitHeadroomPct/100,
		fmt.Sprintf("%d%% of the terms above but the runtime base and the binary, %s (room for the collector to work near them without collecting continuously)",
			memLimitHeadroomPct, mib(batches)))
	return m
}

// memHeadroomTerm names the term of the collector's room (gc.go), which
// moves with every term of batches.
const memHeadroomTerm = "GC headroom"

// addIcebergMetadata adds the term of what d's table metadata holds: the
// snapshots the table retains under d's maintenance, in the copies a
// commit holds at once.
func (m *memBound) addIcebergMetadata(d *config.DestinationConfig) {
	ic, mo := &d.Iceberg, &d.Iceberg.Maintenance
	snaps := iceberg.RetainedSnapshots(ic.CommitInterval, iceberg.MaintenanceOptions{Disabled: !mo.Enabled,
		Interval: mo.Interval, SnapshotMaxAge: mo.SnapshotMaxAge, MinSnapshots: mo.MinSnapshots, Timeout: mo.Timeout})
	bytes := iceberg.MetadataMemory(snaps)
	per := fmt.Sprintf("%d copies × %d snapshots × %dKiB assumed per snapshot", bytes/(snaps*iceberg.SnapshotMemory), snaps, iceberg.SnapshotMemory>>10)
	why := fmt.Sprintf("the commits of 5/4 × snapshot_max_age %v + interval %v + timeout %v every commit_interval %v, and a compaction every interval; at least min_snapshots %d",
		mo.SnapshotMaxAge, mo.Interval, mo.Timeout, ic.CommitInterval, mo.MinSnapshots)
	if !mo.Enabled {
		why = fmt.Sprintf("maintenance off: the table keeps every snapshot; one day of commits every commit_interval %v, growing with the run", ic.CommitInterval)
	}
	of := "of one worker: N workers on the table, N times"
	if iceberg.IsTemplate(ic.Table) {
		// Every table of a template has its own Sink and its own metadata;
		// how many there are is known only at run time.
		of = "of one table of the template " + ic.Table + " and one worker: T tables open (one per topic routed to its own), T times; N workers, N times"
	}
	m.add("iceberg metadata "+d.Name, bytes, per+" ("+why+"; "+of+")",
		"destinations[].iceberg.commit_interval", "destinations[].iceberg.maintenance.enabled",
		"destinations[].iceberg.maintenance.snapshot_max_age", "destinations[].iceberg.maintenance.interval",
		"destinations[].iceberg.maintenance.timeout", "destinations[].iceberg.maintenance.min_snapshots")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mib renders n in MiB with one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20)) }

// print writes one line per term and the total, aligned.
func (m memBound) print(sb *strings.Builder) {
	w := len("total")
	for _, t := range m.Terms {
		w = max(w, len(t.Name))
	}
	fmt.Fprintf(sb, "memory bound (docs/operations.md#memory):\n")
	for _, t := range m.Terms {
		fmt.Fprintf(sb, "  %-*s %10s  %s\n", w, t.Name, mib(t.Bytes), t.Formula)
	}
	fmt.Fprintf(sb, "  %-*s %10s  GC memory limit at run: %s unless GOMEMLIMIT is set\n", w, "total", mib(m.Total),
		mib(memoryLimit(m.Total)))
}
