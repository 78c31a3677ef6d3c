"""Confluent's Schema Registry converters in `oxbow connect standalone`, against a real `oxbow
broker` and `oxbow registry`, with Confluent's own Python client (python3-confluent-kafka) on the
other side: a FileStreamSource writing through io.confluent.connect.avro.AvroConverter registers
its schema and AvroDeserializer reads its records; records AvroSerializer, JSONSerializer and
ProtobufSerializer wrote are read by a FileStreamSink through the matching converter, which writes
each value's text (a struct as Connect prints it) as a line.

Confluent's Avro serdes encode with fastavro, which Debian does not package: the stand-in of
test_registry_serde.py (Apache Avro's Python implementation under fastavro's name) is used.
"""

import json
import urllib.request

from confluent_kafka import TopicPartition

import ck_helpers as ck
from harness import unique_topic, wait_until
from test_connect_standalone import Standalone, _lines
from test_registry import Registry
from test_registry_serde import shop_order_class  # noqa: F401  (also installs the fastavro stand-in)

from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer  # noqa: E402
from confluent_kafka.schema_registry.json_schema import JSONSerializer  # noqa: E402
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer  # noqa: E402
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

AVRO = "io.confluent.connect.avro.AvroConverter"
JSON_SCHEMA = "io.confluent.connect.json.JsonSchemaConverter"
PROTOBUF = "io.confluent.connect.protobuf.ProtobufConverter"


def _get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def _read_messages(bootstrap, topic, count, timeout=30):
    consumer = ck.consumer(bootstrap)
    consumer.assign([TopicPartition(topic, 0, 0)])
    messages = []

    def enough():
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            messages.append(msg)
        return len(messages) >= count

    try:
        wait_until(enough, timeout, interval=0, message=f"{count} records in {topic}")
    finally:
        consumer.close()
    return messages


def _produce(bootstrap, topic, values):
    producer = Producer({"bootstrap.servers": bootstrap})
    for value in values:
        producer.produce(topic, value=value)
    assert producer.flush(30) == 0


def test_file_source_through_avro_converter_registers_and_confluent_reads(broker, tmp_path):
    registry = Registry(broker, tmp_path).start()
    topic = ck.create_topic(broker.bootstrap, unique_topic("avro-source"))
    source_file = tmp_path / "in.txt"
    lines = [f"line {i} ünïcode" for i in range(20)]
    source_file.write_text("".join(line + "\n" for line in lines))
    # Each line hoisted into a struct: confluent-kafka 1.7's AvroDeserializer cannot read a
    # primitive schema ("string") as the registry stores it.
    source = {"name": "avro-source", "connector.class": "FileStreamSource", "file": source_file,
              "topic": topic, "value.converter": AVRO,
              "value.converter.schema.registry.url": registry.url,
              "transforms": "hoist",
              "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
              "transforms.hoist.field": "line"}
    worker = Standalone(tmp_path, broker, [source], run=1)
    messages = _read_messages(broker.bootstrap, topic, len(lines))
    plugins = _get(f"http://127.0.0.1:{worker.rest_port}/connector-plugins?connectorsOnly=false")
    converters = {p["class"] for p in plugins if p["type"] == "converter"}
    assert {AVRO, JSON_SCHEMA, PROTOBUF} <= converters
    worker.stop()

    # The subject holds the schema AvroData derives from the Connect struct (unnamed: Confluent's
    # ConnectDefault in its namespace).
    latest = _get(f"{registry.url}/subjects/{topic}-value/versions/latest")
    assert latest["version"] == 1
    assert json.loads(latest["schema"]) == {
        "type": "record", "name": "ConnectDefault", "namespace": "io.confluent.connect.avro",
        "fields": [{"name": "line", "type": "string"}]}
    # Each record is in Confluent's wire format and Confluent's deserializer reads it.
    client = SchemaRegistryClient({"url": registry.url})
    deserializer = AvroDeserializer(client)
    ctx = SerializationContext(topic, MessageField.VALUE)
    assert all(m.value()[0] == 0 and int.from_bytes(m.value()[1:5], "big") == latest["id"]
               for m in messages)
    assert [deserializer(m.value(), ctx) for m in messages] == [{"line": line} for line in lines]
    registry.stop()


PERSON_AVRO = {
    "type": "record", "name": "Person", "namespace": "people",
    "fields": [{"name": "name", "type": "string"},
               {"name": "age", "type": ["null", "int"], "default": None},
               {"name": "tags", "type": {"type": "array", "items": "string"}}],
}
PERSON_JSON = {
    "type": "object", "title": "Person",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                   "tags": {"type": "array", "items": {"type": "string"}}},
}
PEOPLE = [{"name": "ann", "age": 31, "tags": ["a", "b"]}, {"name": "bo", "age": 7, "tags": []}]


