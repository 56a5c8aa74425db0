package iceberg_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/internal/testkit/s3test"
)

// s3Options are the options of a SQL-catalog table whose warehouse is
// s3://bucket/warehouse on srv.
func s3Options(t testing.TB, srv *s3test.Server, bucket string) iceberg.Options {
	o := sqlOptions(t)
	o.Warehouse = "s3://" + bucket + "/warehouse"
	o.S3 = iceberg.S3Options{Endpoint: srv.Endpoint, Region: "us-east-1", AccessKeyID: "thalweg", SecretAccessKey: "secret"}
	return o
}

// TestS3Warehouse writes raw batches into a table whose data and metadata
// live on an S3-compatible server (moto), reads them back with pyiceberg
// from the same catalog and bucket, and rebuilds a range from the table.
func TestS3Warehouse(t *testing.T) {
	srv := s3test.Start(t)
	srv.CreateBucket(t, "lake")
	o := s3Options(t, srv, "lake")
	o.Ordered = true
	ctx, mem, tbl, s := newSink(t, o)
	off := uint64(0)
	writeRounds(t, ctx, s, mem, &off, 1, 101, 201)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	props := icebergpeer.SQLProps(o.Catalog.URI, "")
	delete(props, "warehouse")
	props["s3.endpoint"] = srv.Endpoint
	props["s3.region"] = "us-east-1"
	props["s3.access-key-id"] = "thalweg"
	props["s3.secret-access-key"] = "secret"
	v := icebergpeer.Read(t, ctx, props, o.Table)
	if v.Rows != 600 {
		t.Errorf("pyiceberg reads %d rows from S3, want 600", v.Rows)
	}
	for p := range int32(2) {
		if got := v.Seqs[topic+"/"+string(rune('0'+p))]; !slices.Equal(got, span(1, 300)) {
			t.Errorf("pyiceberg: seqs of partition %d = %v, want 1..300 once each", p, got)
		}
	}
	if v.DuckDBCount == nil || *v.DuckDBCount != 600 {
		t.Errorf("DuckDB count = %v, want 600", v.DuckDBCount)
	}

	checkPositionsAndRebuild(t, ctx, tbl, 300, 101, 250)
}

// TestS3MissingBucket: a warehouse in a bucket that does not exist fails
// the first commit for good, naming the bucket; waiting does not create
// it.
func TestS3MissingBucket(t *testing.T) {
	ctx := ctxFor(t)
	srv := s3test.Start(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := s3Options(t, srv, "nosuchbucket")
	o.Allocator = mem
	tbl := openTable(t, o)
	s, err := tbl.Dial(ctx)
	if err == nil {
		defer s.Close()
		b := rawBatch(mem, 0, 1, 10)
		if err = s.Send(ctx, 1, b); err == nil {
			err = s.WaitDurable(ctx, 1)
		}
		b.Release()
	}
	var ie *iceberg.Error
	if !errors.As(err, &ie) {
		t.Fatalf("a warehouse in a missing bucket: %v, want an *iceberg.Error", err)
	}
	if ie.Retryable() {
		t.Errorf("a missing bucket is retryable (%s): %v", ie.StatusName(), err)
	}
	if !strings.Contains(err.Error(), "nosuchbucket") {
		t.Errorf("the error does not name the bucket: %v", err)
	}
}
