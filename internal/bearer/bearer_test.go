package bearer

import (
	"context"
	"testing"
)

func TestValueRoundTrip(t *testing.T) {
	for _, v := range []string{Value("s3cret"), "bearer s3cret", "BEARER  s3cret "} {
		if tok, ok := Token(v); !ok || tok != "s3cret" {
			t.Errorf("Token(%q) = %q, %v; want s3cret", v, tok, ok)
		}
	}
	for _, v := range []string{"", "Basic s3cret", "Bearers3cret"} {
		if tok, ok := Token(v); ok {
			t.Errorf("Token(%q) = %q: want not a bearer value", v, tok)
		}
	}
	md, err := Credentials("s3cret").GetRequestMetadata(context.Background())
	if err != nil || md[Header] != "Bearer s3cret" {
		t.Errorf("Credentials metadata %v, %v", md, err)
	}
}
