package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
	zbserver "github.com/thalweg/thalweg/zerobus/server"
)

const (
	demoTable        = "main.thalweg.demo"
	demoIcebergTable = "demo.raw"
)

// demoSetup is what `thalweg demo` runs against: the bundled servers,
// in-process on loopback, and the config that points the pipeline at them.
type demoSetup struct {
	cfg      *config.Config
	flight   *receiver.Server // nil with the Iceberg anchor
	flightAt string
	zb       *zbserver.Server
	zbDir    string
	// iceberg is the anchor's table with --anchor iceberg: a SQL catalog
	// and a warehouse under the demo's folder.
	iceberg *iceberg.Options
}

func cmdDemo(ctx context.Context, args []string, env *cliEnv) int {
	fs := newFlagSet("demo", "demo [flags]", env)
	dir := fs.String("dir", "data/demo", "working folder (wiped at start): offset store, Flight and Zerobus data")
	records := fs.Int64("records", 1_000_000, "records the generator produces")
	partitions := fs.Int("partitions", 4, "generator partitions")
	mode := fs.String("mode", "json", "payloads: json (typed schema, some malformed → dead letters) or raw")
	malformed := fs.Float64("malformed", 0.001, "fraction of malformed JSON records (json mode)")
	rate := fs.Float64("rate", 0, "records per second (0: as fast as possible)")
	metrics := fs.String("metrics", "", "serve /metrics, /healthz and /readyz on this address while the demo runs")
	capacity := fs.Int("lane-capacity", 256, "per-lane capacity (batches in flight)")
	anchor := fs.String("anchor", "flight", "the raw anchor: flight (the bundled receiver) or iceberg (a local Apache Iceberg table: SQL catalog on SQLite, Parquet files under --dir)")
	pulsarURL := fs.String("pulsar", "", "consume from this Pulsar broker (pulsar://...) instead of the generator")
	pulsarAdmin := fs.String("pulsar-admin", "", "with --pulsar: the broker's admin REST URL, to remove the run's subscription (default: the --pulsar host, port 8080)")
	topic := fs.String("topic", "thalweg-demo", "with --pulsar: the topic every run produces to and consumes (each run reads only its own records through a subscription it removes at the end)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	if *anchor != "flight" && *anchor != "iceberg" {
		fmt.Fprintf(env.stderr, "thalweg demo: --anchor must be flight or iceberg, got %q\n", *anchor)
		return exitUsage
	}
	if err := os.RemoveAll(*dir); err != nil {
		fmt.Fprintf(env.stderr, "thalweg demo: %v\n", err)
		return exitFail
	}
	setup, err := startDemoServers(*dir, *anchor, log)
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg demo: %v\n", err)
		return exitFail
	}
	defer setup.stop()

	cfg := setup.cfg
	cfg.Store.Dir = filepath.Join(*dir, "offsets")
	cfg.Metrics.Listen = *metrics
	g := &cfg.Source.Generator
	g.Records, g.Partitions, g.Rate = *records, *partitions, *rate
	switch *mode {
	case "json":
		g.Mode, g.MalformedFraction = config.GenJSON, *malformed
		cfg.Schema = demoJSONSchema()
	case "raw":
		g.Mode = config.GenRaw
	default:
		fmt.Fprintf(env.stderr, "thalweg demo: --mode must be json or raw, got %q\n", *mode)
		return exitUsage
	}
	for i := range cfg.Destinations {
		cfg.Destinations[i].Lane.Capacity = *capacity
	}
	var produced map[string]uint64
	if *pulsarURL != "" {
		var cleanup func()
		admin := *pulsarAdmin
		if admin == "" {
			admin = defaultAdminURL(*pulsarURL)
		}
		produced, cleanup, err = demoPulsarSource(ctx, cfg, *pulsarURL, admin, *topic, *records, *partitions, env)
		if err != nil {
			fmt.Fprintf(env.stderr, "thalweg demo: %v\n", err)
			return exitFail
		}
		defer cleanup() // after the worker, which w.run closes, has let go of the subscription
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(env.stderr, "thalweg demo: embedded config: %v\n", err)
		return exitFail
	}

	what := fmt.Sprintf("%d generated %s records over %d partitions", *records, *mode, *partitions)
	if *pulsarURL != "" {
		what = fmt.Sprintf("%d records from Pulsar %s", *records, *pulsarURL)
	}
	fmt.Fprintf(env.stderr, "thalweg demo: %s → %s (raw anchor) + Zerobus server (secondary); data in %s\n",
		what, setup.anchorName(), *dir)
	h := &host{}
	w, err := newWorker(ctx, cfg, env, log, h)
	if err != nil {
		_ = h.close(log)
		fmt.Fprintf(env.stderr, "thalweg demo: %v\n", err)
		return exitFail
	}
	var genSrc *gen.Source
	byPayload := false
	if produced == nil {
		genSrc, _ = w.src.(*gen.Source)
	}
	runCtx := ctx
	if genSrc == nil {
		// A broker never runs dry: stop once every produced record is
		// acknowledged upstream (so durably stored at the raw anchor).
		var cancel context.CancelFunc
		runCtx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			// The pipeline announces no acknowledgement, only counts
			// them in Stats: poll it.
			poll := time.NewTicker(50 * time.Millisecond)
			defer poll.Stop()
			for {
				if st := w.pipe.Stats(); st.Acked >= uint64(*records) {
					cancel()
					return
				}
				select {
				case <-poll.C:
				case <-runCtx.Done():
					return
				}
			}
		}()
		produced = map[string]uint64{audit.PayloadPartition: uint64(*records)}
		byPayload = true
	}
	started := time.Now()
	prog := startProgress(env.stderr, w.pipe.Stats, 5*time.Second, nil)
	runErr := w.pipe.Run(runCtx)
	prog.close()
	elapsed := time.Since(started)
	st := w.pipe.Stats()
	if err := errors.Join(w.close(), h.close(log)); err != nil && runErr == nil {
		runErr = err
	}
	var skip map[string]map[uint64]bool
	if genSrc != nil {
		produced = genSrc.Produced()
		skip = map[string]map[uint64]bool{}
		for _, d := range genSrc.DeadLetters() {
			if skip[d.Partition] == nil {
				skip[d.Partition] = map[uint64]bool{}
			}
			skip[d.Partition][d.Seq] = true
		}
	}
	return demoSummary(env.stdout, setup, st, elapsed, produced, skip, byPayload, runErr)
}

