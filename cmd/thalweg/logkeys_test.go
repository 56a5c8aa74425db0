package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/thalweg/thalweg/flight/receiver"
	zbserver "github.com/thalweg/thalweg/zerobus/server"
)

// repeatedKeys returns the keys that occur more than once in one object of
// the JSON document line (at any depth), or an error if it is not JSON.
// encoding/json keeps the last of repeated keys silently, so the check walks
// the tokens itself.
func repeatedKeys(line []byte) ([]string, error) {
	dec := json.NewDecoder(strings.NewReader(string(line)))
	var dups []string
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key := k.(string)
				if seen[key] {
					dups = append(dups, key)
				}
				seen[key] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token() // '}'
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token() // ']'
			return err
		}
		return nil
	}
	if err := walk(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON object")
	}
	return dups, nil
}

// checkLogKeys fails t for every JSON log line of logs that repeats a key,
// and returns how many JSON lines it checked. Lines that are not JSON (the
// signal notices, a progress line) are skipped.
func checkLogKeys(t *testing.T, logs string) int {
	t.Helper()
	n := 0
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		dups, err := repeatedKeys(line)
		if err != nil {
			t.Errorf("log line is not one JSON object (%v): %s", err, line)
			continue
		}
		n++
		if len(dups) > 0 {
			t.Errorf("log line repeats %v: %s", dups, line)
		}
	}
	return n
}

func TestRepeatedKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{`{"a":1,"b":{"a":2}}`, ""},
		{`{"a":1,"a":2}`, "a"},
		{`{"x":[{"k":1,"k":2}],"y":"z"}`, "k"},
	} {
		dups, err := repeatedKeys([]byte(tc.in))
		if err != nil || strings.Join(dups, ",") != tc.want {
			t.Errorf("repeatedKeys(%s) = %v, %v; want %q", tc.in, dups, err, tc.want)
		}
	}
}

// Every JSON log line of a real run (debug level: the lanes, the
// transports, the offset store and the pipeline all log) names each key
// once: "destination" is added by the pipeline or the lane, never both,
// and the offset store's "component" once.
func TestRunLogKeysNeverRepeat(t *testing.T) {
	flightAt := startFlight(t, receiver.Options{})
	zbAt, _ := startZerobus(t, zbserver.Options{DropStreamAfter: 300, DropStreams: 1})
	cfg := pipelineYAML{Records: 4000, Partitions: 2, FlightAt: flightAt, ZerobusAt: zbAt, Table: "main.test.events",
		StoreDir: filepath.Join(t.TempDir(), "offsets"), Metrics: "127.0.0.1:0"}.write(t)
	text := strings.Replace(readFile(t, cfg), "level: info", "level: debug", 1)
	var c cli
	if code := c.run(t.Context(), "run", "--config", writeConfig(t, text)); code != exitOK {
		t.Fatalf("run: exit %d; stderr:\n%s", code, c.stderr.String())
	}
	logs := c.stderr.String()
	lanes := 0
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, `"destination":`) {
			lanes++
		}
	}
	if n := checkLogKeys(t, logs); n < 5 || lanes == 0 {
		t.Fatalf("only %d JSON log lines, %d with a destination: the run did not log as expected:\n%s", n, lanes, logs)
	}
}
