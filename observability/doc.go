// Package observability builds thalweg's OpenTelemetry metrics: the meter
// provider with its Prometheus /metrics handler, one instrument set per ack
// lane, the pipeline-wide instruments of the batcher, the source and the
// dead-letter path, the process-wide thalweg.build_info gauge
// ([RecordBuildInfo]), and the catalogue of every thalweg instrument
// (including the offset store's, which package offsetstore creates itself).
//
// # Names
//
// Instrument names are OpenTelemetry names ("thalweg.lane.pending"; docs/design.md#metrics).
// The Prometheus exporter turns the dots into underscores and appends the
// unit and counter suffixes ("thalweg_lane_retries_total",
// "thalweg_lane_delivery_latency_seconds"); [Instruments] lists every
// instrument with the name Prometheus serves it under, so dashboards and
// alerts can be checked against it.
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
// This package imports nothing else of thalweg.
package observability
