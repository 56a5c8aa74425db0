"""An independent pyarrow Flight client for thalweg's receiver interop test.

DoPuts deterministic batches with {"offset_id": N} app_metadata (no spans,
as a plain pyarrow client would), reads the cumulative acks, then DoGets the
dataset back and checks it is identical. Writes the batches it sent to an
Arrow IPC stream file so the Go test can compare them with what it stored.

usage: put_client.py --port P --path a/b --out sent.arrows [--token T]
Exit status 0 and a JSON summary line on stdout on success.
"""
import argparse
import json
import sys

import pyarrow as pa
import pyarrow.flight as fl


def batches(n):
    for i in range(n):
        rows = 10 + i
        yield pa.record_batch(
            {
                "id": pa.array(range(i * 1000, i * 1000 + rows), pa.int64()),
                "name": pa.array([f"row-{i}-{j}" for j in range(rows)], pa.string()),
                "score": pa.array([j * 0.5 for j in range(rows)], pa.float64()),
            }
        )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--token", default="")
    ap.add_argument("--batches", type=int, default=25)
    a = ap.parse_args()

    headers = [(b"authorization", f"Bearer {a.token}".encode())] if a.token else []
    opts = fl.FlightCallOptions(headers=headers)
    client = fl.connect(f"grpc://127.0.0.1:{a.port}")
    desc = fl.FlightDescriptor.for_path(*a.path.split("/"))
    sent = list(batches(a.batches))

    writer, reader = client.do_put(desc, sent[0].schema, options=opts)
    acks = []
    for i, b in enumerate(sent):
        offset = 5 + 2 * i
        writer.write_with_metadata(b, pa.py_buffer(json.dumps({"offset_id": offset}).encode()))
    writer.done_writing()
    while True:
        buf = reader.read()
        if buf is None:
            break
        acks.append(json.loads(buf.to_pybytes()))
    writer.close()

    last = 5 + 2 * (len(sent) - 1)
    if not acks or acks[-1]["ack_up_to_offset"] != last:
        sys.exit(f"final ack {acks[-1:]} does not cover offset {last}")
    offs = [x["ack_up_to_offset"] for x in acks]
    if offs != sorted(offs) or len(set(offs)) != len(offs):
        sys.exit(f"acks not strictly increasing: {offs}")
    if acks[-1]["ack_up_to_records"] != sum(b.num_rows for b in sent):
        sys.exit(f"ack_up_to_records {acks[-1]['ack_up_to_records']} is wrong")

    ticket = fl.Ticket(json.dumps({"path": a.path.split("/")}).encode())
    got = client.do_get(ticket, options=opts).read_all()
    want = pa.Table.from_batches(sent)
    if not got.equals(want):
        sys.exit(f"DoGet returned different data:\n{got}\nwant\n{want}")

    info = client.get_flight_info(desc, options=opts)
    if info.total_records != want.num_rows or not info.schema.equals(want.schema):
        sys.exit(f"FlightInfo says {info.total_records} rows, schema {info.schema}")

    with pa.OSFile(a.out, "wb") as f, pa.ipc.new_stream(f, want.schema) as w:
        for b in sent:
            w.write_batch(b)
    print(json.dumps({"acks": len(acks), "last": acks[-1], "rows": want.num_rows}))


if __name__ == "__main__":
    main()
