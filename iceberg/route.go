package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/thalweg/thalweg/batch"
)

// ErrUnsplittable: a batch holds rows of partitions that route to several
// tables and has no identity columns to tell its rows apart.
var ErrUnsplittable = errors.New("iceberg: a batch of several tables has no identity columns to split it by")

// Tables are the tables of a table template (Options.Table with
// placeholders, see ParseTemplate): every partition routes to the table
// the template gives for its topic. Each table is a Table of its own (its
// positions, schema, commits, metrics and maintenance lease); they share
// the one catalog connection. A Table of the set is made on the first use
// of its name and kept until Close.
//
// Tables is safe for concurrent use. Close it after every Router it
// dialed.
type Tables struct {
	opts Options // Options.Table is the template
	tmpl tableTemplate
	root *Table // holds the catalog connection the tables share

	mu struct {
		sync.Mutex
		tables map[string]*routedTable
	}
}

// routedTable is a table of the set and the topics routed to it
// (topics under Tables.mu).
type routedTable struct {
	t      *Table
	topics map[string]bool
}

// OpenTables validates opts, whose Table is a template, and returns its
// tables. Like Open it does no I/O.
func OpenTables(opts Options) (*Tables, error) {
	tmpl, err := parseTemplate(opts.Table)
	if err != nil {
		return nil, fmt.Errorf("%w: Options.Table: %w", ErrInvalidOptions, err)
	}
	// The other options are checked as those of any table.
	probe := opts
	probe.Table = "namespace.table"
	if err := probe.validate(); err != nil {
		return nil, err
	}
	opts.partitionBy = probe.partitionBy
	opts.withDefaults()
	ts := &Tables{opts: opts, tmpl: tmpl, root: &Table{opts: opts}}
	ts.mu.tables = map[string]*routedTable{}
	return ts, nil
}

// Template is the table template.
func (ts *Tables) Template() string { return ts.opts.Table }

// Route is the table ("namespace.table") the records of partition go to.
func (ts *Tables) Route(partition string) (string, error) { return ts.tmpl.render(partition) }

// table is the Table of name, made on first use.
func (ts *Tables) table(name string) (*routedTable, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if rt, ok := ts.mu.tables[name]; ok {
		return rt, nil
	}
	ns, n, err := splitTable(name)
	if err != nil {
		return nil, err
	}
	o := ts.opts
	o.Table = name // a Sink's log lines name their table themselves
	t := &Table{opts: o, ident: append(append(table.Identifier{}, ns...), n), shared: ts.root,
		metrics: newMetrics(o.MeterProvider, o.Destination, name)}
	rt := &routedTable{t: t, topics: map[string]bool{}}
	ts.mu.tables[name] = rt
	return rt, nil
}

// Table is the Table of name (one the template gives), made on first use.
// It is closed by Tables.Close.
func (ts *Tables) Table(name string) (*Table, error) {
	rt, err := ts.table(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrTemplate, name, err)
	}
	return rt.t, nil
}

