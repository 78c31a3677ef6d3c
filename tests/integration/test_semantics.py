"""Kafka semantics beyond the plain data path: config effects, metadata persistence, fetch
behaviour, produce edge cases.  Clients: confluent-kafka, plus raw requests where no client
exposes the field."""

import struct
import threading
import time

import pytest
from confluent_kafka import (TIMESTAMP_LOG_APPEND_TIME, KafkaError, KafkaException,
                             TopicPartition)
from confluent_kafka.admin import ConfigResource, NewPartitions, NewTopic

import ck_helpers as ck
import kafka_wire as kw
from harness import unique_topic, wait_until


def _delivery_errors(p, topic, values, partition=0):
    errors, ok = [], []

    def cb(err, msg):
        (errors if err is not None else ok).append(err if err is not None else msg.offset())

    for v in values:  # one record per request: Kafka checks the size of whole batches
        p.produce(topic, value=v, partition=partition, on_delivery=cb)
        p.flush(30)
    return errors, ok


def test_message_max_bytes_rejects_large_batches(make_broker):
    b = make_broker({"message.max.bytes": "20000"})
    topic = ck.create_topic(b.bootstrap, unique_topic("maxbytes"))
    p = ck.producer(b.bootstrap, message_max_bytes=1_000_000, compression_type="none", linger_ms=0)
    errors, ok = _delivery_errors(p, topic, [b"a" * 100, b"b" * 50_000, b"c" * 100])
    assert len(ok) == 2 and len(errors) == 1, (ok, errors)
    assert errors[0].code() == KafkaError.MSG_SIZE_TOO_LARGE, errors[0]
    msgs = ck.consume_partition(b.bootstrap, topic, 0, 0, expected=2)
    assert [m.value() for m in msgs] == [b"a" * 100, b"c" * 100]

    # A topic-level max.message.bytes raises the limit for that topic only.
    big = ck.create_topic(b.bootstrap, unique_topic("maxbytes-big"), config={"max.message.bytes": "200000"})
    errors, ok = _delivery_errors(p, big, [b"d" * 100_000])
    assert not errors and ok == [0], errors


def test_a_batch_larger_than_segment_bytes_is_refused(broker):
    RECORD_LIST_TOO_LARGE = 18
    topic = ck.create_topic(broker.bootstrap, unique_topic("segbatch"), config={"segment.bytes": "16384"})
    # Each record is larger than a segment, so every batch librdkafka makes of them is too.
    p = ck.producer(broker.bootstrap, linger_ms=100, compression_type="none")
    errors = []
    for _ in range(5):
        p.produce(topic, value=b"x" * 20_000, partition=0, on_delivery=lambda err, msg: errors.append(err))
    assert p.flush(30) == 0
    assert [e.code() if e else 0 for e in errors] == [RECORD_LIST_TOO_LARGE] * 5, errors[:3]
    assert ck.watermarks(broker.bootstrap, topic) == (0, 0)

    with kw.Conn(broker.port) as c:
        batch = kw.build_record_batch([(b"k", b"v" * 20_000, [])])
        (resp,), _ = kw.parse_produce_v8_response(c.request(0, 8, 1, kw.produce_v8_body(topic, 0, batch)))
        assert resp["error"] == RECORD_LIST_TOO_LARGE and resp["base_offset"] == -1, resp
        assert "segment.bytes (16384)" in resp["error_message"], resp
        fits = kw.build_record_batch([(b"k", b"v" * 10_000, [])])
        (resp,), _ = kw.parse_produce_v8_response(c.request(0, 8, 2, kw.produce_v8_body(topic, 0, fits)))
        assert resp["error"] == 0 and resp["base_offset"] == 0, resp
    assert ck.watermarks(broker.bootstrap, topic) == (0, 1)


