package bench_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pclient "github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/pulsartest"
	"github.com/thalweg/thalweg/internal/testenv"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/pulsar"
)

// BenchmarkE2EPulsar measures end to end on the real broker, side by side in
// one run over the same pre-produced backlog (e2eRecords records of
// e2ePayload bytes on an e2ePartitions-partition topic; two subscriptions
// read it independently):
//
//	bare:   a pulsar-client-go consumer (Failover, the client's default
//	        prefetch) receiving every message and acknowledging it (grouped
//	        acks, as fast as the client allows): the source's own limit.
//	worker: the thalweg pipeline wired as `thalweg run` wires it (Pulsar
//	        source, assembler with the config defaults, raw-anchor lane to a
//	        durable Flight receiver over loopback, ordered batches (the
//	        receiver's idempotent append) and Reconcile with its positions,
//	        Pebble offset store, upstream acks after the durable commit). Its clock stops when the receiver
//	        reports every record durable (GetFlightInfo.TotalRecords): records
//	        are counted at the sink, never from the engine's counters. After
//	        the timed part the sink is read back and every producer id must be
//	        there.
//
// Metrics: bare-rec/s, worker-rec/s and worker/bare (goal >= 0.8). One
// iteration is a whole backlog; run with -benchtime=1x -count=5 and quote
// medians. ns/op covers both timed phases.
func BenchmarkE2EPulsar(b *testing.B) {
	url, admin := testenv.PulsarURL(b)
	var bare, worker time.Duration
	for range b.N {
		b.StopTimer()
		topic := e2eTopic(b, admin)
		e2eProduce(b, url, topic)
		b.StartTimer()

		bare += e2eBare(b, url, topic)
		worker += e2eWorker(b, url, topic)
	}
	n := float64(e2eRecords * b.N)
	b.ReportMetric(n/bare.Seconds(), "bare-rec/s")
	b.ReportMetric(n/worker.Seconds(), "worker-rec/s")
	b.ReportMetric(bare.Seconds()/worker.Seconds(), "worker/bare")
}

const (
	e2eRecords    = 300_000
	e2ePayload    = 100
	e2ePartitions = 4
)

// e2eHTTP deletes the benchmark topic, best effort.
var e2eHTTP = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// e2eTopic creates a fresh partitioned topic and deletes it after the benchmark.
func e2eTopic(b *testing.B, admin string) string {
	b.Helper()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	short := "thalweg-bench-e2e-" + hex.EncodeToString(rnd[:])
	path := "/admin/v2/persistent/public/default/" + short + "/partitions"
	pulsartest.Admin{URL: admin}.CreatePartitioned(b, short, e2ePartitions)
	b.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, strings.TrimRight(admin, "/")+path+"?force=true", nil)
		if resp, err := e2eHTTP.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return "persistent://public/default/" + short
}

