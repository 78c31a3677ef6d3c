"""Kafka Connect's REST API on `oxbow connect standalone`, against the real broker: connectors
created, inspected, paused, resumed, reconfigured, restarted and deleted over HTTP, with Connect's
status codes, bodies and error shape.
"""

import http.client
import json
import time

from confluent_kafka import TopicPartition

import ck_helpers as ck
from harness import port_accepts, unique_topic, wait_until
from test_connect_standalone import Standalone, _end_offset, _read_values


class Rest:
    def __init__(self, port):
        self.port = port

    def call(self, method, path, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            headers = {"Content-Type": "application/json"} if body is not None else {}
            conn.request(method, path, None if body is None else json.dumps(body), headers)
            response = conn.getresponse()
            text = response.read().decode()
            return response.status, (json.loads(text) if text else None)
        finally:
            conn.close()


def _worker(tmp_path, broker):
    worker = Standalone(tmp_path, broker, [], run=1, worker_extra={"offset.flush.interval.ms": 200})
    wait_until(lambda: port_accepts(worker.rest_port), 30, message="the REST API to listen")
    return worker, Rest(worker.rest_port)


def _append(path, lines):
    with open(path, "a") as f:
        f.write("".join(line + "\n" for line in lines))


def _stays(condition, seconds):
    """Asserts `condition` holds at every check for `seconds` (proving nothing arrives)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert condition()


def _status(rest, name):
    return rest.call("GET", f"/connectors/{name}/status")[1]


def _running(rest, name, state="RUNNING"):
    def check():
        status = _status(rest, name)
        return (status["connector"]["state"] == state and status["tasks"]
                and all(t["state"] == state for t in status["tasks"]))
    wait_until(check, 30, message=f"{name} and its tasks {state}")


def test_root_and_plugins(broker, tmp_path):
    worker, rest = _worker(tmp_path, broker)
    code, root = rest.call("GET", "/")
    assert code == 200 and set(root) == {"version", "commit", "kafka_cluster_id"}
    assert root["kafka_cluster_id"]
    code, plugins = rest.call("GET", "/connector-plugins")
    assert code == 200
    classes = {p["class"]: p["type"] for p in plugins}
    assert classes["org.apache.kafka.connect.file.FileStreamSourceConnector"] == "source"
    assert classes["org.apache.kafka.connect.file.FileStreamSinkConnector"] == "sink"
    assert {p["type"] for p in plugins} == {"source", "sink"}
    code, everything = rest.call("GET", "/connector-plugins?connectorsOnly=false")
    listed = {(p["class"], p["type"]) for p in everything}
    assert ("org.apache.kafka.connect.transforms.InsertField$Value", "transformation") in listed
    # A class that is both is listed as both, as Connect lists it.
    assert ("org.apache.kafka.connect.json.JsonConverter", "converter") in listed
    assert ("org.apache.kafka.connect.json.JsonConverter", "header_converter") in listed
    assert ("org.apache.kafka.connect.storage.SimpleHeaderConverter", "header_converter") in listed
    assert ("org.apache.kafka.connect.storage.SimpleHeaderConverter", "converter") not in listed
    assert "predicate" in {t for _, t in listed}
    code, keys = rest.call("GET", "/connector-plugins/FileStreamSource/config")
    assert code == 200 and "topic" in {k["name"] for k in keys}
    code, result = rest.call("PUT", "/connector-plugins/FileStreamSource/config/validate",
                             {"connector.class": "FileStreamSource", "name": "v", "file": "/tmp/x"})
    assert code == 200 and result["error_count"] == 1
    assert result["name"] == "org.apache.kafka.connect.file.FileStreamSourceConnector"
    code, result = rest.call("PUT", "/connector-plugins/FileStreamSource/config/validate",
                             {"name": "v", "file": "/tmp/x", "topic": "t"})
    assert code == 200 and result["error_count"] == 0
    assert "tasks.max" in {c["definition"]["name"] for c in result["configs"]}
    code, error = rest.call("GET", "/connectors/nope")
    assert (code, error) == (404, {"error_code": 404, "message": "Connector nope not found"})
    code, error = rest.call("GET", "/connectors/nope/status")
    assert code == 404 and error["message"] == "No status found for connector nope"
    worker.stop()


def test_connector_lifecycle(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("rest"))
    other = ck.create_topic(broker.bootstrap, unique_topic("rest2"))
    source_file = tmp_path / "in.txt"
    _append(source_file, [f"line {i}" for i in range(10)])
    worker, rest = _worker(tmp_path, broker)
    config = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}

    code, info = rest.call("POST", "/connectors", {"name": "src", "config": config})
    assert code == 201, info
    assert info["name"] == "src" and info["type"] == "source"
    assert info["tasks"] == [{"connector": "src", "task": 0}]
    assert info["config"]["name"] == "src"
    assert _read_values(broker.bootstrap, topic, 10) == [f"line {i}" for i in range(10)]
    _running(rest, "src")
    status = _status(rest, "src")
    assert status["type"] == "source"
    assert status["connector"]["worker_id"] == f"127.0.0.1:{worker.rest_port}"
    assert rest.call("GET", "/connectors") == (200, ["src"])
    code, expanded = rest.call("GET", "/connectors?expand=status&expand=info")
    assert expanded["src"]["status"]["connector"]["state"] == "RUNNING"
    assert expanded["src"]["info"]["config"]["topic"] == topic
    assert rest.call("GET", "/connectors/src/config")[1]["file"] == str(source_file)
    code, tasks = rest.call("GET", "/connectors/src/tasks")
    assert tasks[0]["id"] == {"connector": "src", "task": 0} and tasks[0]["config"]["topic"] == topic
    code, task = rest.call("GET", "/connectors/src/tasks/0/status")
    assert code == 200 and task["state"] == "RUNNING" and task["id"] == 0

    # The same name again: 409.
    code, error = rest.call("POST", "/connectors", {"name": "src", "config": config})
    assert code == 409 and error == {"error_code": 409, "message": "Connector src already exists"}

    # Paused: no new records until resumed.
    assert rest.call("PUT", "/connectors/src/pause") == (202, None)
    _running(rest, "src", "PAUSED")
    _append(source_file, ["while paused"])
    _stays(lambda: _end_offset(broker.bootstrap, topic) == 10, 1.5)
    assert rest.call("PUT", "/connectors/src/resume") == (202, None)
    _running(rest, "src")
    assert _read_values(broker.bootstrap, topic, 11)[10] == "while paused"

    # A new config moves the connector to the other topic, from where its offsets left it.
    code, info = rest.call("PUT", "/connectors/src/config", {**config, "topic": other})
    assert code == 200 and info["config"]["topic"] == other
    _append(source_file, ["to the other topic"])
    assert _read_values(broker.bootstrap, other, 1) == ["to the other topic"]
    assert _end_offset(broker.bootstrap, topic) == 11

    # Restarts.
    assert rest.call("POST", "/connectors/src/restart") == (204, None)
    code, status = rest.call("POST", "/connectors/src/restart?includeTasks=true")
    assert code == 202 and status["name"] == "src"
    assert rest.call("POST", "/connectors/src/tasks/0/restart") == (204, None)
    code, error = rest.call("POST", "/connectors/src/tasks/7/restart")
    assert code == 404 and error["message"] == "Task src-7 not found"
    _running(rest, "src")

    # Stopped: no tasks.
    assert rest.call("PUT", "/connectors/src/stop") == (204, None)
    status = _status(rest, "src")
    assert status["connector"]["state"] == "STOPPED" and status["tasks"] == []
    assert rest.call("PUT", "/connectors/src/resume") == (202, None)
    _running(rest, "src")

    assert rest.call("DELETE", "/connectors/src") == (204, None)
    code, error = rest.call("GET", "/connectors/src")
    assert (code, error["message"]) == (404, "Connector src not found")
    assert rest.call("GET", "/connectors") == (200, [])
    worker.stop()


def test_bad_configs_are_refused(broker, tmp_path):
    worker, rest = _worker(tmp_path, broker)
    code, error = rest.call("POST", "/connectors", {
        "name": "bad", "config": {"connector.class": "FileStreamSource", "file": "/tmp/x"}})
    assert code == 400 and error["error_code"] == 400
    assert error["message"].startswith(
        "Connector configuration is invalid and contains the following 1 error(s):")
    assert "topic" in error["message"]
    assert rest.call("GET", "/connectors") == (200, [])
    code, error = rest.call("PUT", "/connectors/a/config", {"name": "b", "connector.class": "x"})
    assert code == 400 and "doesn't match connector name in the URL (a)" in error["message"]
    code, error = rest.call("PUT", "/connectors/a/config", {"connector.class": "NoSuchThing"})
    assert code == 400
    worker.stop()


def test_failing_task_is_failed_with_its_trace(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("rest"))
    producer = ck.producer(broker.bootstrap)
    producer.produce(topic, value=b"not json", partition=0)
    producer.flush(10)
    worker, rest = _worker(tmp_path, broker)
    # JsonConverter cannot read the record: the task fails, the worker and its API go on.
    code, _ = rest.call("PUT", "/connectors/sink/config", {
        "connector.class": "FileStreamSink", "topics": topic, "file": str(tmp_path / "out.txt"),
        "value.converter": "org.apache.kafka.connect.json.JsonConverter"})
    assert code == 201

    def failed():
        tasks = _status(rest, "sink")["tasks"]
        return tasks and tasks[0]["state"] == "FAILED"
    wait_until(failed, 30, message="the sink task FAILED")
    task = rest.call("GET", "/connectors/sink/tasks/0/status")[1]
    assert task["trace"] and task["worker_id"] == f"127.0.0.1:{worker.rest_port}"
    assert _status(rest, "sink")["connector"]["state"] == "RUNNING"
    code, status = rest.call("POST", "/connectors/sink/restart?includeTasks=true&onlyFailed=true")
    assert code == 202 and status["name"] == "sink"
    assert rest.call("GET", "/")[0] == 200
    worker.stop()


def test_sink_created_over_rest_writes_the_topic(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("rest"))
    producer = ck.producer(broker.bootstrap)
    for i in range(5):
        producer.produce(topic, value=f"record {i}".encode(), partition=0)
    producer.flush(10)
    worker, rest = _worker(tmp_path, broker)
    sink_file = tmp_path / "out.txt"
    code, info = rest.call("POST", "/connectors", {"name": "sink", "config": {
        "connector.class": "FileStreamSink", "topics": topic, "file": str(sink_file)}})
    assert code == 201 and info["type"] == "sink"
    wait_until(lambda: sink_file.exists() and len(sink_file.read_text().splitlines()) >= 5, 30,
               message="the sink file to hold the records")
    assert sink_file.read_text().splitlines() == [f"record {i}" for i in range(5)]
    _running(rest, "sink")
    worker.stop()


def test_connector_client_overrides_follow_the_workers_policy(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("rest"))
    producer = ck.producer(broker.bootstrap)
    for i in range(3):
        producer.produce(topic, value=f"record {i}".encode(), partition=0)
    producer.flush(10)
    worker, rest = _worker(tmp_path, broker)
    sink_file = tmp_path / "out.txt"
    # All (Kafka's default): the sink's consumer takes the connector's group.id (KIP-458).
    code, _ = rest.call("POST", "/connectors", {"name": "sink", "config": {
        "connector.class": "FileStreamSink", "topics": topic, "file": str(sink_file),
        "consumer.override.group.id": "my-own-group"}})
    assert code == 201
    wait_until(lambda: ck.committed_total(broker.bootstrap, "my-own-group", topic, 1) == 3, 30,
               message="the sink's offsets committed under its own group")
    assert ck.committed_total(broker.bootstrap, "connect-sink", topic, 1) == 0
    worker.stop()

    strict = Standalone(tmp_path, broker, [], run=2, worker_extra={
        "connector.client.config.override.policy": "None"})
    wait_until(lambda: port_accepts(strict.rest_port), 30, message="the REST API to listen")
    code, body = Rest(strict.rest_port).call("POST", "/connectors", {"name": "sink2", "config": {
        "connector.class": "FileStreamSink", "topics": topic, "file": str(sink_file),
        "producer.override.linger.ms": "9"}})
    assert code == 400, body
    assert ("The 'None' policy does not allow 'producer.override.linger.ms' to be overridden in "
            "the connector configuration.") in body["message"]
    strict.stop()
