"""Consumer groups with real clients: membership, failover, committed offsets, static members."""

import json
import os
import queue
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

from confluent_kafka import Consumer, TopicPartition

from ck_helpers import admin, producer
import kafka_wire as kw
from harness import metric_value, scrape_metrics, unique_topic, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"


class Member:
    """A group_member.py process whose JSON events are collected by a reader thread."""

    def __init__(self, bootstrap, group, topic, *extra):
        self.proc = subprocess.Popen([PYTHON, os.path.join(HERE, "group_member.py"), bootstrap, group, topic, *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.events = queue.Queue()
        self.assigned = []
        self.records = []
        self.assignment_changes = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            event = json.loads(line)
            with self.lock:
                if event["event"] == "assigned":
                    self.assigned = event["partitions"]
                    self.assignment_changes += 1
                else:
                    self.records.append(event)

    def partitions(self):
        with self.lock:
            return list(self.assigned)

    def values(self):
        with self.lock:
            return [r["value"] for r in self.records]

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


def produce(bootstrap, topic, values, partitions):
    p = producer(bootstrap)
    for i, v in enumerate(values):
        p.produce(topic, value=v, partition=i % partitions)
    assert p.flush(30) == 0


def create_topic(bootstrap, topic, partitions):
    from confluent_kafka.admin import NewTopic
    client = admin(bootstrap)  # must outlive the future
    client.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)


def owners_cover(members, partitions):
    owned = [p for m in members for p in m.partitions()]
    return sorted(owned) == list(range(partitions))


def group_broker(make_broker):
    return make_broker({"group.initial.rebalance.delay.ms": "0"})


def test_three_members_share_partitions_and_survive_a_kill(make_broker):
    broker = group_broker(make_broker)
    topic, group = unique_topic("grp"), unique_topic("g")
    create_topic(broker.bootstrap, topic, 6)
    first = [f"a{i}" for i in range(3000)]
    produce(broker.bootstrap, topic, first, 6)
    members = [Member(broker.bootstrap, group, topic) for _ in range(3)]
    try:
        wait_until(lambda: owners_cover(members, 6) and all(m.partitions() for m in members), 60,
                   message="each of 6 partitions owned by exactly one of 3 members")
        victim = members[0]
        victim_partitions = victim.partitions()
        victim.kill()
        survivors = members[1:]
        # The victim's partitions move to the others once its session (6 s) times out.
        wait_until(lambda: owners_cover(survivors, 6), 40, message="survivors own all 6 partitions")
        second = [f"b{i}" for i in range(3000)]
        produce(broker.bootstrap, topic, second, 6)
        expected = set(first + second)
        seen = lambda: set(v for m in members for v in m.values())
        wait_until(lambda: seen() >= expected, 60, message="every record processed by some member")
        assert victim_partitions
    finally:
        for m in members:
            m.stop()


def test_consumption_resumes_at_committed_offsets_after_broker_restart(make_broker):
    broker = group_broker(make_broker)
    topic, group = unique_topic("resume"), unique_topic("g")
    create_topic(broker.bootstrap, topic, 2)
    produce(broker.bootstrap, topic, [f"x{i}" for i in range(100)], 2)
    conf = {"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "session.timeout.ms": 6000}
    c = Consumer(conf)
    c.subscribe([topic])
    got = []
    deadline = time.monotonic() + 30
    while len(got) < 60 and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m and not m.error():
            got.append(m)
    assert len(got) == 60
    c.commit(asynchronous=False)
    committed = {tp.partition: tp.offset for tp in c.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)])}
    c.close()
    assert sum(committed.values()) == 60

    broker.restart()
    c = Consumer(conf)
    c.subscribe([topic])
    rest = []
    deadline = time.monotonic() + 30
    while len(rest) < 40 and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m and not m.error():
            rest.append(m)
    first_offsets = {}
    for m in rest:
        first_offsets.setdefault(m.partition(), m.offset())
    c.close()
    assert len(rest) == 40
    assert first_offsets == {p: off for p, off in committed.items() if off < 50}
    assert {m.value() for m in got}.isdisjoint({m.value() for m in rest})


