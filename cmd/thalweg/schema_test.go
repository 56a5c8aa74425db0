package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/source/gen"
)

// TestRunSchemaChangeBetweenRuns: `thalweg run` with a JSON schema, then a
// fresh worker on the same Flight path whose schema has one more nullable
// field. The receiver takes the second schema as a new segment: the second
// run completes without a poisoning loop, and both runs' rows are readable,
// each batch with its own schema.
func TestRunSchemaChangeBetweenRuns(t *testing.T) {
	const records, partitions = 3000, 2
	flightAt := startFlight(t, receiver.Options{})
	runOnce := func(cfg string) string {
		t.Helper()
		var c cli
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		start := time.Now()
		code := c.run(ctx, "run", "--config", cfg)
		logs := c.stderr.String()
		if code != exitOK || ctx.Err() != nil {
			t.Fatalf("run: exit %d after %v (context: %v); poisonings: %d; stderr (first 4 KiB):\n%.4096s",
				code, time.Since(start).Round(time.Millisecond), ctx.Err(), strings.Count(logs, `"lane poisoned"`), logs)
		}
		return logs
	}
	cfg := pipelineYAML{Records: records, Partitions: partitions, JSON: true, FlightAt: flightAt,
		StoreDir: filepath.Join(t.TempDir(), "offsets")}
	runOnce(cfg.write(t))

	cfg.StoreDir = filepath.Join(t.TempDir(), "offsets") // a fresh worker
	withNote := strings.Replace(readFile(t, cfg.write(t)), "    - {name: sig, type: binary}\n",
		"    - {name: sig, type: binary}\n    - {name: note, type: string}\n", 1)
	if !strings.Contains(withNote, "name: note") {
		t.Fatal("the config has no sig field to add a field after")
	}
	logs := runOnce(writeConfig(t, withNote))
	if n := strings.Count(logs, `"lane poisoned"`); n > 1 {
		t.Errorf("the second run poisoned its lane %d times", n)
	}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	stored, err := flight.ReadAll(flighttest.Ctx(t, 30*time.Second), flighttest.Client(t, flightAt), []string{"raw"}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer flight.ReleaseAll(stored)
	tallies := map[bool]*audit.Tally{false: audit.NewTally(), true: audit.NewTally()}
	for _, s := range stored {
		hasNote := len(s.Rec.Schema().FieldIndices("note")) == 1
		if err := tallies[hasNote].AddRecord(s.Rec); err != nil {
			t.Fatal(err)
		}
	}
	g, err := gen.New(gen.Options{Seed: 7, Partitions: partitions, Records: records, PayloadSize: 64, Mode: gen.ModeJSON})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{}
	for rec := (batch.Record{}); g.Next(&rec); {
		want[rec.Partition] = max(want[rec.Partition], rec.Seq)
	}
	for hasNote, tally := range tallies {
		if rep := tally.Check(want, nil); !rep.OK() || rep.Distinct != records {
			t.Errorf("rows with note=%v: %s, want all %d records", hasNote, rep, records)
		}
	}
}

// TestRunIncompatibleSchemaNamesTheField: a fresh worker whose JSON schema
// changes a field's type on the same Flight path is refused; what it logs
// names the field and the change and never dumps a schema. (How the worker
// then stops is the lanes' and pipeline's business; the run is bounded
// here.)
func TestRunIncompatibleSchemaNamesTheField(t *testing.T) {
	const records, partitions = 500, 2
	flightAt := startFlight(t, receiver.Options{})
	cfg := pipelineYAML{Records: records, Partitions: partitions, JSON: true, FlightAt: flightAt,
		StoreDir: filepath.Join(t.TempDir(), "offsets")}
	var c cli
	if code := c.run(t.Context(), "run", "--config", cfg.write(t)); code != exitOK {
		t.Fatalf("first run: exit %d\n%s", code, c.stderr.String())
	}
	cfg.StoreDir = filepath.Join(t.TempDir(), "offsets")
	cfg.Drain = time.Second
	changed := strings.Replace(readFile(t, cfg.write(t)), "{name: amount, type: float64}", "{name: amount, type: int64}", 1)
	if !strings.Contains(changed, "{name: amount, type: int64}") {
		t.Fatal("the config has no amount field to change")
	}
	var c2 cli
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
	defer cancel()
	start := time.Now()
	code := c2.run(ctx, "run", "--config", writeConfig(t, changed))
	logs := c2.stderr.String()
	t.Logf("exit %d after %v: %d lane poisonings, %d log lines", code, time.Since(start).Round(time.Millisecond),
		strings.Count(logs, `"lane poisoned"`), strings.Count(logs, "\n"))
	if !strings.Contains(logs, `incompatible schema change: field \"amount\": type float64 -> int64`) {
		t.Errorf("no log line names the field and the change:\n%.4096s", logs)
	}
	for _, dump := range []string{"fields: ", "schema:\\n", "type=utf8"} {
		if strings.Contains(logs, dump) {
			t.Errorf("the log dumps a schema (%q):\n%.4096s", dump, logs)
		}
	}
}
