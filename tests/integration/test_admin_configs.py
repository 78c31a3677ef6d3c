"""Topic configs changed at run time (AlterConfigs, IncrementalAlterConfigs), DeleteRecords, DescribeLogDirs."""

import struct
import time

import pytest
from confluent_kafka import KafkaError, KafkaException, TIMESTAMP_LOG_APPEND_TIME
from confluent_kafka.admin import ConfigResource

import ck_helpers as ck
import kafka_wire as kw
from harness import unique_topic, wait_until


def alter(bootstrap, topic, configs):
    client = ck.admin(bootstrap)  # must outlive the future
    futures = client.alter_configs([ConfigResource(ConfigResource.Type.TOPIC, topic, set_config=configs)])
    return list(futures.values())[0].result(10)


def overrides(bootstrap, topic):
    client = ck.admin(bootstrap)
    futures = client.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
    entries = list(futures.values())[0].result(10)
    return {k: e.value for k, e in entries.items() if e.source == 1}  # DYNAMIC_TOPIC_CONFIG


def test_retention_change_applies_without_restart(make_broker):
    broker = make_broker({"log.retention.check.interval.ms": "200"})
    topic = ck.create_topic(broker.bootstrap, unique_topic("alter"))
    ck.produce_all(ck.producer(broker.bootstrap, linger_ms=0), [{"value": b"x" * 200} for _ in range(100)],
                   topic, partition=0)
    assert ck.watermarks(broker.bootstrap, topic) == (0, 100)
    alter(broker.bootstrap, topic, {"segment.bytes": "1024", "retention.bytes": "2048"})
    assert overrides(broker.bootstrap, topic) == {"segment.bytes": "1024", "retention.bytes": "2048"}
    # New small segments roll as data arrives; retention then drops the old ones. A batch must fit
    # in one segment (else RECORD_LIST_TOO_LARGE, as in Kafka).
    ck.produce_all(ck.producer(broker.bootstrap, linger_ms=0, batch_size=700),
                   [{"value": b"y" * 200} for _ in range(100)], topic, partition=0)
    wait_until(lambda: ck.watermarks(broker.bootstrap, topic)[0] > 0, 20, message="retention moved the log start")
    low, high = ck.watermarks(broker.bootstrap, topic)
    assert high == 200 and low >= 100
    broker.restart()
    assert overrides(broker.bootstrap, topic) == {"segment.bytes": "1024", "retention.bytes": "2048"}


