package pulsartest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// PythonSchemaProducers runs internal/pulsarschema/testdata/produce.py with
// python against the broker at serviceURL: producers written with the
// Pulsar Python client's schema classes on the topics <prefix>-avro (two
// records, an upgrade to schema version 1 with a new optional field, then
// one payload that is not Avro), -json, -proto (PROTOBUF_NATIVE, message
// ex.Order of testdata/order.proto), -jsonbytes (JsonSchema records with
// Bytes fields, then two payloads that fit no bytes convention) and
// -string. It returns the prefix
// (persistent://public/default/...) and the JSON line in which the script
// reports what it sent.
func PythonSchemaProducers(t testing.TB, python, serviceURL string) (prefix string, sent []byte) {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "..", "..", "pulsarschema", "testdata")
	prefix = fmt.Sprintf("persistent://public/default/schema-%d", time.Now().UnixNano())
	pb2 := t.TempDir()
	if out, err := exec.Command("protoc", "-I"+dir, "--python_out="+pb2, "order.proto").CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v: %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, filepath.Join(dir, "produce.py"), serviceURL, prefix, pb2).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("produce.py: %v: %s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n") // the client logs to stdout too
	return prefix, []byte(lines[len(lines)-1])
}

// JavaJSONBytesProducer runs internal/pulsarschema/testdata/JSONBytes.java
// (a single-file program: java compiles it in memory) with the Java client
// of the Pulsar distribution at pulsarHome against the broker at
// serviceURL: JSONSchema.of(Blob) records with byte[] fields on topic. It
// returns the JSON line in which the program reports what it sent.
func JavaJSONBytesProducer(t testing.TB, java, pulsarHome, serviceURL, topic string) []byte {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(self), "..", "..", "pulsarschema", "testdata", "JSONBytes.java")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, "-cp", filepath.Join(pulsarHome, "lib", "*"), src, serviceURL, topic)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("JSONBytes.java: %v: %s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return []byte(lines[len(lines)-1])
}
