"""confluent-kafka (librdkafka) against the real broker: data path, seeking, admin API."""

import struct
import time

import pytest
from confluent_kafka import (TIMESTAMP_CREATE_TIME, KafkaError, KafkaException, OFFSET_END,
                             TopicPartition)
from confluent_kafka.admin import ConfigResource, ConfigSource, NewPartitions, NewTopic

import ck_helpers as ck
import kafka_wire
from harness import unique_topic, wait_until

N_ROUNDTRIP = 100_000
# librdkafka names Kafka error 17 (INVALID_TOPIC_EXCEPTION) TOPIC_EXCEPTION.


def make_record(i, base_ts):
    headers = [("seq", str(i).encode()), ("kind", b"even" if i % 2 == 0 else b"odd")]
    if i % 10 == 0:
        headers.append(("seq", b"duplicate-key"))   # repeated header keys keep their order
    if i % 13 == 0:
        # (No None header values here: confluent-kafka 1.7.0 mis-counts references to None when it
        # decodes them and aborts the interpreter; null header values are covered by kafka-python.)
        headers.append(("empty-header", b""))
    key = None if i % 1000 == 7 else f"key-{i % 977}".encode()
    value = None if i % 997 == 3 else (f"value-{i}-" + "x" * (i % 50)).encode()
    return {"key": key, "value": value, "headers": headers, "timestamp": base_ts + i}


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_roundtrip_100k_records(broker, codec):
    topic = ck.create_topic(broker.bootstrap, unique_topic(f"rt-{codec}"))
    base_ts = int(time.time() * 1000) - 3_600_000
    records = [make_record(i, base_ts) for i in range(N_ROUNDTRIP)]
    p = ck.producer(broker.bootstrap, compression_type=codec, linger_ms=20, batch_num_messages=5000)
    reports = ck.produce_all(p, records, topic, partition=0)
    offsets = sorted(o for _p, o in reports)
    assert offsets == list(range(N_ROUNDTRIP)), "delivery reports should cover offsets 0..N-1"

    assert ck.watermarks(broker.bootstrap, topic) == (0, N_ROUNDTRIP)
    assert_batches_compressed(broker, topic, codec)

    msgs = ck.consume_partition(broker.bootstrap, topic, 0, 0, expected=N_ROUNDTRIP, timeout=120)
    assert len(msgs) == N_ROUNDTRIP
    for i, (m, r) in enumerate(zip(msgs, records)):
        assert m.offset() == i
        assert m.key() == r["key"], f"record {i}: key"
        assert m.value() == r["value"], f"record {i}: value"
        assert (m.headers() or []) == r["headers"], f"record {i}: headers"
        assert m.timestamp() == (TIMESTAMP_CREATE_TIME, r["timestamp"]), f"record {i}: timestamp"


def test_many_topics_and_partitions(broker):
    n_topics, n_parts, per_part = 20, 8, 40
    topics = [unique_topic(f"multi{i}") for i in range(n_topics)]
    a = ck.admin(broker.bootstrap)
    futures = a.create_topics([NewTopic(t, num_partitions=n_parts, replication_factor=1) for t in topics])
    for t, f in futures.items():
        f.result(30)
    for t in topics:
        ck.wait_for_topic(broker.bootstrap, t, n_parts)

    md = a.list_topics(timeout=10)
    for t in topics:
        assert t in md.topics
        assert sorted(md.topics[t].partitions) == list(range(n_parts))
        for pm in md.topics[t].partitions.values():
            assert pm.leader == md.controller_id or pm.leader in md.brokers
            assert list(pm.replicas) == [pm.leader] and list(pm.isrs) == [pm.leader]

    p = ck.producer(broker.bootstrap, linger_ms=10, compression_type="lz4")
    records = []
    for t in topics:
        for part in range(n_parts):
            for j in range(per_part):
                records.append((t, part, j))
    reports = []

    def cb(err, msg):
        assert err is None, err
        reports.append((msg.topic(), msg.partition(), msg.offset(), msg.value()))

    for t, part, j in records:
        p.produce(t, value=f"{t}|{part}|{j}".encode(), key=str(j).encode(), partition=part, on_delivery=cb)
        p.poll(0)
    assert p.flush(60) == 0
    assert len(reports) == len(records)

    got = ck.consume_partitions(broker.bootstrap, [(t, part, 0) for t in topics for part in range(n_parts)],
                                expected=len(records), timeout=90)
    for t in topics:
        for part in range(n_parts):
            msgs = got[(t, part)]
            assert [m.offset() for m in msgs] == list(range(per_part)), (t, part)
            assert [m.value() for m in msgs] == [f"{t}|{part}|{j}".encode() for j in range(per_part)], (t, part)
            assert [m.key() for m in msgs] == [str(j).encode() for j in range(per_part)]