def test_large_records_within_default_limit(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("large"))
    p = ck.producer(broker.bootstrap, compression_type="none", linger_ms=0)
    values = [bytes([65 + i]) * 900_000 for i in range(5)]
    errors, ok = _delivery_errors(p, topic, values)
    assert not errors and ok == list(range(5)), errors
    # Small fetch sizes must still make progress past records bigger than them.
    msgs = ck.consume_partition(broker.bootstrap, topic, 0, 0, expected=5, fetch_max_bytes=100_000,
                                max_partition_fetch_bytes=10_000, message_max_bytes=10_000)
    assert [m.value() for m in msgs] == values


@pytest.mark.parametrize("where", ["broker", "topic"])
def test_log_append_time(make_broker, where):
    if where == "broker":
        b = make_broker({"log.message.timestamp.type": "LogAppendTime"})
        topic = ck.create_topic(b.bootstrap, unique_topic("lat"))
    else:
        b = make_broker()
        topic = ck.create_topic(b.bootstrap, unique_topic("lat"), config={"message.timestamp.type": "LogAppendTime"})
    old = int(time.time() * 1000) - 86_400_000
    before = int(time.time() * 1000)
    p = ck.producer(b.bootstrap, compression_type="lz4")
    ck.produce_all(p, [{"value": f"{i}".encode(), "timestamp": old + i} for i in range(50)], topic, partition=0)
    after = int(time.time() * 1000)
    msgs = ck.consume_partition(b.bootstrap, topic, 0, 0, expected=50)
    assert len(msgs) == 50
    for m in msgs:
        ts_type, ts = m.timestamp()
        assert ts_type == TIMESTAMP_LOG_APPEND_TIME, f"timestamp type {ts_type}, expected LogAppendTime"
        assert before - 1000 <= ts <= after + 1000, f"timestamp {ts} is not the append time ({before}..{after})"


def test_topic_metadata_survives_restart(broker):
    a = ck.admin(broker.bootstrap)
    keep = ck.create_topic(broker.bootstrap, unique_topic("keep"), partitions=2, config={"retention.ms": "86400123"})
    gone = ck.create_topic(broker.bootstrap, unique_topic("gone"), partitions=1)
    grown = ck.create_topic(broker.bootstrap, unique_topic("grown"), partitions=1)
    a.create_partitions([NewPartitions(grown, 3)])[grown].result(20)
    ck.wait_for_topic(broker.bootstrap, grown, 3)
    p = ck.producer(broker.bootstrap)
    ck.produce_all(p, [{"value": b"g2"}], grown, partition=2)
    a.delete_topics([gone])[gone].result(20)
    wait_until(lambda: gone not in a.list_topics(timeout=5).topics, 15, message="deleted topic gone")

    for clean in (True, False):
        broker.restart(clean=clean)
        a = ck.admin(broker.bootstrap)
        topics = a.list_topics(timeout=10).topics
        assert gone not in topics, f"deleted topic came back after a {'clean' if clean else 'crash'} restart"
        assert len(topics[keep].partitions) == 2
        assert len(topics[grown].partitions) == 3, "added partitions lost on restart"
        res = ConfigResource("topic", keep)
        assert a.describe_configs([res])[res].result(20)["retention.ms"].value == "86400123"
        assert [m.value() for m in ck.consume_partition(broker.bootstrap, grown, 2, 0, expected=1)] == [b"g2"]


def test_retention_ms_deletes_old_segments(make_broker):
    b = make_broker({"log.retention.check.interval.ms": "200"})
    topic = ck.create_topic(b.bootstrap, unique_topic("retention"),
                            config={"retention.ms": "1000", "segment.bytes": "20000"})
    old = int(time.time() * 1000) - 3_600_000  # records an hour old: eligible at once
    p = ck.producer(b.bootstrap, linger_ms=0, batch_num_messages=10)
    ck.produce_all(p, [{"value": b"x" * 500, "timestamp": old + i} for i in range(400)], topic, partition=0)
    # A fresh record keeps the active segment (and the high watermark) alive.
    ck.produce_all(p, [{"value": b"fresh"}], topic, partition=0)

    def start_advanced():
        low, high = ck.watermarks(b.bootstrap, topic)
        return low > 0 and (low, high)

    low, high = wait_until(start_advanced, 20, interval=0.2, message="log start offset to advance by retention")
    assert high == 401
    msgs = ck.consume_partition(b.bootstrap, topic, 0, low, expected=high - low)
    assert msgs[0].offset() == low and msgs[-1].value() == b"fresh"
    # Reading below the log start offset is out of range.
    c = ck.consumer(b.bootstrap, auto_offset_reset="error")
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 15
        err = None
        while err is None and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() and m.error().code() != KafkaError._PARTITION_EOF:
                err = m.error()
            elif m is not None and not m.error():
                pytest.fail(f"read offset {m.offset()} below the log start offset {low}")
        assert err is not None and err.code() in (KafkaError.OFFSET_OUT_OF_RANGE, KafkaError._AUTO_OFFSET_RESET), err
    finally:
        c.close()


