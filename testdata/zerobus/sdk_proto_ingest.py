"""Ingest protobuf records of a generated class with the official Zerobus SDK.

Used by zerobus/server's TestOfficialSDKPackagedProto: compiles a .proto file
that declares message Order (orders.proto, orders_proto3.proto) with protoc
(grpcio-tools) into a temporary folder, imports the generated module and
ingests --count Order records through the official
`databricks-zerobus-ingest-sdk`, passing the generated class's DESCRIPTOR as
a user would. Record i is built by order(i) below; the Go test rebuilds the
same values and checks the server's stored rows field by field.

usage: sdk_proto_ingest.py --endpoint http://127.0.0.1:PORT --table c.s.t
                           --token TOKEN --proto orders.proto --count N
Prints one JSON line {"ok": true, "last_offset": ...} on success, or
{"ok": false, "error": ...}.
"""

import argparse
import importlib
import json
import os
import sys
import tempfile

from grpc_tools import protoc

from sdk_ingest import StaticHeaders, finish, run
from zerobus import RecordType, StreamConfigurationOptions, TableProperties
from zerobus.sdk.sync import ZerobusSdk


def compile_proto(path):
    """protoc --python_out for path; returns the imported module."""
    out = tempfile.mkdtemp(prefix="thalweg-proto-")
    folder, name = os.path.split(os.path.abspath(path))
    rc = protoc.main(["protoc", f"-I{folder}", f"--python_out={out}", os.path.join(folder, name)])
    if rc != 0:
        raise RuntimeError(f"protoc failed on {path} (exit {rc})")
    sys.path.insert(0, out)
    return importlib.import_module(name[: -len(".proto")] + "_pb2")


def order(pb, i):
    """Record i; TestOfficialSDKPackagedProto's wantOrder mirrors it."""
    o = pb.Order(id=i, customer=f"cust-{i}", status=pb.Order.PLACED if i % 2 == 0 else pb.Order.SHIPPED)
    for k in range(i % 3):
        item = o.items.add(sku=f"sku-{i}-{k}", quantity=k + 1, kind=pb.Order.Item.GOODS if k == 0 else pb.Order.Item.SERVICE)
        if k == 1:
            item.discount.percent = 5 * (i % 7)
            item.discount.code = f"d{i}"
    o.attributes["region"] = f"r{i % 4}"
    o.attributes["channel"] = "web"
    o.by_sku[f"sku-{i}"].quantity = i
    o.by_sku[f"sku-{i}"].kind = pb.Order.Item.GOODS
    o.history.extend([pb.Order.PLACED] * (i % 2) + [pb.Order.SHIPPED])
    return o


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--endpoint", required=True)
    p.add_argument("--table", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--proto", required=True)
    p.add_argument("--count", type=int, required=True)
    a = p.parse_args()

    pb = compile_proto(a.proto)
    sdk = ZerobusSdk(a.endpoint, "http://127.0.0.1:9")
    opts = StreamConfigurationOptions(record_type=RecordType.PROTO, recovery_timeout_ms=10000, recovery_backoff_ms=200)
    # As the SDK's documentation shows for a generated class: its Descriptor.
    props = TableProperties(a.table, pb.Order.DESCRIPTOR)
    stream = sdk.create_stream(table_properties=props, options=opts, headers_provider=StaticHeaders(a.token, a.table))
    last = None
    for i in range(a.count):
        last = stream.ingest_record_offset(order(pb, i))
    finish(sdk, stream, arrow=False)
    print(json.dumps({"ok": True, "last_offset": last}))


if __name__ == "__main__":
    run(main)
