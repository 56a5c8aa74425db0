package iceberg

import (
	"encoding/json"
	"fmt"
	"time"
)

// PropMaintenanceLease is the table property that names the one worker
// that maintains the table (expiry, compaction, manifest rewriting, orphan
// cleanup) and until when. Its value is the JSON of a Lease.
const PropMaintenanceLease = "thalweg.maintenance.lease"

// Lease is the value of PropMaintenanceLease: Holder maintains the table
// until Until; past it, any worker may take the lease.
type Lease struct {
	Holder string    `json:"holder"`
	Until  time.Time `json:"until"`
}

// ParseLease parses the value of PropMaintenanceLease.
func ParseLease(s string) (Lease, error) {
	var l Lease
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return Lease{}, fmt.Errorf("iceberg: table property %s: %w", PropMaintenanceLease, err)
	}
	return l, nil
}
