"""Malformed and hostile input on raw sockets must never crash or wedge the broker.

After every bad connection a separate, normal client (confluent-kafka) must still produce and
consume, and the broker process must still be alive.
"""

import os
import random
import socket
import struct
import time

import pytest
from kafka import KafkaConsumer, TopicPartition

import ck_helpers as ck
import kafka_wire as kw
from harness import unique_topic

API_VERSIONS = 18
PRODUCE = 0
UNSUPPORTED_VERSION = 35
CORRUPT_MESSAGE = 2


def half_close(conn):
    """Signals EOF to the broker; it may already have closed the connection itself."""
    try:
        conn.sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def read_back_kafka_python(bootstrap, topic, expected):
    """Reads a partition with kafka-python (it decodes null header values, unlike confluent-kafka 1.7)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got = []
        deadline = time.monotonic() + 20
        while len(got) < expected and time.monotonic() < deadline:
            for recs in consumer.poll(timeout_ms=500).values():
                got.extend(recs)
        return got
    finally:
        consumer.close()


def ends_or_answers(conn, timeout=10):
    """The broker must either close the connection or send something back within timeout."""
    result = conn.wait_closed_or_response(timeout)
    assert result is not None, f"broker neither answered nor closed the connection within {timeout}s"
    return result


@pytest.fixture
def health(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("health"))

    def check():
        ck.assert_broker_healthy(broker, topic)

    return check


def test_random_garbage_frames(broker, health):
    rng = random.Random(1234)
    for i in range(30):
        size = rng.choice([0, 1, 3, 7, 8, 13, 64, 500, 4096])
        payload = bytes(rng.getrandbits(8) for _ in range(size))
        with kw.Conn(broker.port) as c:
            c.send(struct.pack(">i", size) + payload)
            half_close(c)
            ends_or_answers(c, timeout=10)
        broker.assert_alive()
    health()
    # Raw garbage without any sensible framing.
    for i in range(10):
        with kw.Conn(broker.port) as c:
            c.send(os.urandom(rng.choice([1, 2, 5, 100, 3000])))
            half_close(c)
            ends_or_answers(c, timeout=10)
        broker.assert_alive()
    health()


def test_truncated_frames_do_not_block_others(broker, health):
    valid = kw.request_frame(API_VERSIONS, 0, 1, b"")
    conns = []
    try:
        # Frames cut at every possible point, left open while other clients work.
        for cut in range(1, len(valid)):
            c = kw.Conn(broker.port)
            c.send(valid[:cut])
            conns.append(c)
        # A frame announcing 100 bytes but sending 10.
        c = kw.Conn(broker.port)
        c.send(struct.pack(">i", 100) + b"\x00\x12\x00\x00" + b"\x00" * 6)
        conns.append(c)
        health()  # the broker serves others while those connections hang half-way
        for c in conns:
            half_close(c)  # then they give up: EOF mid-frame
        for c in conns:
            assert ends_or_answers(c) == "closed"
    finally:
        for c in conns:
            c.close()
    health()


@pytest.mark.parametrize("size", [0x7FFFFFFF, 0x7FFFFFF0, 200 * 1024 * 1024, -1, -2147483648])
def test_huge_or_negative_length_prefix(broker, health, size):
    with kw.Conn(broker.port) as c:
        c.send(struct.pack(">i", size) + b"\x00\x12\x00\x00\x00\x00\x00\x01")
        assert ends_or_answers(c) == "closed", "an oversized/negative frame must get the connection closed"
    health()


def test_unknown_api_key(broker, health):
    with kw.Conn(broker.port) as c:
        c.send(kw.request_frame(9999, 0, 42, b"\x00" * 16))
        result = ends_or_answers(c)
        if result != "closed":
            # If the broker answers instead of closing, the answer must belong to our request.
            assert len(result) >= 8 and struct.unpack_from(">i", result, 4)[0] == 42, result
    health()


def test_api_versions_unsupported_version(broker, health):
    with kw.Conn(broker.port) as c:
        payload = struct.pack(">hhi", API_VERSIONS, 99, 7777) + kw.string("raw-test")
        c.send(struct.pack(">i", len(payload)) + payload)
        resp = c.recv_frame()
        (corr,) = struct.unpack_from(">i", resp, 0)
        assert corr == 7777
        error, keys = kw.parse_api_versions_v0(resp[4:])
        assert error == UNSUPPORTED_VERSION
        assert keys, "the UNSUPPORTED_VERSION answer must still list the supported APIs"
        assert API_VERSIONS in keys and keys[API_VERSIONS][0] == 0 and keys[API_VERSIONS][1] >= 3, keys
        assert PRODUCE in keys and keys[PRODUCE][1] >= 8, keys
        # The connection stays usable: a proper v0 ApiVersions on the same socket works.
        body = c.request(API_VERSIONS, 0, 7778, b"")
        error, keys2 = kw.parse_api_versions_v0(body)
        assert error == 0 and keys2 == keys
    health()


def test_produce_v8_crc_check(broker, health):
    topic = ck.create_topic(broker.bootstrap, unique_topic("crc"))
    records = [(f"k{i}".encode(), f"v{i}".encode(), [("h", b"x"), ("null", None)]) for i in range(5)]
    with kw.Conn(broker.port) as c:
        good = kw.build_record_batch(records)
        resp, _ = kw.parse_produce_v8_response(c.request(PRODUCE, 8, 1, kw.produce_v8_body(topic, 0, good)))
        assert [(r["topic"], r["partition"], r["error"], r["base_offset"]) for r in resp] == [(topic, 0, 0, 0)]

        # Flip one byte inside a record value: the stored CRC no longer matches.
        bad = bytearray(kw.build_record_batch(records))
        pos = bytes(bad).index(b"v3")
        bad[pos + 1] ^= 0x01
        resp, _ = kw.parse_produce_v8_response(c.request(PRODUCE, 8, 2, kw.produce_v8_body(topic, 0, bytes(bad))))
        assert [(r["partition"], r["error"]) for r in resp] == [(0, CORRUPT_MESSAGE)], resp

        # Corrupt the CRC field itself.
        bad2 = bytearray(kw.build_record_batch(records))
        bad2[kw.BATCH_CRC_OFFSET] ^= 0xFF
        resp, _ = kw.parse_produce_v8_response(c.request(PRODUCE, 8, 3, kw.produce_v8_body(topic, 0, bytes(bad2))))
        assert [(r["partition"], r["error"]) for r in resp] == [(0, CORRUPT_MESSAGE)], resp

        # The same connection still works, and the rejected batches were not appended.
        resp, _ = kw.parse_produce_v8_response(c.request(PRODUCE, 8, 4, kw.produce_v8_body(topic, 0, good)))
        assert [(r["error"], r["base_offset"]) for r in resp] == [(0, 5)], resp
    assert ck.watermarks(broker.bootstrap, topic) == (0, 10)
    msgs = read_back_kafka_python(broker.bootstrap, topic, 10)
    assert [(m.offset, m.key, m.value, list(m.headers)) for m in msgs] == \
        [(i, k, v, h) for i, (k, v, h) in enumerate(records * 2)]
    health()


def test_produce_v8_malformed_batches(broker, health):
    topic = ck.create_topic(broker.bootstrap, unique_topic("malformed"))
    records = [(b"k", b"v" * 20, []) for _ in range(3)]
    good = kw.build_record_batch(records)
    variants = {
        "truncated-batch": good[:-5],
        "length-too-big": good[:8] + struct.pack(">i", len(good) + 100) + good[12:],
        "length-negative": good[:8] + struct.pack(">i", -5) + good[12:],
        "magic-7": good[:16] + b"\x07" + good[17:],
        "only-header-bytes": good[:20],
        "record-count-lies": (lambda b: b[:57] + struct.pack(">i", 1000) + b[61:])(bytearray(good)),
    }
    for name, blob in variants.items():
        blob = bytes(blob)
        if name == "record-count-lies":
            # Keep the CRC valid so the count mismatch itself must be detected.
            crc = kw.crc32c(blob[kw.BATCH_ATTRIBUTES_OFFSET:])
            blob = blob[:kw.BATCH_CRC_OFFSET] + struct.pack(">I", crc) + blob[kw.BATCH_CRC_OFFSET + 4:]
        with kw.Conn(broker.port) as c:
            c.send(kw.request_frame(PRODUCE, 8, 11, kw.produce_v8_body(topic, 0, blob)))
            try:
                resp = c.recv_frame()
            except kw.ConnectionClosed:
                resp = None  # closing the connection is an acceptable reaction to a malformed request
            if resp is not None:
                parsed, _ = kw.parse_produce_v8_response(resp[4:])
                assert len(parsed) == 1 and parsed[0]["error"] != 0, f"{name}: accepted a malformed batch: {parsed}"
        broker.assert_alive()
    assert ck.watermarks(broker.bootstrap, topic) == (0, 0), "a malformed batch was appended"
    health()


def test_fuzzed_request_bodies(broker, health):
    """Valid headers for every advertised API/version followed by random or mutated bodies."""
    with kw.Conn(broker.port) as c:
        _err, keys = kw.parse_api_versions_v0(c.request(API_VERSIONS, 0, 1, b""))
    rng = random.Random(99)
    deadline = time.monotonic() + 60
    sent = 0
    for api_key, (lo, hi) in sorted(keys.items()):
        for version in range(lo, hi + 1):
            for _ in range(6):
                body = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 4, 9, 30, 200])))
                if rng.random() < 0.5:
                    # Big-ish counts/lengths that must not be trusted blindly.
                    body = struct.pack(">i", rng.choice([0x7FFFFFFF, -2, 0x10000000, 65535])) + body
                frame = kw.request_frame(api_key, version, sent, body)
                try:
                    with kw.Conn(broker.port) as conn:
                        conn.send(frame)
                        half_close(conn)
                        ends_or_answers(conn, timeout=10)
                except (ConnectionResetError, BrokenPipeError):
                    pass
                sent += 1
                if not broker.is_alive():
                    broker.fail(f"broker died on api_key={api_key} version={version} body={body.hex()}")
        assert time.monotonic() < deadline, "fuzzing took too long: the broker is slow to reject bad requests"
    assert sent > 50
    health()


def test_pipelined_requests_answered_in_order(broker, health):
    """Kafka answers the requests of one connection in order, whatever their kind or latency."""
    topic = ck.create_topic(broker.bootstrap, unique_topic("pipeline"))
    metadata_v1 = struct.pack(">i", 1) + kw.string(topic)
    frames = []
    kinds = {}
    for corr in range(1, 151):
        kind = corr % 3
        if kind == 0:
            batch = kw.build_record_batch([(None, f"p{corr}".encode(), [])])
            frames.append(kw.request_frame(PRODUCE, 8, corr, kw.produce_v8_body(topic, 0, batch)))
        elif kind == 1:
            frames.append(kw.request_frame(3, 1, corr, metadata_v1))
        else:
            frames.append(kw.request_frame(API_VERSIONS, 0, corr, b""))
        kinds[corr] = kind
    with kw.Conn(broker.port, timeout=30) as c:
        c.send(b"".join(frames))
        order = []
        produce_offsets = []
        for _ in frames:
            resp = c.recv_frame()
            corr = struct.unpack_from(">i", resp, 0)[0]
            order.append(corr)
            if kinds.get(corr) == 0:
                parsed, _ = kw.parse_produce_v8_response(resp[4:])
                produce_offsets.append((parsed[0]["error"], parsed[0]["base_offset"]))
    assert order == list(range(1, 151)), f"responses out of order: {order[:40]}..."
    assert produce_offsets == [(0, i) for i in range(50)]
    health()


def test_many_idle_connections(broker, health):
    conns = []
    try:
        for _ in range(400):
            conns.append(kw.Conn(broker.port))
        health()
        # Every one of them is still served.
        for i, c in enumerate(conns[::40]):
            err, keys = kw.parse_api_versions_v0(c.request(API_VERSIONS, 0, i, b""))
            assert err == 0 and keys
    finally:
        for c in conns:
            c.close()
    health()
