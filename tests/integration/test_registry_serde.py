"""Avro in Confluent's wire format between Confluent's Python serdes and `oxbow produce/consume
--value-format avro`, through the real broker and registry (`oxbow platform`).

Confluent's AvroSerializer and AvroDeserializer (python3-confluent-kafka) do the registration,
subject naming and framing. Their Avro encoding comes from fastavro, which Debian does not
package; where it is missing, a stand-in module named fastavro is put in its place that encodes
with Apache Avro's own Python implementation (python3-avro), so that the bytes oxbow is checked
against are those of Avro's reference implementation and the framing is Confluent's code.
"""

import datetime
import decimal
import json
import signal
import subprocess
import sys
import types
import urllib.request
import uuid

import pytest

from harness import OXBOW_BIN, free_port, track, wait_until


def _fastavro_over_apache_avro():
    try:
        import fastavro  # noqa: F401
        return
    except ImportError:
        pass
    import avro.io
    import avro.schema

    class Parsed(dict):
        """What fastavro.parse_schema returns (a dict, with full names), holding Avro's schema."""

    def parse_schema(schema):
        parsed = Parsed(schema if isinstance(schema, dict) else {"type": schema})
        parsed.avro = avro.schema.parse(json.dumps(schema))
        if isinstance(schema, dict) and "name" in schema:
            parsed["name"] = parsed.avro.fullname
        return parsed

    def schemaless_writer(fo, schema, record):
        avro.io.DatumWriter(schema.avro).write(record, avro.io.BinaryEncoder(fo))

    def schemaless_reader(fo, writer_schema, reader_schema=None, return_record_name=False):
        reader = avro.io.DatumReader(writer_schema.avro, reader_schema.avro if reader_schema else None)
        return reader.read(avro.io.BinaryDecoder(fo))

    module = types.ModuleType("fastavro")
    module.parse_schema = parse_schema
    module.schemaless_writer = schemaless_writer
    module.schemaless_reader = schemaless_reader
    sys.modules["fastavro"] = module


_fastavro_over_apache_avro()

from confluent_kafka import Consumer, Producer  # noqa: E402
from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer  # noqa: E402
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

ORDER = {
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [
            {"name": "name", "type": "string"},
            {"name": "email", "type": ["null", "string"], "default": None}]}},
        {"name": "items", "type": {"type": "array", "items": {
            "type": "record", "name": "Item", "fields": [
                {"name": "sku", "type": "string"},
                {"name": "qty", "type": "int"},
                {"name": "price", "type": "double"}]}}},
        {"name": "tags", "type": {"type": "map", "values": "string"}},
        {"name": "status", "type": {"type": "enum", "name": "Status",
                                    "symbols": ["NEW", "PAID", "SHIPPED"]}},
        {"name": "payload", "type": "bytes"},
        {"name": "discount", "type": ["null", "float", "string"], "default": None},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
                                    "precision": 9, "scale": 2}},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "flag", "type": "boolean"},
        {"name": "code", "type": {"type": "fixed", "name": "Code", "size": 3}},
        {"name": "nested", "type": ["null", {"type": "array", "items": {
            "type": "map", "values": ["null", "long"]}}], "default": None},
    ],
}

UTC = datetime.timezone.utc
RECORDS = [
    {"id": 1, "customer": {"name": "Zoë", "email": "zoe@example.com"},
     "items": [{"sku": "A-1", "qty": 2, "price": 9.5}, {"sku": "B-2", "qty": 1, "price": -0.25}],
     "tags": {"channel": "web", "note": "a \"quoted\" ✓"}, "status": "PAID",
     "payload": bytes([0, 1, 127, 128, 255]), "discount": 2.5,
     "created": datetime.datetime(2024, 3, 1, 12, 30, 0, 123000, tzinfo=UTC),
     "day": datetime.date(2024, 3, 1), "amount": decimal.Decimal("1234.56"),
     "ref": str(uuid.UUID(int=0x1234)), "flag": True, "code": b"\x00\xffA",
     "nested": [{"a": 1, "b": None}, {}]},
    {"id": -9007199254740993, "customer": {"name": "", "email": None}, "items": [], "tags": {},
     "status": "NEW", "payload": b"", "discount": "SPRING",
     "created": datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
     "day": datetime.date(1970, 1, 1), "amount": decimal.Decimal("-0.01"),
     "ref": str(uuid.UUID(int=1)), "flag": False, "code": b"xyz", "nested": None},
]


