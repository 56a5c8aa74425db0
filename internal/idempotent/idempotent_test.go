package idempotent

import "testing"

func TestJudge(t *testing.T) {
	type span struct {
		part        string
		first, last uint64
	}
	pos := map[string]uint64{"a": 10, "b": 5}
	for _, c := range []struct {
		spans []span
		want  Verdict
	}{
		{nil, Mixed},
		{[]span{{"a", 11, 20}, {"c", 0, 3}}, KeepAll},
		{[]span{{"a", 1, 10}, {"b", 5, 5}}, DropAll},
		{[]span{{"a", 11, 20}, {"b", 1, 4}}, Mixed},
		{[]span{{"a", 9, 12}}, Mixed},
	} {
		got := Judge(pos, len(c.spans), func(i int) (string, uint64, uint64) {
			return c.spans[i].part, c.spans[i].first, c.spans[i].last
		})
		if got != c.want {
			t.Errorf("Judge(%v) = %d, want %d", c.spans, got, c.want)
		}
	}
}
