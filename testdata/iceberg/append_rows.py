"""Appends rows to a table with pyiceberg (another engine than thalweg),
one commit per call.

usage: append_rows.py CATALOG_JSON TABLE TOPIC PARTITION FIRST N

CATALOG_JSON is as for read_table.py. The rows have topic TOPIC,
partition PARTITION and seq FIRST..FIRST+N-1 in the columns of those names
(or _topic, _partition, _seq); every other column is null.
"""
import json
import sys

import pyarrow as pa
from pyiceberg.catalog import load_catalog


def main():
    props = json.loads(sys.argv[1])
    name = props.pop("name", "thalweg")
    cat = load_catalog(name, **props)
    tbl = cat.load_table(sys.argv[2])
    topic, part, first, n = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    schema = tbl.schema().as_arrow()
    cols = []
    for f in schema:
        if f.name in ("topic", "_topic"):
            cols.append(pa.array([topic] * n, type=f.type))
        elif f.name in ("partition", "_partition"):
            cols.append(pa.array([part] * n, type=f.type))
        elif f.name in ("seq", "_seq"):
            cols.append(pa.array(range(first, first + n), type=f.type))
        else:
            cols.append(pa.nulls(n, type=f.type))
    tbl.append(pa.Table.from_arrays(cols, schema=schema))


if __name__ == "__main__":
    main()
