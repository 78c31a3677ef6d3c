"""Clients speaking the formats before Kafka 0.11 (Produce v0-v2 with magic 0 and 1 message sets):
their messages are converted to v2 batches on produce, as Kafka 3 does, and read back by any client.
librdkafka is made to speak them with broker.version.fallback, kafka-python with api_version."""

import struct
import time
import zlib

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME
from kafka import KafkaProducer

import ck_helpers as ck
import kafka_wire as kw
from harness import unique_topic

CORRUPT_MESSAGE = 2
INVALID_RECORD = 87
UNSUPPORTED_COMPRESSION_TYPE = 76
STAMP = 1_700_000_000_000


def legacy_producer(bootstrap, fallback, codec):
    return ck.producer(bootstrap, **{"api.version.request": False, "broker.version.fallback": fallback,
                                     "compression.codec": codec})


@pytest.mark.parametrize("fallback,codec", [("0.9.0.0", "none"), ("0.9.0.0", "gzip"), ("0.9.0.0", "snappy"),
                                            ("0.10.0.0", "none"), ("0.10.0.0", "gzip"), ("0.10.0.0", "lz4")])
def test_librdkafka_in_old_formats(broker, fallback, codec):
    topic = ck.create_topic(broker.bootstrap, unique_topic("legacy"))
    records = [{"key": f"k{i}".encode(), "value": f"v{i}".encode() * 20, "timestamp": STAMP + i} for i in range(50)]
    records[7]["key"] = None
    records[9]["value"] = None
    reports = ck.produce_all(legacy_producer(broker.bootstrap, fallback, codec), records, topic, partition=0)
    assert sorted(offset for _, offset in reports) == list(range(50))
    msgs = ck.consume_partition(broker.bootstrap, topic, 0, 0, expected=50)
    assert [(m.offset(), m.key(), m.value()) for m in msgs] == \
        [(i, r["key"], r["value"]) for i, r in enumerate(records)]
    # Magic 0 carries no timestamp (Kafka keeps none: -1); magic 1 carries the producer's.
    expected = [(TIMESTAMP_CREATE_TIME, -1 if fallback == "0.9.0.0" else STAMP + i) for i in range(50)]
    assert [m.timestamp() for m in msgs] == expected


def test_kafka_python_in_old_formats(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("legacy-kp"))
    for api_version, codec in (((0, 9), None), ((0, 10, 1), "gzip")):
        p = KafkaProducer(bootstrap_servers=broker.bootstrap, api_version=api_version, compression_type=codec)
        futures = [p.send(topic, key=b"k", value=f"{api_version}-{i}".encode(), partition=0, timestamp_ms=STAMP)
                   for i in range(10)]
        p.flush()
        p.close()
        assert all(f.get(10).offset >= 0 for f in futures)
    msgs = ck.consume_partition(broker.bootstrap, topic, 0, 0, expected=20)
    assert [m.value() for m in msgs] == [f"{v}-{i}".encode() for v in ((0, 9), (0, 10, 1)) for i in range(10)]
    assert [m.timestamp()[1] for m in msgs] == [-1] * 10 + [STAMP] * 10


def test_old_formats_meet_log_append_time_and_compaction(broker):
    stamped = ck.create_topic(broker.bootstrap, unique_topic("legacy-lat"),
                              config={"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    ck.produce_all(legacy_producer(broker.bootstrap, "0.9.0.0", "none"), [{"value": b"v"}], stamped, partition=0)
    (msg,) = ck.consume_partition(broker.bootstrap, stamped, 0, 0, expected=1)
    kind, ts = msg.timestamp()
    assert kind == TIMESTAMP_LOG_APPEND_TIME and ts >= before

    compacted = ck.create_topic(broker.bootstrap, unique_topic("legacy-compact"), config={"cleanup.policy": "compact"})
    errors = []
    p = legacy_producer(broker.bootstrap, "0.10.0.0", "none")
    p.produce(compacted, value=b"no key", partition=0, on_delivery=lambda err, msg: errors.append(err))
    assert p.flush(30) == 0
    assert [e.code() for e in errors] == [INVALID_RECORD]
    assert ck.watermarks(broker.bootstrap, compacted) == (0, 0)


def legacy_entry(value, magic=1, crc_fix=0):
    body = struct.pack(">bbq", magic, 0, STAMP) + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", (zlib.crc32(body) + crc_fix) & 0xFFFFFFFF) + body
    return struct.pack(">qi", 0, len(message)) + message


def produce_raw(broker, topic, blob, version):
    with kw.Conn(broker.port) as conn:
        body = conn.request(0, version, 1, kw.produce_body(topic, 0, blob, version))
    (resp,), _ = kw.parse_produce_response(body, version)
    return resp


def test_broken_old_message_sets_are_refused(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("legacy-bad"))
    good = legacy_entry(b"fine")
    for name, blob in (("bad crc", legacy_entry(b"fine", crc_fix=1)), ("truncated", good[:-2]),
                       ("trailing bytes", good + b"\x00\x01"), ("magic 5 inside", legacy_entry(b"x", magic=5))):
        assert produce_raw(broker, topic, blob, 2)["error"] == CORRUPT_MESSAGE, name
    assert ck.watermarks(broker.bootstrap, topic) == (0, 0)
    resp = produce_raw(broker, topic, good, 2)
    assert (resp["error"], resp["base_offset"]) == (0, 0)
    ck.assert_broker_healthy(broker, topic)


def test_produce_v3_and_later_take_exactly_one_v2_batch(broker):
    """As Kafka's ProduceRequest.validateRecords: from v3 a partition's records are one magic 2 batch,
    zstd only from v7; anything else is refused whole and nothing is written."""
    topic = ck.create_topic(broker.bootstrap, unique_topic("one-batch"))
    batch = kw.build_record_batch([(b"k", b"v", [])])
    zstd_flagged = kw.build_record_batch([(b"k", b"v", [])], attributes=4)
    for name, blob, version, error in (
            ("magic 1 at v3", legacy_entry(b"old"), 3, INVALID_RECORD),
            ("magic 1 at v8", legacy_entry(b"old"), 8, INVALID_RECORD),
            ("two batches", batch + batch, 8, INVALID_RECORD),
            ("no batch", b"", 5, INVALID_RECORD),
            ("zstd at v6", zstd_flagged, 6, UNSUPPORTED_COMPRESSION_TYPE)):
        resp = produce_raw(broker, topic, blob, version)
        assert (resp["error"], resp["base_offset"]) == (error, -1), (name, resp)
    resp = produce_raw(broker, topic, batch + batch, 8)
    assert "exactly one record batch" in resp["error_message"], resp
    assert ck.watermarks(broker.bootstrap, topic) == (0, 0)
    # The same records in the forms each version takes are written.
    assert produce_raw(broker, topic, batch, 3)["error"] == 0
    assert produce_raw(broker, topic, legacy_entry(b"old"), 2)["error"] == 0
    assert produce_raw(broker, topic, batch + batch, 2)["error"] == 0
    assert ck.watermarks(broker.bootstrap, topic) == (0, 4)
