"""`oxbow sql run` with the Schema Registry formats: an AVRO source whose columns are inferred
from `oxbow registry`, fed in Confluent's wire format, and a sink whose schema ksqlDB's way is
registered under `<topic>-value` and whose records are read back by the id they carry.

Debian's python3-confluent-kafka AvroSerializer needs fastavro, which is not installed here, so the
records are encoded and decoded by hand (Avro's binary encoding is small); the registry is driven
by python3-confluent-kafka's SchemaRegistryClient.
"""

import json
import struct
import subprocess

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

import ck_helpers as ck
from harness import OXBOW_BIN, track
from test_registry import Registry
from test_sql_engine import SqlRun, _records

SOURCE_SCHEMA = {
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"},
               {"name": "amount", "type": "double"}],
}

STATEMENTS = """
CREATE STREAM orders WITH (kafka_topic='orders', value_format='AVRO', partitions=1);
CREATE STREAM big AS SELECT id, item, amount * 2 AS doubled FROM orders WHERE amount > 10;
"""

SINK_SCHEMA = (
    '{"type":"record","name":"KsqlDataSourceSchema","namespace":"io.confluent.ksql.avro_schemas",'
    '"fields":[{"name":"ID","type":["null","long"],"default":null},'
    '{"name":"ITEM","type":["null","string"],"default":null},'
    '{"name":"DOUBLED","type":["null","double"],"default":null}],'
    '"connect.name":"io.confluent.ksql.avro_schemas.KsqlDataSourceSchema"}')


def zigzag(n):
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def read_long(data, pos):
    shift = z = 0
    while True:
        b = data[pos]
        pos += 1
        z |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (z >> 1) ^ -(z & 1), pos


def encode_order(schema_id, order_id, item, amount):
    item_bytes = item.encode()
    body = zigzag(order_id) + zigzag(len(item_bytes)) + item_bytes + struct.pack("<d", amount)
    return b"\0" + struct.pack(">I", schema_id) + body


def decode_big(payload):
    """The sink's record: each field a ["null", T] union."""
    pos, row = 0, []
    for kind in ("long", "string", "double"):
        branch, pos = read_long(payload, pos)
        if branch == 0:
            row.append(None)
            continue
        if kind == "long":
            value, pos = read_long(payload, pos)
        elif kind == "string":
            n, pos = read_long(payload, pos)
            value, pos = payload[pos:pos + n].decode(), pos + n
        else:
            value, pos = struct.unpack("<d", payload[pos:pos + 8])[0], pos + 8
        row.append(value)
    assert pos == len(payload)
    return row


@pytest.fixture
def broker(make_broker):
    return make_broker({"group.initial.rebalance.delay.ms": "0"})


@pytest.fixture
def registry(broker, tmp_path):
    r = Registry(broker, tmp_path).start()
    yield r
    if r.proc.poll() is None:
        r.stop()


class SqlRunWithRegistry(SqlRun):
    """`oxbow sql run` with --registry-url (ksql.schema.registry.url)."""

    def __init__(self, broker, tmp_path, statements, registry_url):  # pylint: disable=super-init-not-called
        self.file = tmp_path / "statements.sql"
        self.file.write_text(statements)
        self.log = tmp_path / "sql.log"
        cmd = [OXBOW_BIN, "sql", "run", str(self.file), "-b", broker.bootstrap,
               "--state-dir", str(tmp_path / "state"), "--registry-url", registry_url,
               "--streams-config", "commit.interval.ms=100"]
        with open(self.log, "ab") as log:
            self.proc = track(subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL))


def test_avro_source_inferred_and_sink_registered(broker, registry, tmp_path):
    client = SchemaRegistryClient({"url": registry.url})
    source_id = client.register_schema("orders-value", Schema(json.dumps(SOURCE_SCHEMA), "AVRO"))
    run = SqlRunWithRegistry(broker, tmp_path, STATEMENTS, registry.url)
    run.wait_running(1)

    producer = ck.producer(broker.bootstrap)
    orders = [(1, "tea", 4.5), (2, "piano", 900.0), (3, "lamp", 12.25)]
    for order in orders:
        producer.produce("orders", value=encode_order(source_id, *order))
    producer.produce("orders", value=b"not avro")  # skipped and logged, not fatal
    producer.flush()

    got = _records(broker.bootstrap, "BIG", 2)
    sink_ids = {struct.unpack(">I", m.value()[1:5])[0] for m in got}
    assert all(m.value()[0] == 0 for m in got)
    assert [decode_big(m.value()[5:]) for m in got] == [[2, "piano", 1800.0], [3, "lamp", 24.5]]
    latest = client.get_latest_version("BIG-value")
    assert sink_ids == {latest.schema_id}
    assert json.loads(latest.schema.schema_str) == json.loads(SINK_SCHEMA)
    assert run.proc.poll() is None, run.text()[-3000:]
    run.stop()
