package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// busyError returns a real SQLITE_BUSY: a second connection writing, with
// no busy timeout, while a first holds an exclusive transaction.
func busyError(t *testing.T) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "busy.db")
	holder, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.Exec("CREATE TABLE t (x INTEGER)")
	if err == nil {
		t.Fatal("a write under another connection's exclusive lock succeeded")
	}
	return err
}

func TestRetryBusy(t *testing.T) {
	busy := busyError(t)
	if !sqliteBusy(busy) {
		t.Fatalf("sqliteBusy(%v) = false", busy)
	}
	if sqliteBusy(errors.New("database is locked")) {
		t.Fatal("sqliteBusy matched an error that is not SQLite's")
	}

	// Busy twice, then through: retried to success.
	calls := 0
	err := retryBusy(context.Background(), time.Minute, func() error {
		calls++
		if calls <= 2 {
			return busy
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("retryBusy = %v after %d calls, want nil after 3", err, calls)
	}

	// Any other error ends at once.
	other := errors.New("no such table")
	calls = 0
	err = retryBusy(context.Background(), time.Minute, func() error { calls++; return other })
	if !errors.Is(err, other) || calls != 1 {
		t.Fatalf("retryBusy = %v after %d calls, want %v after 1", err, calls, other)
	}

	// A cancelled context ends the retries with the cause and ctx's error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = retryBusy(ctx, time.Minute, func() error { return busy })
	if !errors.Is(err, context.Canceled) || !sqliteBusy(err) {
		t.Fatalf("retryBusy under a cancelled context = %v", err)
	}
}