def test_cooperative_sticky_moves_only_some_partitions(make_broker):
    broker = group_broker(make_broker)
    topic, group = unique_topic("coop"), unique_topic("g")
    create_topic(broker.bootstrap, topic, 6)
    a = Member(broker.bootstrap, group, topic, "--assignor", "cooperative-sticky")
    b = Member(broker.bootstrap, group, topic, "--assignor", "cooperative-sticky")
    c = None
    try:
        wait_until(lambda: owners_cover([a, b], 6) and a.partitions() and b.partitions(), 60,
                   message="two cooperative members own 6 partitions")
        before = {"a": set(a.partitions()), "b": set(b.partitions())}
        c = Member(broker.bootstrap, group, topic, "--assignor", "cooperative-sticky")
        wait_until(lambda: owners_cover([a, b, c], 6) and c.partitions() and len(a.partitions()) == 2
                   and len(b.partitions()) == 2, 60, message="three members own 2 partitions each")
        # Sticky: the old members kept the partitions they still own, and never gave up all.
        assert set(a.partitions()) <= before["a"]
        assert set(b.partitions()) <= before["b"]
        produce(broker.bootstrap, topic, [f"c{i}" for i in range(600)], 6)
        wait_until(lambda: len(set(a.values() + b.values() + c.values()) & {f"c{i}" for i in range(600)}) == 600,
                   60, message="all three keep consuming")
    finally:
        for m in (a, b, c):
            if m:
                m.stop()


def test_static_member_restart_gets_same_partitions_without_rebalance(make_broker):
    broker = group_broker(make_broker)
    topic, group = unique_topic("static"), unique_topic("g")
    create_topic(broker.bootstrap, topic, 4)
    a = Member(broker.bootstrap, group, topic, "--instance-id", "ia", "--session-ms", "30000")
    b = Member(broker.bootstrap, group, topic, "--instance-id", "ib", "--session-ms", "30000")
    b2 = None
    try:
        wait_until(lambda: owners_cover([a, b], 4) and a.partitions() and b.partitions(), 60,
                   message="two static members own 4 partitions")
        b_partitions = b.partitions()
        a_changes = a.assignment_changes
        b.kill()  # a static member leaves no LeaveGroup behind
        b2 = Member(broker.bootstrap, group, topic, "--instance-id", "ib", "--session-ms", "30000")
        wait_until(lambda: b2.partitions(), 30, message="restarted static member assigned")
        assert b2.partitions() == b_partitions
        produce(broker.bootstrap, topic, [f"s{i}" for i in range(40)], 4)
        wait_until(lambda: len([v for v in a.values() + b2.values() if v.startswith("s")]) >= 40, 30,
                   message="both consume after the restart")
        assert a.assignment_changes == a_changes, "the other member was rebalanced"
    finally:
        for m in (a, b, b2):
            if m:
                m.stop()


def test_a_broker_crash_does_not_rebalance_a_stable_group(make_broker):
    """The group's last stable membership is in __consumer_offsets (Kafka's GroupMetadata record):
    after kill -9 and a restart the members heartbeat on in their generation and keep their
    partitions, where a broker that forgot them would make both rejoin and be reassigned."""
    broker = group_broker(make_broker)
    topic, group = unique_topic("crash"), unique_topic("g")
    create_topic(broker.bootstrap, topic, 4)
    a = Member(broker.bootstrap, group, topic, "--session-ms", "30000")
    b = Member(broker.bootstrap, group, topic, "--session-ms", "30000")
    try:
        wait_until(lambda: owners_cover([a, b], 4) and a.partitions() and b.partitions(), 60,
                   message="two members own 4 partitions")
        before = (a.partitions(), b.partitions(), a.assignment_changes, b.assignment_changes)
        broker.restart(clean=False)
        produce(broker.bootstrap, topic, [f"r{i}" for i in range(40)], 4)
        wait_until(lambda: len([v for v in a.values() + b.values() if v.startswith("r")]) >= 40, 60,
                   message="both consume after the restart")
        # Both members heartbeat several times (500 ms apart) in the restarted broker...
        heartbeats = lambda: metric_value(scrape_metrics(broker), "oxbow_requests_total", api="Heartbeat")
        wait_until(lambda: heartbeats() >= 8, 30, message="heartbeats after the restart")
        # ...and none of that rebalanced the group.
        assert (a.partitions(), b.partitions(), a.assignment_changes, b.assignment_changes) == before
        r = kw.Reader(_call(broker.port, 15, 0, struct.pack(">i", 1) + kw.string(group)))
        r.int32()  # groups
        error, _, state = r.int16(), r.string(), r.string()
        assert (error, state) == (0, "Stable")
    finally:
        for m in (a, b):
            m.stop()


