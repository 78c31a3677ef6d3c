"""`oxbow connect distributed`: workers in one group share connectors through Connect's three
internal topics, in Kafka Connect's record formats; a follower forwards writes to the leader;
a worker killed with -9 has its connectors and tasks run elsewhere after
scheduled.rebalance.max.delay.ms, and the file source and sink lose nothing (at least once:
duplicates are counted, never lost lines); configs and offsets survive a restart of every worker.
"""

import http.client
import json
import signal
import subprocess
import time

from confluent_kafka import Consumer, TopicPartition

import ck_helpers as ck
from harness import OXBOW_BIN, free_port, port_accepts, track, unique_topic, wait_until
from test_connect_errors import _metrics
from test_connect_rest import Rest, _stays

STRING = "org.apache.kafka.connect.storage.StringConverter"


class Worker:
    """One `oxbow connect distributed` process of the group `group`."""

    def __init__(self, tmp_path, broker, group, index, extra=None):
        self.index = index
        self.port = free_port()
        self.props = {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "listeners": f"http://127.0.0.1:{self.port}",
            "key.converter": STRING,
            "value.converter": STRING,
            "config.storage.topic": f"{group}-configs",
            "offset.storage.topic": f"{group}-offsets",
            "status.storage.topic": f"{group}-status",
            "config.storage.replication.factor": 1,
            "offset.storage.replication.factor": 1,
            "status.storage.replication.factor": 1,
            "offset.storage.partitions": 3,
            "offset.flush.interval.ms": 200,
            "session.timeout.ms": 2000,
            "heartbeat.interval.ms": 300,
            "scheduled.rebalance.max.delay.ms": 2000,
            **(extra or {}),
        }
        self.config = tmp_path / f"worker-{group}-{index}.properties"
        self.config.write_text("".join(f"{k}={v}\n" for k, v in self.props.items()))
        self.log_path = tmp_path / f"worker-{group}-{index}.log"
        self.rest = Rest(self.port)
        self.start()

    @property
    def id(self):
        return f"127.0.0.1:{self.port}"

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(
                [OXBOW_BIN, "connect", "distributed", str(self.config)],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL))
        wait_until(lambda: port_accepts(self.port) or self.proc.poll() is not None, 30,
                   message="the worker's REST API to listen")
        assert self.proc.poll() is None, self.log()

    def log(self):
        return self.log_path.read_text(errors="replace")

    def kill(self):
        self.proc.kill()
        self.proc.wait(timeout=10)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=60)
        assert code == 0, f"worker exited with {code}\n{self.log()}"


