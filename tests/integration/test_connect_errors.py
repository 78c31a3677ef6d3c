"""Kafka Connect's error handling on `oxbow connect standalone`, against the real broker: a
FileStreamSink reading JsonConverter records with schemas, some of them not valid, fails with
errors.tolerance=none, and with errors.tolerance=all writes the good ones while the bad ones land
in the dead letter queue topic as they were read, with Connect's __connect.errors.* headers.
"""

import json
import urllib.request

import ck_helpers as ck
from harness import port_accepts, unique_topic, wait_until
from test_connect_rest import Rest, _status
from test_connect_standalone import Standalone, _lines, _read_values

JSON = "org.apache.kafka.connect.json.JsonConverter"


def _envelope(text):
    return json.dumps({"schema": {"type": "string", "optional": False}, "payload": text})


# Good records, and two kinds of bad ones: bytes that are not JSON, and JSON without the
# schema/payload envelope that schemas.enable=true requires.
RECORDS = [
    {"key": b"k0", "value": _envelope("good 0").encode()},
    {"key": b"k1", "value": b"{not json", "headers": [("origin", b"test")]},
    {"key": b"k2", "value": _envelope("good 1").encode()},
    {"key": b"k3", "value": b'{"a": 1}'},
    {"key": b"k4", "value": _envelope("good 2").encode()},
]


def _sink(name, topic, sink_file, **errors):
    return {"name": name, "connector.class": "FileStreamSink", "topics": topic,
            "file": sink_file, "value.converter": JSON,
            "value.converter.schemas.enable": "true", **errors}


def _produce(broker, topic):
    producer = ck.producer(broker.bootstrap)
    ck.produce_all(producer, RECORDS, topic, partition=0)


def _worker(tmp_path, broker, connectors):
    worker = Standalone(tmp_path, broker, connectors, run=1,
                        worker_extra={"offset.flush.interval.ms": 200})
    wait_until(lambda: port_accepts(worker.rest_port), 30, message="the REST API to listen")
    return worker, Rest(worker.rest_port)


def _failed_task(rest, name):
    """The connector's task once FAILED, its trace showing the cause of the tolerance error."""
    def failed():
        tasks = _status(rest, name)["tasks"]
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]
    task = wait_until(failed, 30, message=f"the task of {name} to fail")
    assert task["trace"].startswith("Tolerance exceeded in error handler\nCaused by: "
                                    "org.apache.kafka.connect.errors.DataException: "), task
    return task


def test_tolerance_none_fails_the_task_with_the_cause(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("connect-errors-none"))
    _produce(broker, topic)
    dlq = unique_topic("connect-dlq-none")
    # A dead letter queue does not make errors tolerated: the failing record is sent to it, then
    # the task fails, as in Kafka.
    worker, rest = _worker(tmp_path, broker, [_sink(
        "strict", topic, tmp_path / "out.txt", **{"errors.deadletterqueue.topic.name": dlq})])
    try:
        _failed_task(rest, "strict")
        assert _status(rest, "strict")["connector"]["state"] == "RUNNING"
        dead = ck.consume_partition(broker.bootstrap, dlq, expected=1, timeout=30)
    finally:
        worker.stop()
    assert [(m.key(), m.value()) for m in dead] == [(b"k1", b"{not json")]
    assert dead[0].headers() == [("origin", b"test")]  # no context headers unless enabled
    # Nothing after the bad record was written.
    assert "good 1" not in _lines(tmp_path / "out.txt")


