package instruments

import (
	"context"
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/observability"
)

type marks struct{ s, d atomic.Uint64 }

func (m *marks) Submitted() uint64 { return m.s.Load() }
func (m *marks) Delivered() uint64 { return m.d.Load() }

func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != observability.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, observability.ScopeName)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func dest(attrs attribute.Set) string {
	v, _ := attrs.Value(observability.AttrDestination)
	return v.AsString()
}

// gauge returns the value of the data point of destination d.
func gaugeInt(t *testing.T, m metricdata.Metrics, d string) int64 {
	t.Helper()
	g, ok := m.Data.(metricdata.Gauge[int64])
	if !ok {
		t.Fatalf("%s: data %T, want Gauge[int64]", m.Name, m.Data)
	}
	for _, p := range g.DataPoints {
		if dest(p.Attributes) == d {
			return p.Value
		}
	}
	t.Fatalf("%s: no point for destination %q", m.Name, d)
	return 0
}

func TestLaneMetricsEveryInstrument(t *testing.T) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(context.Background())

	var raw, cov marks
	rawM, err := NewLaneMetrics(mp, "raw", 64, &raw)
	if err != nil {
		t.Fatal(err)
	}
	covM, err := NewLaneMetrics(mp, "cov", 10, &cov)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	raw.s.Store(40)
	raw.d.Store(24)
	cov.s.Store(7)
	cov.d.Store(2)
	for _, n := range []int{1, 3, 300} {
		rawM.Burst(ctx, n)
	}
	covM.Burst(ctx, 5)
	rawM.DeliveryLatency(ctx, 2*time.Millisecond)
	rawM.DeliveryLatency(ctx, 3*time.Millisecond)
	rawM.Retry(ctx)
	rawM.Retry(ctx)
	covM.Retry(ctx)
	rawM.Poisoned(ctx, observability.CauseAckPermanent)
	rawM.Poisoned(ctx, "weird")
	covM.Poisoned(ctx, observability.CauseSendRetryable)

	got := collect(t, r)
	for _, name := range []string{observability.LaneCoalesceRatio, observability.LaneRetries, observability.LanePoisoned, observability.LanePending, observability.LaneSaturation,
		observability.LaneDeliveryLatency, observability.LaneSubmittedOffset, observability.LaneDeliveredOffset} {
		m, ok := got[name]
		if !ok {
			t.Fatalf("instrument %s not exported", name)
		}
		if want := lookup(name).Unit; m.Unit != want {
			t.Errorf("%s unit %q, want %q", name, m.Unit, want)
		}
	}

	if v := gaugeInt(t, got[observability.LanePending], "raw"); v != 16 {
		t.Errorf("raw pending = %d, want 16", v)
	}
	if v := gaugeInt(t, got[observability.LanePending], "cov"); v != 5 {
		t.Errorf("cov pending = %d, want 5", v)
	}
	if v := gaugeInt(t, got[observability.LaneSubmittedOffset], "raw"); v != 40 {
		t.Errorf("raw submitted = %d", v)
	}
	if v := gaugeInt(t, got[observability.LaneDeliveredOffset], "cov"); v != 2 {
		t.Errorf("cov delivered = %d", v)
	}
	sat := got[observability.LaneSaturation].Data.(metricdata.Gauge[float64])
	for _, p := range sat.DataPoints {
		want := map[string]float64{"raw": 16.0 / 64, "cov": 5.0 / 10}[dest(p.Attributes)]
		if p.Value != want {
			t.Errorf("saturation %s = %v, want %v", dest(p.Attributes), p.Value, want)
		}
	}

	co := got[observability.LaneCoalesceRatio].Data.(metricdata.Histogram[int64])
	for _, p := range co.DataPoints {
		switch dest(p.Attributes) {
		case "raw":
			if p.Count != 3 || p.Sum != 304 {
				t.Errorf("raw coalesce count=%d sum=%d, want 3/304", p.Count, p.Sum)
			}
		case "cov":
			if p.Count != 1 || p.Sum != 5 {
				t.Errorf("cov coalesce count=%d sum=%d", p.Count, p.Sum)
			}
		}
		if p.Attributes.Len() != 1 {
			t.Errorf("coalesce attributes %v, want destination only", p.Attributes.ToSlice())
		}
	}
	lat := got[observability.LaneDeliveryLatency].Data.(metricdata.Histogram[float64])
	if len(lat.DataPoints) != 1 || lat.DataPoints[0].Count != 2 || lat.DataPoints[0].Sum < 0.0049 || lat.DataPoints[0].Sum > 0.0051 {
		t.Errorf("latency points %+v, want one point, 2 samples summing to 5ms", lat.DataPoints)
	}
	retries := got[observability.LaneRetries].Data.(metricdata.Sum[int64])
	if !retries.IsMonotonic {
		t.Error("retries is not a monotonic counter")
	}
	for _, p := range retries.DataPoints {
		want := map[string]int64{"raw": 2, "cov": 1}[dest(p.Attributes)]
		if p.Value != want {
			t.Errorf("retries %s = %d, want %d", dest(p.Attributes), p.Value, want)
		}
	}
	poisoned := got[observability.LanePoisoned].Data.(metricdata.Sum[int64])
	seen := map[string]int64{}
	for _, p := range poisoned.DataPoints {
		c, _ := p.Attributes.Value(observability.AttrCause)
		seen[dest(p.Attributes)+"/"+c.AsString()] += p.Value
	}
	want := map[string]int64{"raw/" + observability.CauseAckPermanent: 1, "raw/weird": 1, "cov/" + observability.CauseSendRetryable: 1}
	// Every known cause has a series from the start, at zero until it happens.
	for _, d := range []string{"raw", "cov"} {
		for _, c := range observability.Causes() {
			if _, ok := want[d+"/"+c]; !ok {
				want[d+"/"+c] = 0
			}
		}
	}
	if len(seen) != len(want) {
		t.Errorf("poisoned points %v, want %v", seen, want)
	}
	for k, v := range want {
		if seen[k] != v {
			t.Errorf("poisoned %s = %d, want %d", k, seen[k], v)
		}
	}

	// Closing one lane's set removes its gauges and leaves the other's.
	if err := rawM.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rawM.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	got = collect(t, r)
	for _, p := range got[observability.LanePending].Data.(metricdata.Gauge[int64]).DataPoints {
		if dest(p.Attributes) == "raw" {
			t.Error("closed lane still reports pending")
		}
	}
	if v := gaugeInt(t, got[observability.LanePending], "cov"); v != 5 {
		t.Errorf("cov pending after raw closed = %d", v)
	}
}

