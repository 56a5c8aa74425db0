"""Producers written with the Pulsar Python client's schema classes, for
registry_pulsar_test.go. Usage: produce.py SERVICE_URL TOPIC_PREFIX PB2_DIR

Writes, then prints one JSON line of what it sent:
  <prefix>-avro    AvroSchema(Order) x2, then AvroSchema(OrderV2) (a new
                   optional field: schema version 1) x1, then one payload
                   that is not Avro, sent under version 1
  <prefix>-json    JsonSchema(Order) x2
  <prefix>-jsonbytes JsonSchema(Blob) x2 (Bytes fields: required, optional,
                   in an array, a map, a nested record and an array of
                   records), then two payloads of the same schema version
                   that fit neither bytes convention (an unpaired surrogate
                   escape, a number)
  <prefix>-proto   ProtobufNativeSchema(order_pb2.Order) x1
  <prefix>-string  StringSchema() x2
"""
import base64
import json
import sys

import pulsar
from pulsar.schema import (AvroSchema, Array, Boolean, Bytes, Double, Float, Integer, JsonSchema, Long, Map,
                           Record, String, StringSchema)

url, prefix, pb2_dir = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, pb2_dir)
import order_pb2  # noqa: E402
from pulsar.schema import ProtobufNativeSchema  # noqa: E402


class Address(Record):
    city = String(required=True)
    zip = Integer()


class Order(Record):
    _sorted_fields = True
    id = Long(required=True)
    name = String(required=True)
    note = String()
    ok = Boolean(required=True)
    qty = Integer(required=True)
    price = Double(required=True)
    ratio = Float(required=True)
    tags = Array(String())
    attrs = Map(Long())
    addr = Address()


class OrderV2(Record):
    _sorted_fields = True
    id = Long(required=True)
    name = String(required=True)
    note = String()
    ok = Boolean(required=True)
    qty = Integer(required=True)
    price = Double(required=True)
    ratio = Float(required=True)
    tags = Array(String())
    attrs = Map(Long())
    addr = Address()
    coupon = String(required_default=True)  # "default": null: a backward-compatible addition

    @classmethod
    def schema_name(cls):  # the same record name: an upgrade, not a new type
        return 'Order'


class Part(Record):
    data = Bytes()
    label = String()


class Blob(Record):
    id = Long(required=True)
    blob = Bytes(required=True)
    maybe = Bytes()
    chunks = Array(Bytes())
    attrs = Map(Bytes())
    part = Part()
    parts = Array(Part())


class BrokenJson(JsonSchema):
    """Sends, under JsonSchema(Blob)'s version, payloads whose bytes field
    fits neither convention."""

    payloads = [b'{"id": 98, "blob": "ok\\ud800"}', b'{"id": 99, "blob": 7}']

    def encode(self, obj):
        return self.payloads[obj.id - 98]


def b64(b):
    return None if b is None else base64.b64encode(b).decode()


class BrokenAvro(AvroSchema):
    """Sends bytes that are not Avro under the topic's Avro schema."""

    def encode(self, obj):
        return b'\x02\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff'


client = pulsar.Client(url)
sent = {}

p = client.create_producer(prefix + '-avro', schema=AvroSchema(Order))
rows = []
for i, (note, addr) in enumerate([('fragile', None), (None, Address(city='Oslo', zip=150))]):
    o = Order(id=i + 1, name='widget-%d' % i, note=note, ok=i == 0, qty=-3 + i, price=9.5 * (i + 1), ratio=0.25,
              tags=['a', 'b'][:i + 1], attrs={'k': -7 - i}, addr=addr)
    p.send(o)
    rows.append({'id': o.id, 'name': o.name, 'note': note, 'ok': o.ok, 'qty': o.qty, 'price': o.price,
                 'tags': o.tags, 'attrs': o.attrs, 'city': addr.city if addr else None})
p.close()
p = client.create_producer(prefix + '-avro', schema=AvroSchema(OrderV2))
p.send(OrderV2(id=3, name='widget-2', ok=True, qty=1, price=1.0, ratio=0.5, tags=[], attrs={}, addr=None, coupon='SAVE10'))
rows.append({'id': 3, 'coupon': 'SAVE10'})
p.close()
p = client.create_producer(prefix + '-avro', schema=BrokenAvro(OrderV2))
p.send(OrderV2(id=4, name='broken', ok=True, qty=1, price=1.0, ratio=0.5, tags=[], attrs={}, addr=None))
p.close()
sent['avro'] = rows

p = client.create_producer(prefix + '-json', schema=JsonSchema(Order))
rows = []
for i in range(2):
    o = Order(id=10 + i, name='j%d' % i, note=None if i else 'n', ok=True, qty=i, price=0.5, ratio=1.5,
              tags=['x'], attrs={'a': 1}, addr=Address(city='Rome', zip=None) if i else None)
    p.send(o)
    rows.append({'id': o.id, 'name': o.name, 'note': o.note, 'city': 'Rome' if i else None})
p.close()
sent['json'] = rows

# The Python client writes a Bytes field as bytes.decode(): UTF-8 text, which
# json.dumps escapes to ASCII (\\u00e9, surrogate pairs beyond the BMP);
# bytes that are not UTF-8 cannot be sent (UnicodeDecodeError).
p = client.create_producer(prefix + '-jsonbytes', schema=JsonSchema(Blob))
rows = []
for i, (blob, maybe, part) in enumerate([
        (b'h\xc3\xa9llo \x00\x1f"\\/\n\xf0\x9f\x98\x80 \xe2\x82\xac', None, Part(data=b'\x7f', label='x')),
        (b'', b'', None)]):
    o = Blob(id=i + 1, blob=blob, maybe=maybe, chunks=[b'a', b'\xe2\x82\xac', b''][:2 + i], attrs={'k': b'v\xc3\xa9'},
             part=part, parts=[Part(data=b'p0', label='l'), Part(data=None, label=None)])
    p.send(o)
    rows.append({'id': o.id, 'blob': b64(blob), 'maybe': b64(maybe), 'chunks': [b64(c) for c in o.chunks],
                 'attrs': {'k': b64(o.attrs['k'])}, 'part': b64(part.data) if part else None,
                 'parts': [b64(b'p0'), None]})
try:
    p.send(Blob(id=3, blob=b'\xff'))
    raise SystemExit('the Python client sent bytes that are not UTF-8')
except UnicodeDecodeError:
    pass
p.close()
p = client.create_producer(prefix + '-jsonbytes', schema=BrokenJson(Blob))
for i in (98, 99):
    p.send(Blob(id=i, blob=b''))
p.close()
sent['jsonbytes'] = rows

p = client.create_producer(prefix + '-proto', schema=ProtobufNativeSchema(order_pb2.Order))
m = order_pb2.Order(id=77, name='proto', ok=True, price=2.5, status=order_pb2.ACTIVE, tags=['p', 'q'], s32=-5,
                    packed=[1, -2, 300], u=1 << 63)
m.attrs['z'] = 26
m.item.sku = 's1'
m.at.seconds, m.at.nanos = 1709633472, 345000000
m.maybe.value = 8
p.send(m)
p.close()
sent['proto'] = [{'id': 77}]

p = client.create_producer(prefix + '-string', schema=StringSchema())
for s in ['héllo', 'wörld']:
    p.send(s)
p.close()
sent['string'] = ['héllo', 'wörld']

client.close()
print(json.dumps(sent))