// startDemoServers starts the servers of the demo in the process: the
// Flight receiver (anchor "flight") and the Zerobus server, and returns the
// config that points a pipeline at them.
func startDemoServers(dir, anchorKind string, log *slog.Logger) (*demoSetup, error) {
	s := &demoSetup{zbDir: filepath.Join(dir, "zerobus")}
	var anchor config.DestinationConfig
	switch anchorKind {
	case "iceberg":
		abs, err := filepath.Abs(filepath.Join(dir, "iceberg"))
		if err != nil {
			return nil, err
		}
		s.iceberg = &iceberg.Options{
			Catalog:   iceberg.CatalogOptions{URI: filepath.Join(abs, "catalog.db")},
			Warehouse: filepath.Join(abs, "warehouse"),
			Table:     demoIcebergTable,
		}
		anchor = config.DefaultDestination("raw", config.KindIceberg, config.RoleRawAnchor, "")
		anchor.Iceberg.Catalog.URI = s.iceberg.Catalog.URI
		anchor.Iceberg.Warehouse = s.iceberg.Warehouse
		anchor.Iceberg.Table = s.iceberg.Table
	default:
		var err error
		s.flight, err = receiver.New(receiver.Options{Dir: filepath.Join(dir, "flight"), Logger: log})
		if err != nil {
			return nil, err
		}
		fl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = s.flight.Stop()
			return nil, err
		}
		go func() { _ = s.flight.Serve(fl) }()
		s.flightAt = fl.Addr().String()
		anchor = config.DefaultDestination("raw", config.KindFlight, config.RoleRawAnchor, s.flightAt)
	}

	var err error
	s.zb, err = zbserver.New(zbserver.Options{Dir: s.zbDir, Logger: log})
	if err != nil {
		s.stop()
		return nil, err
	}
	zl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.stop()
		return nil, err
	}
	go func() { _ = s.zb.Serve(zl) }()

	cfg := config.Default()
	cfg.Source.Kind = config.SourceGenerator
	cfg.Log.Level = config.LevelWarn
	zb := config.DefaultDestination("zerobus", config.KindZerobus, config.RoleSecondary, zl.Addr().String())
	zb.Table = demoTable
	cfg.Destinations = []config.DestinationConfig{anchor, zb}
	s.cfg = cfg
	return s, nil
}

