"""`oxbow platform` runs a distributed Connect worker beside the broker, the registry and the SQL
server: connectors created over its REST API write through the platform's registry (values in
Avro, as Confluent's quick starts configure a worker), and SIGTERM stops it first."""

import json
import struct
import urllib.request

from confluent_kafka import Consumer, TopicPartition

from harness import unique_topic, wait_until
from test_registry import Platform, http


def _connect(platform, method, path, body=None):
    return http(method, f"http://127.0.0.1:{platform.connect_port}{path}", body,
                content_type="application/json")


def test_the_platforms_worker_writes_avro_through_the_platforms_registry(tmp_path):
    platform = Platform(tmp_path).start()
    wait_until(lambda: _connect(platform, "GET", "/")[0] == 200, 60,
               message="the platform's Connect worker")
    status, root = _connect(platform, "GET", "/")
    assert json.loads(root)["kafka_cluster_id"]
    topic = unique_topic("platform-connect")
    source_file = tmp_path / "in.txt"
    lines = [f"line {i}" for i in range(5)]
    source_file.write_text("".join(line + "\n" for line in lines))
    body = {"name": "lines", "config": {"connector.class": "FileStreamSource",
                                        "file": str(source_file), "topic": topic}}

    def created():
        status, text = _connect(platform, "POST", "/connectors", body)
        return status == 201 or (status != 409 and AssertionError(text))
    assert wait_until(created, 60, interval=0.2, message="the connector created") is True

    # The value converter registered the value's schema under the topic's subject.
    wait_until(lambda: http("GET", f"{platform.url}/subjects/{topic}-value/versions/latest")[0]
               == 200, 60, message="the value schema in the platform's registry")
    schema = json.loads(http("GET", f"{platform.url}/subjects/{topic}-value/versions/latest")[1])
    assert json.loads(schema["schema"]) == "string"

    consumer = Consumer({"bootstrap.servers": platform.bootstrap, "group.id": "check",
                         "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values = []

    def read():
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            values.append(msg.value())
        return len(values) >= len(lines)
    wait_until(read, 60, interval=0, message="the lines in the topic")
    consumer.close()
    # Confluent's wire format: magic byte 0, the schema's id, then Avro's string (length, bytes).
    for raw, line in zip(values, lines):
        magic, schema_id = struct.unpack(">bI", raw[:5])
        assert (magic, schema_id) == (0, schema["id"])
        assert raw[6:].decode() == line
    platform.stop()