def test_fetch_beyond_end_is_out_of_range(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("oor"))
    ck.produce_all(ck.producer(broker.bootstrap), [{"value": b"only"}] * 3, topic, partition=0)
    # With auto.offset.reset=earliest, an out-of-range position is reset and everything is read.
    msgs = ck.consume_partition(broker.bootstrap, topic, 0, 1000, expected=3, auto_offset_reset="earliest")
    assert [m.offset() for m in msgs] == [0, 1, 2]


@pytest.mark.serial  # times each record's arrival
def test_long_poll_fetch_wakes_on_produce(broker):
    """A consumer waiting at the end of the log gets a new record quickly, not after fetch.wait.max.ms."""
    topic = ck.create_topic(broker.bootstrap, unique_topic("longpoll"))
    c = ck.consumer(broker.bootstrap, fetch_wait_max_ms=5000, enable_partition_eof=True)
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        # Wait for the consumer to reach the (empty) end of the log, i.e. to be in a long poll.
        wait_until(lambda: (lambda m: m is not None and m.error() and
                            m.error().code() == KafkaError._PARTITION_EOF)(c.poll(0.2)), 15,
                   message="consumer at end of log")
        p = ck.producer(broker.bootstrap, linger_ms=0)
        latencies = []
        for i in range(3):
            time.sleep(0.3)  # let the consumer's next long-poll Fetch be parked at the broker
            sent = time.monotonic()
            ck.produce_all(p, [{"value": f"wake{i}".encode()}], topic, partition=0)
            got = None
            while got is None and time.monotonic() - sent < 10:
                m = c.poll(0.05)
                if m is not None and not m.error():
                    got = m
            assert got is not None and got.value() == f"wake{i}".encode()
            latencies.append(time.monotonic() - sent)
        assert max(latencies) < 2.0, f"records took {latencies} s to reach a long-polling consumer (fetch.wait.max.ms=5000)"
    finally:
        c.close()


def test_acks_zero_and_acks_one(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("acks"), partitions=2)
    for partition, acks in ((0, 0), (1, 1)):
        p = ck.producer(broker.bootstrap, acks=acks, linger_ms=5)
        ck.produce_all(p, [{"value": f"{acks}-{i}".encode()} for i in range(2000)], topic, partition=partition)
    wait_until(lambda: ck.watermarks(broker.bootstrap, topic, 0) == (0, 2000), 15,
               message="all acks=0 records to be appended")
    assert ck.watermarks(broker.bootstrap, topic, 1) == (0, 2000)
    for partition, acks in ((0, 0), (1, 1)):
        msgs = ck.consume_partition(broker.bootstrap, topic, partition, 0, expected=2000)
        assert [m.value() for m in msgs] == [f"{acks}-{i}".encode() for i in range(2000)]
    # After acks=0 traffic the broker still answers normally on fresh connections.
    ck.assert_broker_healthy(broker)


