package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // the s3:// and s3a:// file systems
	"github.com/apache/iceberg-go/table"
	"modernc.org/sqlite" // also registers the pure-Go "sqlite" driver of the SQL catalog
)

// catalogIO is what the package needs of a catalog; catalog.Catalog has
// it. Every table the package commits to is bound to one (see bind), so
// that a test can fail any catalog call at operation i.
type catalogIO interface {
	LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error)
	CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error)
	CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*table.Table, error)
	CreateNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error
	// ListNamespaces and ListTables find the tables of a template (Tables.List).
	ListNamespaces(ctx context.Context, parent table.Identifier) ([]table.Identifier, error)
	ListTables(ctx context.Context, namespace table.Identifier) iter.Seq2[table.Identifier, error]
}

// hooks inject failures into the catalog and the file system (tests).
type hooks struct {
	catalog func(catalogIO) catalogIO
	fs      func(iceio.IO) iceio.IO
}

// fsProps are the file-system properties of the warehouse: what the SQL
// catalog gives every table and what a REST catalog's tables get on top of
// the server's own.
func fsProps(o *Options) iceberg.Properties {
	p := iceberg.Properties{}
	for k, v := range o.Catalog.Properties {
		p[k] = v
	}
	s := o.S3
	set := func(k, v string) {
		if v != "" {
			p[k] = v
		}
	}
	set(iceio.S3EndpointURL, s.Endpoint)
	set(iceio.S3Region, s.Region)
	set(iceio.S3AccessKeyID, s.AccessKeyID)
	set(iceio.S3SecretAccessKey, s.SecretAccessKey)
	set(iceio.S3SessionToken, s.SessionToken)
	if s.PathStyle != nil {
		p[iceio.S3ForceVirtualAddressing] = strconv.FormatBool(!*s.PathStyle)
	}
	return p
}

// openCatalog connects to the catalog o names. For a SQL catalog it
// creates the database file and the catalog's tables when missing.
func openCatalog(ctx context.Context, o *Options) (catalogIO, func() error, error) {
	props := fsProps(o)
	switch o.Catalog.Type {
	case CatalogREST:
		opts := []rest.Option{rest.WithAdditionalProps(props)}
		if o.Catalog.Token != "" {
			opts = append(opts, rest.WithOAuthToken(o.Catalog.Token))
		}
		if o.Catalog.Credential != "" {
			opts = append(opts, rest.WithCredential(o.Catalog.Credential))
		}
		if o.Warehouse != "" {
			opts = append(opts, rest.WithWarehouseLocation(o.Warehouse))
		}
		c, err := rest.NewCatalog(ctx, o.Catalog.Name, o.Catalog.URI, opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("REST catalog %s: %w", o.Catalog.URI, err)
		}
		return c, func() error { return nil }, nil
	default:
		path := strings.TrimPrefix(o.Catalog.URI, "file:")
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, nil, fmt.Errorf("SQL catalog %s: %w", path, err)
			}
		}
		// WAL lets several workers (processes) share the file; the busy
		// timeout makes a writer wait for another's transaction instead of
		// failing; synchronous=FULL makes a committed snapshot survive a
		// host crash, since its commit acknowledges the batches in it.
		dsn := "file:" + path + "?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, nil, fmt.Errorf("SQL catalog %s: %w", path, err)
		}
		props["warehouse"] = o.Warehouse
		c, err := newSQLCatalog(ctx, o.Catalog.Name, db, props)
		if err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("SQL catalog %s: %w", path, err)
		}
		return c, db.Close, nil
	}
}

// newSQLCatalog creates the SQL catalog on db, retrying while SQLite
// reports the database busy (see retryBusy).
func newSQLCatalog(ctx context.Context, name string, db *sql.DB, props iceberg.Properties) (c *sqlcat.Catalog, err error) {
	err = retryBusy(ctx, 30*time.Second, func() (err error) {
		c, err = sqlcat.NewCatalog(name, db, sqlcat.SQLite, props)
		return err
	})
	return c, err
}