// anchorName says where the raw anchor is, for the demo's first line.
func (s *demoSetup) anchorName() string {
	if s.iceberg != nil {
		return fmt.Sprintf("Iceberg table %s (catalog %s)", s.iceberg.Table, s.iceberg.Catalog.URI)
	}
	return "Flight receiver " + s.flightAt
}

func (s *demoSetup) stop() {
	if s.flight != nil {
		_ = s.flight.Stop()
	}
	if s.zb != nil {
		_ = s.zb.Stop()
	}
}

// demoJSONSchema declares the generator's JSON records (gen.JSONSchema) in
// config form, as a user would in pipeline.yaml.
func demoJSONSchema() config.SchemaConfig {
	f := func(name string, t config.FieldType, nullable bool) config.FieldConfig {
		return config.FieldConfig{Name: name, Type: t, Nullable: &nullable}
	}
	user := f("user", config.TypeStruct, true)
	user.Fields = []config.FieldConfig{f("name", config.TypeString, false), f("age", config.TypeInt32, true), f("vip", config.TypeBool, true)}
	ts := f("ts", config.TypeTimestamp, false)
	ts.Unit = config.UnitMillisecond
	tags := f("tags", config.TypeList, true)
	item := f("item", config.TypeString, true)
	tags.Items = &item
	return config.SchemaConfig{Mode: config.SchemaJSON, Fields: []config.FieldConfig{
		f("id", config.TypeInt64, false), f("event", config.TypeString, false), ts,
		f("day", config.TypeDate, true), user, f("amount", config.TypeFloat64, true),
		f("count", config.TypeUint64, true), f("score", config.TypeFloat32, true), tags, f("sig", config.TypeBinary, true),
	}}
}

// demoSummary verifies, at the sinks, what they stored against what the
// source produced, and prints the result.
func demoSummary(w io.Writer, s *demoSetup, st pipeline.Stats, elapsed time.Duration,
	produced map[string]uint64, skip map[string]map[uint64]bool, byPayload bool, runErr error) int {
	secs := elapsed.Seconds()
	fmt.Fprintf(w, "\n== thalweg demo summary (%.1fs)\n", secs)
	fmt.Fprintf(w, "source:    %d records (%.0f rec/s), %d rejected to the dead-letter path, %d acknowledged upstream\n",
		st.SourceRecords, float64(st.SourceRecords)/secs, st.DeadLettered, st.Acked)
	fmt.Fprintf(w, "assembler: %d batches, %.1f MB (%.1f MB/s); flushes rows=%d bytes=%d linger=%d idle=%d shutdown=%d\n",
		st.Assembler.Batches, float64(st.Assembler.Bytes)/1e6, float64(st.Assembler.Bytes)/1e6/secs,
		st.Assembler.FlushRows, st.Assembler.FlushBytes, st.Assembler.FlushLinger, st.Assembler.FlushIdle, st.Assembler.FlushShutdown)
	for _, l := range append([]pipeline.LaneStats{st.Anchor}, st.Secondaries...) {
		fmt.Fprintf(w, "lane %-8s %s: delivered %d of %d batches%s\n", l.Name, l.State, l.Delivered, l.Submitted, coalesce(l))
	}

	code := exitOK
	if runErr != nil {
		fmt.Fprintf(w, "pipeline:  %v\n", runErr)
		code = exitFail
	}
	what := "flight receiver"
	var anchorTally *audit.Tally
	var err error
	var tableRows int64
	if s.iceberg != nil {
		what = "iceberg table  "
		anchorTally, tableRows, err = readIceberg(*s.iceberg, byPayload)
	} else {
		anchorTally, err = readFlight(s.flightAt, []string{"raw"}, byPayload)
	}
	if err != nil {
		fmt.Fprintf(w, "verify %s: %v\n", strings.TrimSpace(what), err)
		return exitFail
	}
	rep := anchorTally.Check(produced, skip)
	if s.iceberg != nil {
		// Rebuild returns each record once: the table's rows beyond them
		// are the duplicates.
		rep.Duplicates = uint64(max(tableRows-int64(anchorTally.Rows()), 0))
	}
	fmt.Fprintf(w, "verify %s (raw anchor): %s\n", what, rep)
	if !rep.OK() {
		code = exitFail
	}
	zbTally, err := readZerobus(s.zbDir, demoTable, byPayload)
	if err != nil {
		fmt.Fprintf(w, "verify zerobus: %v\n", err)
		return exitFail
	}
	zrep := zbTally.Check(produced, skip)
	fmt.Fprintf(w, "verify zerobus server (secondary):   %s\n", zrep)
	if !zrep.OK() && !detached(st) {
		code = exitFail
	}
	if code == exitOK {
		fmt.Fprintln(w, "OK: every produced record is stored at the raw anchor; upstream acks followed durable commits")
		if s.iceberg != nil {
			fmt.Fprintf(w, "query it (pip install 'pyiceberg[sql-sqlite]' duckdb):\n"+
				"  python3 -c \"from pyiceberg.catalog.sql import SqlCatalog; "+
				"t = SqlCatalog('thalweg', uri='sqlite:///%s', warehouse='file://%s').load_table('%s'); "+
				"print(t.scan().to_duckdb('t').sql('select count(*) from t'))\"\n",
				s.iceberg.Catalog.URI, s.iceberg.Warehouse, s.iceberg.Table)
		}
	}
	return code
}

