package pipeline

import (
	"context"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric/noop"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/lanes"
)

// Every LaneOptions field reaches the lane's field of the same name, and the
// fields the pipeline owns come from the pipeline, so nothing a user sets is
// overwritten and nothing is dropped: a field added to LaneOptions but not
// mapped fails here.
func TestLaneOptionsReachTheLane(t *testing.T) {
	var confirmed, changed bool
	in := LaneOptions{
		Capacity:      7,
		MaxBytes:      9 << 20,
		Backoff:       lanes.Backoff{Initial: time.Millisecond, Max: time.Second},
		MaxRetries:    -1,
		AckTimeout:    3 * time.Second,
		OnConfirm:     func(uint64, []batch.OffsetSpan) { confirmed = true },
		OnStateChange: func(lanes.StateChange) { changed = true },
	}
	dial := func(context.Context) (lanes.Transport, error) { return nil, nil }
	com := newCoverageGate("d", nil)
	mp := noop.NewMeterProvider()
	log := slog.New(slog.DiscardHandler)
	out := in.lanesOptions(Destination{Name: "d", Dial: dial}, com, mp, log)

	iv, ov := reflect.ValueOf(in), reflect.ValueOf(out)
	for i := range iv.NumField() {
		f := iv.Type().Field(i)
		of := ov.FieldByName(f.Name)
		if !of.IsValid() {
			t.Fatalf("LaneOptions.%s has no lanes.Options field of that name", f.Name)
		}
		if f.Type.Kind() == reflect.Func {
			if of.IsNil() {
				t.Errorf("LaneOptions.%s did not reach the lane", f.Name)
			}
			continue
		}
		if !reflect.DeepEqual(iv.Field(i).Interface(), of.Interface()) {
			t.Errorf("lanes.Options.%s = %v, want %v", f.Name, of.Interface(), iv.Field(i).Interface())
		}
	}
	out.OnConfirm(1, nil)
	out.OnStateChange(lanes.StateChange{})
	if !confirmed || !changed {
		t.Errorf("callbacks not the user's: OnConfirm %v, OnStateChange %v", confirmed, changed)
	}
	if out.Destination != "d" || out.Dial == nil || out.Committer != com || out.MeterProvider != mp || out.Logger != log {
		t.Errorf("pipeline-owned fields not set from the pipeline: %+v", out)
	}
}
