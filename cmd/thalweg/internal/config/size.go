package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ByteSize is a size in bytes. In YAML it is a non-negative integer (bytes)
// or a string of an integer and a unit: B, KiB, MiB, GiB, TiB (powers of
// 1024) or KB, MB, GB, TB (powers of 1000), case-insensitive, optionally
// separated by a space: 8MiB, 512KiB, "64 MB".
type ByteSize int64

// Size units.
const (
	Byte ByteSize = 1
	KiB           = 1024 * Byte
	MiB           = 1024 * KiB
	GiB           = 1024 * MiB
	TiB           = 1024 * GiB
	KB            = 1000 * Byte
	MB            = 1000 * KB
	GB            = 1000 * MB
	TB            = 1000 * GB
)

var sizeUnits = map[string]ByteSize{
	"b": Byte, "kib": KiB, "mib": MiB, "gib": GiB, "tib": TiB,
	"kb": KB, "mb": MB, "gb": GB, "tb": TB,
}

// ParseByteSize parses the string form described on ByteSize.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("want a size such as 8MiB, 512KiB or 1048576, got %q", clip(s))
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q is out of range", clip(s))
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	mult := Byte
	if unit != "" {
		m, ok := sizeUnits[unit]
		if !ok {
			return 0, fmt.Errorf("unknown size unit %q in %q (want B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", clip(t[i:]), clip(s))
		}
		mult = m
	}
	if n > math.MaxInt64/int64(mult) {
		return 0, fmt.Errorf("size %q is out of range", clip(s))
	}
	return ByteSize(n) * mult, nil
}

// String renders the size with the largest binary unit that divides it
// exactly (8MiB, 1536KiB, 100B), the form ParseByteSize reads back.
func (b ByteSize) String() string {
	if b != 0 {
		for _, u := range []struct {
			name string
			size ByteSize
		}{{"TiB", TiB}, {"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB}} {
			if b%u.size == 0 {
				return strconv.FormatInt(int64(b/u.size), 10) + u.name
			}
		}
	}
	return strconv.FormatInt(int64(b), 10) + "B"
}

// UnmarshalYAML accepts an integer or a size string.
// A bad value is a *yaml.TypeError, so that the decoder reports it and
// goes on with the rest of the document.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := byteSizeFromNode(n)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	*b = v
	return nil
}

// MarshalYAML writes the String form.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

func byteSizeFromNode(n *yaml.Node) (ByteSize, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("want a size such as 8MiB or an integer, got a %s", kindName(n))
	}
	if n.ShortTag() == "!!int" {
		var i int64
		if err := n.Decode(&i); err != nil {
			return 0, fmt.Errorf("size %q is out of range", clip(n.Value))
		}
		if i < 0 {
			return 0, fmt.Errorf("must be >= 0, got %d", i)
		}
		return ByteSize(i), nil
	}
	return ParseByteSize(n.Value)
}
