"""KIP-875's offsets and KIP-558's active topics on `oxbow connect standalone`, against the real
broker and over HTTP: a FileStreamSource's file offsets and a FileStreamSink's group offsets read,
refused while the connector runs, altered and reset while it is stopped, and the records it
produces or writes after a resume, from the altered offsets.
"""

from confluent_kafka import TopicPartition

import ck_helpers as ck
from harness import port_accepts, unique_topic, wait_until
from test_connect_rest import Rest, _append, _running
from test_connect_standalone import Standalone, _end_offset, _lines, _read_values

ALTERED = {"message": "The offsets for this connector have been altered successfully"}
RESET = {"message": "The offsets for this connector have been reset successfully"}


def _not_stopped(name):
    return {"error_code": 400,
            "message": "Connectors must be in the STOPPED state before their offsets can be "
                       "modified. This can be done for the specified connector by issuing a 'PUT' "
                       f"request to the '/connectors/{name}/stop' endpoint"}


def _worker(tmp_path, broker, **extra):
    worker = Standalone(tmp_path, broker, [], run=1,
                        worker_extra={"offset.flush.interval.ms": 200, **extra})
    wait_until(lambda: port_accepts(worker.rest_port), 30, message="the REST API to listen")
    return worker, Rest(worker.rest_port)


def _offsets_become(rest, name, expected):
    wait_until(lambda: rest.call("GET", f"/connectors/{name}/offsets") == (200, expected), 30,
               message=f"{name}'s offsets to be {expected}")


def _stop(rest, name):
    assert rest.call("PUT", f"/connectors/{name}/stop") == (204, None)
    wait_until(lambda: rest.call("GET", f"/connectors/{name}/status")[1]["connector"]["state"]
               == "STOPPED", 30, message=f"{name} to stop")


def _file_offsets(path, position):
    return {"offsets": [{"partition": {"filename": str(path)}, "offset": {"position": position}}]}


def test_file_source_offsets_altered_while_stopped_and_resumed_from(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("offsets"))
    source_file = tmp_path / "in.txt"
    lines = [f"line {i}" for i in range(10)]
    _append(source_file, lines)
    worker, rest = _worker(tmp_path, broker)
    assert rest.call("GET", "/connectors/src/offsets")[0] == 404
    config = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}
    assert rest.call("POST", "/connectors", {"name": "src", "config": config})[0] == 201
    assert _read_values(broker.bootstrap, topic, 10) == lines
    _offsets_become(rest, "src", _file_offsets(source_file, source_file.stat().st_size))

    # Running: refused, and nothing changes.
    fifth = sum(len(line) + 1 for line in lines[:5])
    assert rest.call("PATCH", "/connectors/src/offsets", _file_offsets(source_file, fifth)) == (
        400, _not_stopped("src"))
    assert rest.call("DELETE", "/connectors/src/offsets") == (400, _not_stopped("src"))

    _stop(rest, "src")
    code, error = rest.call("PATCH", "/connectors/src/offsets", _file_offsets(source_file, "5"))
    assert code == 500 and error["message"] == (
        "The value for the 'position' key in the offset is expected to be a Long value")
    code, error = rest.call("PATCH", "/connectors/src/offsets", {"offsets": []})
    assert code == 400 and error["message"].startswith("Partitions / offsets need to be provided")
    assert rest.call("PATCH", "/connectors/src/offsets",
                     _file_offsets(source_file, fifth)) == (200, ALTERED)
    assert rest.call("GET", "/connectors/src/offsets") == (200, _file_offsets(source_file, fifth))

    # Resumed: the task reads the file again from the sixth line.
    assert rest.call("PUT", "/connectors/src/resume") == (202, None)
    _running(rest, "src")
    assert _read_values(broker.bootstrap, topic, 15)[10:] == lines[5:]
    _offsets_become(rest, "src", _file_offsets(source_file, source_file.stat().st_size))

    # Reset: no offsets, so the resumed task reads the whole file again.
    _stop(rest, "src")
    assert rest.call("DELETE", "/connectors/src/offsets") == (200, RESET)
    assert rest.call("GET", "/connectors/src/offsets") == (200, {"offsets": []})
    assert rest.call("PUT", "/connectors/src/resume") == (202, None)
    assert _read_values(broker.bootstrap, topic, 25)[15:] == lines
    assert _end_offset(broker.bootstrap, topic) == 25
    worker.stop()


