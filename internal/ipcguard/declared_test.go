package ipcguard

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/thalweg/thalweg/internal/testkit/hostileclient"
)

// TestDeclared: the declared cost of crafted and real messages.
func TestDeclared(t *testing.T) {
	bomb := hostileclient.ZstdBomb(24, 256<<20)
	c, err := Declared(bomb.Header, bomb.Body)
	if err != nil || c.DecodedBytes != 24<<28 || c.Rows != 32<<20 {
		t.Fatalf("zstd bomb: %+v, %v; want 6 GiB decoded, 32 Mi rows", c, err)
	}
	nulls := hostileclient.NullRows(300_000_000)
	if c, err := Declared(nulls.Header, nulls.Body); err != nil || c.Rows != 300_000_000 || c.DecodedBytes != 0 {
		t.Fatalf("null rows: %+v, %v", c, err)
	}
	// Uncompressed: the buffers are the body (less padding).
	plain := messages(t)
	if c, err := Declared(plain[1].DataHeader, plain[1].DataBody); err != nil || c.Rows != 3 || c.DecodedBytes > int64(len(plain[1].DataBody)) {
		t.Fatalf("plain batch: %+v, %v (body %d bytes)", c, err, len(plain[1].DataBody))
	}
	// Compressed: at least the body less the length prefixes.
	z := messages(t, ipc.WithZstd())
	if c, err := Declared(z[1].DataHeader, z[1].DataBody); err != nil || c.Rows != 3 || c.DecodedBytes <= 0 {
		t.Fatalf("zstd batch: %+v, %v", c, err)
	}
	if c, err := Declared(hostileclient.Schema(rich), nil); err != nil || c != (Cost{}) {
		t.Fatalf("schema: %+v, %v", c, err)
	}
	// A compressed buffer declaring a negative length other than -1.
	neg := hostileclient.ZstdBomb(1, 1<<20)
	for i := range 8 {
		neg.Body[i] = 0xf0
	}
	if _, err := Declared(neg.Header, neg.Body); !errors.Is(err, ErrMalformed) {
		t.Fatalf("negative declared length: %v", err)
	}
}

// FuzzDeclared: for any header CheckMessage accepts, Declared neither
// panics nor returns negative counts, and an uncompressed message never
// declares more decoded bytes than its body has.
func FuzzDeclared(f *testing.F) {
	for _, opts := range [][]ipc.Option{nil, {ipc.WithZstd()}, {ipc.WithLZ4()}} {
		for _, fd := range messages(f, opts...) {
			f.Add(fd.DataHeader, fd.DataBody)
		}
	}
	bomb := hostileclient.ZstdBomb(2, 1<<20)
	f.Add(bomb.Header, bomb.Body)
	nulls := hostileclient.NullRows(300_000_000)
	f.Add(nulls.Header, nulls.Body)
	s := hostileclient.Strings([]int32{0, -5, 3}, []byte("abc"))
	f.Add(s.Header, s.Body)
	f.Fuzz(func(t *testing.T, hdr, body []byte) {
		if CheckMessage(hdr, len(body)) != nil {
			return
		}
		c, err := Declared(hdr, body)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if c.Rows < 0 || c.DecodedBytes < 0 {
			t.Fatalf("negative cost %+v", c)
		}
	})
}