// List returns the names of the tables of the catalog the template can
// give (their namespace and name match it), sorted. A namespace that does
// not exist holds none.
func (ts *Tables) List(ctx context.Context) ([]string, error) {
	cat, err := ts.root.catalog(ctx)
	if err != nil {
		return nil, newError("positions", err, false)
	}
	match := ts.tmpl.matchers()
	nss := []table.Identifier{{}}
	for level := range len(match) - 1 {
		var next []table.Identifier
		for _, ns := range nss {
			if lit, ok := ts.tmpl.literal(level); ok {
				next = append(next, append(slices.Clone(ns), lit))
				continue
			}
			children, err := cat.ListNamespaces(ctx, ns)
			if errors.Is(err, catalog.ErrNoSuchNamespace) {
				continue
			}
			if err != nil {
				return nil, newError("positions", err, false)
			}
			for _, c := range children {
				if len(c) == 1 && len(ns) > 0 {
					c = append(slices.Clone(ns), c...)
				}
				if len(c) == level+1 && slices.Equal(c[:level], ns) && match[level].MatchString(c[level]) {
					next = append(next, c)
				}
			}
		}
		nss = next
	}
	var out []string
	for _, ns := range nss {
		for ident, err := range cat.ListTables(ctx, ns) {
			if errors.Is(err, catalog.ErrNoSuchNamespace) {
				break
			}
			if err != nil {
				return nil, newError("positions", err, false)
			}
			if len(ident) == len(match) && match[len(match)-1].MatchString(ident[len(ident)-1]) {
				out = append(out, strings.Join(ident, "."))
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// literal is the template's part at level when it names no placeholder.
func (t tableTemplate) literal(level int) (string, bool) {
	if toks := t.parts[level]; len(toks) == 1 && toks[0].ph == "" {
		return toks[0].lit, true
	}
	return "", false
}

// Positions returns the highest seq stored per partition over the tables
// the template can give (List): each table's Positions, keeping only the
// partitions that route to the table they were read from (a table another
// template or writer filled says nothing of this one's partitions). It has
// the shape of Table.Positions.
func (ts *Tables) Positions(ctx context.Context) (map[string]uint64, error) {
	names, err := ts.List(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, name := range names {
		t, err := ts.Table(name)
		if err != nil {
			return nil, newError("positions", err, false)
		}
		p, err := t.Positions(ctx)
		if err != nil {
			return nil, newError("positions", fmt.Errorf("table %s: %w", name, err), false)
		}
		for part, seq := range p {
			if to, err := ts.Route(part); err == nil && to == name && seq > out[part] {
				out[part] = seq
			}
		}
	}
	return out, nil
}

// Rebuild reads back partition's rows from the table it routes to (see
// Table.Rebuild, whose shape it has).
func (ts *Tables) Rebuild(ctx context.Context, partition string, from, to uint64) ([]*batch.Batch, error) {
	name, err := ts.Route(partition)
	if err != nil {
		return nil, newError("rebuild", err, false)
	}
	t, err := ts.Table(name)
	if err != nil {
		return nil, newError("rebuild", err, false)
	}
	return t.Rebuild(ctx, partition, from, to)
}

// Close closes every table of the set and the catalog connection. Routers
// must be closed first.
func (ts *Tables) Close() error {
	ts.mu.Lock()
	for _, rt := range ts.mu.tables {
		_ = rt.t.Close() // closes no catalog: the root holds it
	}
	ts.mu.Unlock()
	return ts.root.Close()
}

// Dial returns a Router writing into the tables. It connects to the
// catalog (ctx bounds that only); the tables' Sinks are dialled by the
// first batch that routes to each.
func (ts *Tables) Dial(ctx context.Context) (*Router, error) {
	if _, err := ts.root.catalog(ctx); err != nil {
		return nil, newError("open", err, true)
	}
	r := &Router{ts: ts, routes: map[string]string{}}
	r.mu.children = map[string]*child{}
	return r, nil
}

// Router is the lanes.Transport of a table template: it splits every
// batch by the table its partitions route to and sends each part to that
// table's own Sink, dialled on the table's first batch.
//
// A batch whose spans all route to one table goes to it whole. Otherwise
// its spans are split by partition name and its rows by their identity
// columns (batch.IdentityOf), copied per table; a batch of several tables
// without identity columns is refused for good (ErrUnsplittable). A table
// whose spans hold no row of the batch (every record rejected) still gets
// them, in a batch of no rows, so that its positions advance.
//
// Goroutine safety: as Sink. Send is called from one goroutine,
// WaitDurable from another, Close from any goroutine, once.
type Router struct {
	ts     *Tables
	routes map[string]string // partition -> table (Send's goroutine only)

	mu struct {
		sync.Mutex
		err      error // the permanent failure, set once
		closed   bool
		children map[string]*child
	}
}

// child is a table's Sink and the offsets sent to it (under Router.mu).
type child struct {
	name        string
	rt          *routedTable
	s           *Sink
	first, last uint64
	sent        bool
}

// part is what of a batch goes to one table. rec is owned (released after
// the send).
type part struct {
	table string
	rec   arrow.RecordBatch
	spans []batch.OffsetSpan
}

// Send splits b by table and sends every part to its table's Sink. A
// Send retried with the offset of one that failed sends only to the
// tables that did not get it. A table's Sink failing (a permanent error)
// fails the Router for good, naming the table. Send does not take
// ownership of b.
func (r *Router) Send(ctx context.Context, offset uint64, b *batch.Batch) error {
	if err := r.stateErr(); err != nil {
		return err
	}
	parts, err := r.split(ctx, b)
	if err != nil {
		return r.fail(newError("write", err, true))
	}
	defer func() {
		for _, p := range parts {
			p.rec.Release()
		}
	}()
	for _, p := range parts {
		c, err := r.child(ctx, p.table)
		if err != nil {
			return err
		}
		r.mu.Lock()
		done := c.sent && c.last == offset // a retry: this table took it
		r.mu.Unlock()
		if done {
			continue
		}
		topics := topicsOf(p.spans)
		if err := c.s.Send(ctx, offset, &batch.Batch{Rec: p.rec, Spans: p.spans, Reason: b.Reason}); err != nil {
			return r.sendErr(c, topics, err)
		}
		r.mu.Lock()
		if !c.sent {
			c.first, c.sent = offset, true
		}
		c.last = offset
		r.mu.Unlock()
		r.ts.mu.Lock()
		for _, t := range topics {
			c.rt.topics[t] = true
		}
		r.ts.mu.Unlock()
	}
	return nil
}

// sendErr wraps a table's Send error. One that leaves the table's Sink
// usable (a catalog that did not answer while the table was made) is
// returned as it is, for the lane to send the batch again: the tables
// that got it already are skipped then. A permanent one fails the Router;
// a schema the table refuses names the other topics that route to it,
// whose rows made its schema.
func (r *Router) sendErr(c *child, topics []string, err error) error {
	e, ok := errorsAs(err)
	if !ok || !e.permanent {
		return r.wrap(c.name, err)
	}
	if e.Op != "schema" || e.Retryable() {
		return r.fail(r.wrap(c.name, err))
	}
	r.ts.mu.Lock()
	var others []string
	for t := range c.rt.topics {
		if !slices.Contains(topics, t) {
			others = append(others, t)
		}
	}
	r.ts.mu.Unlock()
	slices.Sort(others)
	held := "rows of another topic"
	if len(others) > 0 {
		held = "the rows of " + strings.Join(others, ", ")
	}
	return r.fail(&Error{Op: e.Op, permanent: true, class: e.class,
		Err: fmt.Errorf("topic %s routes to table %s, which holds %s, in a schema it does not fit: %w",
			strings.Join(topics, ", "), c.name, held, e.Err)})
}

// topicsOf are the base topics of spans, sorted, once each.
func topicsOf(spans []batch.OffsetSpan) []string {
	var out []string
	for _, s := range spans {
		t, _ := batch.SplitPartition(s.Partition)
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// child is table's Sink, dialled on first use.
func (r *Router) child(ctx context.Context, name string) (*child, error) {
	r.mu.Lock()
	c := r.mu.children[name]
	r.mu.Unlock()
	if c != nil {
		return c, nil
	}
	rt, err := r.ts.table(name)
	if err != nil {
		return nil, r.fail(newError("open", fmt.Errorf("%w: %q: %w", ErrTemplate, name, err), true))
	}
	s, err := rt.t.Dial(ctx)
	if err != nil {
		return nil, r.fail(r.wrap(name, err))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.closed {
		// Close ran while dialling (from another goroutine): this Sink is
		// not among those it closed.
		_ = s.Close()
		return nil, newError("write", ErrClosed, true)
	}
	c = &child{name: name, rt: rt, s: s}
	r.mu.children[name] = c
	return c, nil
}

// route is the table of partition, remembered (Send's goroutine only).
func (r *Router) route(partition string) (string, error) {
	if t, ok := r.routes[partition]; ok {
		return t, nil
	}
	t, err := r.ts.tmpl.render(partition)
	if err != nil {
		return "", err
	}
	r.routes[partition] = t
	return t, nil
}

// split divides b into the parts of its tables, in table name order.
func (r *Router) split(ctx context.Context, b *batch.Batch) ([]part, error) {
	byTable := map[string][]batch.OffsetSpan{}
	for _, s := range b.Spans {
		t, err := r.route(s.Partition)
		if err != nil {
			return nil, err
		}
		byTable[t] = append(byTable[t], s)
	}
	names := slices.Sorted(maps.Keys(byTable))
	if len(names) == 1 || b.NumRows() == 0 {
		// Every row is in a span, so one table has them all: b goes whole.
		// A batch of no rows goes whole to every table of its spans.
		parts := make([]part, len(names))
		for i, n := range names {
			b.Rec.Retain()
			parts[i] = part{table: n, rec: b.Rec, spans: byTable[n]}
		}
		return parts, nil
	}
	id, ok := batch.IdentityOf(b.Rec.Schema())
	if !ok {
		return nil, fmt.Errorf("%w: its partitions route to tables %s", ErrUnsplittable, strings.Join(names, ", "))
	}
	idx := make(map[string]int, len(names))
	for i, n := range names {
		idx[n] = i
	}
	rows := make([]int, b.NumRows())
	var rerr error
	id.Each(b.Rec, func(partition string, _ uint64, row int) {
		t, err := r.route(partition)
		if err != nil {
			rerr = err
			return
		}
		i, ok := idx[t]
		if !ok {
			rerr = fmt.Errorf("row %d of partition %s is in no span of its batch", row, partition)
			return
		}
		rows[row] = i
	})
	if rerr != nil {
		return nil, rerr
	}
	parts := make([]part, 0, len(names))
	release := func() {
		for _, p := range parts {
			p.rec.Release()
		}
	}
	for i, n := range names {
		rec, err := r.rowsOf(ctx, b.Rec, rows, i)
		if err != nil {
			release()
			return nil, err
		}
		parts = append(parts, part{table: n, rec: rec, spans: byTable[n]})
	}
	return parts, nil
}

// rowsOf copies the rows of rec whose table is i.
func (r *Router) rowsOf(ctx context.Context, rec arrow.RecordBatch, rows []int, i int) (arrow.RecordBatch, error) {
	mem := r.ts.opts.Allocator
	mask := array.NewBooleanBuilder(mem)
	defer mask.Release()
	mask.Reserve(len(rows))
	for _, t := range rows {
		mask.UnsafeAppend(t == i)
	}
	m := mask.NewBooleanArray()
	defer m.Release()
	return compute.FilterRecordBatch(compute.WithAllocator(ctx, mem), rec, m, compute.DefaultFilterOptions())
}

// WaitDurable blocks until every table that got a part of a batch with an
// offset <= offset committed it: each such table's Sink is waited for up
// to the lower of offset and the last offset sent to it. A table that got
// nothing at or below offset is not waited for.
func (r *Router) WaitDurable(ctx context.Context, offset uint64) error {
	type target struct {
		c  *child
		at uint64
	}
	r.mu.Lock()
	if err := r.stateErrLocked(); err != nil {
		r.mu.Unlock()
		return err
	}
	var targets []target
	for _, c := range r.mu.children {
		if c.sent && c.first <= offset {
			targets = append(targets, target{c, min(offset, c.last)})
		}
	}
	r.mu.Unlock()
	if len(targets) == 1 {
		return r.waitErr(targets[0].c, targets[0].c.s.WaitDurable(ctx, targets[0].at))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(targets))
	for _, tg := range targets {
		go func() {
			err := tg.c.s.WaitDurable(ctx, tg.at)
			if err != nil {
				cancel() // the Router is not durable at offset: stop the others
			}
			errs <- r.waitErr(tg.c, err)
		}()
	}
	var first error
	for range targets {
		if err := <-errs; err != nil && (first == nil || isCancel(first)) {
			first = err
		}
	}
	return first
}

// isCancel reports whether err is a wait cancelled because another table
// failed, less telling than that failure.
func isCancel(err error) bool {
	e, ok := errorsAs(err)
	return ok && !e.permanent && errors.Is(err, context.Canceled)
}

// waitErr wraps a table's WaitDurable error; a permanent one fails the
// Router.
func (r *Router) waitErr(c *child, err error) error {
	if err == nil {
		return nil
	}
	if e, ok := errorsAs(err); ok && e.permanent {
		return r.fail(r.wrap(c.name, err))
	}
	return r.wrap(c.name, err)
}

// wrap names table in err, keeping its *Error.
func (r *Router) wrap(table string, err error) error {
	if e, ok := errorsAs(err); ok {
		return &Error{Op: e.Op, Err: fmt.Errorf("table %s: %w", table, e.Err), permanent: e.permanent, class: e.class}
	}
	return fmt.Errorf("iceberg: table %s: %w", table, err)
}

// fail makes err the Router's permanent failure (the first one stays)
// and returns it.
func (r *Router) fail(err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.err == nil {
		if e, ok := errorsAs(err); ok && !e.permanent {
			err = &Error{Op: e.Op, Err: e.Err, permanent: true, class: e.class}
		}
		r.mu.err = err
	}
	return r.mu.err
}

func (r *Router) stateErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stateErrLocked()
}

func (r *Router) stateErrLocked() error {
	if r.mu.err != nil {
		return r.mu.err
	}
	if r.mu.closed {
		return newError("write", ErrClosed, true)
	}
	return nil
}

// Close closes every table's Sink, in parallel, so that it returns within
// CloseTimeout (see Sink.Close). Its error names the tables whose Close
// failed.
func (r *Router) Close() error {
	r.mu.Lock()
	if r.mu.closed {
		r.mu.Unlock()
		return nil
	}
	r.mu.closed = true
	children := slices.Collect(maps.Values(r.mu.children))
	r.mu.Unlock()
	errs := make([]error, len(children))
	var wg sync.WaitGroup
	for i, c := range children {
		wg.Go(func() {
			if err := c.s.Close(); err != nil {
				errs[i] = r.wrap(c.name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