def test_seek_by_offset(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("seek-off"))
    n = 2000
    p = ck.producer(broker.bootstrap, compression_type="lz4", linger_ms=50)
    ck.produce_all(p, [{"value": f"v{i}".encode()} for i in range(n)], topic, partition=0)
    for start in (0, 1, 777, 1999):
        msgs = ck.consume_partition(broker.bootstrap, topic, 0, start, expected=n - start)
        assert msgs[0].offset() == start, f"assign at {start} returned first offset {msgs[0].offset()}"
        assert [m.value() for m in msgs] == [f"v{i}".encode() for i in range(start, n)]
    # Assigning at the end yields nothing but EOF.
    assert ck.consume_partition(broker.bootstrap, topic, 0, n) == []
    assert ck.consume_partition(broker.bootstrap, topic, 0, OFFSET_END) == []


def assert_batches_compressed(broker, topic, codec):
    """The producer's batches are stored as sent (compression.type=producer): check the codec on disk."""
    codec_id = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}[codec]
    seg = broker.partition_dir(topic, 0) / "00000000000000000000.log"
    per_codec = {}
    for bt in kafka_wire.parse_batches(seg.read_bytes(), verify_crc=False):
        per_codec[bt["attributes"] & 7] = per_codec.get(bt["attributes"] & 7, 0) + bt["count"]
    # librdkafka sends a batch uncompressed when compressing would not make it smaller.
    assert set(per_codec) <= {0, codec_id}, f"records per codec on disk: {per_codec}, expected {codec}"
    assert per_codec.get(codec_id, 0) >= 0.9 * sum(per_codec.values()), \
        f"records per codec on disk: {per_codec}, expected mostly {codec} ({codec_id})"


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_seek_by_timestamp(broker, codec):
    """offsets_for_times returns the first record with timestamp >= target, also inside compressed batches."""
    topic = ck.create_topic(broker.bootstrap, unique_topic("seek-ts"))
    n = 1000
    base = int(time.time() * 1000) - 10_000_000
    p = ck.producer(broker.bootstrap, linger_ms=20, compression_type=codec)
    ck.produce_all(p, [{"value": f"v{i}".encode() + b"-" * 30, "timestamp": base + 10 * i} for i in range(n)],
                   topic, 0)
    assert_batches_compressed(broker, topic, codec)

    c = ck.consumer(broker.bootstrap)
    try:
        def lookup(ts):
            (tp,) = c.offsets_for_times([TopicPartition(topic, 0, ts)], timeout=10)
            assert tp.error is None, tp.error
            return tp.offset

        assert lookup(base) == 0
        assert lookup(base - 5) == 0
        assert lookup(base + 5000) == 500, "lookup of an exact record timestamp"
        assert lookup(base + 5001) == 501, "first record with timestamp >= target"
        wrong = [(i, off) for i in range(1, n, 7) if (off := lookup(base + 10 * i - 3)) != i]
        assert not wrong, f"(expected, returned) offsets for timestamp lookups: {wrong[:10]}"
        assert lookup(base + 10 * (n - 1)) == n - 1
        assert lookup(base + 10 * n) == -1          # after the last record: no offset
        target = lookup(base + 2345)
        assert target == 235
    finally:
        c.close()
    msgs = ck.consume_partition(broker.bootstrap, topic, 0, target, expected=n - target)
    assert msgs[0].offset() == 235 and msgs[0].value() == b"v235" + b"-" * 30
    assert msgs[0].timestamp()[1] == base + 2350


def _create_error(a, topic):
    fut = a.create_topics([topic], operation_timeout=10)[topic.topic]
    with pytest.raises(KafkaException) as ei:
        fut.result(20)
    return ei.value.args[0].code()


