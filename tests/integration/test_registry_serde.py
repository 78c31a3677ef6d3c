"""Avro, JSON Schema and Protobuf in Confluent's wire format between Confluent's Python serdes and
`oxbow produce/consume --value-format avro|json|protobuf`, through the real broker and registry
(`oxbow platform`).

JSON Schema: Confluent's JSONSerializer and JSONDeserializer (python3-jsonschema validates).
Protobuf: Confluent's ProtobufSerializer and ProtobufDeserializer want a generated message class;
without protoc, the class is built at runtime from a FileDescriptorProto with python3-protobuf's
message factory, the same descriptor the .proto text given to oxbow describes. confluent-kafka 1.7
writes message indexes as unsigned varints (a bug fixed in later releases); for the first message,
[0], both forms are the single byte 0, so only first messages cross between it and oxbow here
(other indexes are covered by the unit tests and the node interop test).

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
        self.kafka_port, self.registry_port, self.sql_port = free_port(), free_port(), free_port()
        self.connect_port = free_port()
        self.log_path = tmp_path / "platform.log"
        self.proc = track(subprocess.Popen(
            [OXBOW_BIN, "platform",
             "--override", f"listeners=PLAINTEXT://127.0.0.1:{self.kafka_port}",
             "--override", f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.kafka_port}",
             "--override", f"log.dirs={tmp_path / 'data'}",
             "--override", "admin.listener=",
             "--registry-override", f"listeners=http://127.0.0.1:{self.registry_port}",
             "--sql-override", f"listeners=http://127.0.0.1:{self.sql_port}",
             "--sql-override", f"ksql.streams.state.dir={tmp_path / 'sql-state'}",
             "--connect-override", f"listeners=http://127.0.0.1:{self.connect_port}"],
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


# ---- JSON Schema ----

from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer  # noqa: E402

EVENT = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "shop.Event",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "price": {"type": "number"},
        "meta": {"type": ["object", "null"]},
    },
    "required": ["id", "name"],
}
EVENTS = [
    {"id": 1, "name": "Zoë ✓", "tags": ["a", "b"], "price": 9.5, "meta": {"nested": [1, None, True]}},
    {"id": -9007199254740993, "name": "", "tags": [], "price": -0.25, "meta": None},
]


def test_confluent_json_serializer_to_oxbow_consume(platform):
    client = SchemaRegistryClient({"url": platform.url})
    serializer = JSONSerializer(json.dumps(EVENT), client)
    ctx = SerializationContext("events", MessageField.VALUE)
    produce_raw(platform, "events", [serializer(e, ctx) for e in EVENTS])
    registered = client.get_latest_version("events-value")
    assert registered.schema.schema_type == "JSON"

    result = oxbow_consume(platform, "events", len(EVENTS), "--value-format", "json")
    assert result.returncode == 0, result.stderr
    assert [json.loads(l) for l in result.stdout.splitlines()] == EVENTS
    # Keys print in the payload's order (Python's json.dumps keeps the dict's).
    assert list(json.loads(result.stdout.splitlines()[0])) == list(EVENTS[0])


def consume_values(platform, topic, count, deserializer):
    consumer = Consumer({"bootstrap.servers": platform.bootstrap, "group.id": f"check-{topic}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got = []

    def read_all():
        m = consumer.poll(0.5)
        if m is not None and not m.error():
            got.append(deserializer(m.value(), SerializationContext(topic, MessageField.VALUE)))
        return len(got) == count

    wait_until(read_all, 30, message="the records back")
    consumer.close()
    return got


def test_oxbow_produce_json_to_confluent_json_deserializer(platform, tmp_path):
    schema_file = tmp_path / "event.json"
    schema_file.write_text(json.dumps(EVENT))
    args = [OXBOW_BIN, "produce", "events", "-b", platform.bootstrap, "--value-format", "json",
            "--value-schema", f"@{schema_file}", "--schema-registry-url", platform.url]
    result = subprocess.run(args, input="".join(json.dumps(e) + "\n" for e in EVENTS),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr

    client = SchemaRegistryClient({"url": platform.url})
    registered = client.get_latest_version("events-value")
    assert registered.schema.schema_type == "JSON"
    assert json.loads(registered.schema.schema_str) == EVENT
    assert consume_values(platform, "events", len(EVENTS), JSONDeserializer(json.dumps(EVENT))) \
        == EVENTS

    # Confluent's json.fail.invalid.schema: off by default (a wrong value is written as it is),
    # on it rejects the value with the reason, one line each, and the good ones go on.
    bad = json.dumps({"id": "one", "name": "x"})
    lenient = subprocess.run(args, input=bad + "\n", capture_output=True, text=True, timeout=60)
    assert lenient.returncode == 0, lenient.stderr
    strict = subprocess.run(
        args + ["--registry-property", "json.fail.invalid.schema=true"],
        input=bad + "\n{\n" + json.dumps(EVENTS[1]) + "\n" + json.dumps({"id": 3}) + "\n",
        capture_output=True, text=True, timeout=60)
    assert strict.returncode == 1
    errors = [l for l in strict.stderr.splitlines() if l.startswith("oxbow: error: stdin line")]
    assert len(errors) == 3, strict.stderr
    assert "stdin line 1 value: Error serializing JSON message: Validation error" in errors[0]
    assert "#/id" in errors[0]
    assert "stdin line 2 value: not a JSON value" in errors[1]
    assert "stdin line 4 value: Error serializing JSON message: Validation error" in errors[2]
    assert "produced 1 records" in strict.stderr


# ---- Protobuf ----

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory  # noqa: E402
from google.protobuf import timestamp_pb2  # noqa: E402,F401  (puts timestamp.proto in the pool)
from confluent_kafka.schema_registry.protobuf import (  # noqa: E402
    ProtobufDeserializer, ProtobufSerializer)

SHOP_PROTO = """syntax = "proto3";
package shop.v1;

