"""SASL as clients from before KIP-152 speak it: SaslHandshake v0, then each token bare behind a
4-byte length, and the broker's answers the same way (PLAIN: an empty token on success; SCRAM:
server-first and server-final). kafka-python 2.0.2 (Debian's) authenticates only so. Also the
limits Kafka puts on a client that has not authenticated: sasl.server.max.receive.size, and the
end of the connection after an unsupported mechanism.
"""

import struct
import subprocess

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError as KafkaPythonError

import ck_helpers as ck
import kafka_wire as kw
from harness import OXBOW_BIN, unique_topic, wait_until
from test_sasl import (SASL, USERS, UNSUPPORTED_SASL_MECHANISM, assert_closed_by_broker, audit_lines,
                       authenticated_conn, handshake, metadata_brokers, plain_token, sasl_broker)  # noqa: F401


def send_bare(conn, token):
    conn.send(struct.pack(">i", len(token)) + token)


def recv_bare(conn):
    return conn.recv_frame()


def kafka_python_config(broker, mechanism, user, password):
    return {"bootstrap_servers": broker.listener_bootstrap(SASL), "security_protocol": SASL,
            "sasl_mechanism": mechanism, "sasl_plain_username": user, "sasl_plain_password": password,
            "api_version_auto_timeout_ms": 10000}


def test_bare_plain_token_after_handshake_v0(sasl_broker):
    broker = sasl_broker()
    port = broker.extra_listeners[SASL]

    with kw.Conn(port) as c:
        err, mechanisms = handshake(c, "PLAIN", version=0)
        assert err == 0 and "PLAIN" in mechanisms, (err, mechanisms)
        send_bare(c, plain_token("alice", USERS["alice"]))
        assert recv_bare(c) == b"", "PLAIN's success is an empty token"
        # Authenticated: the connection carries Kafka requests again.
        assert metadata_brokers(c) == [(0, "127.0.0.1", port)]

    # A wrong password: no answer can say so; the connection ends, and the audit line is written.
    with kw.Conn(port) as c:
        assert handshake(c, "PLAIN", version=0)[0] == 0
        send_bare(c, plain_token("bob", "not-bobs-password"))
        assert_closed_by_broker(c, "after a failed bare PLAIN token")
    lines = wait_until(lambda: audit_lines(broker, "bob"), 10, message="an audit line for bob")
    assert len(lines) == 1 and "127.0.0.1" in lines[0], lines

    # A SaslAuthenticate request after a v0 handshake is read as the token itself, as Kafka reads it.
    with kw.Conn(port) as c:
        assert handshake(c, "PLAIN", version=0)[0] == 0
        token = plain_token("alice", USERS["alice"])
        c.send(kw.request_frame(36, 1, 2, struct.pack(">i", len(token)) + token))
        assert_closed_by_broker(c, "after a SaslAuthenticate request where a bare token belongs")

    # v1 still means SaslAuthenticate requests: a bare token there is a malformed request.
    with kw.Conn(port) as c:
        assert handshake(c, "PLAIN", version=1)[0] == 0
        send_bare(c, plain_token("alice", USERS["alice"]))
        assert_closed_by_broker(c, "after a bare token following SaslHandshake v1")
    broker.assert_alive()


def test_bare_token_size_is_limited(sasl_broker):
    broker = sasl_broker({"sasl.server.max.receive.size": "4096"})
    port = broker.extra_listeners[SASL]
    with kw.Conn(port) as c:
        assert handshake(c, "PLAIN", version=0)[0] == 0
        c.send(struct.pack(">i", 4097))
        assert_closed_by_broker(c, "after a bare token over sasl.server.max.receive.size")
    with kw.Conn(port) as c:
        assert handshake(c, "PLAIN", version=0)[0] == 0
        c.send(struct.pack(">i", -1))
        assert_closed_by_broker(c, "after a negative bare token size")
    broker.assert_alive()