def avro_json(schema, value, named=None):
    """`value` (as Python's Avro library reads it) in Avro's JSON encoding, which oxbow prints."""
    named = {} if named is None else named
    if isinstance(schema, str):
        if schema in named:
            return avro_json(named[schema], value, named)
        schema = {"type": schema}
    if isinstance(schema, list):
        if value is None:
            return None
        branch = next(b for b in schema if b != "null" and fits(b, value, named))
        name = branch if isinstance(branch, str) else branch.get("name", branch["type"])
        if isinstance(branch, dict) and "name" in branch and "." not in name:
            name = "shop." + name
        return {name: avro_json(branch, value, named)}
    kind, logical = schema["type"], schema.get("logicalType")
    if isinstance(kind, (dict, list)):
        return avro_json(kind, value, named)
    if "name" in schema:
        named[schema["name"]] = schema
        named["shop." + schema["name"]] = schema
    if kind == "record":
        return {f["name"]: avro_json(f["type"], value[f["name"]], named) for f in schema["fields"]}
    if kind == "array":
        return [avro_json(schema["items"], v, named) for v in value]
    if kind == "map":
        return {k: avro_json(schema["values"], v, named) for k, v in value.items()}
    if logical == "timestamp-millis":
        return (value - datetime.datetime(1970, 1, 1, tzinfo=UTC)) // datetime.timedelta(milliseconds=1)
    if logical == "date":
        return (value - datetime.date(1970, 1, 1)).days
    if logical == "decimal":
        unscaled = int(value.scaleb(schema["scale"]))
        size = max(1, (unscaled.bit_length() + 8) // 8)
        value = unscaled.to_bytes(size, "big", signed=True)
    if kind in ("bytes", "fixed"):
        return value.decode("latin-1")
    return value


def fits(branch, value, named):
    kind = branch if isinstance(branch, str) else branch["type"]
    return {"string": isinstance(value, str), "float": isinstance(value, float),
            "long": isinstance(value, int), "array": isinstance(value, list),
            "map": isinstance(value, dict)}.get(kind, False)


class Platform:
    def __init__(self, tmp_path):
        self.kafka_port, self.registry_port = free_port(), free_port()
        self.log_path = tmp_path / "platform.log"
        self.proc = track(subprocess.Popen(
            [OXBOW_BIN, "platform",
             "--override", f"listeners=PLAINTEXT://127.0.0.1:{self.kafka_port}",
             "--override", f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.kafka_port}",
             "--override", f"log.dirs={tmp_path / 'data'}",
             "--override", "admin.listener=",
             "--registry-override", f"listeners=http://127.0.0.1:{self.registry_port}"],
            stdout=open(self.log_path, "ab"), stderr=subprocess.STDOUT))
        wait_until(self._answers, 60, message="the platform's registry")

    def _answers(self):
        try:
            with urllib.request.urlopen(self.url + "/subjects", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    @property
    def url(self):
        return f"http://127.0.0.1:{self.registry_port}"

    @property
    def bootstrap(self):
        return f"127.0.0.1:{self.kafka_port}"

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=30) == 0, self.log_path.read_text()[-3000:]


@pytest.fixture
def platform(tmp_path):
    p = Platform(tmp_path)
    yield p
    p.stop()


def produce_raw(platform, topic, values, keys=None):
    producer = Producer({"bootstrap.servers": platform.bootstrap})
    for i, value in enumerate(values):
        producer.produce(topic, value=value, key=None if keys is None else keys[i])
    assert producer.flush(30) == 0


def oxbow_consume(platform, topic, count, *extra):
    return subprocess.run(
        [OXBOW_BIN, "consume", topic, "-b", platform.bootstrap, "--from-beginning",
         "--max-messages", str(count), "--timeout-ms", "20000",
         "--schema-registry-url", platform.url, *extra],
        capture_output=True, text=True, timeout=60)


