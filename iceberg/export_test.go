package iceberg

import iceio "github.com/apache/iceberg-go/io"

// WithCatalogHook wraps the catalog every Table of o connects to.
func WithCatalogHook(o Options, h func(catalogIO) catalogIO) Options {
	o.hooks.catalog = h
	return o
}

// WithFSHook wraps the file system of every table o opens.
func WithFSHook(o Options, h func(iceio.IO) iceio.IO) Options {
	o.hooks.fs = h
	return o
}
