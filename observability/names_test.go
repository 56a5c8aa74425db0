package observability

import (
	"slices"
	"testing"
)

// The catalogue describes the new signals as the exporter serves them.
func TestSignalInstrumentsCatalogue(t *testing.T) {
	for _, want := range []Instrument{
		{LaneDrainTimeouts, KindCounter, "{event}", []string{AttrDestination}, "thalweg_lane_drain_timeouts_total", "", OwnerObservability},
		{LaneIntakeBlocked, KindCounter, "s", []string{AttrDestination, AttrReason}, "thalweg_lane_intake_blocked_seconds_total", "", OwnerObservability},
		{SourceUnackedWait, KindCounter, "s", []string{AttrBound}, "thalweg_source_unacked_wait_seconds_total", "", OwnerObservability},
	} {
		got := lookup(want.Name)
		if got.Kind != want.Kind || got.Unit != want.Unit || !slices.Equal(got.Attributes, want.Attributes) ||
			got.Prometheus != want.Prometheus || got.Owner != want.Owner || got.Help == "" {
			t.Errorf("%s: catalogue %+v, want %+v (with a help text)", want.Name, got, want)
		}
	}
}
