"""Polls an Iceberg table's current snapshot with pyiceberg (an Iceberg
implementation independent of thalweg's) and prints a line each time the
records it holds change: "<unix nanoseconds> <records>", the time being the
moment the reader had loaded the table's metadata with that snapshot
current. Records are the current snapshot's total-records summary property
(what a scan of it returns: thalweg's raw tables have no deletes).

usage: poll_visible.py CATALOG_JSON TABLE PAUSE_SECONDS

It loads the table anew every PAUSE_SECONDS after the previous load ends,
until its standard input closes; a table that does not exist yet counts as
0 records. The last line, after standard input closes, is "plan <records>":
the records of the current snapshot's data files that scan().plan_files()
lists, to check the summaries against.
"""
import json
import sys
import threading
import time

from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import NoSuchTableError


def main():
    props = json.loads(sys.argv[1])
    name = props.pop("name", "thalweg")
    table, pause = sys.argv[2], float(sys.argv[3])
    cat = load_catalog(name, **props)
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    last, tbl = -1, None
    while not done.is_set():
        try:
            tbl = cat.load_table(table)
        except NoSuchTableError:
            tbl = None
        now = time.time_ns()
        cur = tbl.current_snapshot() if tbl is not None else None
        n = int(cur.summary["total-records"]) if cur is not None and cur.summary else 0
        if n != last:
            print(now, n, flush=True)
            last = n
        done.wait(pause)
    planned = 0
    if tbl is not None:
        tbl = cat.load_table(table)
        planned = sum(t.file.record_count for t in tbl.scan().plan_files())
    print("plan", planned, flush=True)


if __name__ == "__main__":
    main()