def test_concurrent_producers_same_partition(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("concurrent"), partitions=2)
    n_threads, per_thread = 4, 5000
    failures = []

    def work(tid):
        try:
            p = ck.producer(broker.bootstrap, linger_ms=2, compression_type=["none", "gzip", "lz4", "zstd"][tid])
            ck.produce_all(p, [{"key": f"{tid}".encode(), "value": f"{tid}:{i}".encode()} for i in range(per_thread)],
                           topic, partition=tid % 2)
        except Exception as exc:  # noqa: BLE001
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failures, failures
    got = ck.consume_partitions(broker.bootstrap, [(topic, 0, 0), (topic, 1, 0)], expected=n_threads * per_thread)
    for part in (0, 1):
        msgs = got[(topic, part)]
        assert [m.offset() for m in msgs] == list(range(len(msgs)))
        per_producer = {}
        for m in msgs:
            tid, i = m.value().decode().split(":")
            per_producer.setdefault(tid, []).append(int(i))
        for tid, seq in per_producer.items():
            assert seq == list(range(per_thread)), f"producer {tid}: records lost, duplicated or reordered"
    assert sum(len(v) for v in got.values()) == n_threads * per_thread


# ---------------------------------------------------------------------------------------------
# Raw-protocol checks of fields no installed client exposes.


def test_produce_to_unknown_partition_and_topic(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("unkpart"))
    batch = kw.build_record_batch([(b"k", b"v", [])])
    with kw.Conn(broker.port) as c:
        for corr, (t, part) in enumerate([(topic, 7), (topic, -1), (unique_topic("no-such-topic"), 0)], 1):
            resp, _ = kw.parse_produce_v8_response(c.request(0, 8, corr, kw.produce_v8_body(t, part, batch)))
            assert [(r["topic"], r["partition"], r["error"]) for r in resp] == [(t, part, 3)], resp
    assert ck.watermarks(broker.bootstrap, topic) == (0, 0)


def test_offset_for_leader_epoch_v3(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("ofle"), partitions=2)
    ck.produce_all(ck.producer(broker.bootstrap), [{"value": b"x"}] * 42, topic, partition=1)
    body = struct.pack(">i", -1)  # replica_id (v3+)
    body += struct.pack(">i", 1) + kw.string(topic) + struct.pack(">i", 3)
    for part in (0, 1, 9):
        body += struct.pack(">iii", part, -1, 0)  # partition, current_leader_epoch (unknown), leader_epoch 0
    with kw.Conn(broker.port) as c:
        r = kw.Reader(c.request(23, 3, 5, body))
    r.int32()  # throttle
    results = {}
    for _ in range(r.int32()):
        name = r.string()
        for _ in range(r.int32()):
            err, part, epoch, end = r.int16(), r.int32(), r.int32(), r.int64()
            results[part] = (name, err, epoch, end)
    assert results[0] == (topic, 0, 0, 0)
    assert results[1] == (topic, 0, 0, 42)
    assert results[9][1] == 3, results[9]


def _describe_cluster(port, version=0, endpoint_type=1):
    """DescribeCluster: (error, message, cluster id, controller, [(node, host, port, rack)]), and
    for v1+ the endpoint type answered after them."""
    body = b"\x00"  # include_cluster_authorized_operations=false
    if version >= 1:
        body += struct.pack(">b", endpoint_type)
    with kw.Conn(port) as c:
        r = kw.flexible_request(c, 60, version, 9, body)
    r.int32()  # throttle
    error = r.int16()
    message = r.compact_string()
    answered_type = r.int8() if version >= 1 else None
    cluster_id = r.compact_string()
    controller = r.int32()

    def broker():
        entry = (r.int32(), r.compact_string(), r.int32(), r.compact_string())
        r.skip_tags()
        return entry
    brokers = r.compact_array(broker)
    result = (error, message, cluster_id, controller, brokers)
    return result if version == 0 else result + (answered_type,)


def _describe_cluster_v0(port):
    """DescribeCluster v0: (error, cluster id, controller, [(node, host, port, rack)])."""
    error, _message, cluster_id, controller, brokers = _describe_cluster(port)
    return error, cluster_id, controller, brokers


def test_describe_cluster_v0(broker):
    error, cluster_id, controller, brokers = _describe_cluster_v0(broker.port)
    assert error == 0
    meta = (broker.data_dir / "meta.properties").read_text()
    assert f"cluster.id={cluster_id}" in meta, (cluster_id, meta)
    assert brokers == [(controller, "127.0.0.1", broker.port, None)], brokers  # no broker.rack


