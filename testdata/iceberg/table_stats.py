"""Prints the state of an Iceberg table's current snapshot as pyiceberg (an
Iceberg implementation independent of thalweg's) sees it, as one JSON object.

usage: table_stats.py CATALOG_JSON TABLE

CATALOG_JSON is a JSON object of pyiceberg catalog properties (see
read_table.py). The output has the snapshots the metadata lists, the
manifests and data files of the current snapshot, its records (the data
files' record counts), the current metadata.json's location, and the time
scan().plan_files() takes on the current snapshot (the fastest of three
plans, in seconds; the table is loaded once, before them).
"""
import json
import sys
import time

from pyiceberg.catalog import load_catalog


def main():
    props = json.loads(sys.argv[1])
    name = props.pop("name", "thalweg")
    tbl = load_catalog(name, **props).load_table(sys.argv[2])
    cur = tbl.current_snapshot()
    plans = []
    tasks = []
    for _ in range(3):
        start = time.perf_counter()
        tasks = list(tbl.scan().plan_files())
        plans.append(time.perf_counter() - start)
    out = {
        "snapshots": len(tbl.snapshots()),
        "manifests": len(cur.manifests(tbl.io)) if cur else 0,
        "data_files": len(tasks),
        "records": sum(t.file.record_count for t in tasks),
        "metadata_location": tbl.metadata_location,
        "plan_seconds": min(plans),
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
