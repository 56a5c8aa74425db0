package flight

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestValidateBeforeDefaults: validate judges what the caller wrote, so
// every optional field's zero value (its default) and a negative
// AckTimeout (disabled) are valid, and withDefaults keeps the latter.
func TestValidateBeforeDefaults(t *testing.T) {
	o := Options{Endpoint: "127.0.0.1:1", Path: []string{"x"}}
	require.NoError(t, o.validate())
	o.withDefaults()
	require.Equal(t, DefaultMaxMessageSize, o.MaxMessageSize)
	require.Equal(t, DefaultAckTimeout, o.AckTimeout)
	require.Equal(t, DefaultCloseTimeout, o.CloseTimeout)

	o = Options{Endpoint: "127.0.0.1:1", Path: []string{"x"}, AckTimeout: -time.Second}
	require.NoError(t, o.validate())
	o.withDefaults()
	require.Equal(t, -time.Second, o.AckTimeout, "a negative AckTimeout is kept: disabled")
}