def test_describe_cluster_v1_describes_brokers_only(broker):
    """KIP-919: v1 names the endpoint type; a broker answers for brokers (1) and refuses
    controllers (2) with MISMATCHED_ENDPOINT_TYPE and anything else with UNSUPPORTED_ENDPOINT_TYPE."""
    error, message, cluster_id, controller, brokers, answered = _describe_cluster(broker.port, 1, 1)
    assert (error, message, answered) == (0, None, 1)
    assert brokers == [(controller, "127.0.0.1", broker.port, None)]
    assert cluster_id == _describe_cluster_v0(broker.port)[1]
    error, message, *_ = _describe_cluster(broker.port, 1, 2)
    assert error == 114 and "CONTROLLER" in message, (error, message)  # MISMATCHED_ENDPOINT_TYPE
    error, message, *_ = _describe_cluster(broker.port, 1, 7)
    assert (error, message) == (115, "Unsupported endpoint type 7")  # UNSUPPORTED_ENDPOINT_TYPE


def test_broker_rack_reaches_clients(make_broker):
    from kafka import KafkaAdminClient
    broker = make_broker({"broker.rack": "rack-a", "replica.selector.class":
                          "org.apache.kafka.common.replica.RackAwareReplicaSelector"})
    assert "unknown configuration" not in broker.log_tail(200)
    _, _, controller, brokers = _describe_cluster_v0(broker.port)
    assert brokers == [(controller, "127.0.0.1", broker.port, "rack-a")], brokers
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)  # Metadata v1+ carries the rack
    try:
        described = client.describe_cluster()
        assert [b["rack"] for b in described["brokers"]] == ["rack-a"], described
    finally:
        client.close()


