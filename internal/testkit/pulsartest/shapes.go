package pulsartest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// PyID is a message id as the Pulsar Python (or Java) client shows it.
type PyID struct {
	Ledger     int64 `json:"ledger"`
	Entry      int64 `json:"entry"`
	Partition  int32 `json:"partition"`
	BatchIndex int32 `json:"batch_index"`
}

// PyMessage is one message as a Pulsar Python client consumer shows it.
type PyMessage struct {
	Topic     string            `json:"topic"` // the partition's topic (…-partition-N)
	ID        PyID              `json:"id"`
	Key       *string           `json:"key"` // nil when the message has none
	Payload   []byte            `json:"payload"`
	Props     map[string]string `json:"props"`
	Event     int64             `json:"event"`   // milliseconds; 0 when the message has no event time
	Publish   int64             `json:"publish"` // milliseconds
	NullValue bool              `json:"null_value"`
}

// PythonShapes sends, with the Pulsar Python client, the 16 message shapes
// of testdata/pulsar/shapes.py (payload empty or not, with or without a
// key, properties and an event time) to topic at serviceURL, from a
// batching producer and from one that does not batch: 32 messages.
func PythonShapes(t testing.TB, python, serviceURL, topic string) {
	t.Helper()
	shapesPy(t, python, nil, "produce", serviceURL, topic)
}

// PythonView reads count messages of topic from the earliest on a new
// subscription sub with the Pulsar Python client.
func PythonView(t testing.TB, python, serviceURL, topic, sub string, count int) []PyMessage {
	t.Helper()
	var seen []PyMessage
	if err := json.Unmarshal(shapesPy(t, python, nil, "view", serviceURL, topic, sub, strconv.Itoa(count)), &seen); err != nil {
		t.Fatal(err)
	}
	return seen
}

// PythonDecodeIDs decodes serialized message ids with the Pulsar Python
// client's MessageId.deserialize.
func PythonDecodeIDs(t testing.TB, python string, ids [][]byte) []PyID {
	t.Helper()
	in, err := json.Marshal(ids)
	if err != nil {
		t.Fatal(err)
	}
	var out []PyID
	if err := json.Unmarshal(shapesPy(t, python, in, "decode"), &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(ids) {
		t.Fatalf("decoded %d ids of %d", len(out), len(ids))
	}
	return out
}

// JavaDecodeIDs decodes serialized message ids with the Pulsar Java
// client's MessageId.fromByteArray (testdata/pulsar/DecodeIDs.java, run by
// java with the client of the Pulsar distribution at pulsarHome).
func JavaDecodeIDs(t testing.TB, java, pulsarHome string, ids [][]byte) []PyID {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"-cp", filepath.Join(pulsarHome, "lib", "*"), filepath.Join(testenv.RepoRoot(), "testdata", "pulsar", "DecodeIDs.java")}
	for _, id := range ids {
		args = append(args, base64.StdEncoding.EncodeToString(id))
	}
	out, err := exec.CommandContext(ctx, java, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("DecodeIDs.java: %v: %s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var decoded []PyID
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &decoded); err != nil {
		t.Fatalf("DecodeIDs.java output %q: %v", out, err)
	}
	if len(decoded) != len(ids) {
		t.Fatalf("decoded %d ids of %d", len(decoded), len(ids))
	}
	return decoded
}

// shapesPy runs testdata/pulsar/shapes.py and returns the last line of its
// output (the client logs to stdout too).
func shapesPy(t testing.TB, python string, stdin []byte, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := filepath.Join(testenv.RepoRoot(), "testdata", "pulsar", "shapes.py")
	cmd := exec.CommandContext(ctx, python, append([]string{script}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("shapes.py %s: %v: %s", args[0], err, ee.Stderr)
		}
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return []byte(lines[len(lines)-1])
}
