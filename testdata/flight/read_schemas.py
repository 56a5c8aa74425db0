"""An independent pyarrow reader for thalweg's schema evolution test.

Reads a receiver dataset whose batches have more than one schema, as a
plain pyarrow Flight client would: GetFlightInfo, then one DoGet per
endpoint (each endpoint serves one schema). Also opens every segment file
of the dataset directory with pyarrow.ipc.open_stream (a segment is a plain
Arrow IPC stream of one schema).

usage: read_schemas.py --port P --path a/b --dir DATASET_DIR
Prints one JSON object: {"endpoints": [{"fields": [...], "rows": N}, ...],
"segments": [{"fields": [...], "rows": N}, ...], "concat_rows": N}.
"""
import argparse
import glob
import json
import os

import pyarrow as pa
import pyarrow.flight as fl
import pyarrow.ipc as ipc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--dir", required=True)
    a = ap.parse_args()

    client = fl.connect(f"grpc://127.0.0.1:{a.port}")
    info = client.get_flight_info(fl.FlightDescriptor.for_path(*a.path.split("/")))
    tables, endpoints = [], []
    for ep in info.endpoints:
        t = client.do_get(ep.ticket).read_all()
        tables.append(t)
        endpoints.append({"fields": t.schema.names, "rows": t.num_rows})

    segments = []
    for seg in sorted(glob.glob(os.path.join(a.dir, "*.arrows"))):
        with open(seg, "rb") as f:
            r = ipc.open_stream(f)
            rows = sum(b.num_rows for b in r)
            segments.append({"fields": r.schema.names, "rows": rows})

    # Every batch reads as the union schema (a null for a field it lacks).
    merged = pa.concat_tables(tables, promote_options="default")
    print(json.dumps({"endpoints": endpoints, "segments": segments, "concat_rows": merged.num_rows,
                      "concat_fields": merged.schema.names}))


if __name__ == "__main__":
    main()
