package harness

import (
	"context"
	"slices"
	"testing"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// TestCheckIdentity_SeesEveryViolation produces real records, builds the
// rows a correct anchor would store from the broker's message ids, and
// checks that CheckIdentity passes them and sees each kind of damage: the
// chaos scenarios' assertions are only as good as this check.
func TestCheckIdentity_SeesEveryViolation(t *testing.T) {
	url, adminURL := testenv.PulsarURL(t)
	admin := NewAdmin(t, adminURL)
	tp := admin.CreateTopic(t, admin.Namespace(t, "chaos-harness", Pruning), "ids", 3)
	prod, err := NewProducer(url, tp)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	const n = 60
	prod.Send(context.Background(), n)
	if err := prod.Flush(); err != nil {
		t.Fatal(err)
	}
	if f := prod.Failed(); len(f) > 0 {
		t.Fatalf("failed sends: %v", f)
	}

	// One producer writing in id order: a partition's k-th record (in id
	// order) is its broker index k-1, seq k.
	var good []Row
	perPart := map[int32]uint64{}
	for id := uint64(1); id <= n; id++ {
		mid, ok := prod.MessageID(id)
		if !ok {
			t.Fatalf("record %d has no message id", id)
		}
		p := prod.PartitionOf(id)
		if mid.PartitionIdx() != p {
			t.Fatalf("record %d routed to %d, stored in %d", id, p, mid.PartitionIdx())
		}
		perPart[p]++
		good = append(good, Row{Topic: tp.Name, Partition: p, Seq: perPart[p], MessageID: mid.Serialize(), ID: id, PayloadPartition: p})
	}
	if r := CheckIdentity(good, prod, tp.Name); len(r.Violations(true)) > 0 || r.Present != n || r.Rows != n {
		t.Fatalf("a correct store fails the check: %v (%s)", r.Violations(true), r)
	}

	// good[0] and good[3] are records 1 and 4, both in partition 0.
	damage := map[string]struct {
		rows  func([]Row) []Row
		check func(IdentityReport) bool
	}{
		"missing": {func(r []Row) []Row { return r[1:] },
			func(r IdentityReport) bool { return r.Missing == 1 && len(r.IdentityViolations()) == 0 }},
		"duplicate": {func(r []Row) []Row { return append(r, r[5]) },
			func(r IdentityReport) bool {
				return r.Duplicates == 1 && len(r.IdentityViolations()) == 0 && len(r.Violations(false)) == 0 && len(r.Violations(true)) == 1
			}},
		"key collision": {func(r []Row) []Row { r[0].Seq = r[3].Seq; return r },
			func(r IdentityReport) bool { return r.KeyCollisions == 1 && r.WrongSeq == 1 }},
		"split record": {func(r []Row) []Row { d := r[5]; d.Seq += 1000; return append(r, d) },
			func(r IdentityReport) bool { return r.SplitRecords == 1 && r.WrongSeq == 1 && r.Duplicates == 1 }},
		"wrong partition": {func(r []Row) []Row { r[7].Partition = 2; return r },
			func(r IdentityReport) bool { return r.WrongPartition == 1 }},
		"payload partition": {func(r []Row) []Row { r[7].PayloadPartition = 2; return r },
			func(r IdentityReport) bool { return r.WrongPartition == 1 }},
		"wrong topic": {func(r []Row) []Row { r[8].Topic = tp.Name + "-partition-2"; return r },
			func(r IdentityReport) bool { return r.WrongTopic == 1 && r.SplitRecords == 0 }},
		"wrong message id": {func(r []Row) []Row { r[9].MessageID = r[12].MessageID; return r },
			func(r IdentityReport) bool { return r.WrongMessageID == 1 }},
		"unexpected": {func(r []Row) []Row { d := r[0]; d.ID = n + 1; return append(r, d) },
			func(r IdentityReport) bool { return r.Unexpected == 1 && r.KeyCollisions == 1 }},
	}
	for name, d := range damage {
		t.Run(name, func(t *testing.T) {
			r := CheckIdentity(d.rows(slices.Clone(good)), prod, tp.Name)
			if !d.check(r) {
				t.Fatalf("not seen as expected: %s", r)
			}
			t.Logf("%v", r.Violations(true))
		})
	}
}