def test_requests_before_authentication_are_limited_in_size(sasl_broker):
    """As Kafka: sasl.server.max.receive.size bounds every request until the client has authenticated."""
    broker = sasl_broker({"sasl.server.max.receive.size": "4096"})
    port = broker.extra_listeners[SASL]
    big_mechanism = "X" * 5000
    with kw.Conn(port) as c:
        c.send(kw.request_frame(17, 1, 1, kw.string(big_mechanism)))
        assert_closed_by_broker(c, "after a 5 KB request before authentication")
    # Once authenticated, socket.request.max.bytes applies: the same size is served.
    c, _ = authenticated_conn(port)
    with c:
        body = struct.pack(">i", 1) + kw.string(big_mechanism)
        c.send(kw.request_frame(3, 1, 7, body))
        r = kw.Reader(c.recv_frame())
        assert r.int32() == 7, "a 5 KB Metadata request after authentication must be answered"
    # The PLAINTEXT listener never had the limit.
    with kw.Conn(broker.port) as c:
        body = struct.pack(">i", 1) + kw.string(big_mechanism)
        c.send(kw.request_frame(3, 1, 8, body))
        assert kw.Reader(c.recv_frame()).int32() == 8
    broker.assert_alive()


@pytest.mark.parametrize("version", [0, 1])
def test_unsupported_mechanism_ends_the_connection(sasl_broker, version):
    broker = sasl_broker({"sasl.enabled.mechanisms": "PLAIN"})
    with kw.Conn(broker.extra_listeners[SASL]) as c:
        assert handshake(c, "SCRAM-SHA-256", version) == (UNSUPPORTED_SASL_MECHANISM, ["PLAIN"])
        assert_closed_by_broker(c, "after UNSUPPORTED_SASL_MECHANISM")


def produce_and_consume_with_kafka_python(broker, config, topic):
    producer = KafkaProducer(**config)
    try:
        futures = [producer.send(topic, value=f"m{i}".encode(), partition=0) for i in range(20)]
        producer.flush(30)
        offsets = [f.get(timeout=30).offset for f in futures]
    finally:
        producer.close()
    assert offsets == list(range(20)), offsets
    consumer = KafkaConsumer(auto_offset_reset="earliest", consumer_timeout_ms=10000, **config)
    try:
        consumer.assign([TopicPartition(topic, 0)])
        values = [m.value for _, m in zip(range(20), consumer)]
    finally:
        consumer.close()
    assert values == [f"m{i}".encode() for i in range(20)], values
    assert ck.watermarks(broker.bootstrap, topic) == (0, 20)


def test_kafka_python_plain(sasl_broker):
    broker = sasl_broker()
    topic = ck.create_topic(broker.bootstrap, unique_topic("kp-plain"))
    produce_and_consume_with_kafka_python(broker, kafka_python_config(broker, "PLAIN", "alice", USERS["alice"]),
                                          topic)
    with pytest.raises(KafkaPythonError):
        KafkaAdminClient(**kafka_python_config(broker, "PLAIN", "alice", "wrong")).list_topics()
    assert len(audit_lines(broker, "alice")) >= 1, "the failed attempt left no audit line"


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_kafka_python_scram(sasl_broker, mechanism):
    broker = sasl_broker()
    created = subprocess.run([OXBOW_BIN, "user", "create", "carol", "--password", "carol-secret", "--mechanism",
                              mechanism, "-b", broker.bootstrap], capture_output=True, text=True, timeout=30)
    assert created.returncode == 0, created.stderr
    topic = ck.create_topic(broker.bootstrap, unique_topic("kp-scram"))
    produce_and_consume_with_kafka_python(broker, kafka_python_config(broker, mechanism, "carol", "carol-secret"),
                                          topic)
    with pytest.raises(KafkaPythonError):
        KafkaAdminClient(**kafka_python_config(broker, mechanism, "carol", "wrong")).list_topics()
    broker.assert_alive()
