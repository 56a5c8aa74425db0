"""An independent pyarrow Flight server for thalweg's sink interop test.

Accepts DoPut, acknowledges every batch with the agreed PutResult encoding
{"ack_up_to_offset": N, "ack_up_to_records": R}, and when a stream ends
appends what it received to an Arrow IPC stream file (--out) together with
the offsets, one JSON line per batch in --out.offsets.

usage: ack_server.py --out received.arrows
Prints "READY <port>" once serving; runs until killed.
"""
import argparse
import json
import sys
import threading

import pyarrow as pa
import pyarrow.flight as fl


class AckServer(fl.FlightServerBase):
    def __init__(self, out, **kw):
        super().__init__("grpc://127.0.0.1:0", **kw)
        self.out = out
        self.lock = threading.Lock()
        self.streams = 0

    def do_put(self, context, descriptor, reader, writer):
        received, offsets = [], []
        records = 0
        last = None
        while True:
            try:
                chunk = reader.read_chunk()
            except StopIteration:
                break
            if chunk.data is None:
                continue
            md = json.loads(chunk.app_metadata.to_pybytes())
            off = md["offset_id"]
            if last is not None and off < last:
                raise fl.FlightServerError(f"offset {off} after {last}")
            if last is not None and off == last and "part" not in md:
                raise fl.FlightServerError(f"offset {off} repeated")
            last = off
            records += chunk.data.num_rows
            received.append(chunk.data)
            offsets.append(md)
            # Ack a split batch only at its last part.
            if md.get("part", 0) == md.get("parts", 1) - 1:
                ack = {"ack_up_to_offset": off, "ack_up_to_records": records}
                writer.write(pa.py_buffer(json.dumps(ack).encode()))
        with self.lock:
            self.streams += 1
            with pa.OSFile(f"{self.out}.{self.streams}", "wb") as f, pa.ipc.new_stream(f, reader.schema) as w:
                for b in received:
                    w.write_batch(b)
            with open(f"{self.out}.{self.streams}.offsets", "w") as f:
                json.dump({"path": [p.decode() if isinstance(p, bytes) else p for p in descriptor.path], "meta": offsets}, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    srv = AckServer(a.out)
    print(f"READY {srv.port}", flush=True)
    srv.serve()


if __name__ == "__main__":
    sys.exit(main())