def _sink_lines(tmp_path, broker, registry, topic, converter, run):
    sink_file = tmp_path / f"out-{run}.txt"
    sink = {"name": f"sink-{run}", "connector.class": "FileStreamSink", "topics": topic,
            "file": sink_file, "value.converter": converter,
            "value.converter.schema.registry.url": registry.url}
    worker = Standalone(tmp_path, broker, [sink], run=run,
                        worker_extra={"offset.flush.interval.ms": 200})
    wait_until(lambda: len(_lines(sink_file)) >= len(PEOPLE), 30,
               message=f"the sink file of {converter}")
    worker.stop()
    return _lines(sink_file)


def test_file_sink_reads_what_confluents_serializers_wrote(broker, tmp_path):
    registry = Registry(broker, tmp_path).start()
    client = SchemaRegistryClient({"url": registry.url})

    avro_topic = ck.create_topic(broker.bootstrap, unique_topic("avro-people"))
    avro = AvroSerializer(client, json.dumps(PERSON_AVRO))
    ctx = SerializationContext(avro_topic, MessageField.VALUE)
    _produce(broker.bootstrap, avro_topic, [avro(p, ctx) for p in PEOPLE])
    assert _sink_lines(tmp_path, broker, registry, avro_topic, AVRO, "avro") == [
        "Struct{name=ann,age=31,tags=[a, b]}", "Struct{name=bo,age=7,tags=[]}"]

    json_topic = ck.create_topic(broker.bootstrap, unique_topic("json-people"))
    serializer = JSONSerializer(json.dumps(PERSON_JSON), client)
    ctx = SerializationContext(json_topic, MessageField.VALUE)
    _produce(broker.bootstrap, json_topic, [serializer(p, ctx) for p in PEOPLE])
    assert _sink_lines(tmp_path, broker, registry, json_topic, JSON_SCHEMA, "json") == [
        "Struct{name=ann,age=31,tags=[a, b]}", "Struct{name=bo,age=7,tags=[]}"]

    # Protobuf: test_registry_serde's shop.v1.Order (its Timestamp import registered by the
    # serializer as a reference), every field optional as ProtobufData reads them.
    proto_topic = ck.create_topic(broker.bootstrap, unique_topic("proto-orders"))
    cls = shop_order_class()
    serializer = ProtobufSerializer(cls, client)
    ctx = SerializationContext(proto_topic, MessageField.VALUE)
    first = cls(id=7, customer="ann", total=12.5, gift=True)
    first.lines.add(sku="A-1", qty=2)
    first.created.FromJsonString("2024-03-01T12:30:00.123Z")
    second = cls(id=8, customer="bo")
    _produce(broker.bootstrap, proto_topic, [serializer(o, ctx) for o in (first, second)])
    got = _sink_lines(tmp_path, broker, registry, proto_topic, PROTOBUF, "proto")
    assert got[0] == ("Struct{id=7,customer=ann,lines=[Struct{sku=A-1,qty=2}],tags={},"
                      "status=STATUS_UNKNOWN,payload=[],created=2024-03-01T12:30:00.123Z,"
                      "total=12.5,gift=true}")
    assert got[1].startswith("Struct{id=8,customer=bo,")
    registry.stop()


def test_header_converters_in_source_and_sink_tasks(broker, tmp_path):
    """The worker's default header.converter (SimpleHeaderConverter) writes a source record's
    headers in Values' text form; a sink's header.converter that fails on a header is handled by
    the connector's errors.* like a key or value converter (stage HEADER_CONVERTER)."""
    topic = ck.create_topic(broker.bootstrap, unique_topic("headers"))
    source_file = tmp_path / "in.txt"
    source_file.write_text("a\nb\n")
    source = {"name": "header-source", "connector.class": "FileStreamSource", "file": source_file,
              "topic": topic, "transforms": "h",
              "transforms.h.type": "org.apache.kafka.connect.transforms.InsertHeader",
              "transforms.h.header": "answer", "transforms.h.value.literal": "42"}
    worker = Standalone(tmp_path, broker, [source], run="headers-source")
    messages = _read_messages(broker.bootstrap, topic, 2)
    worker.stop()
    assert [m.headers() for m in messages] == [[("answer", b"42")], [("answer", b"42")]]

    # A third record whose header is no JSON: JsonConverter as the sink's header converter fails
    # on it, and errors.tolerance=all skips that record only.
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce(topic, value=b"c", headers=[("answer", b"{not json")])
    producer.produce(topic, value=b"d", headers=[("answer", b"7")])
    assert producer.flush(30) == 0
    sink_file = tmp_path / "headers-out.txt"
    sink = {"name": "header-sink", "connector.class": "FileStreamSink", "topics": topic,
            "file": sink_file, "header.converter": "org.apache.kafka.connect.json.JsonConverter",
            "header.converter.schemas.enable": "false", "errors.tolerance": "all",
            "errors.log.enable": "true"}
    worker = Standalone(tmp_path, broker, [sink], run="headers-sink",
                        worker_extra={"offset.flush.interval.ms": 200})
    wait_until(lambda: len(_lines(sink_file)) >= 3, 30, message="the sink file's lines")
    worker.stop()
    assert _lines(sink_file) == ["a", "b", "d"]
    assert "HEADER_CONVERTER" in worker.log()
