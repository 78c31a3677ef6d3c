"""Clients speaking the formats before Kafka 0.11 (Produce v0-v2 and Fetch v0-v3, with magic 0 and 1
message sets): their messages are converted to v2 batches on produce, and v2 batches back to their
formats on fetch, as Kafka 3 does. librdkafka is made to speak them with broker.version.fallback,
kafka-python with api_version."""

import struct
import time
import zlib

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

import ck_helpers as ck
import kafka_wire as kw
from harness import metric_value, scrape_metrics, unique_topic

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


# ---------------------------------------------------------------------------------------------
# Fetch v0-v3 predate record batches: what they read is converted to magic 0 (v0-v1) or 1 (v2-v3).

UNSUPPORTED_VERSION = 35


def fetch_raw(broker, topic, version, offset=0, max_bytes=1 << 20):
    """One partition's (error, records) from a Fetch of `version` (0-4)."""
    body = struct.pack(">iii", -1, 100, 1)
    if version >= 3:
        body += struct.pack(">i", 1 << 20)
    if version >= 4:
        body += struct.pack(">b", 0)
    body += struct.pack(">i", 1) + kw.string(topic) + struct.pack(">i", 1) + struct.pack(">iqi", 0, offset, max_bytes)
    with kw.Conn(broker.port) as conn:
        r = kw.Reader(conn.request(1, version, 1, body))
    if version >= 1:
        r.int32()  # throttle
    assert r.int32() == 1 and r.string() == topic and r.int32() == 1
    assert r.int32() == 0  # partition
    error = r.int16()
    r.int64()  # high watermark
    if version >= 4:
        r.int64()  # last stable offset
        aborted = r.int32()
        r.pos += max(aborted, 0) * 16
    return error, r.bytes_() or b""


def legacy_messages(blob):
    """[(offset, magic, attributes, timestamp, key, value)] of a message set, wrappers unpacked the way
    an old client does (magic 1: inner offsets relative to the wrapper's)."""
    out = []
    pos = 0
    while pos + 12 <= len(blob):
        offset, size = struct.unpack_from(">qi", blob, pos)
        body = blob[pos + 12:pos + 12 + size]
        pos += 12 + size
        assert len(body) == size, "a truncated message"
        crc, = struct.unpack_from(">I", body, 0)
        assert crc == zlib.crc32(body[4:]), "bad CRC"
        magic, attributes = body[4], body[5]
        at = 6
        timestamp = -1
        if magic == 1:
            timestamp, = struct.unpack_from(">q", body, at)
            at += 8
        fields = []
        for _ in range(2):
            n, = struct.unpack_from(">i", body, at)
            at += 4
            fields.append(None if n < 0 else body[at:at + n])
            at += max(n, 0)
        key, value = fields
        codec = attributes & 0x07
        if codec == 0:
            out.append((offset, magic, attributes, timestamp, key, value))
            continue
        assert codec == 1, f"codec {codec}: the test produces gzip only"
        inner = legacy_messages(zlib.decompress(value, 16 + zlib.MAX_WBITS))
        base = offset - inner[-1][0] if magic == 1 else 0
        out.extend((base + o, m, a, ts, k, v) for o, m, a, ts, k, v in inner)
    return out


def test_old_fetch_versions_get_old_message_formats(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("downconvert"))
    records = [{"key": f"k{i}".encode(), "value": f"v{i}".encode(), "timestamp": STAMP + i,
                "headers": [("h", b"dropped")]} for i in range(10)]
    records[3]["key"] = None
    ck.produce_all(ck.producer(broker.bootstrap, **{"linger.ms": 50}), records[:5], topic, partition=0)
    ck.produce_all(ck.producer(broker.bootstrap, **{"linger.ms": 50, "compression.codec": "gzip"}), records[5:],
                   topic, partition=0)
    for version, magic in ((0, 0), (1, 0), (2, 1), (3, 1)):
        error, blob = fetch_raw(broker, topic, version)
        assert error == 0, (version, error)
        assert blob[16] == magic, f"Fetch v{version} must carry magic {magic}, got magic {blob[16]}"
        messages = legacy_messages(blob)
        assert [(o, k, v) for o, _, _, _, k, v in messages] == \
            [(i, r["key"], r["value"]) for i, r in enumerate(records)], version
        assert {m for _, m, _, _, _, _ in messages} == {magic}
        expected_stamps = [-1] * 10 if magic == 0 else [STAMP + i for i in range(10)]
        assert [ts for _, _, _, ts, _, _ in messages] == expected_stamps, version
        # From the middle of the compressed batch: the whole wrapper comes, as from Kafka; from the
        # middle of the uncompressed one, what the fetch asked for (old clients may not skip).
        error, blob = fetch_raw(broker, topic, version, offset=7)
        assert [o for o, *_ in legacy_messages(blob)] == list(range(5, 10)), version
        error, blob = fetch_raw(broker, topic, version, offset=2)
        assert [o for o, *_ in legacy_messages(blob)] == list(range(2, 10)), version
    error, blob = fetch_raw(broker, topic, 4)
    assert (error, blob[16]) == (0, 2), "Fetch v4 reads the batches as stored"
    assert metric_value(scrape_metrics(broker), "oxbow_fetch_down_conversions_total") >= 8


@pytest.mark.parametrize("api_version", [(0, 9), (0, 10, 1)])
def test_kafka_python_reads_old_formats(broker, api_version):
    """kafka-python speaking 0.9 (Fetch v1, magic 0) or 0.10.1 (Fetch v3, magic 1) reads what a v2 client wrote."""
    topic = ck.create_topic(broker.bootstrap, unique_topic("downconvert-kp"))
    records = [{"key": b"k", "value": f"v{i}".encode(), "timestamp": STAMP + i} for i in range(30)]
    ck.produce_all(ck.producer(broker.bootstrap, **{"compression.codec": "gzip", "linger.ms": 20}), records, topic,
                   partition=0)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, api_version=api_version, auto_offset_reset="earliest",
                             consumer_timeout_ms=10000, fetch_max_bytes=1 << 20)
    try:
        consumer.assign([TopicPartition(topic, 0)])
        got = [(m.offset, m.value, m.timestamp) for _, m in zip(range(30), consumer)]
    finally:
        consumer.close()
    # Magic 0 has no timestamp (kafka-python: None): proof that it was sent magic 0.
    stamp = (lambda i: None) if api_version == (0, 9) else (lambda i: STAMP + i)
    assert got == [(i, f"v{i}".encode(), stamp(i)) for i in range(30)]


def test_down_conversion_can_be_refused_and_zstd_has_no_old_format(broker):
    refused = ck.create_topic(broker.bootstrap, unique_topic("no-downconvert"),
                              config={"message.downconversion.enable": "false"})
    ck.produce_all(ck.producer(broker.bootstrap), [{"value": b"v"}], refused, partition=0)
    assert fetch_raw(broker, refused, 2)[0] == UNSUPPORTED_VERSION
    assert fetch_raw(broker, refused, 0)[0] == UNSUPPORTED_VERSION
    assert fetch_raw(broker, refused, 4)[0] == 0

    zstd = ck.create_topic(broker.bootstrap, unique_topic("zstd-old-fetch"))
    ck.produce_all(ck.producer(broker.bootstrap, **{"compression.codec": "zstd"}), [{"value": b"v" * 100}], zstd,
                   partition=0)
    assert fetch_raw(broker, zstd, 3)[0] == UNSUPPORTED_COMPRESSION_TYPE
    assert fetch_raw(broker, zstd, 4)[0] == 0
    broker.assert_alive()
