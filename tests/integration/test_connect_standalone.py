"""`oxbow connect standalone` against the real broker: Kafka's FileStreamSource writes a file's
lines into a topic and resumes from its offsets file after a restart, FileStreamSink writes the
topic's records into a file, commits its group's offsets after flushing and resumes from them.

Records are read back with confluent-kafka by partition assignment (no group), the sink's committed
offsets through a consumer of the connector's group that never joins it.
"""

import json
import signal
import subprocess

from confluent_kafka import TopicPartition

import ck_helpers as ck
from harness import OXBOW_BIN, free_port, track, unique_topic, wait_until

STRING = "org.apache.kafka.connect.storage.StringConverter"


def _write_properties(path, props):
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return str(path)


class Standalone:
    """One `oxbow connect standalone` process over the given connector configs."""

    def __init__(self, tmp_path, broker, connectors, run, worker_extra=None):
        self.rest_port = free_port()
        worker = _write_properties(tmp_path / f"worker-{run}.properties", {
            "bootstrap.servers": broker.bootstrap,
            "listeners": f"http://127.0.0.1:{self.rest_port}",
            "key.converter": STRING,
            "value.converter": STRING,
            "offset.storage.file.filename": tmp_path / "connect.offsets",
            **(worker_extra or {}),
        })
        files = [_write_properties(tmp_path / f"{c['name']}.properties", c) for c in connectors]
        self.log_path = tmp_path / f"connect-{run}.log"
        with open(self.log_path, "wb") as log:
            self.proc = track(subprocess.Popen([OXBOW_BIN, "connect", "standalone", worker, *files],
                                               stdout=log, stderr=log, stdin=subprocess.DEVNULL))

    def log(self):
        return self.log_path.read_text(errors="replace")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=30)
        assert code == 0, f"connect exited with {code}\n{self.log()}"


def _read_values(bootstrap, topic, count, timeout=30):
    """The first `count` values of partition 0, in order (more if more are there)."""
    consumer = ck.consumer(bootstrap)
    consumer.assign([TopicPartition(topic, 0, 0)])
    values = []

    def enough():
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            values.append(msg.value().decode())
        return len(values) >= count

    try:
        wait_until(enough, timeout, interval=0, message=f"{count} records in {topic}")
    finally:
        consumer.close()
    return values


def _end_offset(bootstrap, topic):
    consumer = ck.consumer(bootstrap)
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
    finally:
        consumer.close()


def _lines(path):
    return path.read_text().splitlines() if path.exists() else []


def test_file_source_resumes_from_its_offsets_and_sink_writes_the_topic(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("connect"))
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    first = [f"first {i} ünïcode" for i in range(40)]
    source_file.write_text("".join(line + "\n" for line in first))
    source = {"name": "file-source", "connector.class": "FileStreamSource",
              "file": source_file, "topic": topic}

    # The default flush interval (a minute) is not reached in the first run: the offsets file
    # holds only what stopping the worker committed.
    run1 = Standalone(tmp_path, broker, [source], run=1)
    assert _read_values(broker.bootstrap, topic, len(first)) == first
    run1.stop()
    # Stopping committed the position past the last line read, keyed as Connect keys offsets.
    offsets = json.loads((tmp_path / "connect.offsets").read_text())["offsets"]
    assert offsets == [{"key": ["file-source", {"filename": str(source_file)}],
                        "value": {"position": source_file.stat().st_size}}]
    assert _end_offset(broker.bootstrap, topic) == len(first)

    second = [f"second {i}" for i in range(25)]
    with open(source_file, "a") as f:
        f.write("".join(line + "\n" for line in second))
    sink = {"name": "file-sink", "connector.class": "FileStreamSink", "topics": topic,
            "file": sink_file}
    # FileStreamSink writes its lines at flush(), before each commit: every 200 ms here.
    run2 = Standalone(tmp_path, broker, [source, sink], run=2,
                      worker_extra={"offset.flush.interval.ms": 200})
    # Only the appended lines are new in the topic, in order.
    assert _read_values(broker.bootstrap, topic, len(first) + len(second)) == first + second
    # The sink writes every record of the topic, in order, as a line.
    wait_until(lambda: len(_lines(sink_file)) >= len(first) + len(second), 30,
               message="the sink file to hold every line")
    run2.stop()
    assert _lines(sink_file) == first + second
    # Nothing was read twice: the topic ends where the two runs' lines end.
    assert _end_offset(broker.bootstrap, topic) == len(first) + len(second)
    # The sink's group committed past the last record it flushed.
    group = ck.consumer(broker.bootstrap, **{"group.id": "connect-file-sink"})
    try:
        committed = group.committed([TopicPartition(topic, 0)], timeout=10)
    finally:
        group.close()
    assert committed[0].offset == len(first) + len(second)
    assert "task file-source-0 stopped" in run2.log() and "task file-sink-0 stopped" in run2.log()

    # Both resume: the source from its file offset, the sink from its group's offset, so the sink
    # file gains the third lines once each.
    third = [f"third {i}" for i in range(10)]
    with open(source_file, "a") as f:
        f.write("".join(line + "\n" for line in third))
    run3 = Standalone(tmp_path, broker, [source, sink], run=3,
                      worker_extra={"offset.flush.interval.ms": 200})
    everything = first + second + third
    wait_until(lambda: len(_lines(sink_file)) >= len(everything), 30,
               message="the sink file to hold the third lines")
    run3.stop()
    assert _lines(sink_file) == everything
    assert _end_offset(broker.bootstrap, topic) == len(everything)


def test_bad_connector_config_fails_with_its_errors(broker, tmp_path):
    source = {"name": "no-topic", "connector.class": "FileStreamSource",
              "file": tmp_path / "in.txt"}
    run = Standalone(tmp_path, broker, [source], run=1)
    code = run.proc.wait(timeout=30)
    assert code == 1
    log = run.log()
    assert "Connector configuration for no-topic is invalid and contains 1 error(s)" in log
    assert "topic" in log