func e2eClient(b *testing.B, url string) pclient.Client {
	b.Helper()
	c, err := pclient.NewClient(pclient.ClientOptions{URL: url, Logger: plog.DefaultNopLogger(),
		MetricsRegisterer: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// e2ePayload returns record id's payload: {"id":N,"pad":"xx…"}.
func e2ePayloadOf(id int) []byte {
	p := strconv.AppendInt([]byte(`{"id":`), int64(id), 10)
	p = append(p, `,"pad":"`...)
	for len(p) < e2ePayload-2 {
		p = append(p, 'x')
	}
	return append(p, `"}`...)
}

// e2eProduce writes records 1..e2eRecords, batched, and waits for the broker.
func e2eProduce(b *testing.B, url, topic string) {
	b.Helper()
	c := e2eClient(b, url)
	defer c.Close()
	p, err := c.CreateProducer(pclient.ProducerOptions{Topic: topic, SendTimeout: -1,
		BatchingMaxPublishDelay: 5 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	errc := make(chan error, 1)
	for id := 1; id <= e2eRecords; id++ {
		p.SendAsync(context.Background(), &pclient.ProducerMessage{Payload: e2ePayloadOf(id)},
			func(_ pclient.MessageID, _ *pclient.ProducerMessage, err error) {
				if err != nil {
					select {
					case errc <- err:
					default:
					}
				}
			})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.FlushWithCtx(ctx); err != nil {
		b.Fatal(err)
	}
	select {
	case err := <-errc:
		b.Fatalf("produce: %v", err)
	default:
	}
}

// e2eBare reads the backlog with a bare consumer and acknowledges every
// message; it returns the time from subscribing to the last acknowledgement.
func e2eBare(b *testing.B, url, topic string) time.Duration {
	b.Helper()
	c := e2eClient(b, url)
	defer c.Close()
	start := time.Now()
	cons, err := c.Subscribe(pclient.ConsumerOptions{Topic: topic, SubscriptionName: "bare",
		Type: pclient.Failover, SubscriptionInitialPosition: pclient.SubscriptionPositionEarliest})
	if err != nil {
		b.Fatal(err)
	}
	defer cons.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for range e2eRecords {
		var m pclient.ConsumerMessage
		select {
		case m = <-cons.Chan():
		case <-ctx.Done():
			b.Fatal("bare consumer: backlog not read within 5 minutes")
		}
		if err := cons.Ack(m.Message); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// e2eWorker runs the pipeline from the "thalweg" subscription to an
// in-process durable Flight receiver and returns the time from opening the
// source until the receiver holds e2eRecords records durably.
func e2eWorker(b *testing.B, url, topic string) time.Duration {
	b.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	dir := b.TempDir()
	srv, err := receiver.New(receiver.Options{Dir: dir + "/sink"})
	if err != nil {
		b.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	defer func() { _ = srv.Stop() }()
	addr := lis.Addr().String()
	path := []string{"e2e"}

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	fc := arrowflight.NewFlightServiceClient(conn)

	store, err := offsetstore.Open(dir+"/offsets", offsetstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()

	start := time.Now()
	src, err := pulsar.Open(context.Background(), pulsar.Options{
		URL: url, Topics: []string{topic}, Subscription: "thalweg", Type: pulsar.Failover,
		MaxUnacked: 262144, Positions: pulsar.StorePositions(store, "raw"),
		// As `thalweg run` wires a Failover source to a Flight anchor.
		Reconcile: func(ctx context.Context) (map[string]uint64, error) { return flight.Positions(ctx, fc, path) },
	})
	if err != nil {
		b.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Options{
		Source:    src,
		Assembler: batch.AssemblerOptions{Allocator: mem, MaxRows: 8192, MaxBytes: 8 << 20, Linger: 100 * time.Millisecond},
		Store:     store,
		Anchor: pipeline.Destination{Name: "raw", Dial: func(ctx context.Context) (lanes.Transport, error) {
			return flight.Dial(ctx, flight.Options{Endpoint: addr, Path: path, Allocator: mem, Ordered: true})
		}},
	})
	if err != nil {
		_ = src.Close()
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }()

	var elapsed time.Duration
	for {
		n, err := e2eSinkRecords(fc, path)
		if err != nil {
			cancel()
			<-ran
			b.Fatal(err)
		}
		if n >= e2eRecords {
			elapsed = time.Since(start)
			break
		}
		if time.Since(start) > 5*time.Minute {
			cancel()
			<-ran
			b.Fatalf("worker: the sink holds %d of %d records after 5 minutes", n, e2eRecords)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-ran; err != nil {
		b.Fatalf("pipeline: %v", err)
	}

	b.StopTimer()
	defer b.StartTimer()
	missing, dups, err := e2eVerify(fc, path, mem)
	if err != nil {
		b.Fatal(err)
	}
	if missing > 0 {
		b.Fatalf("worker: %d of %d records missing at the sink", missing, e2eRecords)
	}
	if dups > 0 {
		b.Logf("worker: %d duplicates at the sink", dups)
	}
	return elapsed
}

// e2eSinkRecords is the number of records the receiver holds durably in
// the dataset at path (0 before the dataset exists).
func e2eSinkRecords(fc arrowflight.FlightServiceClient, path []string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := fc.GetFlightInfo(ctx, &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: path})
	if status.Code(err) == codes.NotFound {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return info.TotalRecords, nil
}

// e2eVerify reads the sink back and counts producer ids 1..e2eRecords that
// are missing, and extra copies.
func e2eVerify(fc arrowflight.FlightServiceClient, path []string, mem memory.Allocator) (missing, dups int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stored, err := flight.ReadAll(ctx, fc, path, mem)
	if err != nil {
		return 0, 0, err
	}
	defer flight.ReleaseAll(stored)
	seen := make([]uint8, e2eRecords+1)
	for _, s := range stored {
		idx := s.Rec.Schema().FieldIndices("payload")
		if len(idx) != 1 {
			return 0, 0, fmt.Errorf("no payload column in %s", s.Rec.Schema())
		}
		col, ok := s.Rec.Column(idx[0]).(*array.Binary)
		if !ok {
			return 0, 0, errors.New("payload column is not binary")
		}
		for i := range col.Len() {
			var v struct {
				ID int `json:"id"`
			}
			if err := json.Unmarshal(col.Value(i), &v); err != nil || v.ID < 1 || v.ID > e2eRecords {
				return 0, 0, fmt.Errorf("payload %q: not a producer record (%v)", col.Value(i), err)
			}
			if seen[v.ID] < 255 {
				seen[v.ID]++
			}
		}
	}
	for _, c := range seen[1:] {
		switch {
		case c == 0:
			missing++
		case c > 1:
			dups += int(c) - 1
		}
	}
	return missing, dups, nil
}
