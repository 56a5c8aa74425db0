"""Ingest records into a Zerobus endpoint with the official Python SDK.

Used by thalweg's interop tests (zerobus/server/interop_test.go) as an
independent peer: the official `databricks-zerobus-ingest-sdk` talks to
thalweg's Zerobus-compatible server. Every record carries an integer "id"
in [start, start+count); the Go test reads the server's table back and
checks that every id is stored.

usage: sdk_ingest.py --endpoint http://127.0.0.1:PORT --table c.s.t
                     --token TOKEN --count N [--mode json|json-batch|arrow]
                     [--variant base|note|id-string]

--variant changes the records' schema, for the schema evolution test:
"note" adds a nullable string field "note" (null on odd ids), "id-string"
sends "id" as a string.
Prints one JSON line {"ok": true, "last_offset": ...} on success.
"""

import argparse
import json
import sys

from zerobus import HeadersProvider, RecordType, StreamConfigurationOptions, TableProperties
from zerobus.sdk.shared.arrow import ArrowStreamConfigurationOptions
from zerobus.sdk.sync import ZerobusSdk


class StaticHeaders(HeadersProvider):
    """Bearer token and table name, no OAuth round trip."""

    def __init__(self, token, table):
        super().__init__()
        self._headers = [
            ("authorization", f"Bearer {token}"),
            ("x-databricks-zerobus-table-name", table),
        ]

    def get_headers(self):
        return self._headers


def finish(sdk, stream, arrow):
    """flush and close; survive a close that races a server rotation.

    The SDK reports a rotation in progress at close() as an error even when
    everything is durable (see its Arrow README); the documented recovery is
    to look at the unacknowledged batches and recreate the stream with them.
    """
    for _ in range(5):
        try:
            stream.flush()
            stream.close()
            return
        except Exception as e:  # noqa: BLE001
            try:
                stream.close()
            except Exception:  # noqa: BLE001 - already failed
                pass
            unacked = list(stream.get_unacked_batches())
            print(json.dumps({"retry": str(e), "unacked": len(unacked)}), file=sys.stderr)
            if not unacked:
                return
            stream = sdk.recreate_arrow_stream(stream) if arrow else sdk.recreate_stream(stream)
    raise RuntimeError("could not flush after 5 attempts")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--endpoint", required=True)
    p.add_argument("--table", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--mode", choices=["json", "json-batch", "arrow"], default="json")
    p.add_argument("--variant", choices=["base", "note", "id-string"], default="base")
    a = p.parse_args()

    def record(i):
        r = {"id": str(i) if a.variant == "id-string" else i, "name": f"sdk-{i}"}
        if a.variant == "note":
            r["note"] = f"note-{i}" if i % 2 == 0 else None
        return r

    # unity_catalog_url is only used for OAuth, which a headers provider replaces.
    sdk = ZerobusSdk(a.endpoint, "http://127.0.0.1:9")
    headers = StaticHeaders(a.token, a.table)
    ids = range(a.start, a.start + a.count)

    if a.mode == "arrow":
        import pyarrow as pa

        fields = [("id", pa.large_utf8() if a.variant == "id-string" else pa.int64()), ("name", pa.large_utf8())]
        if a.variant == "note":
            fields.append(("note", pa.large_utf8()))
        schema = pa.schema(fields)
        opts = ArrowStreamConfigurationOptions(recovery_timeout_ms=10000, recovery_backoff_ms=200)
        stream = sdk.create_arrow_stream_with_headers_provider(a.table, schema, headers, opts)
        last = None
        step = 100
        for lo in range(a.start, a.start + a.count, step):
            hi = min(lo + step, a.start + a.count)
            rows = [record(i) for i in range(lo, hi)]
            batch = pa.record_batch({f.name: [r.get(f.name) for r in rows] for f in schema}, schema=schema)
            last = stream.ingest_batch(batch)
        finish(sdk, stream, arrow=True)
    else:
        opts = StreamConfigurationOptions(
            record_type=RecordType.JSON, recovery_timeout_ms=10000, recovery_backoff_ms=200
        )
        stream = sdk.create_stream(
            table_properties=TableProperties(a.table), options=opts, headers_provider=headers
        )
        last = None
        if a.mode == "json-batch":
            chunk = []
            for i in ids:
                chunk.append(json.dumps(record(i)))
                if len(chunk) == 100:
                    last = stream.ingest_records_offset(chunk)
                    chunk = []
            if chunk:
                last = stream.ingest_records_offset(chunk)
        else:
            for i in ids:
                last = stream.ingest_record_offset(json.dumps(record(i)))
        finish(sdk, stream, arrow=False)  # returns once everything is durable
    print(json.dumps({"ok": True, "last_offset": last}))


def run(main):
    """main(), reporting any failure to the Go test as {"ok": false, ...}."""
    try:
        main()
    except Exception as e:  # noqa: BLE001 - report any SDK failure to the Go test
        print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"}))
        sys.exit(1)


if __name__ == "__main__":
    run(main)