func TestLaneMetricsValidation(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	defer mp.Shutdown(context.Background())
	var w marks
	for _, tc := range []struct {
		dest string
		cap  int
		w    Watermarks
		want string
	}{
		{"", 1, &w, "destination"},
		{"d", 0, &w, "capacity"},
		{"d", 1, nil, "Watermarks"},
	} {
		if _, err := NewLaneMetrics(mp, tc.dest, tc.cap, tc.w); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewLaneMetrics(%q,%d) error %v, want mention of %q", tc.dest, tc.cap, err, tc.want)
		}
	}
	if _, err := NewLaneMetrics(nil, "d", 1, &w); err == nil {
		t.Error("nil MeterProvider accepted")
	}
}

// The record paths must not allocate per call: the attribute sets are bound
// once. (The SDK itself does not allocate for an existing series either.)
func TestLaneMetricsHotPathAllocs(t *testing.T) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	var w marks
	m, err := NewLaneMetrics(mp, "raw", 8, &w)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	m.Burst(ctx, 1)
	m.DeliveryLatency(ctx, time.Millisecond)
	m.Retry(ctx)
	m.Poisoned(ctx, observability.CauseAckPermanent)
	for name, f := range map[string]func(){
		"Burst":           func() { m.Burst(ctx, 7) },
		"DeliveryLatency": func() { m.DeliveryLatency(ctx, 3*time.Millisecond) },
		"Retry":           func() { m.Retry(ctx) },
		"Poisoned":        func() { m.Poisoned(ctx, observability.CauseAckPermanent) },
	} {
		if n := testing.AllocsPerRun(200, f); n != 0 {
			t.Errorf("%s allocates %.1f per call, want 0", name, n)
		}
	}
}