def test_confluent_avro_serializer_to_oxbow_consume(platform):
    client = SchemaRegistryClient({"url": platform.url})
    serializer = AvroSerializer(client, json.dumps(ORDER))
    key_serializer = AvroSerializer(client, "string")  # confluent-kafka 1.7 wants a primitive bare
    ctx = SerializationContext("orders", MessageField.VALUE)
    key_ctx = SerializationContext("orders", MessageField.KEY)
    produce_raw(platform, "orders", [serializer(r, ctx) for r in RECORDS],
                keys=[key_serializer(f"k{r['id']}", key_ctx) for r in RECORDS])

    result = oxbow_consume(platform, "orders", len(RECORDS), "--value-format", "avro",
                           "--key-format", "avro", "--format", "%k\\t%s\\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(RECORDS), result.stdout
    for line, record in zip(lines, RECORDS):
        key, value = line.split("\t")
        assert json.loads(key) == f"k{record['id']}"
        assert json.loads(value) == avro_json(ORDER, record)
    # Fields print in the schema's order, as Confluent's console consumer prints them.
    assert list(json.loads(lines[0].split("\t")[1])) == [f["name"] for f in ORDER["fields"]]
    assert client.get_latest_version("orders-value").schema_id == serializer._schema_id


def string_key(client, key):
    """A key written with the schema "string". confluent-kafka 1.7's AvroDeserializer cannot read
    it: it turns the registry's text of a primitive schema, "string" with its quotes (as
    Confluent's registry stores it too), into '{"type":""string""}'. So the same steps by hand."""
    import io
    import avro.io
    assert key[0] == 0
    assert client.get_schema(int.from_bytes(key[1:5], "big")).schema_str == '"string"'
    return avro.io.BinaryDecoder(io.BytesIO(key[5:])).read_utf8()


def test_oxbow_produce_to_confluent_avro_deserializer(platform, tmp_path):
    schema_file = tmp_path / "order.avsc"
    schema_file.write_text(json.dumps(ORDER))
    lines = [json.dumps(f"k{r['id']}") + "\t" + json.dumps(avro_json(ORDER, r)) for r in RECORDS]
    # A union's value may also come unwrapped when one branch fits it.
    plain = avro_json(ORDER, RECORDS[0])
    plain["discount"], plain["customer"]["email"] = 2.5, "zoe@example.com"
    lines.append(json.dumps("k1") + "\t" + json.dumps(plain))
    result = subprocess.run(
        [OXBOW_BIN, "produce", "orders", "-b", platform.bootstrap, "--key-separator", "\t",
         "--value-format", "avro", "--value-schema", f"@{schema_file}",
         "--key-format", "avro", "--key-schema", '"string"', "--schema-registry-url", platform.url],
        input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr

    client = SchemaRegistryClient({"url": platform.url})
    assert client.get_latest_version("orders-value").schema.schema_type == "AVRO"
    deserializer = AvroDeserializer(client)
    consumer = Consumer({"bootstrap.servers": platform.bootstrap, "group.id": "check",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe(["orders"])
    got = []

    def read_all():
        m = consumer.poll(0.5)
        if m is not None and not m.error():
            got.append((string_key(client, m.key()),
                        deserializer(m.value(), SerializationContext("orders", MessageField.VALUE))))
        return len(got) == len(lines)

    wait_until(read_all, 30, message="the records back")
    consumer.close()
    assert got == [(f"k{r['id']}", r) for r in RECORDS + [RECORDS[0]]]

    # Bad input: one clear line each, the good lines still produced, a nonzero exit.
    result = subprocess.run(
        [OXBOW_BIN, "produce", "orders", "-b", platform.bootstrap, "--value-format", "avro",
         "--value-schema", f"@{schema_file}", "--schema-registry-url", platform.url],
        input='{"id": 1\n{"id": "x"}\n' + json.dumps(avro_json(ORDER, RECORDS[1])) + "\n",
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    errors = [l for l in result.stderr.splitlines() if l.startswith("oxbow: error: stdin line")]
    assert len(errors) == 2, result.stderr
    assert "stdin line 1 value: not a JSON value" in errors[0]
    assert "stdin line 2 value" in errors[1] and "$.id: expected a long" in errors[1]
    assert "produced 1 records" in result.stderr


def test_undecodable_records_are_reported_and_skipped(platform):
    client = SchemaRegistryClient({"url": platform.url})
    serializer = AvroSerializer(client, json.dumps(ORDER))
    ctx = SerializationContext("mixed", MessageField.VALUE)
    good = serializer(RECORDS[1], ctx)
    schema_id = int.from_bytes(good[1:5], "big")
    produce_raw(platform, "mixed", [
        good,
        b"\x01" + good[1:],                        # wrong magic byte
        b"\x00" + (999).to_bytes(4, "big") + good[5:],  # an id the registry does not have
        good[:-3],                                 # truncated
        b"\x00" + schema_id.to_bytes(4, "big") + b"\x02\x00",  # not an Order
        good,
    ])
    result = oxbow_consume(platform, "mixed", 6, "--value-format", "avro")
    assert result.returncode == 1
    assert [json.loads(l) for l in result.stdout.splitlines()] == [avro_json(ORDER, RECORDS[1])] * 2
    errors = result.stderr.splitlines()
    assert "mixed [0] offset 1: value: Unknown magic byte!; skipped" in errors[0]
    assert "mixed [0] offset 2: value: Error retrieving Avro schema for id 999" in errors[1]
    assert "Schema 999 not found" in errors[1] and "40403" in errors[1]
    assert "mixed [0] offset 3: value: Error deserializing Avro message" in errors[2]
    assert "mixed [0] offset 4: value: Error deserializing Avro message" in errors[3]
    assert errors[-1] == "oxbow: error: 4 records could not be decoded"