def test_a_session_timeout_the_broker_refuses_stops_the_worker_with_one_line(broker, tmp_path):
    # The broker's group.min.session.timeout.ms is 6000 by default, as Kafka's.
    port = free_port()
    config = tmp_path / "bad-session.properties"
    config.write_text(f"bootstrap.servers={broker.bootstrap}\ngroup.id=g\n"
                      f"listeners=http://127.0.0.1:{port}\nkey.converter={STRING}\n"
                      f"value.converter={STRING}\nconfig.storage.topic=g-c\n"
                      f"offset.storage.topic=g-o\nstatus.storage.topic=g-s\n"
                      "config.storage.replication.factor=1\noffset.storage.replication.factor=1\n"
                      "status.storage.replication.factor=1\nsession.timeout.ms=1000\n")
    proc = subprocess.run([OXBOW_BIN, "connect", "distributed", str(config)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "INVALID_SESSION_TIMEOUT" in proc.stderr.strip().splitlines()[-1], proc.stderr


# Tests that kill no worker give sessions room, so that a loaded machine's late heartbeat does not
# move work they watch; the kill tests keep the short session above.
STEADY = {"session.timeout.ms": 10000, "heartbeat.interval.ms": 1000}


def _group(tmp_path, broker, count, name=None, extra=None):
    group = name or unique_topic("connect-cluster")
    return [Worker(tmp_path, broker, group, i, extra) for i in range(count)]


def _status(worker, name):
    status, body = worker.rest.call("GET", f"/connectors/{name}/status")
    return body if status == 200 else None


def _running_everywhere(workers, name, tasks=1):
    """Waits until every worker reports the connector and its tasks RUNNING; returns a status."""
    def check():
        for worker in workers:
            status = _status(worker, name)
            if (status is None or status["connector"]["state"] != "RUNNING"
                    or len(status["tasks"]) != tasks
                    or any(t["state"] != "RUNNING" for t in status["tasks"])):
                return False
        return True
    wait_until(check, 60, message=f"{name} and its {tasks} task(s) RUNNING on every worker's view")
    return _status(workers[0], name)


def _settled(worker, method, path, body=None):
    """A request retried while the group rebalances (409 with Connect's message), as tools do."""
    answer = {}

    def answered():
        status, reply = worker.rest.call(method, path, body)
        answer["status"], answer["body"] = status, reply
        return not (status == 409 and reply["message"].startswith("Cannot complete request"))
    wait_until(answered, 60, interval=0.2, message=f"{method} {path} outside a rebalance")
    return answer["status"], answer["body"]


def _create(worker, name, config):
    status, body = _settled(worker, "POST", "/connectors", {"name": name, "config": config})
    assert status == 201, body
    return body


def _topic_records(bootstrap, topic):
    """Every record of every partition of an internal topic, as (key, value-or-None)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique_topic("reader"),
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics[topic]
        partitions = [TopicPartition(topic, p, 0) for p in metadata.partitions]
        ends = {p.partition: consumer.get_watermark_offsets(p, timeout=10)[1] for p in partitions}
        consumer.assign(partitions)
        records = []

        def done():
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                value = msg.value()
                records.append((msg.key().decode(), None if value is None else json.loads(value)))
            # Positions, not the last offsets read: transactions' markers are never delivered.
            positions = consumer.position([TopicPartition(topic, p) for p in ends])
            return all(ends[tp.partition] == 0 or tp.offset >= ends[tp.partition]
                       for tp in positions)
        wait_until(done, 30, interval=0, message=f"the records of {topic}")
        return records
    finally:
        consumer.close()


def _lines(path):
    return path.read_text().splitlines() if path.exists() else []


def _append(path, lines):
    with open(path, "a") as f:
        f.write("".join(line + "\n" for line in lines))


def test_followers_forward_writes_and_the_topics_hold_connects_formats(make_broker, tmp_path):
    broker = make_broker(group_min_session_timeout_ms=1000)
    workers = _group(tmp_path, broker, 2, extra=STEADY)
    topic = ck.create_topic(broker.bootstrap, unique_topic("dist"))
    source_file = tmp_path / "in.txt"
    _append(source_file, [f"line {i}" for i in range(10)])
    config = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}

    # Whichever worker leads, one of the two is a follower: ask both in turn.
    info = _create(workers[1], "src", config)
    assert info["name"] == "src" and info["config"]["file"] == str(source_file)
    status, body = _settled(workers[0], "POST", "/connectors", {"name": "src", "config": config})
    assert (status, body["error_code"]) == (409, 409), body
    assert body["message"] == "Connector src already exists"

    status = _running_everywhere(workers, "src")
    assert status["type"] == "source"
    assert status["connector"]["worker_id"] in {w.id for w in workers}
    for worker in workers:
        assert worker.rest.call("GET", "/connectors")[1] == ["src"]
        wait_until(lambda: len(worker.rest.call("GET", "/connectors/src/tasks")[1]) == 1, 30,
                   message="the task configs on every worker")

    records = _topic_records(broker.bootstrap, workers[0].props["config.storage.topic"])
    keys = [key for key, _ in records]
    assert "connector-src" in keys and "task-src-0" in keys and "commit-src" in keys
    values = dict(records)
    assert values["connector-src"]["properties"]["file"] == str(source_file)
    assert values["connector-src"]["properties"]["name"] == "src"
    assert values["commit-src"] == {"tasks": 1}
    assert values["task-src-0"]["properties"]["file"] == str(source_file)
    # Task configs come before the commit record that makes them count.
    assert keys.index("task-src-0") < len(keys) - 1 - keys[::-1].index("commit-src")

    statuses = dict(_topic_records(broker.bootstrap, workers[0].props["status.storage.topic"]))
    connector = statuses["status-connector-src"]
    assert connector["state"] == "RUNNING" and connector["worker_id"] in {w.id for w in workers}
    assert isinstance(connector["generation"], int)
    assert statuses["status-task-src-0"]["state"] == "RUNNING"

    wait_until(lambda: any(k == json.dumps(["src", {"filename": str(source_file)}],
                                          separators=(",", ":"))
                           for k, _ in _topic_records(broker.bootstrap,
                                                      workers[0].props["offset.storage.topic"])),
               30, message="the source's offset in the offsets topic")

    # Pause and resume are written by whichever worker is asked; delete by the leader.
    assert _settled(workers[0], "PUT", "/connectors/src/pause")[0] == 202
    wait_until(lambda: all(_status(w, "src")["connector"]["state"] == "PAUSED" for w in workers),
               30, message="PAUSED everywhere")
    assert _settled(workers[1], "PUT", "/connectors/src/resume")[0] == 202
    _running_everywhere(workers, "src")
    assert _settled(workers[0], "DELETE", "/connectors/src")[0] == 204
    wait_until(lambda: all(w.rest.call("GET", "/connectors")[1] == [] for w in workers), 30,
               message="the connector gone everywhere")
    for worker in workers:
        worker.stop()


def _owner(workers, name, task=0):
    status = _status(workers[0], name)
    ids = {w.id: w for w in workers}
    return ids.get(status["tasks"][task]["worker_id"]) if status and status["tasks"] else None


def test_a_killed_workers_tasks_run_elsewhere_and_no_line_is_lost(make_broker, tmp_path):
    broker = make_broker(group_min_session_timeout_ms=1000)
    workers = _group(tmp_path, broker, 3)
    topic = ck.create_topic(broker.bootstrap, unique_topic("dist"))
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    written = [f"line {i}" for i in range(200)]
    _append(source_file, written)
    _create(workers[0], "source", {"connector.class": "FileStreamSource",
                                   "file": str(source_file), "topic": topic})
    _create(workers[0], "sink", {"connector.class": "FileStreamSink", "topics": topic,
                                 "file": str(sink_file)})
    _running_everywhere(workers, "source")
    _running_everywhere(workers, "sink")
    wait_until(lambda: len(_lines(sink_file)) >= len(written), 60, message="the first lines")

    victim = _owner(workers, "source")
    assert victim is not None
    survivors = [w for w in workers if w is not victim]
    victim.kill()
    killed_at = time.monotonic()
    more = [f"line {i}" for i in range(200, 400)]
    _append(source_file, more)
    written += more

    def moved():
        status = _status(survivors[0], "source")
        return (status is not None and status["tasks"]
                and status["tasks"][0]["state"] == "RUNNING"
                and status["tasks"][0]["worker_id"] in {w.id for w in survivors})
    wait_until(moved, 90, message="the source task to run on a surviving worker")
    print(f"failover took {time.monotonic() - killed_at:.1f} s")
    wait_until(lambda: set(_lines(sink_file)) >= set(written), 90,
               message="every line in the sink's file")
    lines = _lines(sink_file)
    assert set(lines) == set(written), set(lines) - set(written)
    duplicates = len(lines) - len(set(lines))
    print(f"{duplicates} duplicate line(s) after the kill (at least once)")
    for worker in survivors:
        worker.stop()


def test_configs_and_offsets_survive_a_restart_of_every_worker(make_broker, tmp_path):
    broker = make_broker(group_min_session_timeout_ms=1000)
    workers = _group(tmp_path, broker, 2, extra=STEADY)
    topic = ck.create_topic(broker.bootstrap, unique_topic("dist"))
    source_file = tmp_path / "in.txt"
    first = [f"first {i}" for i in range(30)]
    _append(source_file, first)
    _create(workers[0], "src", {"connector.class": "FileStreamSource",
                                "file": str(source_file), "topic": topic})
    _running_everywhere(workers, "src")
    wait_until(lambda: ck.watermarks(broker.bootstrap, topic)[1] >= len(first), 30,
               message="the first lines in the topic")
    for worker in workers:
        worker.stop()

    second = [f"second {i}" for i in range(20)]
    _append(source_file, second)
    for worker in workers:
        worker.start()
    _running_everywhere(workers, "src")
    total = len(first) + len(second)
    wait_until(lambda: ck.watermarks(broker.bootstrap, topic)[1] >= total, 30,
               message="the appended lines in the topic")
    # The source resumed from its committed position: nothing is read twice.
    _stays(lambda: ck.watermarks(broker.bootstrap, topic)[1] == total, 2)
    for worker in workers:
        worker.stop()


def _committed_values(bootstrap, topic):
    """Every value of partition 0 as a read_committed consumer sees it (aborted ones left out)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique_topic("reader"),
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    try:
        end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
        consumer.assign([TopicPartition(topic, 0, 0)])
        values, position = [], [0]

        def done():
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                values.append(msg.value().decode())
            assignment = consumer.position([TopicPartition(topic, 0)])
            position[0] = assignment[0].offset
            return position[0] >= end
        wait_until(done, 30, interval=0, message=f"the committed records of {topic}")
        return values
    finally:
        consumer.close()


def test_exactly_once_sources_write_each_line_once_across_a_kill(make_broker, tmp_path):
    broker = make_broker(group_min_session_timeout_ms=1000)
    workers = _group(tmp_path, broker, 2, extra={"exactly.once.source.support": "enabled"})
    topic = ck.create_topic(broker.bootstrap, unique_topic("eos"))
    source_file = tmp_path / "in.txt"
    written = [f"line {i}" for i in range(300)]
    _append(source_file, written)

    # A connector that cannot promise exactly-once is refused when the config requires it.
    status, body = _settled(workers[0], "POST", "/connectors", {"name": "gen", "config": {
        "connector.class": "DatagenConnector", "kafka.topic": topic, "quickstart": "users",
        "exactly.once.support": "required"}})
    assert status == 400 and "exactly-once" in body["message"], body
    status, body = _settled(workers[0], "POST", "/connectors", {"name": "bad", "config": {
        "connector.class": "FileStreamSource", "file": str(source_file), "topic": topic,
        "transaction.boundary": "sometimes"}})
    assert status == 400 and "transaction.boundary" in body["message"], body

    _create(workers[0], "source", {"connector.class": "FileStreamSource", "file": str(source_file),
                                   "topic": topic, "exactly.once.support": "required",
                                   "batch.size": 7})
    _running_everywhere(workers, "source")
    wait_until(lambda: len(_committed_values(broker.bootstrap, topic)) >= len(written), 60,
               message="the first lines committed")

    victim = _owner(workers, "source")
    survivor = next(w for w in workers if w is not victim)
    more = [f"line {i}" for i in range(300, 3000)]
    _append(source_file, more)
    written += more
    victim.kill()

    def moved():
        status = _status(survivor, "source")
        return (status is not None and status["tasks"]
                and status["tasks"][0]["state"] == "RUNNING"
                and status["tasks"][0]["worker_id"] == survivor.id)
    wait_until(moved, 90, message="the source task to run on the survivor")
    wait_until(lambda: len(_committed_values(broker.bootstrap, topic)) >= len(written), 60,
               message="every line committed")
    # Exactly once: every line, in order, none twice (aborted transactions are not read).
    assert _committed_values(broker.bootstrap, topic) == written
    # Written in transactions: their commit markers take offsets of their own.
    assert ck.watermarks(broker.bootstrap, topic)[1] > len(written)
    # The offsets went to the offsets topic in the same transactions, keyed as Connect keys them.
    offsets = dict(_topic_records(broker.bootstrap, workers[0].props["offset.storage.topic"]))
    key = json.dumps(["source", {"filename": str(source_file)}], separators=(",", ":"))
    assert offsets[key] == {"position": source_file.stat().st_size}
    survivor.stop()


def test_active_topics_live_in_the_status_topic_and_every_worker_answers(make_broker, tmp_path):
    broker = make_broker(group_min_session_timeout_ms=1000)
    workers = _group(tmp_path, broker, 2, extra=STEADY)
    topic = ck.create_topic(broker.bootstrap, unique_topic("dist"))
    source_file = tmp_path / "in.txt"
    _append(source_file, ["a", "b"])
    _create(workers[0], "src", {"connector.class": "FileStreamSource", "file": str(source_file),
                                "topic": topic})
    _running_everywhere(workers, "src")
    expected = {"src": {"topics": [topic]}}
    for worker in workers:
        wait_until(lambda: worker.rest.call("GET", "/connectors/src/topics") == (200, expected), 30,
                   message="the active topic on every worker")
    statuses = dict(_topic_records(broker.bootstrap, workers[0].props["status.storage.topic"]))
    record = statuses[f"status-topic-{topic}:connector-src"]["topic"]
    assert (record["name"], record["connector"], record["task"]) == (topic, "src", 0)
    assert isinstance(record["discoverTimestamp"], int)

    assert _settled(workers[1], "PUT", "/connectors/src/topics/reset")[0] == 202
    for worker in workers:
        wait_until(lambda: worker.rest.call("GET", "/connectors/src/topics")
                   == (200, {"src": {"topics": []}}), 30, message="the reset seen everywhere")
    for worker in workers:
        worker.stop()


def test_bad_input_answers_as_connect_and_a_failing_task_is_failed_on_every_view(make_broker,
                                                                               tmp_path):
    broker = make_broker(group_min_session_timeout_ms=1000)
    workers = _group(tmp_path, broker, 2, extra=STEADY)
    topic = ck.create_topic(broker.bootstrap, unique_topic("dist"))
    for worker in workers:  # leader and follower alike
        conn = http.client.HTTPConnection("127.0.0.1", worker.port, timeout=30)
        conn.request("POST", "/connectors", "{not json", {"Content-Type": "application/json"})
        response = conn.getresponse()
        body = json.loads(response.read())
        conn.close()
        assert response.status == 400 and body["error_code"] == 400, body
        status, body = _settled(worker, "POST", "/connectors", {"name": "x", "config": {
            "connector.class": "NoSuchConnector"}})
        assert status == 400 and "NoSuchConnector" in body["message"], body
        status, body = _settled(worker, "POST", "/connectors", {"name": "x", "config": {
            "connector.class": "FileStreamSink", "file": "/tmp/x"}})
        assert status == 400 and "topics" in body["message"], body
        status, body = _settled(worker, "PUT", "/connectors/y/config", {
            "connector.class": "FileStreamSource", "topic": topic, "tasks.max": "0"})
        assert status == 400 and "tasks.max" in body["message"], body
    listed = [_settled(w, "GET", "/connectors") for w in workers]
    assert all(answer == (200, []) for answer in listed), listed

    producer = ck.producer(broker.bootstrap)
    producer.produce(topic, value=b"not json", partition=0)
    producer.flush(10)
    _create(workers[1], "sink", {"connector.class": "FileStreamSink", "topics": topic,
                                 "file": str(tmp_path / "out.txt"),
                                 "value.converter": "org.apache.kafka.connect.json.JsonConverter"})

    def failed_everywhere():
        for worker in workers:
            status = _status(worker, "sink")
            if not status or not status["tasks"] or status["tasks"][0]["state"] != "FAILED":
                return False
        return True
    wait_until(failed_everywhere, 60, message="the sink's task FAILED on every worker's view")
    task = _status(workers[0], "sink")["tasks"][0]
    assert task["trace"] and task["worker_id"] in {w.id for w in workers}
    assert all(w.proc.poll() is None for w in workers)
    # The task's restart is answered by whichever worker is asked (forwarded to its owner).
    for worker in workers:
        assert _settled(worker, "POST", "/connectors/sink/tasks/0/restart")[0] == 204
    for worker in workers:
        worker.stop()


def test_a_joining_worker_takes_a_share_and_the_rest_stay_where_they_run(make_broker, tmp_path):
    broker = make_broker(group_min_session_timeout_ms=1000)
    group = unique_topic("connect-cluster")
    workers = [Worker(tmp_path, broker, group, i, STEADY) for i in range(2)]
    topic = ck.create_topic(broker.bootstrap, unique_topic("dist"))
    names = [f"src{i}" for i in range(4)]
    for name in names:
        source_file = tmp_path / f"{name}.txt"
        _append(source_file, ["x"])
        _create(workers[0], name, {"connector.class": "FileStreamSource",
                                   "file": str(source_file), "topic": topic})
    for name in names:
        _running_everywhere(workers, name)

    def placement(worker):
        out = {}
        for name in names:
            status = _status(worker, name)
            out[name] = status["connector"]["worker_id"]
            out[name + "-0"] = status["tasks"][0]["worker_id"]
        return out
    before = placement(workers[0])
    third = Worker(tmp_path, broker, group, 2, STEADY)
    workers.append(third)

    def balanced():
        # Connectors and tasks are balanced each on their own, as Kafka's assignor does.
        after = placement(workers[0])
        for suffix in ("", "-0"):
            owners = [after[n + suffix] for n in names]
            counts = [owners.count(w.id) for w in workers]
            if max(counts) - min(counts) > 1:
                return False
        return all(_status(workers[0], n)["tasks"][0]["state"] == "RUNNING" for n in names) and after
    after = wait_until(balanced, 60, message="4 connectors and 4 tasks balanced over 3 workers")
    moved = [k for k in before if before[k] != after[k]]
    # 4 connectors and 4 tasks over 3 workers: the newcomer takes one of each, the rest stay put.
    assert len(moved) == 2 and all(after[k] == third.id for k in moved), (before, after)
    # Each worker's /metrics counts what runs on it: four of each over the three.
    counts = [_metrics(w.port) for w in workers]
    assert sum(c["kafka_connect_connect_worker_metrics_connector_count"] for c in counts) == 4
    assert sum(c["kafka_connect_connect_worker_metrics_task_count"] for c in counts) == 4
    assert all(c["kafka_connect_connect_worker_metrics_task_count"] >= 1 for c in counts)
    for worker in workers:
        worker.stop()
