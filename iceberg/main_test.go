package iceberg

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// database/sql's connection opener lives as long as the *sql.DB;
		// the catalog closes it, but the driver's may linger briefly.
		goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
		// gocloud's and the AWS SDK's HTTP transports keep idle conns.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}
