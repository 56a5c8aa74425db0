package iceberg

import "time"

// CloseTimeout bounds Sink.Close: how long it waits for the committer's
// cancelled catalog call and for abandoning the open data file before it
// returns ErrCloseTimeout. Shutdown (pipeline drain_timeout, the lane's
// Close) can rely on it whatever the catalog or the object store does.
const CloseTimeout = 5 * time.Second
