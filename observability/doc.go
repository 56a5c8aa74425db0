// Package observability is what a user of thalweg's metrics needs: the
// meter provider with its Prometheus /metrics handler ([NewMeterProvider]),
// the process-wide thalweg.build_info gauge ([RecordBuildInfo]), and the
// catalogue of every thalweg instrument ([Instruments]: names, kinds, units,
// attributes, the Prometheus name each is served under, and the package that
// creates it), with the attribute keys and the values a runbook branches on
// ([Causes], the Bound* constants). thalweg's own packages create the
// instruments of the lanes, the pipeline and the source through
// internal/instruments; the offset store creates its own.
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
// This package imports nothing else of thalweg.
package observability