def _uvarint(buf, pos):
    shift = value = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def test_seek_across_many_segments(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("segseek"), config={"segment.bytes": "16384"})
    n = 3000
    base = int(time.time() * 1000) - 5_000_000
    # Uncompressed here: timestamp lookups inside compressed batches are covered in test_confluent_kafka.
    p = ck.producer(broker.bootstrap, linger_ms=2, batch_num_messages=7, compression_type="none")
    ck.produce_all(p, [{"value": f"r{i}".encode() + b"." * 40, "timestamp": base + 2 * i} for i in range(n)],
                   topic, partition=0)
    segments = sorted(f for f in (broker.partition_dir(topic, 0)).iterdir() if f.suffix == ".log")
    assert len(segments) >= 3, f"expected several segments, got {[s.name for s in segments]}"
    bases = [int(s.stem) for s in segments]
    c = ck.consumer(broker.bootstrap)
    try:
        targets = sorted({0, 1, n - 1, *bases, *(b - 1 for b in bases if b > 0), *(b + 1 for b in bases)} - {n})
        for off in targets:
            (tp,) = c.offsets_for_times([TopicPartition(topic, 0, base + 2 * off - 1)], timeout=10)
            assert tp.offset == off, f"timestamp lookup for record {off} returned {tp.offset}"
    finally:
        c.close()
    for off in (bases[len(bases) // 2] - 1, bases[len(bases) // 2], bases[-1] + 3):
        msgs = ck.consume_partition(broker.bootstrap, topic, 0, off, expected=n - off)
        assert [m.offset() for m in msgs] == list(range(off, n))
        assert msgs[0].value() == f"r{off}".encode() + b"." * 40


def _compact_string(s):
    b = s.encode()
    return kw.uvarint(len(b) + 1) + b


def test_list_offsets_v7_max_timestamp(broker):
    """ListOffsets v7 (advertised) with timestamp -3 (MAX_TIMESTAMP): the record with the largest timestamp."""
    topic = ck.create_topic(broker.bootstrap, unique_topic("maxts"))
    base = int(time.time() * 1000) - 1_000_000
    stamps = [base + 10, base + 500, base + 20, base + 30]  # the maximum is at offset 1
    ck.produce_all(ck.producer(broker.bootstrap, linger_ms=0),
                   [{"value": b"v", "timestamp": ts} for ts in stamps], topic, partition=0)
    with kw.Conn(broker.port) as c:
        _e, keys = kw.parse_api_versions_v0(c.request(18, 0, 1, b""))
        if keys.get(2, (0, 0))[1] < 7:
            pytest.skip("broker does not advertise ListOffsets v7")
        header = struct.pack(">hhi", 2, 7, 2) + kw.string("raw") + b"\x00"
        body = struct.pack(">ib", -1, 0)  # replica_id, isolation_level
        body += kw.uvarint(2) + _compact_string(topic)
        body += kw.uvarint(2) + struct.pack(">iiq", 0, -1, -3) + b"\x00"  # partition, epoch, MAX_TIMESTAMP
        body += b"\x00" + b"\x00"  # topic tagged fields, request tagged fields
        payload = header + body
        c.send(struct.pack(">i", len(payload)) + payload)
        resp = c.recv_frame()
    pos = 4 + 1  # correlation id, header tagged fields
    pos += 4  # throttle
    n_topics, pos = _uvarint(resp, pos)
    assert n_topics == 2
    name_len, pos = _uvarint(resp, pos)
    assert resp[pos:pos + name_len - 1].decode() == topic
    pos += name_len - 1
    n_parts, pos = _uvarint(resp, pos)
    assert n_parts == 2
    part, err, ts, off, _epoch = struct.unpack_from(">ihqqi", resp, pos)
    assert (part, err) == (0, 0)
    assert (off, ts) == (1, base + 500), f"MAX_TIMESTAMP lookup returned offset {off}, timestamp {ts}"


def test_config_file_and_override_precedence(make_broker, tmp_path):
    from harness import free_port
    port = free_port()
    data = tmp_path / "from-file-data"
    props = tmp_path / "server.properties"
    props.write_text(
        "# written by the integration test\n"
        f"listeners=PLAINTEXT://127.0.0.1:{port}\n"
        f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}\n"
        f"log.dirs={data}\n"
        "num.partitions=5\n"
        "log.retention.ms=4444444\n"
    )
    b = make_broker({"num.partitions": "2"}, start=False, config_file=props)
    b.port = port
    b.start()
    p = ck.producer(b.bootstrap)

    def auto_created():
        md = p.list_topics(topic="from-config-file", timeout=5).topics.get("from-config-file")
        return md is not None and md.error is None and len(md.partitions) > 0 and md

    md = wait_until(auto_created, 15, interval=0.2, message="auto-created topic")
    assert len(md.partitions) == 2, "--override must take precedence over the config file"
    assert (data / "from-config-file-0").is_dir(), "log.dirs from the config file not used"
    a = ck.admin(b.bootstrap)
    res = ConfigResource("topic", "from-config-file")
    assert a.describe_configs([res])[res].result(20)["retention.ms"].value == "4444444"


@pytest.mark.parametrize("bad", [{"num.partitions": "lots"}, {"log.segment.bytes": "-5"},
                                 {"log.message.timestamp.type": "Sometimes"}])
def test_invalid_broker_config_fails_fast(make_broker, bad):
    import subprocess
    b = make_broker(bad, start=False)
    proc = subprocess.Popen(b.command(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"broker kept running with invalid config {bad}:\n{out[-2000:]}")
    assert proc.returncode != 0, f"broker exited 0 with invalid config {bad}"
    key = next(iter(bad))
    assert key in out, f"start-up error should name {key}:\n{out[-2000:]}"


def test_delete_topic_while_clients_use_it(make_broker):
    # No auto-creation: the producer would otherwise bring the topic straight back.
    broker = make_broker({"auto.create.topics.enable": "false"})
    topic = ck.create_topic(broker.bootstrap, unique_topic("busy-delete"), partitions=4)
    deleted = threading.Event()
    stop = threading.Event()
    errors = []

    def produce():
        p = ck.producer(broker.bootstrap, linger_ms=1, message_timeout_ms=5000, acks=1)
        i = 0
        while not stop.is_set():
            try:
                p.produce(topic, value=str(i).encode(), partition=i % 4)
            except BufferError:
                p.poll(0.01)
            except KafkaException as exc:
                if not deleted.is_set():
                    errors.append(exc)
                    return
                p.poll(0.01)  # expected once the topic is gone (unknown partition)
            i += 1
            p.poll(0)
        p.flush(6)

    fetch_errors = set()

    def consume():
        # Raw long-poll Fetch v4 requests for all partitions, so fetches are in flight during the
        # deletion.  (A librdkafka consumer of a deleted topic takes ~30 s to close: not useful here.)
        body = struct.pack(">iiiib", -1, 100, 1, 1 << 20, 0) + struct.pack(">i", 1) + kw.string(topic)
        body += struct.pack(">i", 4) + b"".join(struct.pack(">iqi", q, 0, 64 * 1024) for q in range(4))
        try:
            with kw.Conn(broker.port) as c:
                corr = 0
                while not stop.is_set():
                    corr += 1
                    r = kw.Reader(c.request(1, 4, corr, body))
                    r.int32()
                    for _ in range(r.int32()):
                        r.string()
                        for _ in range(r.int32()):
                            r.int32()
                            fetch_errors.add(r.int16())
                            r.int64(), r.int64()
                            n_aborted = r.int32()
                            r.pos += max(n_aborted, 0) * 16
                            r.bytes_()
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=produce, daemon=True), threading.Thread(target=consume, daemon=True)]
    for t in threads:
        t.start()
    try:
        wait_until(lambda: sum(ck.watermarks(broker.bootstrap, topic, q)[1] for q in range(4)) > 2000, 20,
                   message="traffic on the topic")
        a = ck.admin(broker.bootstrap)
        deleted.set()
        a.delete_topics([topic])[topic].result(20)
        # Keep the clients hammering the deleted topic for a moment while checking the broker.
        wait_until(lambda: topic not in a.list_topics(timeout=5).topics, 15, message="topic deleted")
        broker.assert_alive()
        ck.assert_broker_healthy(broker)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    broker.assert_alive()
    assert not errors, errors
    assert fetch_errors <= {0, 3}, f"fetch error codes seen: {fetch_errors}"
    assert 3 in fetch_errors, "fetches of the deleted topic should report UNKNOWN_TOPIC_OR_PARTITION"


