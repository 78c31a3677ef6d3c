"""ListOffsets v8-v10 as Kafka answers them on a broker without tiered storage: earliest-local
(-4, KIP-405) is the log start offset, latest-tiered (-5, KIP-1005) is -1; a marker the request's
version does not know is UNSUPPORTED_VERSION, a partition named twice INVALID_REQUEST, and the
client's leader epoch is checked."""

import struct
import subprocess

import ck_helpers as ck
import kafka_wire as kw
from harness import OXBOW_BIN, unique_topic

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5
UNSUPPORTED_VERSION, INVALID_REQUEST, UNKNOWN_LEADER_EPOCH = 35, 42, 75


def list_offsets(port, version, topic, partitions):
    """partitions: (partition, current leader epoch, timestamp) each. Returns
    (partition, error, timestamp, offset, leader epoch) each, in the order answered."""
    body = struct.pack(">ib", -1, 0)  # replica_id, isolation_level
    entries = [struct.pack(">iiq", p, epoch, ts) + b"\x00" for p, epoch, ts in partitions]
    body += kw.compact_array([kw.compact_string(topic) + kw.compact_array(entries) + b"\x00"])
    if version >= 10:
        body += struct.pack(">i", 5000)  # timeout_ms
    with kw.Conn(port) as c:
        r = kw.flexible_request(c, 2, version, 11, body)
    r.int32()  # throttle

    def partition():
        answer = (r.int32(), r.int16(), r.int64(), r.int64(), r.int32())
        r.skip_tags()
        return answer

    def topic_answer():
        assert r.compact_string() == topic
        answers = r.compact_array(partition)
        r.skip_tags()
        return answers

    (answers,) = r.compact_array(topic_answer)
    return answers


def test_earliest_local_and_latest_tiered(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("lo"))
    ck.produce_all(ck.producer(broker.bootstrap, linger_ms=0), [{"value": b"v"}] * 5, topic,
                   partition=0)
    subprocess.run([OXBOW_BIN, "topic", "delete-records", topic, "--partition", "0", "--before", "2",
                    "-b", broker.bootstrap], check=True, capture_output=True, timeout=60)
    for version in (8, 9, 10):
        # One marker per request: a partition named twice is refused.
        earliest, local, latest = (list_offsets(broker.port, version, topic, [(0, -1, marker)])[0]
                                   for marker in (EARLIEST, EARLIEST_LOCAL, LATEST))
        assert earliest[:4] == local[:4] == (0, 0, -1, 2)
        assert latest[:4] == (0, 0, -1, 5)
        assert local[4] == earliest[4] >= 0
    for version in (9, 10):
        (tiered,) = list_offsets(broker.port, version, topic, [(0, -1, LATEST_TIERED)])
        assert tiered == (0, 0, -1, -1, -1)


def test_markers_a_version_does_not_know_are_unsupported(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("lo"))
    for version, marker in [(6, MAX_TIMESTAMP), (7, EARLIEST_LOCAL), (8, LATEST_TIERED), (10, -6)]:
        (answer,) = list_offsets(broker.port, version, topic, [(0, -1, marker)])
        assert answer[:2] == (0, UNSUPPORTED_VERSION), (version, marker)
    (answer,) = list_offsets(broker.port, 7, topic, [(0, -1, MAX_TIMESTAMP)])
    assert answer[:2] == (0, 0)


def test_a_partition_named_twice_and_a_leader_epoch_from_the_future(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("lo"), partitions=2)
    answers = list_offsets(broker.port, 9, topic, [(0, -1, LATEST), (1, -1, LATEST), (0, -1, EARLIEST)])
    assert [(p, e) for p, e, *_ in answers] == [(0, INVALID_REQUEST), (1, 0), (0, INVALID_REQUEST)]
    (answer,) = list_offsets(broker.port, 9, topic, [(1, 1000, LATEST)])
    assert answer[:2] == (1, UNKNOWN_LEADER_EPOCH)
