"""Reads a table thalweg wrote with pyiceberg (an independent Iceberg
implementation) and prints what it found as one JSON object.

usage: read_table.py CATALOG_JSON TABLE [--rows] [--filter EXPR]

CATALOG_JSON is a JSON object of pyiceberg catalog properties
({"type": "sql", "uri": "sqlite:///...", "warehouse": "file:///..."} or
{"type": "rest", "uri": "http://...", ...}). The output has the row count,
the Iceberg schema (name: type), the seqs per (topic, partition) as stored
(sorted, duplicates kept), the snapshot summaries' thalweg properties, the table's properties, the
number of manifests in the current snapshot and of metadata-log entries, the
metadata location, the current snapshot's id and its data files and their bytes, and
the result of a DuckDB query over the scan when duckdb is installed. With
--rows, it also lists every row's identity columns and payload (bytes in base64),
and its key, publish_time, event_time (microseconds) and properties when the
table has those columns (null when the column is). It also prints the table's
partition spec and every planned data file's partition record; with --filter
EXPR (a pyiceberg row filter, "partition == 1"), the number of data files and
rows a scan with that filter plans and reads.
"""
import base64
import datetime
import json
import sys

from pyiceberg.catalog import load_catalog


def main():
    props = json.loads(sys.argv[1])
    name = props.pop("name", "thalweg")
    cat = load_catalog(name, **props)
    tbl = cat.load_table(sys.argv[2])
    at = tbl.scan().to_arrow()
    out = {
        "rows": at.num_rows,
        "schema": {f.name: str(f.field_type) for f in tbl.schema().fields},
        "arrow": {f.name: str(f.type) for f in at.schema},
        "format_version": tbl.format_version,
    }
    cols = at.column_names
    seq = "seq" if "seq" in cols else "_seq"
    topic = "topic" if "topic" in cols else "_topic"
    part = "partition" if "partition" in cols else "_partition"
    seqs = {}
    for t, p, s in zip(at.column(topic).to_pylist(), at.column(part).to_pylist(), at.column(seq).to_pylist()):
        seqs.setdefault("%s/%d" % (t, p), []).append(s)
    out["seqs"] = {k: sorted(v) for k, v in seqs.items()}
    if "--rows" in sys.argv[3:]:
        b64 = lambda b: base64.b64encode(b).decode("ascii")
        out["row_list"] = [
            {"topic": t, "partition": p, "seq": s, "message_id": b64(m), "payload": b64(pl)}
            for t, p, s, m, pl in zip(
                at.column(topic).to_pylist(), at.column(part).to_pylist(), at.column(seq).to_pylist(),
                at.column("message_id").to_pylist(), at.column("payload").to_pylist())
        ]
        # The other raw columns, when the table has them: a null stays null.
        def micros(ts):
            if ts is None:
                return None
            epoch = datetime.datetime(1970, 1, 1, tzinfo=ts.tzinfo)
            return (ts - epoch) // datetime.timedelta(microseconds=1)

        extra = {
            "key": lambda v: None if v is None else b64(v),
            "publish_time": micros,
            "event_time": micros,
            "properties": lambda v: None if v is None else dict(v),
        }
        for name, conv in extra.items():
            if name in cols:
                for row, v in zip(out["row_list"], at.column(name).to_pylist()):
                    row[name] = conv(v)
    snaps = []
    for s in tbl.snapshots():
        summ = s.summary.additional_properties if s.summary else {}
        snaps.append({k: v for k, v in summ.items() if k.startswith("thalweg.")})
    out["snapshots"] = snaps
    out["properties"] = {k: v for k, v in tbl.properties.items() if k == "thalweg.positions"}
    out["table_properties"] = dict(tbl.properties)
    cur = tbl.current_snapshot()
    out["manifests"] = len(cur.manifests(tbl.io)) if cur else 0
    out["metadata_log"] = len(tbl.metadata.metadata_log)
    out["metadata_location"] = tbl.metadata_location
    out["snapshot_id"] = cur.snapshot_id if cur else 0
    files = list(tbl.scan().plan_files())
    out["data_files"] = len(files)
    out["data_bytes"] = sum(f.file.file_size_in_bytes for f in files)
    out["spec"] = str(tbl.spec())
    out["file_partitions"] = [
        json.dumps([None if v is None else str(v) for v in (f.file.partition[i] for i in range(len(f.file.partition)))]) for f in files
    ]
    args = sys.argv[3:]
    if "--filter" in args:
        expr = args[args.index("--filter") + 1]
        scan = tbl.scan(row_filter=expr)
        out["filtered_files"] = len(list(scan.plan_files()))
        out["filtered_rows"] = scan.to_arrow().num_rows
    try:
        import duckdb
    except ImportError:
        duckdb = None
    if duckdb is not None:
        con = tbl.scan().to_duckdb(table_name="t")
        out["duckdb_count"] = con.execute("select count(*) from t").fetchone()[0]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
