package errlog

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestThrottleLogsOnceThenSummaries(t *testing.T) {
	synctest.Test(t, testThrottleLogsOnceThenSummaries)
}

func testThrottleLogsOnceThenSummaries(t *testing.T) {
	var buf bytes.Buffer
	th := &Throttle{Log: slog.New(slog.NewTextHandler(&buf, nil)), What: "disk full", Interval: 30 * time.Second}
	boom := errors.New("no space left on device")
	// 10 minutes of attempts every 10 ms: one first line and one summary
	// per 30 s, not 60 000 lines.
	for range 60000 {
		th.Fail(boom)
		time.Sleep(10 * time.Millisecond) // fake clock
	}
	th.Clear()
	lines := strings.Count(buf.String(), "\n")
	if lines < 20 || lines > 23 {
		t.Fatalf("%d lines for 60000 failures in 10 minutes, want 1 + 20 summaries + 1 recovery:\n%s", lines, buf.String())
	}
	if !strings.Contains(buf.String(), "attempts=60000") || !strings.Contains(buf.String(), "disk full: recovered") {
		t.Fatalf("summary or recovery line missing:\n%s", buf.String())
	}
	if a, _, _, _ := th.Active(); a {
		t.Fatal("still active after Clear")
	}
	buf.Reset()
	th.Clear()
	if buf.Len() != 0 {
		t.Fatalf("Clear without an episode logged %q", buf.String())
	}
}
