"""The Pulsar Python client as an independent peer for the raw schema: it
sends messages of every shape and says what it sees of them.

usage:
  shapes.py produce URL TOPIC
      Sends the 16 shapes (payload empty or not, with or without a key,
      properties and an event time) twice: once from a batching producer
      (send_async, then flush) and once from a producer that does not
      batch. Prints one JSON list: per message the shape and the id the
      producer got.
  shapes.py view URL TOPIC SUBSCRIPTION COUNT
      Reads COUNT messages from the earliest on a new subscription and
      prints one JSON list: per message every attribute the client shows.
  shapes.py decode
      Reads a JSON list of base64 serialized message ids on stdin and
      prints the client's MessageId.deserialize of each.

The client logs to stdout too: the JSON is the last line.
"""
import base64
import json
import sys
import threading

import pulsar


def shapes():
    out = []
    for empty in (True, False):
        for key in (None, "k"):
            for props in (None, {"a": "1", "b": ""}):
                for event in (None, 1700000000123):
                    out.append({"empty": empty, "key": key, "props": props, "event": event})
    return out


def id_json(mid):
    return {"ledger": mid.ledger_id(), "entry": mid.entry_id(), "partition": mid.partition(),
            "batch_index": mid.batch_index()}


def send_args(i, s, tag):
    payload = b"" if s["empty"] else ("%s-%d" % (tag, i)).encode()
    kw = {}
    if s["key"] is not None:
        kw["partition_key"] = s["key"]
    if s["props"] is not None:
        kw["properties"] = s["props"]
    if s["event"] is not None:
        kw["event_timestamp"] = s["event"]
    return payload, kw


def produce(url, topic):
    client = pulsar.Client(url)
    sent = []
    batched = client.create_producer(topic, batching_enabled=True, batching_max_publish_delay_ms=60000,
                                     block_if_queue_full=True)
    done = threading.Event()
    lock = threading.Lock()
    pending = [len(shapes())]

    def cb(rec):
        def f(res, mid):
            with lock:
                rec["result"] = str(res)
                rec["id"] = id_json(mid)
                pending[0] -= 1
                if pending[0] == 0:
                    done.set()
        return f

    for i, s in enumerate(shapes()):
        payload, kw = send_args(i, s, "py-batched")
        rec = dict(s, producer="py-batched", payload=base64.b64encode(payload).decode())
        sent.append(rec)
        batched.send_async(payload, cb(rec), **kw)
    batched.flush()
    if not done.wait(60):
        raise SystemExit("batched sends not acknowledged")
    plain = client.create_producer(topic, batching_enabled=False, block_if_queue_full=True)
    for i, s in enumerate(shapes()):
        payload, kw = send_args(i, s, "py-single")
        mid = plain.send(payload, **kw)
        sent.append(dict(s, producer="py-single", payload=base64.b64encode(payload).decode(), result="Ok",
                         id=id_json(mid)))
    client.close()
    print()
    print(json.dumps(sent))


def view(url, topic, sub, count):
    client = pulsar.Client(url)
    c = client.subscribe(topic, sub, initial_position=pulsar.InitialPosition.Earliest)
    seen = []
    while len(seen) < count:
        m = c.receive(timeout_millis=30000)
        seen.append({
            "topic": m.topic_name(),
            "id": id_json(m.message_id()),
            "key": m.partition_key() if m.partition_key() != "" else None,
            "payload": base64.b64encode(m.data()).decode(),
            "props": m.properties(),
            "event": m.event_timestamp(),
            "publish": m.publish_timestamp(),
            "null_value": m.has_null_value(),
        })
        c.acknowledge(m)
    client.close()
    print()
    print(json.dumps(seen))


def decode():
    out = []
    for b in json.load(sys.stdin):
        out.append(id_json(pulsar.MessageId.deserialize(base64.b64decode(b))))
    print(json.dumps(out))


if __name__ == "__main__":
    if sys.argv[1] == "produce":
        produce(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "view":
        view(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif sys.argv[1] == "decode":
        decode()
    else:
        raise SystemExit(__doc__)
