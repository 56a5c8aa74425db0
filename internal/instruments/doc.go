// Package instruments creates the OpenTelemetry instruments of thalweg's
// lanes, pipeline and Pulsar source: one instrument set per ack lane
// ([LaneMetrics]: coalescing, latency, retries, poisonings by cause, drain
// timeouts, the watermark gauges and the intake-blocked time by
// [BlockReason]), the coverage instruments of each secondary
// ([CoverageMetrics]: lag, rebuilt records, dropped live batches, detached),
// the pipeline-wide instruments of the batcher, the source and the
// dead-letter path ([PipelineMetrics]), and the time the source is held by a
// max_unacked bound ([UnackedWait]). Only thalweg's own packages (lanes,
// pipeline, source/pulsar) use it. Names, units, help texts and attribute
// keys come from the catalogue in package observability, which is what a
// user of the metrics reads; this package only creates and records them.
//
// # Invariants
//
//   - Per-lane isolation: no two lanes write through the same attribute set
//     (lanes.TestLaneIsolation).
//   - Recording on the submit and ack paths allocates nothing of this
//     package's (TestLaneMetricsHotPathAllocs).
//   - A waiting-time counter never goes back, however waits overlap
//     (TestWaitClockMonotonic).
//
// # Per-lane isolation
//
// Every lane gets its own [LaneMetrics] value with the destination attribute
// bound once at construction. Nothing in a LaneMetrics is shared with another
// lane: two lanes never write through the same attribute set, so a stalled
// secondary lane cannot mask or blend into the raw lane's series
// (docs/design.md#lane-separation).
//
// # Hot path
//
// Attribute sets are precomputed when an instrument set is built. Recording a
// measurement allocates nothing beyond what the SDK itself does; the offset
// and pending gauges are observable gauges whose callback reads the lane's
// atomics at collection time, so the submit and ack paths never touch them.
//
// # Waiting time
//
// The time intake spends blocked on a lane (thalweg.lane.intake_blocked, by
// [BlockReason]) and the time the source is held by max_unacked
// (thalweg.source.unacked_wait, [UnackedWait]) are observable counters fed by
// a wait clock: a caller that is about to block begins a [Wait] and ends it
// when it goes on, and a collection adds the elapsed part of the waits still
// in progress, so that a wait of ten minutes shows while it lasts rather than
// as one jump at its end. A caller that does not block never touches it.
//
// This package imports nothing of thalweg but observability.
//
// It stays thalweg's own: the instruments are OpenTelemetry's; what this
// package holds is which of them thalweg records, with their names and
// units.
package instruments