def test_create_topics_errors(broker):
    a = ck.admin(broker.bootstrap)
    existing = ck.create_topic(broker.bootstrap, unique_topic("exists"), partitions=2)
    assert _create_error(a, NewTopic(existing, 4, 1)) == KafkaError.TOPIC_ALREADY_EXISTS
    # The failed re-creation must not have changed the topic.
    assert len(ck.topic_metadata(broker.bootstrap, existing).partitions) == 2

    for bad_name in ("bad name with spaces", "bad/slash", "..", "x" * 250, "star*"):
        assert _create_error(a, NewTopic(bad_name, 1, 1)) == KafkaError.TOPIC_EXCEPTION, bad_name

    assert _create_error(a, NewTopic(unique_topic("badcfg"), 1, 1, config={"retention.ms": "not-a-number"})) \
        == KafkaError.INVALID_CONFIG
    assert _create_error(a, NewTopic(unique_topic("badcfg"), 1, 1, config={"cleanup.policy": "sometimes"})) \
        == KafkaError.INVALID_CONFIG
    assert _create_error(a, NewTopic(unique_topic("badcfg"), 1, 1, config={"no.such.topic.config": "1"})) \
        == KafkaError.INVALID_CONFIG

    # None of the failed creations left a topic behind.
    names = set(a.list_topics(timeout=10).topics)
    assert not any(n.startswith("badcfg") or n.startswith("bad") for n in names if n != existing), names


def test_create_topics_invalid_partitions_and_replication(broker):
    a = ck.admin(broker.bootstrap)
    assert _create_error(a, NewTopic(unique_topic("zero"), 0, 1)) == KafkaError.INVALID_PARTITIONS
    assert _create_error(a, NewTopic(unique_topic("rf3"), 1, 3)) == KafkaError.INVALID_REPLICATION_FACTOR


def test_create_topic_validate_only(broker):
    a = ck.admin(broker.bootstrap)
    topic = unique_topic("validate")
    a.create_topics([NewTopic(topic, 3, 1)], validate_only=True)[topic].result(20)
    md = ck.topic_metadata(broker.bootstrap, topic)
    assert md is None or md.error is not None, "validate_only must not create the topic"


def test_delete_topics(broker):
    a = ck.admin(broker.bootstrap)
    topic = ck.create_topic(broker.bootstrap, unique_topic("del"), partitions=2)
    p = ck.producer(broker.bootstrap)
    ck.produce_all(p, [{"value": b"before-delete"}] * 10, topic, partition=0)
    assert broker.partition_dir(topic, 0).is_dir()

    a.delete_topics([topic], operation_timeout=10)[topic].result(20)

    def gone():
        md = ck.topic_metadata(broker.bootstrap, topic)
        return md is None or (md.error is not None and md.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART)

    wait_until(gone, 15, message="deleted topic to disappear from metadata")
    assert topic not in a.list_topics(timeout=10).topics
    wait_until(lambda: not broker.partition_dir(topic, 0).exists(), 30,
               message="partition directory of the deleted topic to be removed/renamed")

    # Deleting it again: unknown topic.
    with pytest.raises(KafkaException) as ei:
        a.delete_topics([topic], operation_timeout=10)[topic].result(20)
    assert ei.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART

    # Re-creating the same name gives an empty topic.
    ck.create_topic(broker.bootstrap, topic, partitions=1)
    assert ck.watermarks(broker.bootstrap, topic) == (0, 0)
    ck.produce_all(p, [{"value": b"after-recreate"}], topic, partition=0)
    msgs = ck.consume_partition(broker.bootstrap, topic, 0, 0, expected=1)
    assert [m.value() for m in msgs] == [b"after-recreate"]


def test_create_partitions(broker):
    a = ck.admin(broker.bootstrap)
    topic = ck.create_topic(broker.bootstrap, unique_topic("cp"), partitions=2)
    a.create_partitions([NewPartitions(topic, 5)], operation_timeout=10)[topic].result(20)
    ck.wait_for_topic(broker.bootstrap, topic, 5)
    p = ck.producer(broker.bootstrap)
    ck.produce_all(p, [{"value": b"in-new-partition"}], topic, partition=4)
    assert [m.value() for m in ck.consume_partition(broker.bootstrap, topic, 4, 0, expected=1)] == [b"in-new-partition"]

    for bad in (3, 5):
        with pytest.raises(KafkaException) as ei:
            a.create_partitions([NewPartitions(topic, bad)], operation_timeout=10)[topic].result(20)
        assert ei.value.args[0].code() == KafkaError.INVALID_PARTITIONS, bad
    assert len(ck.topic_metadata(broker.bootstrap, topic).partitions) == 5

    missing = unique_topic("cp-missing")
    with pytest.raises(KafkaException) as ei:
        a.create_partitions([NewPartitions(missing, 3)], operation_timeout=10)[missing].result(20)
    assert ei.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART

    # Manual assignments: one replica list per added partition, naming only this broker (id 0).
    a.create_partitions([NewPartitions(topic, 6, [[0]])], operation_timeout=10)[topic].result(20)
    with pytest.raises(KafkaException) as ei:
        a.create_partitions([NewPartitions(topic, 7, [[10]])], operation_timeout=10)[topic].result(20)
    assert ei.value.args[0].code() == KafkaError.INVALID_REPLICA_ASSIGNMENT
    assert "broker 10" in ei.value.args[0].str()
    # Shapes librdkafka refuses to send, as raw CreatePartitions v1.
    for assignment, needle in (([[0, 0]], "more than once"), ([[]], "empty replica list"),
                               ([[0], [0]], "2 assignment(s)")):
        body = struct.pack(">i", 1) + kafka_wire.string(topic) + struct.pack(">ii", 7, len(assignment))
        for replicas in assignment:
            body += struct.pack(">i", len(replicas)) + b"".join(struct.pack(">i", r) for r in replicas)
        body += struct.pack(">i?", 10000, False)
        with kafka_wire.Conn(broker.port) as c:
            r = kafka_wire.Reader(c.request(37, 1, 1, body))
        r.int32()  # throttle_time_ms
        assert r.int32() == 1 and r.string() == topic
        error, message = r.int16(), r.string()
        assert error == KafkaError.INVALID_REPLICA_ASSIGNMENT and needle in message, (assignment, error, message)
    assert len(ck.topic_metadata(broker.bootstrap, topic).partitions) == 6


