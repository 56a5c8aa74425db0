package iceberg

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
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

// DefaultMinLeaseTTL is the least default of MaintenanceOptions.LeaseTTL.
const DefaultMinLeaseTTL = 30 * time.Second

// String is l as the value of PropMaintenanceLease.
func (l Lease) String() string {
	b, _ := json.Marshal(Lease{Holder: l.Holder, Until: l.Until.UTC()})
	return string(b)
}

// DefaultHolder names this process in the lease: the host name, the
// process id and a random suffix, unique per process.
func DefaultHolder() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
}

// tableLease is tbl's lease; ok is false when it has none, or one that
// does not parse.
func tableLease(tbl *table.Table) (Lease, bool) {
	v, ok := tbl.Properties()[PropMaintenanceLease]
	if !ok {
		return Lease{}, false
	}
	l, err := ParseLease(v)
	return l, err == nil
}

// holdsLease reports whether tbl's lease names this sink until after now.
func (s *Sink) holdsLease(tbl *table.Table, now time.Time) bool {
	mo := &s.opts.Maintenance
	l, ok := tableLease(tbl)
	return !mo.Disabled && ok && l.Holder == mo.Holder && now.Before(l.Until)
}

// leaseValue is the lease a commit on base sets, "" for none. A sink with
// maintenance on takes a lease that is missing, unreadable or past its
// Until, and renews its own once half its LeaseTTL has passed; a live lease
// of another worker stays. The commit asserts the table's snapshot
// (Transaction.Commit's requirement on the branch), so of two workers that
// take the lease at once, one commit fails and is planned again on the
// table with the other's lease.
func (s *Sink) leaseValue(base *table.Table, now time.Time) string {
	mo := &s.opts.Maintenance
	if mo.Disabled {
		return ""
	}
	l, ok := tableLease(base)
	switch {
	case ok && l.Holder == mo.Holder && l.Until.Sub(now) > mo.LeaseTTL/2:
		return "" // held, and fresh
	case ok && l.Holder != mo.Holder && now.Before(l.Until):
		return "" // another worker's
	}
	return Lease{Holder: mo.Holder, Until: now.Add(mo.LeaseTTL)}.String()
}
