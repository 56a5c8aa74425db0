package harness

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/thalweg/thalweg/internal/pulsaradmin"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// BrokerStartTimeout bounds one start of a test's own broker (a standalone
// broker is ready in 20–40 s on a 2-core machine shared with other work).
const BrokerStartTimeout = 3 * time.Minute

// Broker is a Pulsar standalone broker of the test's own, run by
// scripts/pulsar.sh as a separate instance (THALWEG_PULSAR_INSTANCE): it
// shares the unpacked distribution with the broker every other test uses,
// and has its own ports, configuration, data, logs and pid file, so that
// the test may SIGKILL it and start it again on its data without touching
// the shared one. Not safe for concurrent use.
type Broker struct {
	// URL and AdminURL are the broker's service and admin URLs; they stay
	// the same across Kill and Restart.
	URL, AdminURL string
	script        string
	env           []string
	pid           int
	starts        int
}

// StartBroker starts the instance named name on free loopback ports,
// beginning with empty data, and waits until it is ready. A broker of the
// same instance left running by an earlier test binary that died is
// stopped first. The test's cleanup stops the broker and deletes its data.
func StartBroker(t testing.TB, name string) *Broker {
	t.Helper()
	port := func() string {
		_, p, _ := strings.Cut(testenv.FreeAddr(t), ":")
		return p
	}
	b := &Broker{script: filepath.Join(testenv.RepoRoot(), "scripts", "pulsar.sh")}
	b.env = append(os.Environ(),
		"THALWEG_PULSAR_INSTANCE="+name,
		"THALWEG_PULSAR_PORT="+port(), "THALWEG_PULSAR_WEB_PORT="+port(),
		"THALWEG_PULSAR_TLS_PORT="+port(), "THALWEG_PULSAR_WEB_TLS_PORT="+port(),
		"THALWEG_PULSAR_PROXY_PORT="+port(),
		"THALWEG_PULSAR_HEAP=-Xms256m -Xmx768m",
		"THALWEG_PULSAR_TIMEOUT="+strconv.Itoa(int((BrokerStartTimeout-10*time.Second)/time.Second)))
	if _, err := b.run("clean"); err != nil {
		t.Fatalf("harness: broker %s: clean before start: %v", name, err)
	}
	t.Cleanup(func() {
		if out, err := b.run("clean"); err != nil {
			t.Errorf("harness: broker %s: clean: %v\n%s", name, err, out)
		}
	})
	b.start(t, false)
	return b
}

// run runs the script with command under the broker's environment,
// bounded by BrokerStartTimeout, and returns its stdout.
func (b *Broker) run(command string, env ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), BrokerStartTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", b.script, command)
	cmd.Env = append(b.env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("scripts/pulsar.sh %s: %w: %s", command, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

func (b *Broker) start(t testing.TB, keepData bool) {
	t.Helper()
	b.starts++
	env := []string{"THALWEG_PULSAR_KEEP_DATA=0"}
	if keepData {
		env[0] = "THALWEG_PULSAR_KEEP_DATA=1"
	}
	t0 := time.Now()
	out, err := b.run("start", env...)
	if err != nil {
		t.Fatalf("harness: start the test's broker: %v", err)
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	if vars["PULSAR_STARTED"] != "1" {
		t.Fatalf("harness: the test's broker was already running (PULSAR_STARTED=%q)", vars["PULSAR_STARTED"])
	}
	b.URL, b.AdminURL = vars["PULSAR_URL"], vars["PULSAR_ADMIN_URL"]
	if b.pid, err = strconv.Atoi(vars["PULSAR_PID"]); err != nil || b.URL == "" || b.AdminURL == "" {
		t.Fatalf("harness: scripts/pulsar.sh start printed %q", out)
	}
	t.Logf("harness: broker %s (pid %d) ready in %v (start %d, data kept: %v)", b.URL, b.pid, time.Since(t0).Round(time.Millisecond), b.starts, keepData)
}

// Kill SIGKILLs the broker and waits (at most 30 s) until it is gone.
func (b *Broker) Kill(t testing.TB) {
	t.Helper()
	if err := syscall.Kill(b.pid, syscall.SIGKILL); err != nil {
		t.Fatalf("harness: kill broker pid %d: %v", b.pid, err)
	}
	testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("broker pid %d to go after SIGKILL", b.pid), func() bool {
		// Gone, or a zombie waiting for init to reap it: either way it
		// holds no port and serves nothing.
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", b.pid))
		return err != nil || bytes.Contains(st, []byte(") Z "))
	})
}

// Restart starts the broker again on the data it had, as a broker that
// crashed comes back, and waits until it is ready and can open ledgers:
// a standalone broker restarted on its data answers its health check
// before its bookie is registered again, and refuses topics meanwhile
// ("Not enough non-faulty bookies available").
func (b *Broker) Restart(t testing.TB) {
	t.Helper()
	b.start(t, true)
	t0 := time.Now()
	var last string // the last probe's error, logged when it changes
	testenv.WaitFor(t, BrokerStartTimeout, "the restarted broker to open a topic", func() bool {
		err := b.probe(fmt.Sprintf("harness-probe-%d", time.Now().UnixNano()))
		if err != nil && err.Error() != last {
			last = err.Error()
			t.Logf("harness: the restarted broker cannot open a topic yet: %v", err)
		}
		return err == nil
	})
	t.Logf("harness: the restarted broker opens topics %v after its health check", time.Since(t0).Round(time.Millisecond))
}

// probe creates a topic in public/default and loads it (a ledger is
// opened), then deletes it.
func (b *Broker) probe(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pulsaradmin.New(pulsaradmin.Options{URL: b.AdminURL, DisableKeepAlives: true})
	if err != nil {
		return err
	}
	tn, err := utils.GetTopicName(name)
	if err != nil {
		return err
	}
	if err := c.Topics().CreateWithContext(ctx, *tn, 0); err != nil {
		return err
	}
	if _, err := c.Topics().GetStatsWithContext(ctx, *tn); err != nil {
		return err
	}
	return c.Topics().DeleteWithContext(ctx, *tn, false, true)
}
