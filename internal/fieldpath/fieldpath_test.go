package fieldpath

import "testing"

func TestPaths(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Field("a", ""), "a"},
		{Field("a", "b"), "a.b"},
		{Field("a", "[2]"), "a[2]"},
		{Field("a", "{k}.b"), "a{k}.b"},
		{Segment("[2]", ""), "[2]"},
		{Segment("[2]", "b"), "[2].b"},
		{Segment("{k}", "[0]"), "{k}[0]"},
		{Segment("{}", "{k}"), "{}{k}"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