// retryBusy runs f until it returns anything but SQLITE_BUSY, waiting a
// growing interval between attempts, for at most limit or until ctx ends.
// The busy timeout does not cover every case: when two processes create
// the catalog's tables at once, a transaction that must upgrade from
// reading to writing fails at once with SQLITE_BUSY (waiting could
// deadlock), and the right answer is to start it again.
func retryBusy(ctx context.Context, limit time.Duration, f func() error) error {
	deadline := time.Now().Add(limit)
	wait := 5 * time.Millisecond
	for {
		err := f()
		if err == nil || !sqliteBusy(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (gave up: %w)", err, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// sqliteBusy reports whether err is SQLite's SQLITE_BUSY (or one of its
// extended codes).
func sqliteBusy(err error) bool {
	const sqliteBusyCode = 5
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqliteBusyCode
}

// loadTable loads ident bound to cat; found is false when the table does
// not exist.
func loadTable(ctx context.Context, cat catalogIO, ident table.Identifier, h hooks) (t *table.Table, found bool, err error) {
	t, err = cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return bind(t, cat, h), true, nil
}

// bind returns t, a table as its catalog loaded or created it, with its
// commits going through cat and its files through the hooked file system,
// literalFS for a local warehouse: every table the package reads or
// writes is bound here, and the tables made from it (rebind, a
// transaction's result) keep its file system.
func bind(t *table.Table, cat catalogIO, h hooks) *table.Table {
	local := literalLocal(t.FS)
	fsF := local
	if h.fs != nil {
		fsF = func(ctx context.Context) (iceio.IO, error) {
			fs, err := local(ctx)
			if err != nil {
				return nil, err
			}
			return h.fs(fs), nil
		}
	}
	return rebind(t, fsF, cat)
}

// rebind returns t with its commits going through cat and its files
// through fsF. A table made from a committed one (Transaction.Commit's
// result, or a base given another catalog) must be given the file system
// of the table it came from, held apart, never its own t.FS: Table.FS has
// a value receiver, so the method value copies t, metadata included, and
// every committed table would hold the one before it, the heap growing
// with the commit count (TestCommitsRetainNoPastMetadata).
func rebind(t *table.Table, fsF table.FSysF, cat table.CatalogIO) *table.Table {
	return table.New(t.Identifier(), t.Metadata(), t.MetadataLocation(), fsF, cat)
}

// createTable creates the namespace (when missing) and the table with
// schema sc and partition spec spec; when another worker created it first, it loads theirs.
// warehouse only names the place in an error (a missing bucket, a
// directory that cannot be created).
//
// Two workers creating the same namespace or table race, and not every
// catalog reports the loser as "already exists" (the Iceberg JDBC catalog
// behind a REST server answers with a server error when its insert hits
// the other's row). So a failed namespace creation is reported only when
// the table cannot be created for lack of it, and a failed table creation
// is reported only when the table cannot be loaded either.
func createTable(ctx context.Context, cat catalogIO, ident table.Identifier, sc *iceberg.Schema, spec iceberg.PartitionSpec, props iceberg.Properties, warehouse string, h hooks) (*table.Table, error) {
	ns := ident[:len(ident)-1]
	var nsErr error
	for i := 1; i <= len(ns); i++ {
		err := cat.CreateNamespace(ctx, ns[:i], nil)
		if err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) && nsErr == nil {
			nsErr = fmt.Errorf("create namespace %s: %w", strings.Join(ns[:i], "."), err)
		}
	}
	t, err := cat.CreateTable(ctx, ident, sc, catalog.WithProperties(props), catalog.WithPartitionSpec(&spec))
	if err == nil {
		return bind(t, cat, h), nil
	}
	if nsErr != nil && errors.Is(err, catalog.ErrNoSuchNamespace) {
		return nil, nsErr
	}
	t, found, lerr := loadTable(ctx, cat, ident, h)
	if lerr == nil && found {
		return t, nil
	}
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		if lerr == nil {
			lerr = fmt.Errorf("%w (and then it does not)", err)
		}
		return nil, lerr
	}
	if warehouse != "" {
		return nil, fmt.Errorf("create table %s in warehouse %s: %w", strings.Join(ident, "."), warehouse, err)
	}
	return nil, fmt.Errorf("create table %s: %w", strings.Join(ident, "."), err)
}