def _metrics(port):
    """GET /metrics's samples, by name with labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def test_tolerance_all_skips_bad_records_into_the_dead_letter_queue(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("connect-errors-all"))
    dlq = unique_topic("connect-dlq")
    _produce(broker, topic)
    sink_file = tmp_path / "out.txt"
    # The default replication factor (3) is more than this one-broker cluster has: the queue is
    # created with what the cluster allows.
    connector = _sink("tolerant", topic, sink_file, **{
        "errors.tolerance": "all",
        "errors.log.enable": "true",
        "errors.log.include.messages": "true",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.context.headers.enable": "true"})
    worker, rest = _worker(tmp_path, broker, [connector])
    try:
        wait_until(lambda: len(_lines(sink_file)) >= 3, 30, message="the good records")
        assert _lines(sink_file) == ["good 0", "good 1", "good 2"]
        dead = ck.consume_partition(broker.bootstrap, dlq, expected=2, timeout=30)
        task = _status(rest, "tolerant")["tasks"][0]
        assert task["state"] == "RUNNING", task
        # The group commits past every record, the failed ones included.
        wait_until(lambda: ck.committed_total(broker.bootstrap, "connect-tolerant", topic, 1) == 5,
                   30, message="the offsets past the bad records to be committed")
        # Kafka's task-error-metrics, for Prometheus beside the REST API.
        metrics = _metrics(worker.rest_port)
        labels = '{connector="tolerant",task="0"}'
        assert metrics[f"kafka_connect_task_error_metrics_total_records_skipped{labels}"] == 2
        assert metrics[f"kafka_connect_task_error_metrics_total_record_errors{labels}"] == 2
        assert metrics[f"kafka_connect_task_error_metrics_total_record_failures{labels}"] == 2
        assert metrics[f"kafka_connect_task_error_metrics_total_retries{labels}"] == 0
        assert metrics["kafka_connect_connect_worker_metrics_task_count"] == 1
        assert metrics["kafka_connect_connect_worker_metrics_connector_count"] == 1
    finally:
        worker.stop()

    assert [(m.key(), m.value()) for m in dead] == [(b"k1", b"{not json"), (b"k3", b'{"a": 1}')]
    for message, offset in zip(dead, (1, 3)):
        headers = message.headers()
        context = {k: v.decode() for k, v in headers if k.startswith("__connect.errors.")}
        assert context["__connect.errors.topic"] == topic
        assert context["__connect.errors.partition"] == "0"
        assert context["__connect.errors.offset"] == str(offset)
        assert context["__connect.errors.connector.name"] == "tolerant"
        assert context["__connect.errors.task.id"] == "0"
        assert context["__connect.errors.stage"] == "VALUE_CONVERTER"
        assert context["__connect.errors.class.name"] == JSON
        assert (context["__connect.errors.exception.class.name"]
                == "org.apache.kafka.connect.errors.DataException")
        assert context["__connect.errors.exception.message"]
        assert context["__connect.errors.exception.stacktrace"].startswith(
            "org.apache.kafka.connect.errors.DataException: ")
    # The original headers come first, as they were.
    assert dead[0].headers()[0] == ("origin", b"test")
    log = worker.log()
    assert log.count("Error encountered in task tolerant-0. Executing stage 'VALUE_CONVERTER'") == 2
    assert f"where consumed record is {{topic='{topic}', partition=0, offset=3" in log
    metadata = ck.topic_metadata(broker.bootstrap, dlq)
    assert len(metadata.partitions) == 1


def test_validate_lists_and_checks_the_error_handling_configs(broker, tmp_path):
    worker, rest = _worker(tmp_path, broker, [])
    try:
        config = {"connector.class": "FileStreamSink", "name": "v", "topics": "a",
                  "file": str(tmp_path / "x"), "errors.tolerance": "maybe",
                  "errors.deadletterqueue.topic.name": "a"}
        status, infos = rest.call("PUT", "/connector-plugins/FileStreamSink/config/validate",
                                  config)
        assert status == 200
        assert "Error Handling" in infos["groups"]
        values = {c["value"]["name"]: c for c in infos["configs"] if c["value"]}
        assert values["errors.tolerance"]["value"]["errors"] == [
            "Invalid value maybe for configuration errors.tolerance: "
            "String must be one of: none, all"]
        assert values["errors.tolerance"]["definition"]["group"] == "Error Handling"
        assert values["topics"]["value"]["errors"] == [
            "The DLQ topic 'a' may not be included in the list of topics ('topics=[a]') "
            "consumed by the connector"]
        assert infos["error_count"] == 2
        definition = values["errors.deadletterqueue.topic.replication.factor"]["definition"]
        assert (definition["type"], definition["default_value"]) == ("SHORT", "3")
        # Creating it fails with the same message.
        status, body = rest.call("POST", "/connectors", {"name": "v", "config": config})
        assert status == 400, body
        assert "errors.tolerance" in body["message"]
    finally:
        worker.stop()


def test_a_failing_transform_is_skipped_with_its_stage_and_class(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("connect-errors-smt"))
    dlq = unique_topic("connect-dlq-smt")
    producer = ck.producer(broker.bootstrap)
    # ExtractField needs a struct: it fails on the string records marked "poison" (the predicate
    # applies it to those only), and the others pass it untouched.
    ck.produce_all(producer, [
        {"value": _envelope("plain 0").encode()},
        {"value": _envelope("poisoned").encode(), "headers": [("poison", b"1")]},
        {"value": _envelope("plain 1").encode()},
    ], topic, partition=0)
    sink_file = tmp_path / "out.txt"
    connector = _sink("smt", topic, sink_file, **{
        "transforms": "extract", "transforms.extract.type": "ExtractField$Value",
        "transforms.extract.field": "f", "transforms.extract.predicate": "marked",
        "predicates": "marked", "predicates.marked.type": "HasHeaderKey",
        "predicates.marked.name": "poison",
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.context.headers.enable": "true"})
    worker, rest = _worker(tmp_path, broker, [connector])
    try:
        wait_until(lambda: len(_lines(sink_file)) >= 2, 30, message="the plain records")
        dead = ck.consume_partition(broker.bootstrap, dlq, expected=1, timeout=30)
        assert _status(rest, "smt")["tasks"][0]["state"] == "RUNNING"
    finally:
        worker.stop()
    assert _lines(sink_file) == ["plain 0", "plain 1"]
    assert len(dead) == 1 and dead[0].value() == _envelope("poisoned").encode()
    context = {k: v.decode() for k, v in dead[0].headers() if k.startswith("__connect.errors.")}
    assert context["__connect.errors.stage"] == "TRANSFORMATION"
    assert (context["__connect.errors.class.name"]
            == "org.apache.kafka.connect.transforms.ExtractField$Value")
    assert context["__connect.errors.exception.message"].startswith("Only Struct objects supported")


def _cast_source(name, source_file, topic, tolerance):
    # Cast parses each line as an int32: "x" fails in the transform.
    return {"name": name, "connector.class": "FileStreamSource", "file": source_file,
            "topic": topic, "transforms": "cast", "transforms.cast.type": "Cast$Value",
            "transforms.cast.spec": "int32", "errors.tolerance": tolerance,
            "errors.log.enable": "true", "errors.log.include.messages": "true"}


def test_a_source_skips_or_fails_on_a_record_its_transform_cannot_handle(broker, tmp_path):
    source_file = tmp_path / "in.txt"
    source_file.write_text("1\n2\nx\n3\n")
    lenient_topic = ck.create_topic(broker.bootstrap, unique_topic("connect-errors-src"))
    strict_topic = ck.create_topic(broker.bootstrap, unique_topic("connect-errors-src-none"))
    worker, rest = _worker(tmp_path, broker, [
        _cast_source("lenient", source_file, lenient_topic, "all"),
        _cast_source("strict", source_file, strict_topic, "none")])
    try:
        assert _read_values(broker.bootstrap, lenient_topic, 3) == ["1", "2", "3"]
        _failed_task(rest, "strict")
        assert _status(rest, "lenient")["tasks"][0]["state"] == "RUNNING"
    finally:
        worker.stop()
    log = worker.log()
    assert ("Error encountered in task lenient-0. Executing stage 'TRANSFORMATION' with class "
            "'org.apache.kafka.connect.transforms.Cast$Value', where source record is = "
            "SourceRecord{sourcePartition={filename=") in log
    # The skipped line's offset is committed like the others: a restart reads nothing again.
    offsets = json.loads((tmp_path / "connect.offsets").read_text())["offsets"]
    lenient = [o["value"] for o in offsets if o["key"][0] == "lenient"]
    assert lenient == [{"position": source_file.stat().st_size}]
