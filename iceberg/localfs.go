package iceberg

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// literalFS is the file system of the tables on a local (file://)
// warehouse: it names the file of a location by its path as written,
// without unescaping it, so that file:///w/t/data/k=a%2Fb/x.parquet is the
// file /w/t/data/k=a%2Fb/x.parquet.
//
// iceberg-go records a partitioned data file under its partition values
// URL-escaped (k=a%2Fb), as Java does, and pyiceberg, Java and Spark open
// a recorded location as written; iceberg-go's own LocalFS unescapes it
// and would store the file at /w/t/data/k=a/b/x.parquet, where no other
// engine looks. The two agree on every other location of a table, since
// neither a local warehouse path nor a table's name on it has anything to
// unescape (CheckLocalWarehouse, CheckLocalTable): the catalogs write
// metadata files through LocalFS and this file system reads them.
//
// WalkDir gives every path as file:// and the path as written, which is
// the location the table records for that file, so that the orphan
// cleanup (Table.DeleteOrphanFiles) finds every live file among the
// references as it is, before any normalisation; Remove deletes the file
// a listed path names (TestPartitionValuesEscaped). A literalFS is
// stateless and safe for concurrent use.
type literalFS struct{}

// literalPath is the local path of name: a file: URI's path as written
// (file:///p, file://localhost/p and file:/p), a plain path as it is.
func literalPath(name string) (string, error) {
	if len(name) < len("file:") || !strings.EqualFold(name[:len("file:")], "file:") {
		return name, nil
	}
	rest := name[len("file:"):]
	switch {
	case strings.HasPrefix(rest, "///"):
		rest = rest[2:]
	case strings.HasPrefix(strings.ToLower(rest), "//localhost/"):
		rest = rest[len("//localhost"):]
	case strings.HasPrefix(rest, "//") || !strings.HasPrefix(rest, "/"):
		return "", fmt.Errorf("local file location %q: want file:///path", name)
	}
	return filepath.FromSlash(rest), nil
}

func (literalFS) Open(name string) (iceio.File, error) {
	p, err := literalPath(name)
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

func (literalFS) ReadFile(name string) ([]byte, error) {
	p, err := literalPath(name)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

func (literalFS) Stat(name string) (fs.FileInfo, error) {
	p, err := literalPath(name)
	if err != nil {
		return nil, err
	}
	return os.Stat(p)
}

func (literalFS) Remove(name string) error {
	p, err := literalPath(name)
	if err != nil {
		return err
	}
	return os.Remove(p)
}

func (literalFS) Create(name string) (iceio.FileWriter, error) {
	p, err := literalPath(name)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	return os.Create(p)
}

func (literalFS) WriteFile(name string, content []byte) error {
	p, err := literalPath(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, content, 0o644)
}

func (literalFS) WalkDir(root string, fn fs.WalkDirFunc) error {
	p, err := literalPath(root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		return fn("file://"+filepath.ToSlash(path), d, err)
	})
}

// literalLocal returns fsF with iceberg-go's LocalFS replaced by
// literalFS; any other file system (S3's, which takes a key as written)
// passes as it is.
func literalLocal(fsF table.FSysF) table.FSysF {
	return func(ctx context.Context) (iceio.IO, error) {
		fs, err := fsF(ctx)
		if _, ok := fs.(iceio.LocalFS); ok && err == nil {
			return literalFS{}, nil
		}
		return fs, err
	}
}

// urlNeutral reports whether the local path p names the same place as a
// URL path as it does as a file path: iceberg-go makes a table's file
// locations by joining onto the table location's URL (url.URL.JoinPath),
// which escapes what a URL path may not hold, while pyiceberg and
// literalFS open a location as written and the catalogs' LocalFS
// unescapes it.
func urlNeutral(p string) bool {
	p = "/" + strings.TrimPrefix(p, "/")
	u, err := url.Parse("file://" + p)
	return err == nil && !strings.Contains(p, "%") && u.EscapedPath() == p
}