def test_create_topic_with_broker_defaults(make_broker):
    b = make_broker({"num.partitions": "4"})
    a = ck.admin(b.bootstrap)
    topic = unique_topic("defaults")
    try:
        nt = NewTopic(topic, -1, -1)
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"this confluent-kafka cannot express broker defaults: {exc}")
    a.create_topics([nt])[topic].result(20)
    ck.wait_for_topic(b.bootstrap, topic, 4)


def test_retention_bytes_deletes_oldest_segments(make_broker):
    b = make_broker({"log.retention.check.interval.ms": "200"})
    topic = ck.create_topic(b.bootstrap, unique_topic("retbytes"),
                            config={"retention.bytes": "40000", "segment.bytes": "10000"})
    p = ck.producer(b.bootstrap, linger_ms=0, batch_num_messages=5)
    n = 1000
    ck.produce_all(p, [{"value": f"{i}".encode() + b"r" * 200} for i in range(n)], topic, partition=0)

    def trimmed():
        low, high = ck.watermarks(b.bootstrap, topic)
        return low > 0 and (low, high)

    low, high = wait_until(trimmed, 20, interval=0.2, message="retention.bytes to delete old segments")
    assert high == n
    pdir = b.partition_dir(topic, 0)
    wait_until(lambda: sum(f.stat().st_size for f in pdir.iterdir() if f.suffix == ".log") <= 40000 + 10000, 20,
               message="partition size to fall within retention.bytes + one segment")
    msgs = ck.consume_partition(b.bootstrap, topic, 0, low, expected=n - low)
    assert [int(m.value()[:-200]) for m in msgs] == list(range(low, n))
    # The kept part is what Kafka keeps: whole segments, newest first, within retention.bytes.
    assert n - low < n // 2, f"only offsets before {low} deleted, too much kept for retention.bytes"
