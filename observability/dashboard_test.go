package observability_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/thalweg/thalweg/observability"
)

const dashboardPath = "../dashboards/thalweg.json"

// dashboard is the part of the Grafana dashboard model the test reads.
type dashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Definition string          `json:"definition"`
			Datasource *datasource     `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	Targets    []struct {
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // collapsed rows nest their panels
}

func loadDashboard(t *testing.T) *dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	return &d
}

// query is one PromQL expression of the dashboard and where it is.
type query struct{ where, expr string }

func (d *dashboard) queries(t *testing.T) []query {
	t.Helper()
	var out []query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				out = append(out, query{"panel " + p.Title, tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		// The query is either a string or {"query": "..."}, by Grafana version.
		var s string
		if json.Unmarshal(v.Query, &s) != nil {
			var obj struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &obj); err != nil {
				t.Fatalf("variable %s: query %s: %v", v.Name, v.Query, err)
			}
			s = obj.Query
		}
		out = append(out, query{"variable " + v.Name, s}, query{"variable " + v.Name + " definition", v.Definition})
	}
	return out
}

var (
	metricName = regexp.MustCompile(`thalweg_[a-z_]+`)
	// A range function applied directly to a series selector.
	rangeFunc = regexp.MustCompile(`\b(rate|irate|increase)\(\s*(thalweg_[a-z_]+)`)
	// histogram_quantile's argument must contain a _bucket series.
	quantile = regexp.MustCompile(`histogram_quantile\(\s*[0-9.]+\s*,`)
	// A series selector: a metric name and its matchers, if any.
	selector = regexp.MustCompile(`(thalweg_[a-z_]+)(\{[^}]*\})?`)
	// An aggregation and its by clause, if any.
	aggregation = regexp.MustCompile(`\b(sum|max|min|avg|count)\s*(by\s*\(([^)]*)\))?\s*\(`)
)

// series maps every series name the worker exports to its instrument:
// the family name, and for histograms its _bucket, _sum and _count series
// (the family name itself is not a series of a histogram).
func series() map[string]observability.Instrument {
	m := map[string]observability.Instrument{}
	for _, in := range observability.Instruments() {
		if in.Kind == observability.KindHistogram {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				m[in.Prometheus+suffix] = in
			}
			continue
		}
		m[in.Prometheus] = in
	}
	return m
}

// Every metric the dashboard queries is one the worker exports, under the
// name the Prometheus exporter serves (observability.Instruments); every
// lane and Iceberg instrument is on the dashboard, and the Iceberg panels
// follow the destination and table variables and keep tables apart.
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	d := loadDashboard(t)
	exported := series()
	used := map[string]bool{} // OpenTelemetry names
	qs := d.queries(t)
	if len(qs) < 20 {
		t.Fatalf("the dashboard has only %d queries", len(qs))
	}
	for _, q := range qs {
		if strings.TrimSpace(q.expr) == "" {
			t.Errorf("%s: empty query", q.where)
			continue
		}
		names := metricName.FindAllString(q.expr, -1)
		if len(names) == 0 {
			t.Errorf("%s: no thalweg metric in %q", q.where, q.expr)
		}
		for _, n := range names {
			in, ok := exported[n]
			if !ok {
				t.Errorf("%s: %s is not a series the worker exports (expr %q)", q.where, n, q.expr)
				continue
			}
			used[in.Name] = true
		}
		// rate/increase only over counters and histogram series: a rate
		// of a gauge is a silent nonsense graph.
		for _, m := range rangeFunc.FindAllStringSubmatch(q.expr, -1) {
			if in, ok := exported[m[2]]; ok && in.Kind == observability.KindGauge {
				t.Errorf("%s: %s(%s) over a gauge", q.where, m[1], m[2])
			}
		}
		if quantile.MatchString(q.expr) && !strings.Contains(q.expr, "_bucket") {
			t.Errorf("%s: histogram_quantile without a _bucket series: %q", q.where, q.expr)
		}
		// Several workers: every panel follows the job and instance
		// variables, and no aggregation adds different workers' series up.
		if !strings.HasPrefix(q.where, "variable") {
			for _, m := range selector.FindAllStringSubmatch(q.expr, -1) {
				if !strings.Contains(m[2], `job=~"$job"`) || !strings.Contains(m[2], `instance=~"$instance"`) {
					t.Errorf("%s: %s ignores $job or $instance: %q", q.where, m[1], q.expr)
				}
			}
			for _, m := range aggregation.FindAllStringSubmatch(q.expr, -1) {
				if !regexp.MustCompile(`\binstance\b`).MatchString(m[3]) {
					t.Errorf("%s: %s without \"by (instance, ...)\" adds several workers' series up: %q", q.where, m[1], q.expr)
				}
			}
		}
		// Lane panels follow the destination variable.
		if strings.Contains(q.expr, "thalweg_lane_") && !strings.HasPrefix(q.where, "variable") &&
			!strings.Contains(q.expr, `destination=~"$destination"`) {
			t.Errorf("%s: lane query ignores $destination: %q", q.where, q.expr)
		}
		// Iceberg panels follow the destination and table variables, and
		// keep the tables apart.
		if strings.Contains(q.expr, "thalweg_iceberg_") && !strings.HasPrefix(q.where, "variable") {
			for _, m := range selector.FindAllStringSubmatch(q.expr, -1) {
				if !strings.Contains(m[2], `destination=~"$destination"`) || !strings.Contains(m[2], `table=~"$table"`) {
					t.Errorf("%s: %s ignores $destination or $table: %q", q.where, m[1], q.expr)
				}
			}
			for _, m := range aggregation.FindAllStringSubmatch(q.expr, -1) {
				if !regexp.MustCompile(`\btable\b`).MatchString(m[3]) {
					t.Errorf("%s: %s without \"by (..., table)\" adds tables up: %q", q.where, m[1], q.expr)
				}
			}
		}
	}
	for _, in := range observability.Instruments() {
		if (strings.HasPrefix(in.Name, "thalweg.lane.") || in.Owner == observability.OwnerIceberg) && !used[in.Name] {
			t.Errorf("%s instrument %s (%s) is on no panel", in.Owner, in.Name, in.Prometheus)
		}
	}
	// The brief's panels beyond the lanes.
	for _, name := range []string{observability.BatchFlushes, observability.DLQRecords,
		observability.OffsetStoreCommitLatency, observability.OffsetStoreSyncs, observability.SourceAckErrors,
		observability.SourceUnackedWait} {
		if !used[name] {
			t.Errorf("instrument %s is on no panel", name)
		}
	}
}

// The dashboard is portable: every panel and query uses the Prometheus
// datasource variable, and the destination variable exists.
func TestDashboardVariables(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Error("dashboard without uid or title")
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		if v.Name == "datasource" && string(v.Query) != `"prometheus"` {
			t.Errorf("datasource variable queries %s, want \"prometheus\"", v.Query)
		}
		if v.Type == "query" && (v.Datasource == nil || v.Datasource.UID != "${datasource}") {
			t.Errorf("variable %s does not use ${datasource}", v.Name)
		}
	}
	if vars["datasource"] != "datasource" {
		t.Errorf("no datasource variable of type datasource: %v", vars)
	}
	for _, name := range []string{"job", "instance", "destination", "table"} {
		if vars[name] != "query" {
			t.Errorf("no %s query variable: %v", name, vars)
		}
	}
	// Each variable offers only the values under the ones before it.
	for _, q := range d.queries(t) {
		switch q.where {
		case "variable instance":
			if !strings.Contains(q.expr, `job=~"$job"`) {
				t.Errorf("instance variable ignores $job: %q", q.expr)
			}
		case "variable table":
			if !strings.Contains(q.expr, `job=~"$job"`) || !strings.Contains(q.expr, `instance=~"$instance"`) ||
				!strings.Contains(q.expr, `destination=~"$destination"`) {
				t.Errorf("table variable ignores $job, $instance or $destination: %q", q.expr)
			}
		case "variable destination":
			if !strings.Contains(q.expr, `job=~"$job"`) || !strings.Contains(q.expr, `instance=~"$instance"`) {
				t.Errorf("destination variable ignores $job or $instance: %q", q.expr)
			}
		}
	}
	ids := map[int]string{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if prev, dup := ids[p.ID]; dup {
				t.Errorf("panels %q and %q share id %d", prev, p.Title, p.ID)
			}
			ids[p.ID] = p.Title
			if p.Type != "row" && (p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}") {
				t.Errorf("panel %q does not use the ${datasource} variable", p.Title)
			}
			for _, tg := range p.Targets {
				if tg.Datasource != nil && tg.Datasource.UID != "${datasource}" {
					t.Errorf("panel %q has a target with datasource %q", p.Title, tg.Datasource.UID)
				}
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
}

// The panels of the cause-separating signals keep their causes apart: the
// intake-blocked time is shown per reason (a slow sink's lane_full next to a
// broken lane's connecting/rebuilding, never summed into one line), the
// source's max_unacked wait per bound, and each has a panel of its own
// whose title names it.
func TestDashboardSeparatesCauses(t *testing.T) {
	d := loadDashboard(t)
	want := map[string]struct{ by, title string }{
		"thalweg_lane_intake_blocked_seconds_total": {"reason", "Intake blocked"},
		"thalweg_source_unacked_wait_seconds_total": {"bound", "max_unacked"},
		"thalweg_lane_drain_timeouts_total":         {"destination", "Drain timeouts"},
	}
	found := map[string]bool{}
	for _, q := range d.queries(t) {
		for series, w := range want {
			if !strings.Contains(q.expr, series) {
				continue
			}
			found[series] = true
			if !strings.Contains(q.where, w.title) {
				t.Errorf("%s is queried in %s, whose title does not name it (%q)", series, q.where, w.title)
			}
			for _, m := range aggregation.FindAllStringSubmatch(q.expr, -1) {
				if !regexp.MustCompile(`\b` + w.by + `\b`).MatchString(m[3]) {
					t.Errorf("%s: %s without \"by (%s)\" merges what the signal separates: %q", q.where, m[1], w.by, q.expr)
				}
			}
		}
	}
	for series := range want {
		if !found[series] {
			t.Errorf("no panel shows %s", series)
		}
	}
}