func TestPipelineMetrics(t *testing.T) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(context.Background())
	p, err := NewPipelineMetrics(mp)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p.BatchFlushed(ctx, "rows", 100, 4096)
	p.BatchFlushed(ctx, "linger", 3, 512)
	p.BatchFlushed(ctx, "linger", 5, 1024)
	p.BatchFlushed(ctx, "odd", 1, 1)
	p.SourceRecords(ctx, 109)
	p.SourceAcked(ctx, 100)
	p.DLQRecords(ctx, "schema", 2)
	p.DLQRecords(ctx, "schema", 1)
	p.DLQRecords(ctx, "too_large", 1)

	got := collect(t, r)
	byAttr := func(name, key string) map[string]int64 {
		out := map[string]int64{}
		for _, dp := range got[name].Data.(metricdata.Sum[int64]).DataPoints {
			v, _ := dp.Attributes.Value(attribute.Key(key))
			out[v.AsString()] += dp.Value
		}
		return out
	}
	if f := byAttr(observability.BatchFlushes, observability.AttrReason); f["rows"] != 1 || f["linger"] != 2 || f["odd"] != 1 {
		t.Errorf("flushes by reason %v", f)
	}
	if d := byAttr(observability.DLQRecords, observability.AttrReason); d["schema"] != 3 || d["too_large"] != 1 {
		t.Errorf("dlq by reason %v", d)
	}
	if v := byAttr(observability.SourceRecords, "")[""]; v != 109 {
		t.Errorf("source records %d", v)
	}
	if v := byAttr(observability.SourceAcked, "")[""]; v != 100 {
		t.Errorf("source acked %d", v)
	}
	rows := got[observability.BatchRows].Data.(metricdata.Histogram[int64]).DataPoints[0]
	if rows.Count != 4 || rows.Sum != 109 {
		t.Errorf("rows count=%d sum=%d", rows.Count, rows.Sum)
	}
	bytes := got[observability.BatchBytes].Data.(metricdata.Histogram[int64]).DataPoints[0]
	if bytes.Count != 4 || bytes.Sum != 4096+512+1024+1 {
		t.Errorf("bytes count=%d sum=%d", bytes.Count, bytes.Sum)
	}
	if n := testing.AllocsPerRun(100, func() { p.BatchFlushed(ctx, "linger", 1, 1) }); n != 0 {
		t.Errorf("BatchFlushed allocates %.1f per call", n)
	}
	if n := testing.AllocsPerRun(100, func() { p.DLQRecords(ctx, "schema", 1) }); n != 0 {
		t.Errorf("DLQRecords allocates %.1f per call for a known reason", n)
	}
}

