package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// otlpSink is a minimal OTLP metrics receiver: it records the metric names
// and the x-tenant header of every export it is sent.
type otlpSink struct {
	mu      sync.Mutex
	names   map[string]bool
	tenants map[string]bool
	exports int
}

func newOTLPSink() *otlpSink {
	return &otlpSink{names: map[string]bool{}, tenants: map[string]bool{}}
}

func (s *otlpSink) record(req *collectormetrics.ExportMetricsServiceRequest, tenant string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tenants[tenant] = true
	s.exports++
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				s.names[m.GetName()] = true
			}
		}
	}
}

func (s *otlpSink) has(names ...string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		if !s.names[n] {
			return false
		}
	}
	return true
}

func (s *otlpSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exports
}

func (s *otlpSink) tenant(v string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tenants[v]
}

// grpcMetrics serves the OTLP/gRPC MetricsService into s.
type grpcMetrics struct {
	collectormetrics.UnimplementedMetricsServiceServer
	s *otlpSink
}

func (g grpcMetrics) Export(ctx context.Context, req *collectormetrics.ExportMetricsServiceRequest) (*collectormetrics.ExportMetricsServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	g.s.record(req, strings.Join(md.Get("x-tenant"), ","))
	return &collectormetrics.ExportMetricsServiceResponse{}, nil
}

// startOTLP starts a receiver for protocol (grpc or http) on loopback and
// returns its host:port.
func startOTLP(t *testing.T, protocol string, s *otlpSink) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	switch protocol {
	case "grpc":
		srv := grpc.NewServer()
		collectormetrics.RegisterMetricsServiceServer(srv, grpcMetrics{s: s})
		done := make(chan struct{})
		go func() { defer close(done); _ = srv.Serve(lis) }()
		t.Cleanup(func() { srv.Stop(); <-done })
	default:
		mux := http.NewServeMux()
		mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			var req collectormetrics.ExportMetricsServiceRequest
			if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
				http.Error(w, "bad export", http.StatusBadRequest)
				return
			}
			s.record(&req, r.Header.Get("X-Tenant"))
			out, _ := proto.Marshal(&collectormetrics.ExportMetricsServiceResponse{})
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(out)
		})
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		done := make(chan struct{})
		go func() { defer close(done); _ = srv.Serve(lis) }()
		t.Cleanup(func() { _ = srv.Close(); <-done })
	}
	return lis.Addr().String()
}

// metrics.otlp pushes thalweg's metrics to an OTLP collector over gRPC and
// over HTTP, with the configured headers, on the configured interval.
func TestRunExportsOTLP(t *testing.T) {
	flightAt := startFlight(t, receiver.Options{})
	for _, protocol := range []string{"grpc", "http"} {
		t.Run(protocol, func(t *testing.T) {
			sink := newOTLPSink()
			at := startOTLP(t, protocol, sink)
			cfg := pipelineYAML{Partitions: 1, Rate: 500, FlightAt: flightAt, StoreDir: filepath.Join(t.TempDir(), "offsets"),
				Metrics: "127.0.0.1:0"}.write(t)
			cfg = writeConfig(t, strings.Replace(readFile(t, cfg), "metrics:\n", `metrics:
  otlp:
    endpoint: "`+at+`"
    protocol: `+protocol+`
    insecure: true
    headers: {x-tenant: thalweg-test}
    interval: 200ms
`, 1))
			r, _ := startInProcess(t, cfg)
			testenv.WaitFor(t, 20*time.Second, "thalweg's metrics at the OTLP receiver", func() bool {
				return sink.has("thalweg.source.records", "thalweg.lane.delivered_offset", "thalweg.build_info",
					"thalweg.offsetstore.syncs")
			})
			if !sink.tenant("thalweg-test") {
				t.Error("the export did not carry metrics.otlp.headers")
			}
			// metrics.otlp.interval (200ms, against the 30s default) sets the pace.
			from := sink.count()
			testenv.WaitFor(t, 3*time.Second, "3 more exports at a 200ms interval", func() bool { return sink.count() >= from+3 })
			if code := r.stop(t); code != exitOK {
				t.Fatalf("exit %d:\n%s", code, r.c.stderr.String())
			}
		})
	}
}

// A collector that is not there does not stop the worker from starting,
// serving or stopping in bounded time, and its failures do not flood the log.
func TestRunOTLPCollectorDown(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := lis.Addr().String()
	lis.Close()
	flightAt := startFlight(t, receiver.Options{})
	for _, protocol := range []string{"grpc", "http"} {
		t.Run(protocol, func(t *testing.T) {
			cfg := pipelineYAML{Partitions: 1, Rate: 500, FlightAt: flightAt, StoreDir: filepath.Join(t.TempDir(), "offsets"),
				Metrics: "127.0.0.1:0"}.write(t)
			cfg = writeConfig(t, strings.Replace(readFile(t, cfg), "metrics:\n", "metrics:\n  otlp: {endpoint: \""+down+
				"\", protocol: "+protocol+", insecure: true, interval: 100ms}\n", 1))
			var failed atomic.Int64
			count := func(err error) {
				if err != nil {
					failed.Add(1)
				}
			}
			testOTLPExported.Store(&count)
			defer testOTLPExported.Store(nil)
			r, base := startInProcess(t, cfg)
			testenv.WaitFor(t, 10*time.Second, "/readyz 200", func() bool { return httpStatus(t, base+"/readyz") == http.StatusOK })
			testenv.WaitFor(t, 10*time.Second, "5 failed exports", func() bool { return failed.Load() >= 5 })
			started := time.Now()
			if code := r.stop(t); code != exitOK {
				t.Fatalf("exit %d:\n%s", code, r.c.stderr.String())
			}
			if d := time.Since(started); d > 15*time.Second {
				t.Errorf("stopping with the collector down took %v", d)
			}
			if n := strings.Count(r.c.stderr.String(), "OTLP metric export failing"); n != 1 {
				t.Errorf("%d export failure lines for one outage, want 1:\n%s", n, r.c.stderr.String())
			}
			if !strings.Contains(r.c.stderr.String(), "connection refused") {
				t.Errorf("the failure line does not give the cause:\n%s", r.c.stderr.String())
			}
			t.Logf("stop took %v", time.Since(started))
		})
	}
}
