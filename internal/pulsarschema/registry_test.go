package pulsarschema_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/pulsarschema"
	"github.com/thalweg/thalweg/internal/schemaevo"
)

// registryServer serves schema versions of topic t/n/orders the way the
// admin API does; fail makes the next n requests answer 503.
type registryServer struct {
	versions map[string]string // version -> Avro definition
	fail     atomic.Int32
	requests atomic.Int32
}

func (s *registryServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if s.fail.Add(-1) >= 0 {
		http.Error(w, "broker busy", http.StatusServiceUnavailable)
		return
	}
	const base = "/admin/v2/schemas/t/n/orders/schema/"
	def, ok := s.versions[strings.TrimPrefix(r.URL.Path, base)]
	if !strings.HasPrefix(r.URL.Path, base) || !ok {
		http.Error(w, `{"reason":"Not Found"}`, http.StatusNotFound)
		return
	}
	v := strings.TrimPrefix(r.URL.Path, base)
	_ = json.NewEncoder(w).Encode(map[string]any{"version": json.Number(v), "type": "AVRO", "data": def, "properties": map[string]string{}})
}

func ver(v byte) []byte { return []byte{0, 0, 0, 0, 0, 0, 0, v} }

// TestResolverAppliesEvolutionRules: per topic, a compatible version (a
// new nullable field) resolves to its own RowSchema with the version in its
// metadata; an incompatible one (a type change) is a permanent error
// wrapping schemaevo.ErrIncompatible that names the field; an absent
// version resolves to a RowSchema that refuses its records with the
// reason. Failures that may heal (503) are returned, not cached.
func TestResolverAppliesEvolutionRules(t *testing.T) {
	srv := &registryServer{versions: map[string]string{
		"0": `{"type":"record","name":"O","fields":[{"name":"id","type":"long"}]}`,
		"1": `{"type":"record","name":"O","fields":[{"name":"id","type":"long"},{"name":"c","type":["null","string"]}]}`,
		"2": `{"type":"record","name":"O","fields":[{"name":"id","type":"string"}]}`,
	}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	reg := newRegistry(t, hs.URL)
	res := pulsarschema.NewResolver(reg)
	ctx := context.Background()
	topic := "persistent://t/n/orders-partition-3"

	srv.fail.Store(1)
	if _, err := res.Resolve(ctx, topic, ver(0)); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("503: %v, want an error to retry", err)
	}
	v0, err := res.Resolve(ctx, topic, ver(0))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := res.Resolve(ctx, "t/n/orders", ver(0)); again != v0 {
		t.Error("the same version resolved to another RowSchema (batches would not group)")
	}
	v1, err := res.Resolve(ctx, topic, ver(1))
	if err != nil || v1 == v0 {
		t.Fatalf("version 1: %v", err)
	}
	md := v1.Schema().Metadata()
	if v, _ := md.GetValue(pulsarschema.MetaSchemaVersion); v != "1" || v1.Schema().NumFields() != 2 {
		t.Errorf("version 1 schema %s", v1.Schema())
	}
	if tp, _ := md.GetValue(pulsarschema.MetaTopic); tp != "t/n/orders" {
		t.Errorf("topic metadata %q", tp)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rb := array.NewRecordBuilder(mem, v1.Schema())
	defer rb.Release()
	if _, err := res.Resolve(ctx, topic, ver(2)); !errors.Is(err, schemaevo.ErrIncompatible) ||
		!strings.Contains(err.Error(), `incompatible schema change: field "id": type int64 -> utf8`) {
		t.Errorf("version 2: %v, want the permanent incompatible-change error naming the field", err)
	}
	for _, tc := range []struct {
		v    byte
		want string
	}{
		{7, "no such schema"},
	} {
		rs, err := res.Resolve(ctx, topic, ver(tc.v))
		if err != nil {
			t.Fatalf("version %d: %v, want a refusing RowSchema", tc.v, err)
		}
		if _, err := rs.NewRowDecoder(rb, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("version %d: %v, want %q", tc.v, err, tc.want)
		}
	}
	n := srv.requests.Load()
	if _, err := res.Resolve(ctx, topic, ver(7)); err != nil || srv.requests.Load() != n {
		t.Errorf("an absent version was asked again (%d requests, was %d): %v", srv.requests.Load(), n, err)
	}
	// A decode failure becomes the RejectError the dead-letter path reports.
	d, err := v1.NewRowDecoder(rb, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Append([]byte{0x02, 0x04})
	var re *batch.RejectError
	if !errors.As(err, &re) || re.Kind != batch.RejectUndecodable || re.Path != "c" || re.Offset != 1 {
		t.Errorf("decode failure = %v, want RejectUndecodable at c, byte 1", err)
	}
}

// TestRegistrySharesOneRequest: concurrent lookups of one version make one
// request.
func TestRegistrySharesOneRequest(t *testing.T) {
	srv := &registryServer{versions: map[string]string{"0": `{"type":"record","name":"O","fields":[]}`}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	reg := newRegistry(t, hs.URL)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := reg.Codec(context.Background(), "t/n/orders", 0); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := srv.requests.Load(); n != 1 {
		t.Errorf("%d requests for one version, want 1", n)
	}
	if _, err := pulsarschema.NewRegistry(pulsarschema.RegistryOptions{}); !errors.Is(err, pulsarschema.ErrRegistryInvalidOptions) {
		t.Errorf("no Admin client: %v", err)
	}
	if _, err := reg.Codec(context.Background(), "a/b", 0); err == nil || !strings.Contains(err.Error(), "tenant/namespace/topic") {
		t.Errorf("bad topic name: %v", err)
	}
}