func detached(st pipeline.Stats) bool {
	for _, l := range st.Secondaries {
		if l.Detached {
			return true
		}
	}
	return false
}

func coalesce(l pipeline.LaneStats) string {
	if l.Bursts == 0 {
		return ""
	}
	return fmt.Sprintf(", coalesce ratio %.1f", float64(l.Confirmed)/float64(l.Bursts))
}

// readFlight tallies every row the receiver at addr holds for path: by its
// partition/seq columns, or (byPayload) by the "id" in its JSON payload as
// partition 0 — what the producer wrote, independent of the engine's numbering.
func readFlight(addr string, path []string, byPayload bool) (*audit.Tally, error) {
	ds, err := flight.Open(flight.Options{Endpoint: addr, Path: path})
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stored, err := ds.ReadAll(ctx, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	defer flight.ReleaseAll(stored)
	t := audit.NewTally()
	for _, s := range stored {
		var err error
		if byPayload {
			err = t.AddPayloadIDs(s.Rec)
		} else {
			err = t.AddRecord(s.Rec)
		}
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

// readIceberg tallies every row the Iceberg table of o holds (see
// readFlight): every partition its positions name, read back with Rebuild,
// which returns each seq once. Duplicates are the table's rows beyond the
// distinct records: rows is the table's row count.
func readIceberg(o iceberg.Options, byPayload bool) (t *audit.Tally, rows int64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tbl, err := iceberg.Open(o)
	if err != nil {
		return nil, 0, err
	}
	defer tbl.Close()
	if rows, err = tbl.Rows(ctx); err != nil {
		return nil, 0, err
	}
	pos, err := tbl.Positions(ctx)
	if err != nil {
		return nil, 0, err
	}
	t = audit.NewTally()
	for part, last := range pos {
		bs, err := tbl.Rebuild(ctx, part, 0, last)
		if err != nil {
			return nil, 0, err
		}
		for _, b := range bs {
			if err == nil {
				if byPayload {
					err = t.AddPayloadIDs(b.Rec)
				} else {
					err = t.AddRecord(b.Rec)
				}
			}
			b.Release()
		}
		if err != nil {
			return nil, 0, err
		}
	}
	return t, rows, nil
}

// readZerobus tallies the rows the Zerobus server stored for table (see readFlight).
func readZerobus(dir, table string, byPayload bool) (*audit.Tally, error) {
	lines, err := zbserver.ReadTable(dir, table)
	if err != nil {
		return nil, err
	}
	t := audit.NewTally()
	for _, l := range lines {
		var row map[string]json.RawMessage
		if err := json.Unmarshal(l, &row); err != nil {
			return nil, err
		}
		if byPayload {
			var payload []byte
			if err := json.Unmarshal(row["payload"], &payload); err != nil {
				return nil, fmt.Errorf("zerobus row: payload: %w", err)
			}
			id, err := audit.PayloadID(payload)
			if err != nil {
				return nil, fmt.Errorf("zerobus row: %w", err)
			}
			t.Add(audit.PayloadPartition, id)
			continue
		}
		// The identity columns (batch.IdentityOf), with or without the
		// metadata prefix.
		for _, prefix := range []string{batch.MetaPrefix, ""} {
			var topic *string
			var part *int32
			var seq *uint64
			if json.Unmarshal(row[prefix+batch.TopicColumn], &topic) == nil && json.Unmarshal(row[prefix+batch.PartitionColumn], &part) == nil &&
				json.Unmarshal(row[prefix+batch.SeqColumn], &seq) == nil && topic != nil && part != nil && seq != nil {
				t.Add(batch.JoinPartition(*topic, *part), *seq)
				break
			}
		}
	}
	return t, nil
}
