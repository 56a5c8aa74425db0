"""An independent pyarrow Flight client of the receiver's "positions" action
and idempotent append (package flight documents both).

DoPuts ordered batches with raw identity columns (topic, partition, seq) and
spans, the second stream repeating part of the first as a restarted worker
would, then asks for the positions with pyarrow's do_action and checks
list_actions offers the action. Prints one JSON line: the action's result
body as parsed, the last ack of each stream and the rows read back.

usage: positions_client.py --port P --path a/b [--token T]
"""
import argparse
import json
import sys

import pyarrow as pa
import pyarrow.flight as fl

TOPIC = "persistent://public/default/py"


def batch(part, first, last):
    seqs = list(range(first, last + 1))
    name = f"{TOPIC}-partition-{part}"
    rb = pa.record_batch(
        {
            "topic": pa.array([TOPIC] * len(seqs), pa.string()),
            "partition": pa.array([part] * len(seqs), pa.int32()),
            "seq": pa.array(seqs, pa.uint64()),
            "payload": pa.array([f"{name}/{s}" for s in seqs], pa.string()),
        }
    )
    return rb, {"partition": name, "first": first, "last": last}


def put(client, desc, opts, items):
    schema = items[0][0].schema
    writer, reader = client.do_put(desc, schema, options=opts)
    for i, (rb, span) in enumerate(items):
        md = {"offset_id": i + 1, "ordered": True, "spans": [span]}
        writer.write_with_metadata(rb, pa.py_buffer(json.dumps(md).encode()))
    writer.done_writing()
    last = None
    while True:
        buf = reader.read()
        if buf is None:
            break
        last = json.loads(buf.to_pybytes())
    writer.close()
    return last


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--token", default="")
    a = ap.parse_args()

    headers = [(b"authorization", f"Bearer {a.token}".encode())] if a.token else []
    opts = fl.FlightCallOptions(headers=headers)
    client = fl.connect(f"grpc://127.0.0.1:{a.port}")
    path = a.path.split("/")
    desc = fl.FlightDescriptor.for_path(*path)

    acks = [
        put(client, desc, opts, [batch(0, 1, 10), batch(1, 1, 5)]),
        # a replay: p0 1..10 again (dropped), p0 8..15 (8..10 dropped), p1 6..7
        put(client, desc, opts, [batch(0, 1, 10), batch(0, 8, 15), batch(1, 6, 7)]),
    ]

    types = [t.type for t in client.list_actions(options=opts)]
    if "positions" not in types:
        sys.exit(f"list_actions does not offer positions: {types}")
    body = json.dumps({"path": path}).encode()
    results = list(client.do_action(fl.Action("positions", body), options=opts))
    if len(results) != 1:
        sys.exit(f"positions returned {len(results)} results, want 1")
    positions = json.loads(results[0].body.to_pybytes())

    missing = list(client.do_action(fl.Action("positions", json.dumps({"path": ["no", "such"]}).encode()), options=opts))
    if [json.loads(r.body.to_pybytes()) for r in missing] != [{"positions": []}]:
        sys.exit(f"positions of a missing dataset: {missing}")

    ticket = fl.Ticket(json.dumps({"path": path}).encode())
    rows = client.do_get(ticket, options=opts).read_all().column("payload").to_pylist()
    print(json.dumps({"positions": positions, "acks": acks, "rows": rows}))


if __name__ == "__main__":
    main()