import "google/protobuf/timestamp.proto";

enum Status {
  STATUS_UNKNOWN = 0;
  STATUS_PAID = 1;
}
message Order {
  int64 id = 1;
  string customer = 2;
  repeated Line lines = 3;
  map<string, string> tags = 4;
  Status status = 5;
  bytes payload = 6;
  google.protobuf.Timestamp created = 7;
  double total = 8;
  bool gift = 9;

  message Line {
    string sku = 1;
    int32 qty = 2;
  }
}
"""


def shop_order_class():
    """The class protoc would generate from SHOP_PROTO, built from its FileDescriptorProto."""
    F = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(
        name="shop/v1/order.proto", package="shop.v1", syntax="proto3",
        dependency=["google/protobuf/timestamp.proto"])
    status = file.enum_type.add(name="Status")
    status.value.add(name="STATUS_UNKNOWN", number=0)
    status.value.add(name="STATUS_PAID", number=1)
    order = file.message_type.add(name="Order")

    def field(message, name, number, kind, label=F.LABEL_OPTIONAL, type_name=None):
        camel = "".join(w.capitalize() if i else w for i, w in enumerate(name.split("_")))
        f = message.field.add(name=name, number=number, type=kind, label=label, json_name=camel)
        if type_name:
            f.type_name = type_name
        return f

    field(order, "id", 1, F.TYPE_INT64)
    field(order, "customer", 2, F.TYPE_STRING)
    field(order, "lines", 3, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".shop.v1.Order.Line")
    field(order, "tags", 4, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".shop.v1.Order.TagsEntry")
    field(order, "status", 5, F.TYPE_ENUM, type_name=".shop.v1.Status")
    field(order, "payload", 6, F.TYPE_BYTES)
    field(order, "created", 7, F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp")
    field(order, "total", 8, F.TYPE_DOUBLE)
    field(order, "gift", 9, F.TYPE_BOOL)
    line = order.nested_type.add(name="Line")
    field(line, "sku", 1, F.TYPE_STRING)
    field(line, "qty", 2, F.TYPE_INT32)
    entry = order.nested_type.add(name="TagsEntry")
    entry.options.map_entry = True
    field(entry, "key", 1, F.TYPE_STRING)
    field(entry, "value", 2, F.TYPE_STRING)

    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(file.name)
    except KeyError:
        pool.Add(file)
    return message_factory.MessageFactory(pool).GetPrototype(
        pool.FindMessageTypeByName("shop.v1.Order"))


def shop_orders(cls):
    first = cls(id=7, customer="Zoë", status=1, payload=bytes([0, 1, 255]), total=12.5, gift=True)
    first.lines.add(sku="A-1", qty=2)
    first.lines.add(sku="B-2", qty=-1)
    first.tags["channel"] = "web"
    first.created.FromJsonString("2024-03-01T12:30:00.123Z")
    second = cls(id=-9007199254740993)  # everything else at its default
    return [first, second]


def proto_json(message):
    """What oxbow prints: Protobuf's JSON mapping, fields at their default value too."""
    return json_format.MessageToDict(message, including_default_value_fields=True)