def test_timestamp_type_change_applies_to_new_batches(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("tstype"))
    alter(broker.bootstrap, topic, {"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    ck.produce_all(ck.producer(broker.bootstrap), [{"value": b"v", "timestamp": 1000}], topic, partition=0)
    (msg,) = ck.consume_partition(broker.bootstrap, topic, 0, 0, expected=1)
    kind, ts = msg.timestamp()
    assert kind == TIMESTAMP_LOG_APPEND_TIME and ts >= before


def test_bad_config_values_are_refused_naming_the_key(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("badcfg"), config={"retention.ms": "60000"})
    for configs, needle in (({"retention.ms": "soon"}, "retention.ms"), ({"no.such.config": "1"}, "no.such.config"),
                            ({"cleanup.policy": "shred"}, "cleanup.policy")):
        with pytest.raises(KafkaException) as info:
            alter(broker.bootstrap, topic, configs)
        assert info.value.args[0].code() == 40  # INVALID_CONFIG
        assert needle in str(info.value)
    assert overrides(broker.bootstrap, topic) == {"retention.ms": "60000"}  # unchanged


def test_deprecated_message_format_version_is_accepted_and_ignored(broker):
    """Kafka 3 takes message.format.version (deprecated, ignored since 3.0); librdkafka's own suite
    sets it to 0.10.0.0 mid-topic and expects every record back."""
    topic = ck.create_topic(broker.bootstrap, unique_topic("msgfmt"))
    p = ck.producer(broker.bootstrap)
    ck.produce_all(p, [{"value": b"before"}], topic, partition=0)
    alter(broker.bootstrap, topic, {"message.format.version": "0.10.0.0"})
    assert overrides(broker.bootstrap, topic) == {"message.format.version": "0.10.0.0"}
    ck.produce_all(p, [{"value": b"after", "headers": [("h", b"1")]}], topic, partition=0)
    before, after = ck.consume_partition(broker.bootstrap, topic, 0, 0, expected=2)
    assert (before.value(), after.value(), after.headers()) == (b"before", b"after", [("h", b"1")])


def _incremental_alter(port, topic, ops):
    """IncrementalAlterConfigs v0 by hand: ops are (name, op, value)."""
    body = struct.pack(">i", 1) + struct.pack(">b", 2) + kw.string(topic) + struct.pack(">i", len(ops))
    for name, op, value in ops:
        body += kw.string(name) + struct.pack(">b", op) + (kw.string(value) if value is not None else b"\xff\xff")
    body += b"\x00"  # validate_only
    with kw.Conn(port) as c:
        resp = c.request(44, 0, 5, body)
    # throttle, responses[1]: error_code, error_message, type, name
    (count,) = struct.unpack_from(">i", resp, 4)
    assert count == 1
    (error,) = struct.unpack_from(">h", resp, 8)
    return error


def test_incremental_alter_set_delete_append(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("incr"), config={"retention.ms": "60000"})
    assert _incremental_alter(broker.port, topic, [("segment.ms", 0, "100000"), ("retention.ms", 1, None),
                                                    ("cleanup.policy", 2, "compact")]) == 0
    assert overrides(broker.bootstrap, topic) == {"segment.ms": "100000", "cleanup.policy": "delete,compact"}
    assert _incremental_alter(broker.port, topic, [("cleanup.policy", 3, "delete")]) == 0
    assert overrides(broker.bootstrap, topic)["cleanup.policy"] == "compact"
    assert _incremental_alter(broker.port, topic, [("retention.ms", 2, "5")]) == 40  # not a list
    assert _incremental_alter(broker.port, "no-such-topic", [("retention.ms", 0, "5")]) == 3


def test_delete_records_and_describe_log_dirs(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("delrec"))
    ck.produce_all(ck.producer(broker.bootstrap), [{"value": b"r"} for _ in range(50)], topic, partition=0)
    # DeleteRecords v0 by hand: topics[name, partitions[index, offset]], timeout
    body = struct.pack(">i", 1) + kw.string(topic) + struct.pack(">i", 1) + struct.pack(">iq", 0, 30)
    body += struct.pack(">i", 5000)
    with kw.Conn(broker.port) as c:
        resp = c.request(21, 0, 9, body)
    name_len = struct.unpack_from(">h", resp, 8)[0]
    part, low, err = struct.unpack_from(">iqh", resp, 10 + name_len + 4)
    assert (part, low, err) == (0, 30, 0)
    assert ck.watermarks(broker.bootstrap, topic) == (30, 50)
    msgs = ck.consume_partition(broker.bootstrap, topic, 0, 30, expected=20)
    assert [m.offset() for m in msgs] == list(range(30, 50))
    # DescribeLogDirs v0 by hand, all topics: the partition's bytes are reported under its log dir.
    with kw.Conn(broker.port) as c:
        resp = c.request(35, 0, 10, struct.pack(">i", -1))
    sizes = {}
    pos = 4
    (n_dirs,) = struct.unpack_from(">i", resp, pos)
    pos += 4
    for _ in range(n_dirs):
        error, dir_len = struct.unpack_from(">hh", resp, pos)
        assert error == 0
        pos += 4 + dir_len
        (n_topics,) = struct.unpack_from(">i", resp, pos)
        pos += 4
        for _ in range(n_topics):
            (name_len,) = struct.unpack_from(">h", resp, pos)
            name = resp[pos + 2:pos + 2 + name_len].decode()
            pos += 2 + name_len
            (n_parts,) = struct.unpack_from(">i", resp, pos)
            pos += 4
            for _ in range(n_parts):
                index, size, _lag, _future = struct.unpack_from(">iqq?", resp, pos)
                pos += 21
                sizes[(name, index)] = size
    assert sizes[(topic, 0)] > 0


def _broker_configs(bootstrap, name="0"):
    client = ck.admin(bootstrap)
    futures = client.describe_configs([ConfigResource(ConfigResource.Type.BROKER, name)])
    return list(futures.values())[0].result(10)


def _alter_broker(bootstrap, configs, name="0"):
    client = ck.admin(bootstrap)
    futures = client.alter_configs([ConfigResource(ConfigResource.Type.BROKER, name, set_config=configs)])
    return list(futures.values())[0].result(10)


def _raw_alter_broker(port, name, configs):
    """AlterConfigs v0 by hand on a BROKER resource (librdkafka can address neither the cluster
    default, whose name is empty, nor a broker that does not exist): returns the error code."""
    body = struct.pack(">i", 1) + struct.pack(">b", 4) + kw.string(name) + struct.pack(">i", len(configs))
    for key, value in configs.items():
        body += kw.string(key) + kw.string(value)
    body += b"\x00"  # validate_only
    with kw.Conn(port) as c:
        resp = c.request(33, 0, 6, body)
    (count,) = struct.unpack_from(">i", resp, 4)
    assert count == 1
    (error,) = struct.unpack_from(">h", resp, 8)
    return error


def _topic_entry(bootstrap, topic, key):
    client = ck.admin(bootstrap)
    futures = client.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
    return list(futures.values())[0].result(10)[key]


DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, DEFAULT_CONFIG = 2, 3, 5


def test_dynamic_broker_configs_apply_at_once_to_topics_and_persist(make_broker):
    broker = make_broker({"log.retention.check.interval.ms": "200"})
    topic = ck.create_topic(broker.bootstrap, unique_topic("dynbroker"), config={"segment.bytes": "1024"})
    small_batches = ck.producer(broker.bootstrap, linger_ms=0, batch_size=700)  # each fits a segment
    ck.produce_all(small_batches, [{"value": b"x" * 200} for _ in range(100)], topic, partition=0)
    assert _topic_entry(broker.bootstrap, topic, "retention.bytes").source == DEFAULT_CONFIG

    # This broker's layer: the topic inherits it at once, and retention acts on it.
    _alter_broker(broker.bootstrap, {"log.retention.bytes": "2048"})
    entry = _broker_configs(broker.bootstrap)["log.retention.bytes"]
    assert (entry.value, entry.source) == ("2048", DYNAMIC_BROKER_CONFIG)
    inherited = _topic_entry(broker.bootstrap, topic, "retention.bytes")
    assert (inherited.value, inherited.source) == ("2048", DYNAMIC_BROKER_CONFIG)
    # Small segments roll as more data arrives; retention then drops the old ones.
    ck.produce_all(small_batches, [{"value": b"y" * 200} for _ in range(100)], topic, partition=0)
    wait_until(lambda: ck.watermarks(broker.bootstrap, topic)[0] > 0, 20, message="retention used the new default")

    # The cluster-wide default layer sits under this broker's.
    assert _raw_alter_broker(broker.port, "", {"log.retention.ms": "3600000"}) == 0
    entry = _topic_entry(broker.bootstrap, topic, "retention.ms")
    assert (entry.value, entry.source) == ("3600000", DYNAMIC_DEFAULT_BROKER_CONFIG)
    entry = _broker_configs(broker.bootstrap)["log.retention.ms"]
    assert (entry.value, entry.source) == ("3600000", DYNAMIC_DEFAULT_BROKER_CONFIG)

    broker.restart()
    assert _broker_configs(broker.bootstrap)["log.retention.bytes"].value == "2048"
    assert _topic_entry(broker.bootstrap, topic, "retention.ms").value == "3600000"

    # AlterConfigs replaces the layer: an empty set removes this broker's overrides.
    _alter_broker(broker.bootstrap, {})
    assert _broker_configs(broker.bootstrap)["log.retention.bytes"].source == DEFAULT_CONFIG


def test_dynamic_broker_configs_refuse_static_unknown_and_bad_values(broker):
    for configs, needle in (({"listeners": "PLAINTEXT://127.0.0.1:1"}, "listeners"),
                            ({"no.such.config": "1"}, "no.such.config"),
                            ({"log.retention.ms": "soon"}, "log.retention.ms")):
        with pytest.raises(KafkaException) as info:
            _alter_broker(broker.bootstrap, configs)
        assert info.value.args[0].code() == 40  # INVALID_CONFIG
        assert needle in str(info.value)
    assert _raw_alter_broker(broker.port, "7", {"log.retention.ms": "1000"}) == 42  # INVALID_REQUEST: not us
    assert _raw_alter_broker(broker.port, "", {"log.dirs": "/elsewhere"}) == 40  # read-only at any level
    assert _broker_configs(broker.bootstrap)["log.retention.ms"].source != DYNAMIC_BROKER_CONFIG


def test_kerberos_broker_configs_are_taken_though_gssapi_is_not_offered(broker):
    """Kafka's per-broker SASL/Kerberos keys are dynamic there; librdkafka's admin suite alters one."""
    _alter_broker(broker.bootstrap, {"sasl.kerberos.min.time.before.relogin": "58000"})
    entry = _broker_configs(broker.bootstrap)["sasl.kerberos.min.time.before.relogin"]
    assert (entry.value, entry.source) == ("58000", DYNAMIC_BROKER_CONFIG)
    with pytest.raises(KafkaException) as info:
        _alter_broker(broker.bootstrap, {"sasl.kerberos.min.time.before.relogin": "soon"})
    assert info.value.args[0].code() == 40  # INVALID_CONFIG


INVALID_TIMESTAMP = 32


def test_timestamps_far_from_the_clock_are_refused(make_broker):
    """message.timestamp.difference.max.ms (topic) and log.message.timestamp.difference.max.ms
    (broker): a CreateTime record further than that from the broker's clock fails its batch with
    INVALID_TIMESTAMP and names itself in record_errors; nothing of the batch is written."""
    broker = make_broker({"log.message.timestamp.difference.max.ms": "3600000"})
    topic = ck.create_topic(broker.bootstrap, unique_topic("tsdiff"),
                            config={"message.timestamp.difference.max.ms": "60000"})
    entry = _topic_entry(broker.bootstrap, topic, "message.timestamp.difference.max.ms")
    assert entry.value == "60000"
    now = int(time.time() * 1000)

    def produce(ts_list):
        errors = []
        p = ck.producer(broker.bootstrap, linger_ms=50)
        # With the partition's leader known before the first record, librdkafka sends the records
        # as one batch; records produced while it looks the topic up may be split (11 of 20 here).
        p.list_topics(topic, timeout=10)
        for ts in ts_list:
            p.produce(topic, value=b"v", partition=0, timestamp=ts, on_delivery=lambda err, msg: errors.append(err))
        assert p.flush(30) == 0
        return [e.code() if e else 0 for e in errors]

    assert produce([now, now - 30_000, now + 30_000]) == [0, 0, 0]
    assert produce([now, now - 120_000, now]) == [INVALID_TIMESTAMP] * 3
    assert produce([now + 120_000]) == [INVALID_TIMESTAMP]
    assert ck.watermarks(broker.bootstrap, topic) == (0, 3)
    with kw.Conn(broker.port) as c:
        stale = kw.build_record_batch([(b"k", b"v", []), (b"k", b"w", [])], base_timestamp=now - 7_200_000)
        (resp,), _ = kw.parse_produce_v8_response(c.request(0, 8, 1, kw.produce_v8_body(topic, 0, stale)))
    assert resp["error"] == INVALID_TIMESTAMP and [i for i, _ in resp["record_errors"]] == [0, 1], resp

    # Without the topic's override the broker's hour applies; a topic on LogAppendTime checks nothing.
    alter(broker.bootstrap, topic, {})
    assert produce([now - 120_000]) == [0]
    assert produce([now - 7_200_000]) == [INVALID_TIMESTAMP]
    alter(broker.bootstrap, topic, {"message.timestamp.type": "LogAppendTime"})
    assert produce([now - 7_200_000]) == [0]
    assert ck.watermarks(broker.bootstrap, topic) == (0, 5)


NOT_ENOUGH_REPLICAS = 19


def test_min_insync_replicas_above_one_refuses_acks_all(broker):
    """One node has one in-sync replica: with min.insync.replicas=2, Kafka refuses acks=all produce
    with NOT_ENOUGH_REPLICAS and writes nothing, while acks=1 and acks=0 still write."""
    topic = ck.create_topic(broker.bootstrap, unique_topic("minisr"), config={"min.insync.replicas": "2"})

    def produce(acks):
        errors = []
        # The error is retriable: without retries librdkafka reports it rather than its timeout.
        p = ck.producer(broker.bootstrap, acks=acks, retries=0)
        p.produce(topic, value=b"v", partition=0, on_delivery=lambda err, msg: errors.append(err))
        assert p.flush(30) == 0
        return [e.code() if e else 0 for e in errors]

    assert produce("all") == [NOT_ENOUGH_REPLICAS]
    assert produce("1") == [0]
    with kw.Conn(broker.port) as c:
        batch = kw.build_record_batch([(b"k", b"v", [])])
        (resp,), _ = kw.parse_produce_v8_response(c.request(0, 8, 1, kw.produce_v8_body(topic, 0, batch, acks=-1)))
    assert (resp["error"], resp["base_offset"]) == (NOT_ENOUGH_REPLICAS, -1), resp
    assert "min.insync.replicas=2" in resp["error_message"], resp
    assert ck.watermarks(broker.bootstrap, topic) == (0, 1)
    alter(broker.bootstrap, topic, {"min.insync.replicas": "1"})
    assert produce("all") == [0]
    assert ck.watermarks(broker.bootstrap, topic) == (0, 2)


def _raw_describe_configs(port, resource_type, name, keys=None):
    """DescribeConfigs v1 with synonyms, by hand (librdkafka asks for every key): {key: (value,
    source, is_sensitive, [(synonym, value, source), ...])} in the order the broker sent them."""
    body = struct.pack(">i", 1) + struct.pack(">b", resource_type) + kw.string(name)
    body += struct.pack(">i", -1) if keys is None else \
        struct.pack(">i", len(keys)) + b"".join(kw.string(k) for k in keys)
    body += b"\x01"  # include_synonyms
    with kw.Conn(port) as c:
        r = kw.Reader(c.request(32, 1, 7, body))
    r.int32()  # throttle_time_ms
    assert r.int32() == 1
    error, _message, _type, _name = r.int16(), r.string(), r.int8(), r.string()
    assert error == 0, error
    out = {}
    for _ in range(r.int32()):
        key, value, _read_only, source, sensitive = r.string(), r.string(), r.int8(), r.int8(), r.int8()
        synonyms = [(r.string(), r.string(), r.int8()) for _ in range(r.int32())]
        out[key] = (value, source, bool(sensitive), synonyms)
    return out


STATIC_BROKER_CONFIG = 4


def test_describe_configs_synonyms_as_kafka_lists_them(make_broker):
    TOPIC, BROKER = 2, 4
    broker = make_broker({"ssl.key.password": "hunter2"})
    topic = ck.create_topic(broker.bootstrap, unique_topic("synonyms"))
    entries = _raw_describe_configs(broker.port, TOPIC, topic)
    # log.retention.ms has no default, and Kafka drops the hours default that stands before it.
    assert entries["retention.ms"] == ("604800000", DEFAULT_CONFIG, False, [])
    assert entries["segment.ms"] == ("604800000", DEFAULT_CONFIG, False, [])
    assert entries["segment.jitter.ms"] == ("0", DEFAULT_CONFIG, False, [])
    assert entries["segment.bytes"] == \
        ("1073741824", DEFAULT_CONFIG, False, [("log.segment.bytes", "1073741824", DEFAULT_CONFIG)])
    assert entries["preallocate"][3] == [("log.preallocate", "false", DEFAULT_CONFIG)]
    # The keys asked for come back in the order asked.
    wanted = ["default.replication.factor", "num.partitions", "log.retention.hours"]
    assert list(_raw_describe_configs(broker.port, BROKER, "0", wanted)) == wanted
    # A password's value is withheld from its synonyms too.
    (value, source, sensitive, synonyms) = _raw_describe_configs(broker.port, BROKER, "0",
                                                                 ["ssl.key.password"])["ssl.key.password"]
    assert (value, source, sensitive) == (None, STATIC_BROKER_CONFIG, True)
    assert synonyms == [("ssl.key.password", None, STATIC_BROKER_CONFIG)]

    # Set in server.properties: in milliseconds the key leads its synonyms; in hours Kafka shows the
    # value but drops the synonyms (they do not start with log.retention.ms).
    broker.stop()
    for static, value, source, synonyms in (
            ({"log.retention.ms": "3600000"}, "3600000", STATIC_BROKER_CONFIG,
             [("log.retention.ms", "3600000", STATIC_BROKER_CONFIG), ("log.retention.hours", "168", DEFAULT_CONFIG)]),
            ({"log.retention.hours": "24"}, "86400000", DEFAULT_CONFIG, [])):
        b = make_broker(static)
        t = ck.create_topic(b.bootstrap, unique_topic("synonyms"))
        assert _raw_describe_configs(b.port, TOPIC, t, ["retention.ms"]) == \
            {"retention.ms": (value, source, False, synonyms)}, static
        b.stop()


def stored_codecs(broker, topic):
    """The codec of each batch in the partition's first segment file, as stored."""
    data = (broker.partition_dir(topic, 0) / "00000000000000000000.log").read_bytes()
    codecs, pos = [], 0
    while pos + 61 <= len(data):
        length, = struct.unpack_from(">i", data, pos + 8)
        attributes, = struct.unpack_from(">h", data, pos + 21)
        codecs.append(attributes & 0x07)
        pos += 12 + length
    return codecs


def test_topic_compression_type_is_the_stored_codec(broker):
    """As Kafka: a topic's compression.type other than producer has the broker compress each batch
    again in that codec; clients read the same records whatever they sent."""
    records = [{"key": f"k{i}".encode(), "value": f"value {i} ".encode() * 20} for i in range(20)]
    gzip_producer = ck.producer(broker.bootstrap, **{"compression.codec": "gzip", "linger.ms": 20})
    plain_producer = ck.producer(broker.bootstrap, **{"linger.ms": 20})

    zstd = ck.create_topic(broker.bootstrap, unique_topic("ct-zstd"), config={"compression.type": "zstd"})
    ck.produce_all(gzip_producer, records[:10], zstd, partition=0)
    ck.produce_all(plain_producer, records[10:], zstd, partition=0)
    codecs = stored_codecs(broker, zstd)
    assert codecs and set(codecs) == {4}, codecs
    msgs = ck.consume_partition(broker.bootstrap, zstd, 0, 0, expected=20)
    assert [(m.key(), m.value()) for m in msgs] == [(r["key"], r["value"]) for r in records]

    uncompressed = ck.create_topic(broker.bootstrap, unique_topic("ct-none"),
                                   config={"compression.type": "uncompressed"})
    ck.produce_all(gzip_producer, records, uncompressed, partition=0)
    assert set(stored_codecs(broker, uncompressed)) == {0}

    # producer (the default) keeps what the producer sent; a change applies to later batches.
    kept = ck.create_topic(broker.bootstrap, unique_topic("ct-producer"))
    ck.produce_all(gzip_producer, records[:10], kept, partition=0)
    alter(broker.bootstrap, kept, {"compression.type": "lz4"})
    ck.produce_all(plain_producer, records[10:], kept, partition=0)
    codecs = stored_codecs(broker, kept)
    assert codecs[0] == 1 and codecs[-1] == 3, codecs
    msgs = ck.consume_partition(broker.bootstrap, kept, 0, 0, expected=20)
    assert [m.value() for m in msgs] == [r["value"] for r in records]


def test_zstd_topics_are_not_served_to_fetch_versions_before_zstd(broker):
    """As Kafka: Fetch v0-v9 of a topic whose compression.type is zstd get UNSUPPORTED_COMPRESSION_TYPE."""
    topic = ck.create_topic(broker.bootstrap, unique_topic("ct-zstd-old"), config={"compression.type": "zstd"})
    ck.produce_all(ck.producer(broker.bootstrap), [{"value": b"v"}], topic, partition=0)
    body = struct.pack(">iiiib", -1, 10, 1, 1 << 20, 0) + struct.pack(">i", 1) + kw.string(topic)
    body += struct.pack(">i", 1) + struct.pack(">iqi", 0, 0, 1 << 20)
    with kw.Conn(broker.port) as c:
        r = kw.Reader(c.request(1, 4, 1, body))
    r.int32()
    assert r.int32() == 1 and r.string() == topic and r.int32() == 1
    assert r.int32() == 0
    assert (r.int16(), r.int64()) == (76, -1)  # UNSUPPORTED_COMPRESSION_TYPE, no high watermark
    # librdkafka 2.0.2 fetches with v11 and reads it.
    (msg,) = ck.consume_partition(broker.bootstrap, topic, 0, 0, expected=1)
    assert msg.value() == b"v"


def test_compression_levels_shape_what_the_broker_stores(broker):
    """KIP-390: compression.<codec>.level sets the level the broker compresses a topic's batches at;
    an out-of-range level is refused with INVALID_CONFIG naming the key."""
    from confluent_kafka.admin import NewTopic
    values = [(f"row {i} of a compressible table; " * 40).encode() for i in range(50)]
    # One uncompressed batch per level, sent as such: a client could split the records into
    # batches differently for each topic, and the sizes would compare the splits.
    batch = kw.build_record_batch([(None, v, ()) for v in values])
    sizes = {}
    for level in ("1", "9"):
        topic = ck.create_topic(broker.bootstrap, unique_topic(f"gz{level}"),
                                config={"compression.type": "gzip", "compression.gzip.level": level})
        with kw.Conn(broker.port) as conn:
            response = conn.request(0, 8, 1, kw.produce_v8_body(topic, 0, batch))
        assert kw.parse_produce_v8_response(response)[0][0]["error"] == 0
        assert stored_codecs(broker, topic) == [1]
        msgs = ck.consume_partition(broker.bootstrap, topic, 0, 0, expected=len(values))
        assert [m.value() for m in msgs] == values
        sizes[level] = (broker.partition_dir(topic, 0) / "00000000000000000000.log").stat().st_size
    assert sizes["9"] < sizes["1"], sizes

    client = ck.admin(broker.bootstrap)
    bad = NewTopic(unique_topic("gz-bad"), 1, 1, config={"compression.gzip.level": "10"})
    with pytest.raises(KafkaException) as raised:
        client.create_topics([bad])[bad.topic].result(10)
    err = raised.value.args[0]
    assert err.code() == KafkaError.INVALID_CONFIG and "compression.gzip.level" in err.str(), err
