package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/zerobus"
	"github.com/thalweg/thalweg/zerobus/server"
)

// TestSinkSchemaChange drives the server with thalweg's own Zerobus sink in
// each of its encodings (JSON records, PROTO records with the descriptor it
// derives from the Arrow schema, the Flight variant), as a worker restarted
// with a changed schema would: a nullable field inserted before the last
// one is accepted and both schemas' rows are stored; a type change is
// refused with a message naming the field.
func TestSinkSchemaChange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srv, addr := serveTCP(t, server.Options{Dir: t.TempDir()})

	id := arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64}
	name := arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}
	note := arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}
	a := arrow.NewSchema([]arrow.Field{id, name}, nil)
	b := arrow.NewSchema([]arrow.Field{id, note, name}, nil)
	changed := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}, name}, nil)

	for _, tc := range []struct {
		mode    zerobus.Mode
		enc     zerobus.Encoding
		table   string
		refusal string
	}{
		{zerobus.ModeEphemeral, zerobus.EncodingJSON, "main.evo.json", `field "id": type number -> string`},
		{zerobus.ModeEphemeral, zerobus.EncodingProto, "main.evo.proto", `field "id": type int64 -> string`},
		{zerobus.ModeFlight, zerobus.EncodingJSON, "main.evo.flight", `field "id": type int64 -> utf8`},
	} {
		t.Run(tc.table, func(t *testing.T) {
			send := func(sc *arrow.Schema, first int) error {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				s, err := zerobus.Dial(ctx, zerobus.Options{Endpoint: addr, Table: tc.table,
					TLS: zerobus.TLSOptions{Insecure: true}, Mode: tc.mode, Encoding: tc.enc, Schema: sc, Allocator: mem})
				if err != nil {
					return err
				}
				defer s.Close()
				rec := rows(mem, sc, first, 3)
				defer rec.Release()
				if err := s.Send(ctx, 1, &batch.Batch{Rec: rec}); err != nil {
					return err
				}
				return s.WaitDurable(ctx, 1)
			}
			require.NoError(t, send(a, 0))
			require.NoError(t, send(b, 3))
			err := send(changed, 6)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.refusal)
			require.Contains(t, err.Error(), "InvalidArgument")

			got, err := server.ReadTable(srv.Dir(), tc.table)
			require.NoError(t, err)
			require.Len(t, got, 6)
			require.Contains(t, string(got[4]), `"note":"note-4"`)
			require.NotContains(t, string(got[0]), "note")
		})
	}
}

// rows builds n rows of sc from id first: id (int64 or string), name,
// note ("note-<id>" when present).
func rows(mem memory.Allocator, sc *arrow.Schema, first, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := first; i < first+n; i++ {
		for f, fld := range sc.Fields() {
			switch fb := b.Field(f).(type) {
			case *array.Int64Builder:
				fb.Append(int64(i))
			case *array.StringBuilder:
				switch fld.Name {
				case "id":
					fb.Append(strings.Repeat("x", i))
				case "note":
					fb.Append("note-" + string(rune('0'+i)))
				default:
					fb.Append("n")
				}
			}
		}
	}
	return b.NewRecordBatch()
}

// TestOfficialSDKSchemaChange: the official SDK (testdata/zerobus/sdk_ingest.py)
// writes a table, then again with a nullable field added (accepted, every
// record stored), then with "id" as a string (refused, the SDK's error
// names the field), for JSON records and the Arrow Flight variant.
func TestOfficialSDKSchemaChange(t *testing.T) {
	py := testenv.Python(t)
	script := filepath.Join(testenv.RepoRoot(), "testdata", "zerobus", "sdk_ingest.py")
	var logs lockedBuffer
	srv, addr := serveTCP(t, server.Options{Dir: t.TempDir(), Token: "tok", Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	// The SDK prints the server's status for EphemeralStream failures; its
	// Arrow variant only says the stream closed. The server's log names the
	// field in both.
	for _, tc := range []struct{ mode, table, refusal string }{
		{"json-batch", "main.sdkevo.json", `field "id": type number -> string`},
		{"arrow", "main.sdkevo.arrow", `field "id": type int64 -> large_utf8`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			// run returns the script's outcome and everything it printed
			// (the SDK logs to stdout and stderr too).
			run := func(variant string, start int) (ok bool, output string) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, py, script, "--endpoint", "http://"+addr, "--table", tc.table,
					"--token", "tok", "--count", "50", "--start", strconv.Itoa(start), "--mode", tc.mode, "--variant", variant)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, _ := cmd.Output()
				var res struct {
					OK    bool   `json:"ok"`
					Error string `json:"error"`
				}
				found := false
				for _, l := range splitLines(out) {
					if strings.HasPrefix(string(l), `{"ok"`) {
						// The SDK's own log lines may follow on the same line
						// (it writes to stdout from its threads): decode the
						// result object alone.
						require.NoError(t, json.NewDecoder(strings.NewReader(string(l))).Decode(&res), "%s", l)
						found = true
					}
				}
				require.True(t, found, "no result line in the script's output: %s", out)
				return res.OK, res.Error + "\n" + string(out) + "\n" + stderr.String()
			}
			ok, msg := run("base", 0)
			require.True(t, ok, msg)
			ok, msg = run("note", 50)
			require.True(t, ok, "a nullable field added: %s", msg)
			start := time.Now()
			ok, msg = run("id-string", 100)
			require.False(t, ok, "a type change must be refused")
			t.Logf("refused after %v", time.Since(start).Round(time.Millisecond))
			require.Contains(t, logs.String(), strings.ReplaceAll(tc.refusal, `"`, `\"`), "the server's log")
			if tc.mode != "arrow" {
				require.Contains(t, strings.ReplaceAll(msg, `\`, ""), tc.refusal, "the SDK's output")
			}

			lines, err := server.ReadTable(srv.Dir(), tc.table)
			require.NoError(t, err)
			require.Len(t, lines, 100)
			var notes int
			for _, l := range lines {
				if strings.Contains(string(l), `"note-`) {
					notes++
				}
			}
			require.Equal(t, 25, notes)
		})
	}
}

// lockedBuffer is a goroutine-safe log sink.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