// Every instrument of the catalogue is served by /metrics under its
// Prometheus name: dots become underscores, units and _total are appended.
func TestPrometheusHandlerServesEveryInstrument(t *testing.T) {
	mp, h, err := observability.NewMeterProvider(observability.ProviderOptions{ServiceName: "thalweg-test", GoCollectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Shutdown(context.Background())
	// A second provider must not collide with the first (own registry each).
	mp2, _, err := observability.NewMeterProvider(observability.ProviderOptions{GoCollectors: true})
	if err != nil {
		t.Fatal("second provider:", err)
	}
	defer mp2.Shutdown(context.Background())

	var w marks
	w.s.Store(9)
	w.d.Store(4)
	lm, err := NewLaneMetrics(mp, "raw", 16, &w)
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	pm, err := NewPipelineMetrics(mp)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lm.Burst(ctx, 4)
	lm.DeliveryLatency(ctx, time.Millisecond)
	lm.Retry(ctx)
	lm.Poisoned(ctx, observability.CauseAckPermanent)
	pm.BatchFlushed(ctx, "rows", 1, 1)
	pm.SourceRecords(ctx, 1)
	pm.SourceAcked(ctx, 1)
	pm.DLQRecords(ctx, "schema", 1)
	if err := observability.RecordBuildInfo(mp, observability.Build{Version: "v1.2.3", Revision: "abc123"}); err != nil {
		t.Fatal(err)
	}
	cm, err := NewCoverageMetrics(mp, "zb", func() uint64 { return 7 })
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close()
	lm.DrainTimedOut(ctx)
	lm.IntakeBlocked(BlockLaneFull).End()
	uw, err := NewUnackedWait(mp, observability.BoundPipeline)
	if err != nil {
		t.Fatal(err)
	}
	defer uw.Close()
	uw.Begin().End()
	sl, err := NewSourceLoss(mp)
	if err != nil {
		t.Fatal(err)
	}
	sl.Discarded(ctx, "ChecksumMismatch")
	sl.Gap(ctx, observability.GapClient, 2)
	cm.Rebuilt(ctx, 3)
	cm.LiveDropped(ctx, 1)
	// The offset store's and the iceberg package's instruments, created as
	// those packages do (same names, kinds and units), so the catalogue's
	// Prometheus names are checked for them too.
	meters := map[string]metric.Meter{
		observability.OwnerOffsetStore: mp.Meter("github.com/thalweg/thalweg/offsetstore"),
		observability.OwnerIceberg:     mp.Meter("github.com/thalweg/thalweg/iceberg"),
	}
	for _, in := range observability.Instruments() {
		om, ok := meters[in.Owner]
		if !ok {
			continue
		}
		switch in.Kind {
		case observability.KindCounter:
			c, _ := om.Int64Counter(in.Name, unit(in.Name))
			c.Add(ctx, 1)
		case observability.KindHistogram:
			h, _ := om.Float64Histogram(in.Name, unit(in.Name))
			h.Record(ctx, 1)
		case observability.KindGauge:
			g, _ := om.Int64Gauge(in.Name, unit(in.Name))
			g.Record(ctx, 1)
		default:
			t.Fatalf("%s instrument %s of kind %s", in.Owner, in.Name, in.Kind)
		}
	}

	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)

	for _, in := range observability.Instruments() {
		if want := strings.ReplaceAll(in.Name, ".", "_"); !strings.HasPrefix(in.Prometheus, want) {
			t.Errorf("%s: Prometheus name %q does not start with %q", in.Name, in.Prometheus, want)
		}
		if !strings.Contains(text, "# TYPE "+in.Prometheus+" ") {
			t.Errorf("/metrics lacks family %s (instrument %s)", in.Prometheus, in.Name)
		}
		if strings.Contains(text, in.Name) {
			t.Errorf("/metrics contains the dotted name %s", in.Name)
		}
	}
	for _, line := range []string{
		`thalweg_lane_pending{destination="raw"`,
		`thalweg_lane_coverage_lag{destination="zb"`,
		`thalweg_lane_detached{destination="zb",otel_scope_name="github.com/thalweg/thalweg",otel_scope_schema_url="",otel_scope_version=""} 0`,
		`thalweg_lane_poisoned_total{cause="ack_permanent",destination="raw"`,
		`thalweg_lane_delivery_latency_seconds_bucket{destination="raw"`,
		`thalweg_lane_drain_timeouts_total{destination="raw",otel_scope_name="github.com/thalweg/thalweg",otel_scope_schema_url="",otel_scope_version=""} 1`,
		`thalweg_lane_intake_blocked_seconds_total{destination="raw",otel_scope_name="github.com/thalweg/thalweg",otel_scope_schema_url="",otel_scope_version="",reason="lane_full"}`,
		`thalweg_lane_intake_blocked_seconds_total{destination="raw",otel_scope_name="github.com/thalweg/thalweg",otel_scope_schema_url="",otel_scope_version="",reason="connecting"} 0`,
		`thalweg_lane_intake_blocked_seconds_total{destination="raw",otel_scope_name="github.com/thalweg/thalweg",otel_scope_schema_url="",otel_scope_version="",reason="rebuilding"} 0`,
		`thalweg_source_unacked_wait_seconds_total{bound="pipeline",otel_scope_name="github.com/thalweg/thalweg",otel_scope_schema_url="",otel_scope_version=""}`,
		`service_name="thalweg-test"`,
		`thalweg_build_info{go_version="` + runtime.Version() + `",otel_scope_name="github.com/thalweg/thalweg",otel_scope_schema_url="",otel_scope_version="",revision="abc123",version="v1.2.3"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(text, line) {
			t.Errorf("/metrics lacks %s", line)
		}
	}
	if len(observability.InstrumentNames()) != len(observability.Instruments()) || len(observability.Instruments()) != 48 {
		t.Errorf("catalogue has %d instruments, want 48", len(observability.Instruments()))
	}
}

// byteMarks is a lane bounded by bytes too.
type byteMarks struct {
	marks
	held, max int64
}

func (m *byteMarks) HeldBytes() int64 { return m.held }
func (m *byteMarks) MaxBytes() int64  { return m.max }

// A lane bounded by bytes as well as by batches is as saturated as the
// fuller of its two bounds.
func TestLaneSaturationByBytes(t *testing.T) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(context.Background())
	bytesFull := &byteMarks{held: 90, max: 100} // 2 of 64 batches, 90 % of the bytes
	countFull := &byteMarks{held: 10, max: 100} // 32 of 64 batches, 10 % of the bytes
	bytesFull.s.Store(2)
	countFull.s.Store(32)
	for name, w := range map[string]*byteMarks{"bytes": bytesFull, "count": countFull} {
		m, err := NewLaneMetrics(mp, name, 64, w)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
	}
	sat := collect(t, r)[observability.LaneSaturation].Data.(metricdata.Gauge[float64])
	for _, p := range sat.DataPoints {
		want := map[string]float64{"bytes": 0.9, "count": 0.5}[dest(p.Attributes)]
		if p.Value != want {
			t.Errorf("saturation %s = %v, want %v", dest(p.Attributes), p.Value, want)
		}
	}
}
