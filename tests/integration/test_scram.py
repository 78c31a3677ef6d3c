"""SCRAM-SHA-256/512: users managed with `oxbow user` and the SCRAM credential APIs, and
confluent-kafka clients authenticating with them on a SASL_PLAINTEXT listener."""

import json
import struct
import subprocess

import pytest
from confluent_kafka import KafkaException, Producer

import ck_helpers as ck
import kafka_wire as kw
from harness import OXBOW_BIN, unique_topic, wait_until

UNSUPPORTED_SASL_MECHANISM = 33
RESOURCE_NOT_FOUND = 91
DUPLICATE_RESOURCE = 92
UNACCEPTABLE_CREDENTIAL = 93
SHA256, SHA512 = 1, 2


@pytest.fixture
def scram_broker(make_broker):
    broker = make_broker(start=False)
    broker.add_listener("SASL_PLAINTEXT")
    return broker.start()


def oxbow_user(broker, *args):
    return subprocess.run([OXBOW_BIN, "user", *args, "-b", broker.bootstrap], capture_output=True, text=True,
                          timeout=30)


def sasl_config(broker, mechanism, user, password):
    return {"bootstrap.servers": broker.listener_bootstrap("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password}


def can_connect(broker, mechanism, user, password):
    producer = Producer(sasl_config(broker, mechanism, user, password))
    try:
        producer.list_topics(timeout=5)
        return True
    except KafkaException:
        return False


def test_scram_users_authenticate_and_survive_a_restart(scram_broker):
    broker = scram_broker
    assert oxbow_user(broker, "create", "alice", "--password", "alice-secret").returncode == 0
    assert oxbow_user(broker, "create", "bob", "--password", "bob-secret", "--mechanism", "SCRAM-SHA-256",
                      "--iterations", "4096").returncode == 0
    listing = oxbow_user(broker, "list").stdout.split("\n")
    assert listing[0].split() == ["USER", "MECHANISM", "ITERATIONS"]
    assert ["alice", "SCRAM-SHA-512", "8192"] in [line.split() for line in listing]
    assert ["bob", "SCRAM-SHA-256", "4096"] in [line.split() for line in listing]

    topic = ck.create_topic(broker.bootstrap, unique_topic("scram"))
    producer = Producer(sasl_config(broker, "SCRAM-SHA-512", "alice", "alice-secret"))
    delivered = []
    for i in range(10):
        producer.produce(topic, value=b"v%d" % i, partition=0, on_delivery=lambda e, m: delivered.append(e))
    assert producer.flush(15) == 0
    assert delivered == [None] * 10
    assert ck.watermarks(broker.bootstrap, topic) == (0, 10)

    assert can_connect(broker, "SCRAM-SHA-256", "bob", "bob-secret")
    assert not can_connect(broker, "SCRAM-SHA-512", "alice", "wrong")
    assert not can_connect(broker, "SCRAM-SHA-512", "bob", "bob-secret")  # bob has SHA-256 only
    assert not can_connect(broker, "SCRAM-SHA-512", "nobody", "x")
    wait_until(lambda: "authentication failed: user 'nobody'" in broker.log_text(), 10, message="audit line")

    # Only salts and derived keys are stored, never a password.
    stored = (broker.data_dir / "oxbow-scram-credentials.json").read_text()
    assert "alice-secret" not in stored and "bob-secret" not in stored
    assert set(json.loads(stored)) == {"alice", "bob"}

    broker.restart()
    assert can_connect(broker, "SCRAM-SHA-512", "alice", "alice-secret")
    assert oxbow_user(broker, "delete", "alice").returncode == 0
    assert not can_connect(broker, "SCRAM-SHA-512", "alice", "alice-secret")
    assert "alice" not in oxbow_user(broker, "list").stdout
    missing = oxbow_user(broker, "delete", "alice")
    assert missing.returncode == 1 and "RESOURCE_NOT_FOUND" in missing.stderr


def compact(data):
    data = data.encode() if isinstance(data, str) else data
    return kw.uvarint(len(data) + 1) + data


def read_uvarint(data, pos):
    value, shift = 0, 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def alter(port, deletions=(), upsertions=()):
    """AlterUserScramCredentials v0 by hand (a flexible version): returns {user: error_code}."""
    body = b"\x00"  # request header v2: no tagged fields after the client id
    body += kw.uvarint(len(deletions) + 1)
    for name, mechanism in deletions:
        body += compact(name) + struct.pack(">b", mechanism) + b"\x00"
    body += kw.uvarint(len(upsertions) + 1)
    for name, mechanism, iterations, salt, salted in upsertions:
        body += compact(name) + struct.pack(">bi", mechanism, iterations) + compact(salt) + compact(salted) + b"\x00"
    body += b"\x00"
    with kw.Conn(port) as c:
        resp = c.request(51, 0, 7, body)
    pos = 1 + 4  # response header tagged fields, throttle_time_ms
    count, pos = read_uvarint(resp, pos)
    results = {}
    for _ in range(count - 1):
        n, pos = read_uvarint(resp, pos)
        user = resp[pos:pos + n - 1].decode()
        pos += n - 1
        (error,) = struct.unpack_from(">h", resp, pos)
        pos += 2
        n, pos = read_uvarint(resp, pos)  # error message (compact nullable)
        pos += max(n - 1, 0)
        _, pos = read_uvarint(resp, pos)  # tagged fields
        results[user] = error
    return results


def test_credential_api_refuses_bad_requests(scram_broker):
    port = scram_broker.port
    salt, salted = b"s" * 16, b"p" * 64
    assert alter(port, upsertions=[("carol", SHA512, 1000, salt, salted)]) == {"carol": UNACCEPTABLE_CREDENTIAL}
    assert alter(port, upsertions=[("carol", SHA512, 20000, salt, salted)]) == {"carol": UNACCEPTABLE_CREDENTIAL}
    assert alter(port, upsertions=[("carol", 3, 4096, salt, salted)]) == {"carol": UNSUPPORTED_SASL_MECHANISM}
    assert alter(port, deletions=[("nobody", SHA512)]) == {"nobody": RESOURCE_NOT_FOUND}
    assert alter(port, deletions=[("carol", SHA256)], upsertions=[("carol", SHA512, 4096, salt, salted)]) == {
        "carol": DUPLICATE_RESOURCE}
    assert "carol" not in oxbow_user(scram_broker, "list").stdout  # nothing was applied
    assert alter(port, upsertions=[("carol", SHA512, 4096, salt, salted)]) == {"carol": 0}
    assert "carol" in oxbow_user(scram_broker, "list").stdout