def test_file_sink_group_offsets_altered_and_reset(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("offsets"))
    producer = ck.producer(broker.bootstrap)
    records = [f"record {i}" for i in range(10)]
    for record in records:
        producer.produce(topic, value=record.encode(), partition=0)
    producer.flush(10)
    worker, rest = _worker(tmp_path, broker)
    sink_file = tmp_path / "out.txt"
    config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(sink_file)}
    assert rest.call("POST", "/connectors", {"name": "sink", "config": config})[0] == 201
    wait_until(lambda: len(_lines(sink_file)) >= 10, 30, message="the sink file to fill")

    def group_offsets(offset):
        return {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0},
                             "offset": {"kafka_offset": offset}}]}

    _offsets_become(rest, "sink", group_offsets(10))
    assert rest.call("PATCH", "/connectors/sink/offsets", group_offsets(7)) == (
        400, _not_stopped("sink"))

    _stop(rest, "sink")
    code, error = rest.call("PATCH", "/connectors/sink/offsets", {"offsets": [
        {"partition": {"kafka_partition": 0}, "offset": {"kafka_offset": 1}}]})
    assert (code, error["message"]) == (400, "The partition for a sink connector offset must "
                                        "contain the keys 'kafka_topic' and 'kafka_partition'")
    assert rest.call("PATCH", "/connectors/sink/offsets", group_offsets(7)) == (200, ALTERED)
    assert rest.call("GET", "/connectors/sink/offsets") == (200, group_offsets(7))

    # Resumed: the last three records are written again.
    assert rest.call("PUT", "/connectors/sink/resume") == (202, None)
    wait_until(lambda: len(_lines(sink_file)) >= 13, 30, message="the sink to write again")
    _offsets_become(rest, "sink", group_offsets(10))
    assert _lines(sink_file) == records + records[7:]
    assert rest.call("GET", "/connectors/sink/topics") == (200, {"sink": {"topics": [topic]}})

    # A null offset deletes the partition's committed offset.
    _stop(rest, "sink")
    null_offset = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0},
                                "offset": None}]}
    assert rest.call("PATCH", "/connectors/sink/offsets", null_offset) == (200, ALTERED)
    assert rest.call("GET", "/connectors/sink/offsets") == (200, {"offsets": []})
    assert rest.call("PATCH", "/connectors/sink/offsets", group_offsets(3)) == (200, ALTERED)

    # Reset: the group is gone, so the resumed sink starts at the beginning of the topic.
    assert rest.call("DELETE", "/connectors/sink/offsets") == (200, RESET)
    assert rest.call("GET", "/connectors/sink/offsets") == (200, {"offsets": []})
    assert rest.call("DELETE", "/connectors/sink/offsets") == (200, RESET)  # idempotent
    assert rest.call("PUT", "/connectors/sink/resume") == (202, None)
    wait_until(lambda: len(_lines(sink_file)) >= 23, 30, message="the sink to write it all again")
    assert _lines(sink_file) == records + records[7:] + records
    worker.stop()


def test_sink_group_with_members_is_not_altered(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("offsets"))
    worker, rest = _worker(tmp_path, broker)
    config = {"connector.class": "FileStreamSink", "topics": topic,
              "file": str(tmp_path / "out.txt")}
    assert rest.call("POST", "/connectors", {"name": "busy", "config": config})[0] == 201
    _stop(rest, "busy")
    # Someone else consumes in the connector's group, as a zombie task would.
    member = ck.consumer(broker.bootstrap, **{"group.id": "connect-busy"})
    try:
        member.subscribe([topic])
        def joined():
            member.poll(0.2)  # EOF events and nothing else: the topic is empty
            return bool(member.assignment())

        wait_until(joined, 30, message="the member to join")
        body = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0},
                             "offset": {"kafka_offset": 0}}]}
        code, error = rest.call("PATCH", "/connectors/busy/offsets", body)
        assert code == 500 and error["message"].startswith(
            "Failed to alter consumer group offsets for connector busy either because its tasks "
            "haven't stopped completely yet"), error
        code, error = rest.call("DELETE", "/connectors/busy/offsets")
        assert code == 500 and error["message"].startswith(
            "Failed to reset consumer group offsets for connector busy either because"), error
    finally:
        member.close()
    worker.stop()


def test_active_topics_of_a_source_and_their_reset(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("topics"))
    other = ck.create_topic(broker.bootstrap, unique_topic("topics2"))
    source_file = tmp_path / "in.txt"
    _append(source_file, ["one"])
    worker, rest = _worker(tmp_path, broker)
    assert rest.call("GET", "/connectors/src/topics") == (200, {"src": {"topics": []}})
    config = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}
    assert rest.call("POST", "/connectors", {"name": "src", "config": config})[0] == 201
    wait_until(lambda: rest.call("GET", "/connectors/src/topics") == (
        200, {"src": {"topics": [topic]}}), 30, message="the topic to be active")
    assert rest.call("PUT", "/connectors/src/topics/reset") == (202, None)
    assert rest.call("GET", "/connectors/src/topics") == (200, {"src": {"topics": []}})
    # A new config sends to the other topic: only that one is active since the reset.
    assert rest.call("PUT", "/connectors/src/config", {**config, "topic": other})[0] == 200
    _append(source_file, ["two"])
    wait_until(lambda: rest.call("GET", "/connectors/src/topics") == (
        200, {"src": {"topics": [other]}}), 30, message="the other topic to be active")
    assert rest.call("DELETE", "/connectors/src") == (204, None)
    assert rest.call("GET", "/connectors/src/topics") == (200, {"src": {"topics": []}})
    worker.stop()


def test_topic_tracking_disabled(broker, tmp_path):
    worker, rest = _worker(tmp_path, broker, **{"topic.tracking.enable": "false"})
    disabled = {"error_code": 403, "message": "Topic tracking is disabled."}
    assert rest.call("GET", "/connectors/x/topics") == (403, disabled)
    assert rest.call("PUT", "/connectors/x/topics/reset") == (403, disabled)
    worker.stop()
