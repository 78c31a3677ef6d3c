"""`oxbow sql run` with the Schema Registry formats: an AVRO source whose columns are inferred
from `oxbow registry`, fed in Confluent's wire format, and a sink whose schema ksqlDB's way is
registered under `<topic>-value` and whose records are read back by the id they carry.

Debian's python3-confluent-kafka AvroSerializer needs fastavro, which is not installed here, so the
records are encoded and decoded by Debian's python3-avro (Apache Avro's own Python implementation)
behind the 5-byte header; the registry is driven by python3-confluent-kafka's SchemaRegistryClient.
"""

import decimal
import io
import json
import struct
import subprocess

import avro.io
import avro.schema

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
CREATE STREAM big AS SELECT id, item, amount * 2 AS doubled, CAST(amount AS DECIMAL(10, 2)) AS price
  FROM orders WHERE amount > 10;
CREATE STREAM big_json WITH (value_format='JSON_SR') AS SELECT id, item FROM orders WHERE amount > 10;
"""

SINK_SCHEMA = (
    '{"type":"record","name":"KsqlDataSourceSchema","namespace":"io.confluent.ksql.avro_schemas",'
    '"fields":[{"name":"ID","type":["null","long"],"default":null},'
    '{"name":"ITEM","type":["null","string"],"default":null},'
    '{"name":"DOUBLED","type":["null","double"],"default":null},'
    '{"name":"PRICE","type":["null",{"type":"bytes","scale":2,"precision":10,"connect.version":1,'
    '"connect.parameters":{"scale":"2","connect.decimal.precision":"10"},'
    '"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}],"default":null}],'
    '"connect.name":"io.confluent.ksql.avro_schemas.KsqlDataSourceSchema"}')


def encode_order(schema_id, order):
    out = io.BytesIO()
    avro.io.DatumWriter(avro.schema.parse(json.dumps(SOURCE_SCHEMA))).write(
        order, avro.io.BinaryEncoder(out))
    return b"\0" + struct.pack(">I", schema_id) + out.getvalue()


def decode(client, framed):
    """A record read with the writer's schema its id names, as Confluent's deserializers do."""
    assert framed[0] == 0
    schema_id = struct.unpack(">I", framed[1:5])[0]
    writer = avro.schema.parse(client.get_schema(schema_id).schema_str)
    return schema_id, avro.io.DatumReader(writer).read(avro.io.BinaryDecoder(io.BytesIO(framed[5:])))


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
    run.wait_running(2)

    # The sinks' schemas are registered by the statements, before any record.
    latest = client.get_latest_version("BIG-value")
    assert json.loads(latest.schema.schema_str) == json.loads(SINK_SCHEMA)
    json_latest = client.get_latest_version("BIG_JSON-value")
    assert json_latest.schema.schema_type == "JSON"

    producer = ck.producer(broker.bootstrap)
    orders = [(1, "tea", 4.5), (2, "piano", 900.0), (3, "lamp", 12.25)]
    for order_id, item, amount in orders:
        producer.produce("orders", value=encode_order(source_id, {"id": order_id, "item": item,
                                                                   "amount": amount}))
    producer.produce("orders", value=b"not avro")  # skipped and logged, not fatal
    producer.flush()

    got = [decode(client, m.value()) for m in _records(broker.bootstrap, "BIG", 2)]
    assert {schema_id for schema_id, _ in got} == {latest.schema_id}
    assert [row for _, row in got] == [
        {"ID": 2, "ITEM": "piano", "DOUBLED": 1800.0, "PRICE": decimal.Decimal("900.00")},
        {"ID": 3, "ITEM": "lamp", "DOUBLED": 24.5, "PRICE": decimal.Decimal("12.25")}]
    framed = [m.value() for m in _records(broker.bootstrap, "BIG_JSON", 2)]
    assert [f[:5] for f in framed] == [b"\0" + struct.pack(">I", json_latest.schema_id)] * 2
    assert [json.loads(f[5:]) for f in framed] == [{"ID": 2, "ITEM": "piano"},
                                                   {"ID": 3, "ITEM": "lamp"}]
    assert run.proc.poll() is None, run.text()[-3000:]
    run.stop()


PINNED_SCHEMA = {
    "type": "record", "name": "Pinned", "namespace": "shop",
    "fields": [{"name": "ID", "type": "long"}, {"name": "ITEM", "type": "string"},
               {"name": "NOTE", "type": "string", "default": "n/a"}],
}


def test_named_and_pinned_sink_schemas(broker, registry, tmp_path):
    """VALUE_SCHEMA_FULL_NAME names the registered record; VALUE_SCHEMA_ID writes with the pinned
    schema under its id and registers nothing for the sink (issue 42)."""
    client = SchemaRegistryClient({"url": registry.url})
    source_id = client.register_schema("orders-value", Schema(json.dumps(SOURCE_SCHEMA), "AVRO"))
    pinned_id = client.register_schema("pinned-elsewhere-value",
                                       Schema(json.dumps(PINNED_SCHEMA), "AVRO"))
    statements = f"""
CREATE STREAM orders WITH (kafka_topic='orders', value_format='AVRO', partitions=1);
CREATE STREAM named WITH (value_schema_full_name='shop.Named') AS SELECT id, item FROM orders;
CREATE STREAM pinned WITH (value_schema_id={pinned_id}) AS SELECT id, item FROM orders;
"""
    run = SqlRunWithRegistry(broker, tmp_path, statements, registry.url)
    run.wait_running(2)

    named = json.loads(client.get_latest_version("NAMED-value").schema.schema_str)
    assert (named["name"], named["namespace"]) == ("Named", "shop")
    assert "PINNED-value" not in client.get_subjects()

    producer = ck.producer(broker.bootstrap)
    producer.produce("orders", value=encode_order(source_id, {"id": 7, "item": "cup",
                                                               "amount": 1.0}))
    producer.flush()
    [(named_id, named_row)] = [decode(client, m.value())
                               for m in _records(broker.bootstrap, "NAMED", 1)]
    assert named_row == {"ID": 7, "ITEM": "cup"}
    [(schema_id, row)] = [decode(client, m.value()) for m in _records(broker.bootstrap, "PINNED", 1)]
    assert schema_id == pinned_id != named_id
    assert row == {"ID": 7, "ITEM": "cup", "NOTE": "n/a"}
    assert run.proc.poll() is None, run.text()[-3000:]
    run.stop()