def test_describe_configs(broker):
    a = ck.admin(broker.bootstrap)
    topic = ck.create_topic(broker.bootstrap, unique_topic("cfg"), config={"retention.ms": "123456789"})
    res = ConfigResource("topic", topic)
    configs = a.describe_configs([res])[res].result(20)
    assert configs["retention.ms"].value == "123456789"
    assert not configs["retention.ms"].is_default
    source = configs["retention.ms"].source
    assert getattr(source, "value", source) == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert configs["cleanup.policy"].value == "delete"
    assert "segment.bytes" in configs and int(configs["segment.bytes"].value) > 0

    missing = ConfigResource("topic", unique_topic("cfg-missing"))
    with pytest.raises(KafkaException) as ei:
        a.describe_configs([missing])[missing].result(20)
    assert ei.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_describe_configs_broker_override(make_broker):
    b = make_broker({"log.retention.ms": "7777777", "num.partitions": "2"})
    a = ck.admin(b.bootstrap)
    md = a.list_topics(timeout=10)
    node = next(iter(md.brokers))
    res = ConfigResource("broker", str(node))
    configs = a.describe_configs([res])[res].result(20)
    assert configs["num.partitions"].value == "2"
    # A topic created without overrides inherits the broker default.
    topic = ck.create_topic(b.bootstrap, unique_topic("inherit"))
    tres = ConfigResource("topic", topic)
    tconfigs = a.describe_configs([tres])[tres].result(20)
    assert tconfigs["retention.ms"].value == "7777777"


def test_auto_create_through_metadata(make_broker):
    b = make_broker({"num.partitions": "3", "auto.create.topics.enable": "true"})
    topic = unique_topic("auto")
    p = ck.producer(b.bootstrap)

    def created():
        md = p.list_topics(topic=topic, timeout=5).topics.get(topic)
        return md is not None and md.error is None and len(md.partitions) == 3 and md

    md = wait_until(created, 15, interval=0.2, message="auto-created topic with 3 partitions")
    assert sorted(md.partitions) == [0, 1, 2]
    ck.produce_all(p, [{"value": b"auto"}], topic, partition=2)
    assert [m.value() for m in ck.consume_partition(b.bootstrap, topic, 2, 0, expected=1)] == [b"auto"]
    assert b.partition_dir(topic, 2).is_dir()


def test_auto_create_disabled(make_broker):
    b = make_broker({"auto.create.topics.enable": "false"})
    topic = unique_topic("noauto")
    p = ck.producer(b.bootstrap, message_timeout_ms=6000, topic_metadata_propagation_max_ms=1000)
    errors = []
    delivered = []

    def cb(err, msg):
        (errors if err is not None else delivered).append(err or msg)

    p.produce(topic, value=b"nope", on_delivery=cb)
    deadline = time.monotonic() + 20
    while not errors and not delivered and time.monotonic() < deadline:
        p.poll(0.1)
    assert not delivered, "producing to an unknown topic must fail when auto-creation is disabled"
    assert errors, "no delivery report within 20s"
    assert errors[0].code() in (KafkaError._UNKNOWN_TOPIC, KafkaError.UNKNOWN_TOPIC_OR_PART,
                                KafkaError._MSG_TIMED_OUT), errors[0]
    md = ck.topic_metadata(b.bootstrap, topic)
    assert md is None or md.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    assert not b.partition_dir(topic, 0).exists()
