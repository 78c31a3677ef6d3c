"""kafka-python (pure-Python client, its own protocol code) against the real broker."""

import importlib
import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewPartitions, NewTopic
from kafka.errors import (InvalidPartitionsError, TopicAlreadyExistsError, UnknownTopicOrPartitionError)

from harness import unique_topic, wait_until

# kafka-python needs an extra Python module for every codec except gzip.
CODEC_MODULES = {"gzip": None, "snappy": "snappy", "lz4": "lz4.frame", "zstd": "zstandard", None: None}


def codec_param(codec):
    module = CODEC_MODULES[codec]
    marks = []
    if module is not None:
        try:
            importlib.import_module(module)
        except ImportError:
            marks.append(pytest.mark.skip(reason=f"python module {module!r} for kafka-python's {codec} codec is not installed"))
    return pytest.param(codec, marks=marks, id=str(codec))


def admin_client(bootstrap):
    return KafkaAdminClient(bootstrap_servers=bootstrap, client_id="oxbow-it-admin", request_timeout_ms=15000)


def read_all(bootstrap, topic, partitions, expected, timeout=60):
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             consumer_timeout_ms=1000, fetch_max_wait_ms=100)
    try:
        tps = [TopicPartition(topic, p) for p in partitions]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        out = {p: [] for p in partitions}
        total = 0
        deadline = time.monotonic() + timeout
        while total < expected and time.monotonic() < deadline:
            batch = consumer.poll(timeout_ms=500, max_records=5000)
            for tp, recs in batch.items():
                out[tp.partition].extend(recs)
                total += len(recs)
        assert total == expected, f"read {total} records, expected {expected}"
        end = consumer.end_offsets(tps)
        assert {tp.partition: off for tp, off in end.items()} == {p: len(out[p]) for p in partitions}
        return out
    finally:
        consumer.close()


def headers_for(i, codec):
    headers = [("n", str(i).encode()), ("codec", str(codec).encode())]
    if i % 7 == 0:
        headers.append(("empty-value", b""))  # (kafka-python 2.0.2 cannot send null header values)
    return headers


@pytest.mark.parametrize("codec", [codec_param(c) for c in (None, "gzip", "snappy", "lz4", "zstd")])
def test_produce_consume(broker, codec):
    topic = unique_topic(f"kp-{codec}")
    admin = admin_client(broker.bootstrap)
    try:
        admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)], timeout_ms=15000)
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", compression_type=codec,
                             linger_ms=5, batch_size=64 * 1024)
    n = 6000
    base_ts = int(time.time() * 1000) - 60_000
    futures = []
    for i in range(n):
        futures.append(producer.send(topic, key=f"k{i}".encode(), value=f"value-{i}-".encode() + b"z" * (i % 100),
                                     headers=headers_for(i, codec),
                                     partition=i % 3, timestamp_ms=base_ts + i))
    producer.flush(60)
    metas = [f.get(timeout=30) for f in futures]
    producer.close()
    for p in range(3):
        assert sorted(m.offset for m in metas if m.partition == p) == list(range(n // 3))

    out = read_all(broker.bootstrap, topic, range(3), n)
    for p in range(3):
        recs = out[p]
        idxs = list(range(p, n, 3))
        assert [r.offset for r in recs] == list(range(len(idxs)))
        assert [r.key for r in recs] == [f"k{i}".encode() for i in idxs]
        assert [r.value for r in recs] == [f"value-{i}-".encode() + b"z" * (i % 100) for i in idxs]
        assert [list(r.headers) for r in recs] == [headers_for(i, codec) for i in idxs]
        assert [r.timestamp for r in recs] == [base_ts + i for i in idxs]
        assert all(r.timestamp_type == 0 for r in recs)  # CreateTime


def test_seek_and_offsets_for_times(broker):
    topic = unique_topic("kp-seek")
    admin = admin_client(broker.bootstrap)
    try:
        admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)], timeout_ms=15000)
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1)
    base_ts = int(time.time() * 1000) - 600_000
    for i in range(300):
        producer.send(topic, value=str(i).encode(), partition=0, timestamp_ms=base_ts + 100 * i)
    producer.flush(30)
    producer.close()

    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, enable_auto_commit=False,
                             consumer_timeout_ms=2000)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        assert consumer.beginning_offsets([tp]) == {tp: 0}
        assert consumer.end_offsets([tp]) == {tp: 300}
        found = consumer.offsets_for_times({tp: base_ts + 100 * 123 - 50})
        assert found[tp].offset == 123
        # ListOffsets answers with the timestamp of the record found, not the one asked for.
        assert found[tp].timestamp == base_ts + 100 * 123, \
            f"ListOffsets returned timestamp base{found[tp].timestamp - base_ts:+d}, expected base+12300 (asked base+12250)"
        consumer.seek(tp, 250)
        got = []
        deadline = time.monotonic() + 20
        while len(got) < 50 and time.monotonic() < deadline:
            for recs in consumer.poll(timeout_ms=500).values():
                got.extend(recs)
        assert [int(r.value) for r in got] == list(range(250, 300))
    finally:
        consumer.close()


def test_admin_create_delete_topics(broker):
    admin = admin_client(broker.bootstrap)
    try:
        t1, t2 = unique_topic("kpa-1"), unique_topic("kpa-2")
        admin.create_topics([NewTopic(t1, 2, 1), NewTopic(t2, 1, 1, topic_configs={"retention.ms": "3600000"})],
                            timeout_ms=15000)
        wait_until(lambda: {t1, t2} <= set(admin.list_topics()), 15, message="new topics listed")
        described = {d["topic"]: d for d in admin.describe_topics([t1, t2])}
        assert len(described[t1]["partitions"]) == 2 and len(described[t2]["partitions"]) == 1
        assert described[t1]["error_code"] == 0

        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topics([NewTopic(t1, 1, 1)], timeout_ms=15000)

        admin.create_partitions({t2: NewPartitions(total_count=4)}, timeout_ms=15000)
        wait_until(lambda: len(admin.describe_topics([t2])[0]["partitions"]) == 4, 15, message="4 partitions")
        with pytest.raises(InvalidPartitionsError):
            admin.create_partitions({t2: NewPartitions(total_count=2)}, timeout_ms=15000)

        admin.delete_topics([t1, t2], timeout_ms=15000)
        wait_until(lambda: not ({t1, t2} & set(admin.list_topics())), 15, message="topics deleted")
        with pytest.raises(UnknownTopicOrPartitionError):
            admin.delete_topics([t1], timeout_ms=15000)
    finally:
        admin.close()