def test_confluent_protobuf_serializer_to_oxbow_consume(platform):
    cls = shop_order_class()
    client = SchemaRegistryClient({"url": platform.url})
    serializer = ProtobufSerializer(cls, client)
    ctx = SerializationContext("shop", MessageField.VALUE)
    orders = shop_orders(cls)
    produce_raw(platform, "shop", [serializer(o, ctx) for o in orders])
    # Confluent's serializer registered the import under its path, and the order with a
    # reference to it (as a base64 FileDescriptorProto, which the registry reads).
    registered = client.get_latest_version("shop-value")
    assert registered.schema.schema_type == "PROTOBUF"
    assert [(r["name"], r["subject"]) for r in registered.schema.references] == \
        [("google/protobuf/timestamp.proto", "google/protobuf/timestamp.proto")]

    result = oxbow_consume(platform, "shop", len(orders), "--value-format", "protobuf")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [json.loads(l) for l in lines] == [proto_json(o) for o in orders]
    assert json.loads(lines[0])["created"] == "2024-03-01T12:30:00.123Z"
    assert json.loads(lines[1])["id"] == "-9007199254740993"


def test_oxbow_produce_protobuf_to_confluent_protobuf_deserializer(platform, tmp_path):
    cls = shop_order_class()
    proto_file = tmp_path / "order.proto"
    proto_file.write_text(SHOP_PROTO)
    orders = shop_orders(cls)
    lines = [json_format.MessageToJson(o, indent=None) for o in orders]
    # The .proto names are read as well as the JSON names.
    lines.append(json.dumps({"id": "8", "lines": [{"sku": "C", "qty": 1}], "status": "STATUS_PAID",
                             "gift": True}))
    args = [OXBOW_BIN, "produce", "shop", "-b", platform.bootstrap, "--value-format", "protobuf",
            "--value-schema", f"@{proto_file}", "--value-message", "shop.v1.Order",
            "--schema-registry-url", platform.url]
    result = subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr

    client = SchemaRegistryClient({"url": platform.url})
    registered = client.get_latest_version("shop-value")
    assert registered.schema.schema_type == "PROTOBUF"
    assert "message Order" in registered.schema.schema_str
    got = consume_values(platform, "shop", len(lines), ProtobufDeserializer(cls))
    third = cls(id=8, status=1, gift=True)
    third.lines.add(sku="C", qty=1)
    assert got == orders + [third]

    # Bad input: one line each, the good ones still produced.
    result = subprocess.run(
        args, input='{"id": "x"}\n{"nope": 1}\n[1]\n{"customer": "ok"}\n',
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    errors = [l for l in result.stderr.splitlines() if l.startswith("oxbow: error: stdin line")]
    assert len(errors) == 3, result.stderr
    assert all("Error serializing Protobuf message" in e for e in errors), errors
    assert "Invalid JSON for shop.v1.Order" in errors[0]
    assert "produced 1 records" in result.stderr


def test_undecodable_protobuf_and_json_records_are_skipped(platform, tmp_path):
    proto_file = tmp_path / "order.proto"
    proto_file.write_text(SHOP_PROTO)
    result = subprocess.run(
        [OXBOW_BIN, "produce", "mixed", "-b", platform.bootstrap, "--value-format", "protobuf",
         "--value-schema", f"@{proto_file}", "--schema-registry-url", platform.url,
         "--value", '{"id": "5"}'], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    consumer = Consumer({"bootstrap.servers": platform.bootstrap, "group.id": "raw",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe(["mixed"])
    got = []
    wait_until(lambda: (m := consumer.poll(0.5)) is not None and not m.error()
               and got.append(m.value()) is None, 30, message="the record")
    consumer.close()
    good = got[0]
    produce_raw(platform, "mixed", [
        good[:5] + b"\x02\x0a" + good[6:],   # message indexes [5]: no such message
        good + b"\x12\x09trunc",              # a truncated field
        b"\x00" + (999).to_bytes(4, "big") + b"\x00",
        good,
    ])
    result = oxbow_consume(platform, "mixed", 5, "--value-format", "protobuf")
    assert result.returncode == 1
    expected = {"id": "5", "customer": "", "lines": [], "tags": {}, "status": "STATUS_UNKNOWN",
                "payload": "", "total": 0, "gift": False}
    assert [json.loads(l) for l in result.stdout.splitlines()] == [expected] * 2
    errors = result.stderr.splitlines()
    assert "mixed [0] offset 1: value: Error deserializing Protobuf message" in errors[0]
    assert "Invalid message indexes: [5]" in errors[0]
    assert "Invalid Protobuf binary for shop.v1.Order" in errors[1]
    assert "Error retrieving Protobuf schema for id 999" in errors[2]
    assert errors[-1] == "oxbow: error: 3 records could not be decoded"

    # A Protobuf record read as JSON Schema: its schema is of another type.
    result = oxbow_consume(platform, "mixed", 1, "--value-format", "json")
    assert result.returncode == 1
    assert "Error retrieving JSON schema for id 1: the schema is PROTOBUF, not JSON" in result.stderr
