package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want config.ByteSize
	}{
		{"0", 0}, {"1", 1}, {"100B", 100}, {"8MiB", 8 << 20}, {"512KiB", 512 << 10}, {"1GiB", 1 << 30},
		{"2TiB", 2 << 40}, {"1KB", 1000}, {"64 MB", 64e6}, {"3gb", 3e9}, {"1tb", 1e12}, {" 7 kib ", 7 << 10},
		{"8388608", 8 << 20},
	} {
		got, err := config.ParseByteSize(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, in := range []string{"", "MiB", "-1", "1.5MiB", "8MB!", "1 PiB", "99999999999999999999", "9000000TiB", "0x10"} {
		_, err := config.ParseByteSize(in)
		require.Error(t, err, in)
	}
	for _, tc := range []struct {
		size config.ByteSize
		want string
	}{{0, "0B"}, {100, "100B"}, {1024, "1KiB"}, {1536, "1536B"}, {8 << 20, "8MiB"}, {1e6, "1000000B"}, {3 << 40, "3TiB"}} {
		require.Equal(t, tc.want, tc.size.String())
		back, err := config.ParseByteSize(tc.size.String())
		require.NoError(t, err)
		require.Equal(t, tc.size, back, "String round-trips")
	}

	var v struct {
		A config.ByteSize `yaml:"a"`
		B config.ByteSize `yaml:"b"`
	}
	require.NoError(t, yaml.Unmarshal([]byte("a: 512KiB\nb: 4096\n"), &v))
	require.Equal(t, 512*config.KiB, v.A)
	require.Equal(t, 4*config.KiB, v.B)
	out, err := yaml.Marshal(v)
	require.NoError(t, err)
	require.Equal(t, "a: 512KiB\nb: 4KiB\n", string(out))
	require.ErrorContains(t, yaml.Unmarshal([]byte("a: lots\n"), &v), "line 1: want a size")
}