def test_kafka_python_group_join_consume_commit_leave(make_broker):
    from kafka import KafkaConsumer, TopicPartition as KTopicPartition
    broker = group_broker(make_broker)
    topic, group = unique_topic("kp"), unique_topic("g")
    create_topic(broker.bootstrap, topic, 3)
    produce(broker.bootstrap, topic, [f"k{i}" for i in range(300)], 3)
    consumer = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             consumer_timeout_ms=15000)
    values = set()
    for msg in consumer:
        values.add(msg.value.decode())
        if len(values) == 300:
            break
    consumer.commit()
    committed = sum(consumer.committed(KTopicPartition(topic, p)) or 0 for p in range(3))
    consumer.close()
    assert values == {f"k{i}" for i in range(300)}
    assert committed == 300


def _frame(api_key, version, correlation, body):
    header = struct.pack(">hhih", api_key, version, correlation, 4) + b"test"
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def _string(s):
    return struct.pack(">h", len(s)) + s.encode()


def _call(port, api_key, version, body):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(_frame(api_key, version, 7, body))
        size = struct.unpack(">i", _recv(s, 4))[0]
        data = _recv(s, size)
        assert struct.unpack(">i", data[:4])[0] == 7
        return data[4:]


def _recv(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        assert chunk, "connection closed"
        data += chunk
    return data


def test_stale_generation_and_unknown_member_get_errors(make_broker):
    broker = group_broker(make_broker)
    topic, group = unique_topic("stale"), unique_topic("g")
    create_topic(broker.bootstrap, topic, 2)
    member = Member(broker.bootstrap, group, topic)
    try:
        wait_until(lambda: member.partitions(), 60, message="member assigned")
        # Heartbeat v0: group, generation, member id -> error code
        body = _string(group) + struct.pack(">i", 12345) + _string("not-a-member")
        assert struct.unpack(">h", _call(broker.port, 12, 0, body)[:2])[0] == 25  # UNKNOWN_MEMBER_ID
        # SyncGroup v0 for an unknown member
        body = _string(group) + struct.pack(">i", 1) + _string("ghost") + struct.pack(">i", 0)
        assert struct.unpack(">h", _call(broker.port, 14, 0, body)[:2])[0] == 25
        # OffsetCommit v2 with a stale generation and an unknown member id
        body = (_string(group) + struct.pack(">i", 999) + _string("ghost") + struct.pack(">q", -1)
                + struct.pack(">i", 1) + _string(topic) + struct.pack(">i", 1) + struct.pack(">iq", 0, 5) + _string(""))
        resp = _call(broker.port, 8, 2, body)
        # topics[1]: name, partitions[1]: index, error
        n_topics = struct.unpack(">i", resp[:4])[0]
        assert n_topics == 1
        name_len = struct.unpack(">h", resp[4:6])[0]
        error = struct.unpack(">h", resp[6 + name_len + 8:6 + name_len + 10])[0]
        assert error in (22, 25)  # ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID
        # JoinGroup with a garbage protocol type for the running group
        body = (_string(group) + struct.pack(">i", 10000) + _string("") + _string("not-consumer")
                + struct.pack(">i", 1) + _string("range") + struct.pack(">i", 0))
        assert struct.unpack(">h", _call(broker.port, 11, 0, body)[:2])[0] == 23  # INCONSISTENT_GROUP_PROTOCOL
        # The group keeps working.
        produce(broker.bootstrap, topic, ["after"], 2)
        wait_until(lambda: "after" in member.values(), 30, message="member still consuming")
    finally:
        member.stop()


def _static_join(port, group, member_id, instance_id):
    """JoinGroup v5 for a static member; returns (error, generation, member id)."""
    body = (kw.string(group) + struct.pack(">ii", 30000, 30000) + kw.string(member_id)
            + kw.string(instance_id) + kw.string("consumer") + struct.pack(">i", 1)
            + kw.string("range") + struct.pack(">i", 0))
    r = kw.Reader(_call(port, 11, 5, body))
    r.int32()  # throttle
    error, generation = r.int16(), r.int32()
    r.string(), r.string()  # protocol, leader
    return error, generation, r.string()


def _static_heartbeat(port, group, generation, member_id, instance_id):
    body = (kw.string(group) + struct.pack(">i", generation) + kw.string(member_id)
            + kw.string(instance_id))
    return struct.unpack(">h", _call(port, 12, 3, body)[4:6])[0]


def test_replaced_static_member_is_fenced_when_it_rejoins(make_broker):
    # sarama's consumer, fenced in a heartbeat, joins again with its old member id; told
    # UNKNOWN_MEMBER_ID it would join afresh and fence its replacement in turn, for ever.
    broker = group_broker(make_broker)
    group = unique_topic("g")
    error, generation, first = _static_join(broker.port, group, "", "instance-x")
    assert error == 0
    sync = (kw.string(group) + struct.pack(">i", generation) + kw.string(first)
            + kw.string("instance-x") + struct.pack(">i", 1) + kw.string(first)
            + struct.pack(">i", 0))
    assert struct.unpack(">h", _call(broker.port, 14, 3, sync)[4:6])[0] == 0
    error, generation_after, second = _static_join(broker.port, group, "", "instance-x")
    assert (error, generation_after) == (0, generation) and second != first
    assert _static_heartbeat(broker.port, group, generation, first, "instance-x") == 82  # FENCED
    error, _, _ = _static_join(broker.port, group, first, "instance-x")
    assert error == 82  # FENCED_INSTANCE_ID, not UNKNOWN_MEMBER_ID (25)
    assert _static_heartbeat(broker.port, group, generation, second, "instance-x") == 0


def test_deleting_a_topic_drops_its_committed_offsets(make_broker):
    # As in Kafka: a topic created again under the name starts with no committed offsets, so a
    # group does not resume from an offset of the old topic (sarama's functional tests rely on it).
    broker = group_broker(make_broker)
    topic, kept, group, offsets_only = (unique_topic("gone"), unique_topic("kept"),
                                        unique_topic("g"), unique_topic("g"))
    create_topic(broker.bootstrap, topic, 2)
    create_topic(broker.bootstrap, kept, 1)
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    c.commit(offsets=[TopicPartition(topic, 0, 5), TopicPartition(topic, 1, 6),
                      TopicPartition(kept, 0, 7)], asynchronous=False)
    other = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": offsets_only})
    other.commit(offsets=[TopicPartition(topic, 0, 3)], asynchronous=False)
    client = admin(broker.bootstrap)
    client.delete_topics([topic])[topic].result(10)
    create_topic(broker.bootstrap, topic, 2)
    try:
        committed = c.committed([TopicPartition(topic, 0), TopicPartition(topic, 1),
                                 TopicPartition(kept, 0)], timeout=10)
        assert [tp.offset for tp in committed] == [-1001, -1001, 7]  # OFFSET_INVALID: none
        assert other.committed([TopicPartition(topic, 0)], timeout=10)[0].offset == -1001
        listed = {g.id for g in client.list_groups(timeout=10)}
        assert group in listed and offsets_only not in listed  # left with nothing, it is gone
    finally:
        c.close()
        other.close()


def _list_groups_v5(port, states=(), types=()):
    """ListGroups v5: [(group id, protocol type, state, type)]."""
    body = kw.compact_array([kw.compact_string(x) for x in states]) + \
        kw.compact_array([kw.compact_string(x) for x in types])
    with kw.Conn(port) as c:
        r = kw.flexible_request(c, 16, 5, 3, body)
    r.int32()  # throttle
    assert r.int16() == 0

    def group():
        entry = (r.compact_string(), r.compact_string(), r.compact_string(), r.compact_string())
        r.skip_tags()
        return entry
    return r.compact_array(group)


def test_list_groups_v5_types_filter(broker):
    """KIP-848's ListGroups v5: every group here is a classic one, and says so; a types filter
    matches case-insensitively, and one without "classic" lists nothing."""
    topic = unique_topic("typed")
    group = unique_topic("typed-group")
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    try:
        c.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
    except Exception:  # noqa: BLE001 - the topic need not exist for the group to
        pass
    c.close()
    wait_until(lambda: any(g[0] == group for g in _list_groups_v5(broker.port)), 10, message="the group listed")
    listed = {g[0]: g for g in _list_groups_v5(broker.port)}
    assert listed[group] == (group, "", "Empty", "classic"), listed[group]
    assert group in {g[0] for g in _list_groups_v5(broker.port, types=["Classic"])}
    assert _list_groups_v5(broker.port, types=["consumer", "share"]) == []
    assert group in {g[0] for g in _list_groups_v5(broker.port, states=["Empty"], types=["classic"])}

