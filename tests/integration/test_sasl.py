"""SASL/PLAIN authentication on SASL_PLAINTEXT listeners, named listeners and the security protocol map.

Every broker here keeps the harness's PLAINTEXT listener on broker.port and gets a second listener
(SASL_PLAINTEXT, or a custom name mapped to it) on its own port, with its PLAIN users in Kafka's
per-listener JAAS property.  Clients: confluent-kafka (librdkafka 2.0.2), kcat and raw protocol
requests for what clients do not show (error codes, messages, who closes the connection).
"""

import json
import shutil
import struct
import subprocess
import threading
import time

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import NewTopic

import ck_helpers as ck
import kafka_wire as kw
from harness import unique_topic, wait_until

PRODUCE = 0
METADATA = 3
SASL_HANDSHAKE = 17
API_VERSIONS = 18
SASL_AUTHENTICATE = 36

UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
SASL_AUTHENTICATION_FAILED = 58
AUTH_FAILED_MESSAGE = "Authentication failed: Invalid username or password"

SASL = "SASL_PLAINTEXT"
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
KCAT = shutil.which("kcat") or shutil.which("kafkacat")
LIBRDKAFKA_AUTH_ERRORS = (KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED)


def jaas_config(users):
    entries = " ".join(f'user_{name}="{password}"' for name, password in users.items())
    return f"org.apache.kafka.common.security.plain.PlainLoginModule required {entries};"


def sasl_conf(user, password, mechanism="PLAIN"):
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": mechanism,
            "sasl.username": user, "sasl.password": password}


ALICE = sasl_conf("alice", USERS["alice"])
BOB = sasl_conf("bob", USERS["bob"])


@pytest.fixture
def sasl_broker(make_broker):
    """sasl_broker(overrides, listener=..., users=...): PLAINTEXT on broker.port plus `listener`."""

    def factory(overrides=None, listener=SASL, users=USERS, start=True):
        merged = {f"listener.name.{listener.lower()}.plain.sasl.jaas.config": jaas_config(users)}
        merged.update(overrides or {})
        b = make_broker(merged, start=False)
        b.add_listener(listener)
        if start:
            b.start()
        return b

    return factory


# ---------------------------------------------------------------------------------------------
# confluent-kafka helpers that take callbacks (ck_helpers turns "_" into "." in every key).


class ClientErrors:
    """error_cb collecting librdkafka's client-level errors."""

    def __init__(self):
        self.errors = []
        self.lock = threading.Lock()

    def __call__(self, err):
        with self.lock:
            self.errors.append(err)

    def auth_failures(self):
        with self.lock:
            return [e for e in self.errors if e.code() in LIBRDKAFKA_AUTH_ERRORS]


def make_producer(bootstrap, conf, **extra):
    base = {"bootstrap.servers": bootstrap, "enable.idempotence": False, "acks": "all", "linger.ms": 5,
            "message.timeout.ms": 30000}
    base.update(conf)
    base.update(extra)
    return Producer(base)


def make_consumer(bootstrap, conf, **extra):
    base = {"bootstrap.servers": bootstrap, "group.id": "oxbow-sasl-it-unused", "enable.auto.commit": False,
            "enable.auto.offset.store": False, "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100}
    base.update(conf)
    base.update(extra)
    return Consumer(base)


def create_topic(bootstrap, conf, topic, partitions=1):
    a = ck.admin(bootstrap, **conf)
    a.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)],
                    operation_timeout=20)[topic].result(20)

    def ready():
        t = a.list_topics(topic=topic, timeout=5).topics.get(topic)
        return (t is not None and t.error is None and len(t.partitions) == partitions
                and all(p.leader >= 0 and p.error is None for p in t.partitions.values()))

    wait_until(ready, 15, interval=0.1, message=f"topic {topic} in metadata")
    return topic


def advertised(bootstrap, conf):
    """(host, port) of every broker in a Metadata answer obtained through bootstrap."""
    md = ck.admin(bootstrap, **conf).list_topics(timeout=10)
    return sorted((b.host, b.port) for b in md.brokers.values())


def assert_client_cannot_authenticate(bootstrap, conf, reason):
    """A librdkafka client with conf reports an authentication error naming reason, gets no metadata."""
    errors = ClientErrors()
    p = make_producer(bootstrap, conf, error_cb=errors)
    failures = wait_until(lambda: (p.poll(0.1), errors.auth_failures())[1], 15,
                          message="an authentication error reported to the client")
    assert any(reason in e.str() for e in failures), \
        f"the client's authentication error should say {reason!r}: {[e.str() for e in failures]}"
    with pytest.raises(KafkaException):
        p.list_topics(timeout=1)


def audit_lines(broker, user):
    """Broker log lines reporting a failed authentication of user (the harness's own lines excluded)."""
    return [line for line in broker.log_text().splitlines()
            if "authentication failed" in line.lower() and user in line
            and not line.startswith("===== test harness")]


def broker_log_without_harness_lines(broker):
    return "\n".join(line for line in broker.log_text().splitlines() if not line.startswith("===== test harness"))


# ---------------------------------------------------------------------------------------------
# Raw protocol: SaslHandshake v0-1, SaslAuthenticate v0-2 (v2 is flexible), Metadata v1.


def read_uvarint(r):
    shift = 0
    value = 0
    while True:
        b = r.int8() & 0xFF
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value
        shift += 7


def skip_tagged_fields(r):
    for _ in range(read_uvarint(r)):
        read_uvarint(r)  # tag
        r.pos += read_uvarint(r)  # size, then the field


def plain_token(user, password, authzid=""):
    return f"{authzid}\0{user}\0{password}".encode()


def handshake(conn, mechanism, version=1, correlation_id=1):
    r = kw.Reader(conn.request(SASL_HANDSHAKE, version, correlation_id, kw.string(mechanism)))
    error = r.int16()
    mechanisms = [r.string() for _ in range(r.int32())]
    return error, mechanisms


def authenticate(conn, token, version=1, correlation_id=2):
    """Sends SaslAuthenticate; returns {error, message, auth_bytes, session_lifetime_ms}."""
    if version < 2:
        conn.send(kw.request_frame(SASL_AUTHENTICATE, version, correlation_id, struct.pack(">i", len(token)) + token))
    else:
        # Request header v2 (client id, then tagged fields), compact bytes, tagged fields.
        payload = (struct.pack(">hhi", SASL_AUTHENTICATE, version, correlation_id) + kw.string("oxbow-it") + b"\x00"
                   + kw.uvarint(len(token) + 1) + token + b"\x00")
        conn.send(struct.pack(">i", len(payload)) + payload)
    frame = conn.recv_frame()
    r = kw.Reader(frame)
    assert r.int32() == correlation_id
    if version >= 2:
        skip_tagged_fields(r)  # response header v1
    error = r.int16()
    if version < 2:
        message = r.string()
        auth_bytes = r.bytes_()
    else:
        n = read_uvarint(r) - 1
        message = None if n < 0 else bytes(r.data[r.pos:r.pos + n]).decode()
        r.pos += max(n, 0)
        n = read_uvarint(r) - 1
        auth_bytes = bytes(r.data[r.pos:r.pos + n])
        r.pos += n
    lifetime = r.int64() if version >= 1 else None
    return {"error": error, "message": message, "auth_bytes": auth_bytes, "session_lifetime_ms": lifetime}


def metadata_v1_frame(correlation_id, topics=()):
    body = struct.pack(">i", len(topics)) + b"".join(kw.string(t) for t in topics)
    return kw.request_frame(METADATA, 1, correlation_id, body)


def metadata_brokers(conn, correlation_id=3):
    """Metadata v1 (no topics) on an open connection: [(node_id, host, port)]."""
    conn.send(metadata_v1_frame(correlation_id))
    frame = conn.recv_frame()
    r = kw.Reader(frame)
    assert r.int32() == correlation_id
    brokers = []
    for _ in range(r.int32()):
        node_id, host, port = r.int32(), r.string(), r.int32()
        r.string()  # rack
        brokers.append((node_id, host, port))
    return brokers


def authenticated_conn(port, user="alice", password=None, version=1):
    c = kw.Conn(port)
    err, _ = handshake(c, "PLAIN")
    assert err == 0
    res = authenticate(c, plain_token(user, USERS[user] if password is None else password), version)
    assert res["error"] == 0, res
    return c, res


def assert_closed_by_broker(conn, what):
    result = conn.wait_closed_or_response(10)
    assert result == "closed", f"{what}: expected the broker to close the connection, got {result!r}"


# ---------------------------------------------------------------------------------------------
# 1. The happy path.


def test_plain_round_trip_over_sasl_listener(sasl_broker):
    broker = sasl_broker()
    bootstrap = broker.listener_bootstrap(SASL)
    port = broker.extra_listeners[SASL]
    topic = create_topic(bootstrap, ALICE, unique_topic("sasl-rt"), partitions=2)

    # Metadata over the SASL listener advertises the SASL listener.
    assert advertised(bootstrap, ALICE) == [("127.0.0.1", port)]

    p = make_producer(bootstrap, ALICE)
    expected = {}
    for part in (0, 1):
        records = [{"key": f"k{part}-{i}".encode(), "value": f"alice {part}/{i}".encode()} for i in range(150)]
        reports = ck.produce_all(p, records, topic, partition=part)
        assert reports == [(part, i) for i in range(150)]
        expected[part] = [r["value"] for r in records]

    # Read back as another user, then through the PLAINTEXT listener: one log behind both.
    got = ck.consume_partitions(bootstrap, [(topic, 0, 0), (topic, 1, 0)], expected=300, **BOB)
    assert {part: [m.value() for m in got[(topic, part)]] for part in (0, 1)} == expected
    got_plain = ck.consume_partitions(broker.bootstrap, [(topic, 0, 0), (topic, 1, 0)], expected=300)
    assert {part: [m.value() for m in got_plain[(topic, part)]] for part in (0, 1)} == expected
    assert audit_lines(broker, "alice") == [] and audit_lines(broker, "bob") == []


# ---------------------------------------------------------------------------------------------
# 2. Wrong password, unknown user.


@pytest.mark.parametrize("user,password", [("alice", "not-alices-password"), ("nobody", "nobodys-guess")],
                         ids=["wrong-password", "unknown-user"])
def test_clients_with_bad_credentials_are_refused(sasl_broker, user, password):
    broker = sasl_broker()
    bootstrap = broker.listener_bootstrap(SASL)
    topic = ck.create_topic(broker.bootstrap, unique_topic("sasl-deny"))
    secrets = [f"secret-{i}".encode() for i in range(20)]
    ck.produce_all(ck.producer(broker.bootstrap), [{"value": v} for v in secrets], topic, partition=0)
    bad = sasl_conf(user, password)

    # librdkafka passes on the broker's error message.
    assert_client_cannot_authenticate(bootstrap, bad, AUTH_FAILED_MESSAGE)

    # A consumer with the same credentials gets an authentication error and no data.
    errors = ClientErrors()
    c = make_consumer(bootstrap, bad, error_cb=errors)
    received = []
    try:
        c.assign([TopicPartition(topic, 0, 0)])

        def refused():
            for m in c.consume(num_messages=100, timeout=0.2):
                if m.error() is None:
                    received.append(m.value())
            return errors.auth_failures()

        wait_until(refused, 15, interval=0, message="the consumer's authentication error")
    finally:
        c.close()
    assert received == [], f"an unauthenticated consumer was served {len(received)} records"

    # One audit line per failed attempt, with user, client address and listener; never the password.
    lines = wait_until(lambda: audit_lines(broker, user), 10, message=f"an audit line for {user}")
    for line in lines:
        assert "127.0.0.1" in line and SASL in line, f"audit line lacks the client address or listener: {line}"
    assert password not in broker_log_without_harness_lines(broker), "a tried password was logged"

    # The right credentials still work on the same listener.
    assert advertised(bootstrap, ALICE) == [("127.0.0.1", broker.extra_listeners[SASL])]


@pytest.mark.parametrize("version", [0, 1, 2])
def test_raw_sasl_authenticate(sasl_broker, version):
    broker = sasl_broker()
    port = broker.extra_listeners[SASL]

    with kw.Conn(port) as c:
        # ApiVersions is served before authentication and lists the SASL APIs.
        err, keys = kw.parse_api_versions_v0(c.request(API_VERSIONS, 0, 100, b""))
        assert err == 0
        assert keys.get(SASL_HANDSHAKE, (None, -1))[0] == 0 and keys[SASL_HANDSHAKE][1] >= 1, keys
        assert keys.get(SASL_AUTHENTICATE, (None, -1))[0] == 0 and keys[SASL_AUTHENTICATE][1] >= 2, keys
        err, mechanisms = handshake(c, "PLAIN")
        assert err == 0 and "PLAIN" in mechanisms, (err, mechanisms)
        res = authenticate(c, plain_token("alice", USERS["alice"]), version)
        assert res["error"] == 0, res
        if version >= 1:
            assert res["session_lifetime_ms"] == 0, "no connections.max.reauth.ms: the session must not expire"
        # Authenticated: ordinary requests are served, and Metadata advertises this listener.
        assert metadata_brokers(c) == [(0, "127.0.0.1", port)]

    # An authorization id equal to the user name is accepted, as Kafka does.
    with kw.Conn(port) as c:
        assert handshake(c, "PLAIN")[0] == 0
        res = authenticate(c, plain_token("bob", USERS["bob"], authzid="bob"), version)
        assert res["error"] == 0, res

    attempts = [("bob", "not-bobs-password"), ("nobody", "nobodys-guess")]
    for user, password in attempts:
        with kw.Conn(port) as c:
            assert handshake(c, "PLAIN")[0] == 0
            res = authenticate(c, plain_token(user, password), version)
            assert (res["error"], res["message"]) == (SASL_AUTHENTICATION_FAILED, AUTH_FAILED_MESSAGE), res
            assert_closed_by_broker(c, f"after a failed authentication of {user}")

    # A token that is not authzid NUL user NUL password fails the same way.
    with kw.Conn(port) as c:
        assert handshake(c, "PLAIN")[0] == 0
        res = authenticate(c, b"no-separators-here", version)
        assert res["error"] == SASL_AUTHENTICATION_FAILED, res
        assert_closed_by_broker(c, "after a malformed PLAIN token")

    for user, password in attempts:
        lines = wait_until(lambda: audit_lines(broker, user), 10, message=f"an audit line for {user}")
        assert len(lines) == 1, f"expected one audit line for the one failed attempt of {user}: {lines}"
        assert "127.0.0.1" in lines[0] and SASL in lines[0], lines[0]
        assert password not in broker_log_without_harness_lines(broker), "a tried password was logged"
    assert audit_lines(broker, "alice") == [], "a successful authentication was logged as failed"
    broker.assert_alive()


# ---------------------------------------------------------------------------------------------
# 3. Mechanisms that are not enabled.


def test_default_enabled_mechanisms(sasl_broker):
    """Oxbow enables every mechanism it has by default (Kafka's default, GSSAPI, it does not have)."""
    broker = sasl_broker()
    default = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    for mechanism in ("PLAIN", "SCRAM-SHA-512", "GSSAPI"):
        with kw.Conn(broker.extra_listeners[SASL]) as c:
            err, mechanisms = handshake(c, mechanism)
            assert mechanisms == default, mechanisms
            assert err == (UNSUPPORTED_SASL_MECHANISM if mechanism == "GSSAPI" else 0), (mechanism, err)


def test_unsupported_mechanism_is_refused(sasl_broker):
    broker = sasl_broker({"sasl.enabled.mechanisms": "PLAIN"})
    port = broker.extra_listeners[SASL]
    for version in (0, 1):
        with kw.Conn(port) as c:
            err, mechanisms = handshake(c, "SCRAM-SHA-512", version)
            assert (err, mechanisms) == (UNSUPPORTED_SASL_MECHANISM, ["PLAIN"]), (version, err, mechanisms)
    # librdkafka's text for UNSUPPORTED_SASL_MECHANISM.
    assert_client_cannot_authenticate(broker.listener_bootstrap(SASL),
                                      sasl_conf("alice", USERS["alice"], mechanism="SCRAM-SHA-512"),
                                      "Unsupported SASL mechanism")
    # PLAIN still works.
    c, _ = authenticated_conn(port)
    with c:
        assert metadata_brokers(c) == [(0, "127.0.0.1", port)]


def test_listeners_override_mechanisms_and_reauthentication(sasl_broker):
    """As Kafka: listener.name.<l>.sasl.enabled.mechanisms and connections.max.reauth.ms, the
    latter also per mechanism (listener.name.<l>.<mechanism>.connections.max.reauth.ms)."""
    other = "OTHER"
    broker = sasl_broker({
        "listener.security.protocol.map": f"PLAINTEXT:PLAINTEXT,{SASL}:SASL_PLAINTEXT,{other}:SASL_PLAINTEXT",
        f"listener.name.{other.lower()}.plain.sasl.jaas.config": jaas_config(USERS),
        f"listener.name.{other.lower()}.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        f"listener.name.{other.lower()}.connections.max.reauth.ms": "30000",
        f"listener.name.{SASL.lower()}.plain.connections.max.reauth.ms": "60000",
    }, start=False)
    broker.add_listener(other)
    broker.start()
    with kw.Conn(broker.extra_listeners[other]) as c:
        assert handshake(c, "SCRAM-SHA-256") == (UNSUPPORTED_SASL_MECHANISM, ["PLAIN", "SCRAM-SHA-512"])
    with kw.Conn(broker.extra_listeners[SASL]) as c:
        assert handshake(c, "SCRAM-SHA-256") == (0, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
    for listener, lifetime in ((SASL, 60000), (other, 30000)):
        c, res = authenticated_conn(broker.extra_listeners[listener])
        c.close()
        assert res["session_lifetime_ms"] == lifetime, (listener, res)


def test_bad_listener_sasl_settings_stop_the_start(sasl_broker):
    broker = sasl_broker({f"listener.name.{SASL.lower()}.plain.connections.max.reauth.ms": "soon"}, start=False)
    with pytest.raises(pytest.fail.Exception):
        broker.start()
    assert f"Invalid value soon for configuration listener.name.{SASL.lower()}.plain.connections.max.reauth.ms" \
        in broker.log_text()


# ---------------------------------------------------------------------------------------------
# 4. The wrong kind of client on each listener.


def test_unauthenticated_requests_close_the_connection(sasl_broker):
    broker = sasl_broker()
    port = broker.extra_listeners[SASL]
    topic = ck.create_topic(broker.bootstrap, unique_topic("sasl-unauth"))

    with kw.Conn(port) as c:
        err, _keys = kw.parse_api_versions_v0(c.request(API_VERSIONS, 0, 1, b""))
        assert err == 0, "ApiVersions must be answered before authentication"
        c.send(metadata_v1_frame(2, [topic]))
        assert_closed_by_broker(c, "Metadata before authentication")

    with kw.Conn(port) as c:
        batch = kw.build_record_batch([(None, b"sneaked in", [])])
        c.send(kw.request_frame(PRODUCE, 8, 1, kw.produce_v8_body(topic, 0, batch)))
        assert_closed_by_broker(c, "Produce before authentication")

    # A handshake alone does not authenticate.
    with kw.Conn(port) as c:
        assert handshake(c, "PLAIN")[0] == 0
        c.send(metadata_v1_frame(2, [topic]))
        assert_closed_by_broker(c, "Metadata after SaslHandshake but before SaslAuthenticate")

    assert ck.watermarks(broker.bootstrap, topic) == (0, 0), "an unauthenticated produce was appended"

    # A plaintext librdkafka client on the SASL port gets no metadata.
    p = make_producer(broker.listener_bootstrap(SASL), {"security.protocol": "PLAINTEXT"})
    with pytest.raises(KafkaException):
        p.list_topics(timeout=3)
    broker.assert_alive()


def test_sasl_client_on_plaintext_listener_fails(sasl_broker):
    broker = sasl_broker()
    with kw.Conn(broker.port) as c:
        err, _mechanisms = handshake(c, "PLAIN")
        assert err == ILLEGAL_SASL_STATE, err
    # librdkafka's text for ILLEGAL_SASL_STATE.
    assert_client_cannot_authenticate(broker.bootstrap, ALICE, "Request not valid in current SASL state")
    # The plaintext listener itself is fine for plaintext clients.
    ck.assert_broker_healthy(broker)


# ---------------------------------------------------------------------------------------------
# 5. Both listeners at once.


def group_read(bootstrap, conf, topic, expected):
    """Reads topic in a fresh consumer group until `expected` values arrived; commits; returns them."""
    c = make_consumer(bootstrap, conf, **{"group.id": unique_topic("sasl-group")})
    values = []
    try:
        c.subscribe([topic])

        def all_read():
            for m in c.consume(num_messages=500, timeout=0.2):
                if m.error() is None:
                    values.append(m.value())
                elif m.topic() is not None or m.error().fatal():
                    raise KafkaException(m.error())
            return len(values) >= expected

        wait_until(all_read, 40, interval=0, message=f"{expected} records read in a group through {bootstrap}")
        c.commit(offsets=[TopicPartition(topic, 0, expected)], asynchronous=False)
        committed = c.committed([TopicPartition(topic, 0)], timeout=10)
        assert [tp.offset for tp in committed] == [expected]
    finally:
        c.close()
    return values


def test_two_listeners_serve_the_same_topics(sasl_broker):
    broker = sasl_broker({"group.initial.rebalance.delay.ms": "0"})
    plain = broker.bootstrap
    sasl = broker.listener_bootstrap(SASL)
    topic = ck.create_topic(plain, unique_topic("sasl-two"))

    plain_values = [f"plain-{i}".encode() for i in range(100)]
    sasl_values = [f"sasl-{i}".encode() for i in range(100)]
    assert ck.produce_all(ck.producer(plain), [{"value": v} for v in plain_values], topic, partition=0) == \
        [(0, i) for i in range(100)]
    assert ck.produce_all(make_producer(sasl, ALICE), [{"value": v} for v in sasl_values], topic, partition=0) == \
        [(0, i) for i in range(100, 200)]
    expected = plain_values + sasl_values

    # Each listener advertises itself.
    assert advertised(plain, {}) == [("127.0.0.1", broker.port)]
    assert advertised(sasl, ALICE) == [("127.0.0.1", broker.extra_listeners[SASL])]

    for bootstrap, conf in ((plain, {}), (sasl, ALICE)):
        msgs = ck.consume_partition(bootstrap, topic, 0, 0, expected=200, **conf)
        assert [m.value() for m in msgs] == expected, f"records read through {bootstrap}"
        # Groups too: the coordinator found through a listener must be reachable through it.
        assert group_read(bootstrap, conf, topic, 200) == expected, f"records read in a group through {bootstrap}"


# ---------------------------------------------------------------------------------------------
# 6. Listener names and the security protocol map.


def test_custom_listener_name_mapped_to_sasl_plaintext(sasl_broker):
    carol = {"carol": "carol-secret"}
    broker = sasl_broker({"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENTS:SASL_PLAINTEXT"},
                         listener="CLIENTS", users=carol)
    port = broker.extra_listeners["CLIENTS"]
    bootstrap = broker.listener_bootstrap("CLIENTS")
    conf = sasl_conf("carol", "carol-secret")

    topic = create_topic(bootstrap, conf, unique_topic("sasl-clients"))
    assert advertised(bootstrap, conf) == [("127.0.0.1", port)]
    values = [f"carol-{i}".encode() for i in range(50)]
    ck.produce_all(make_producer(bootstrap, conf), [{"value": v} for v in values], topic, partition=0)
    assert [m.value() for m in ck.consume_partition(bootstrap, topic, 0, 0, expected=50, **conf)] == values

    # It really is a SASL listener: nothing is served before authentication.
    with kw.Conn(port) as c:
        c.send(metadata_v1_frame(1, [topic]))
        assert_closed_by_broker(c, "Metadata before authentication on CLIENTS")
    # Its users are those of listener.name.clients: alice is unknown there.
    with kw.Conn(port) as c:
        assert handshake(c, "PLAIN")[0] == 0
        res = authenticate(c, plain_token("alice", USERS["alice"]))
        assert (res["error"], res["message"]) == (SASL_AUTHENTICATION_FAILED, AUTH_FAILED_MESSAGE), res
        assert_closed_by_broker(c, "after a failed authentication")
    line, = wait_until(lambda: audit_lines(broker, "alice"), 10, message="the audit line for alice")
    assert "CLIENTS" in line and "127.0.0.1" in line, f"the audit line must name the listener: {line}"


@pytest.mark.parametrize("name,protocol_map", [("SSL", None), ("SASL_SSL", None),
                                               ("SECURE", "PLAINTEXT:PLAINTEXT,SECURE:SSL")])
def test_ssl_listeners_are_refused_at_start_up(make_broker, name, protocol_map):
    b = make_broker({"listener.security.protocol.map": protocol_map} if protocol_map else {}, start=False)
    b.add_listener(name)
    with open(b.log_path, "wb") as log:
        proc = subprocess.Popen(b.command(), stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=b.base_dir)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"broker kept running with an {name} listener:\n{b.log_tail()}")
    out = b.log_text()
    assert proc.returncode != 0, f"broker exited 0 with an {name} listener:\n{out[-2000:]}"
    assert any(name in line for line in out.splitlines()), f"the start-up error should name {name}:\n{out[-2000:]}"


# ---------------------------------------------------------------------------------------------
# 7. Re-authentication limit (connections.max.reauth.ms).

REAUTH_MS = 1500


def test_session_expiry_closes_raw_connections(sasl_broker):
    broker = sasl_broker({"connections.max.reauth.ms": str(REAUTH_MS)})
    port = broker.extra_listeners[SASL]
    lifetime_s = REAUTH_MS / 1000

    with kw.Conn(port) as c:
        assert handshake(c, "PLAIN")[0] == 0
        sent = time.monotonic()
        res = authenticate(c, plain_token("alice", USERS["alice"]), 1)
        answered = time.monotonic()
        assert res["error"] == 0 and res["session_lifetime_ms"] == REAUTH_MS, res
        # Within the session requests are served (checked only if this really ran within it).
        try:
            within = metadata_brokers(c)
        except kw.ConnectionClosed:
            within = None
        if time.monotonic() - sent < lifetime_s:
            assert within == [(0, "127.0.0.1", port)], "a request within the session was not served"
        # Once the session expired, any other request closes the connection.
        wait_until(lambda: time.monotonic() >= answered + lifetime_s + 0.1, 10, message="the session to expire")
        c.send(metadata_v1_frame(9))
        assert_closed_by_broker(c, "Metadata after the session expired")

    # After expiry, SaslHandshake + SaslAuthenticate on the same connection start a new session.
    with kw.Conn(port) as c:
        assert handshake(c, "PLAIN")[0] == 0
        res = authenticate(c, plain_token("bob", USERS["bob"]), 1)
        answered = time.monotonic()
        assert res["error"] == 0 and res["session_lifetime_ms"] == REAUTH_MS, res
        wait_until(lambda: time.monotonic() >= answered + lifetime_s + 0.1, 10, message="the session to expire")
        assert handshake(c, "PLAIN", correlation_id=11)[0] == 0
        sent = time.monotonic()
        res = authenticate(c, plain_token("bob", USERS["bob"]), 1, correlation_id=12)
        assert res["error"] == 0 and res["session_lifetime_ms"] == REAUTH_MS, res
        try:
            within = metadata_brokers(c, correlation_id=13)
        except kw.ConnectionClosed:
            within = None
        if time.monotonic() - sent < lifetime_s:
            assert within == [(0, "127.0.0.1", port)], "re-authentication did not renew the session"

    # SaslAuthenticate v0 has no lifetime field but the session still expires; nothing else changes.
    c, _ = authenticated_conn(port, "alice", version=0)
    with c:
        answered = time.monotonic()
        wait_until(lambda: time.monotonic() >= answered + lifetime_s + 0.1, 10, message="the session to expire")
        c.send(metadata_v1_frame(21))
        assert_closed_by_broker(c, "Metadata after a v0 session expired")


class Stats:
    """stats_cb summing librdkafka's per-broker disconnect counters."""

    def __init__(self):
        self.disconnects = 0

    def __call__(self, stats_json):
        stats = json.loads(stats_json)
        self.disconnects = sum(b.get("disconnects", 0) for b in stats.get("brokers", {}).values())


def test_clients_keep_working_across_session_expiries(sasl_broker):
    broker = sasl_broker({"connections.max.reauth.ms": str(REAUTH_MS)})
    bootstrap = broker.listener_bootstrap(SASL)
    topic = ck.create_topic(broker.bootstrap, unique_topic("sasl-reauth"))

    pstats, cstats = Stats(), Stats()
    # Idempotent: a produce cut off by an expiry is retried without duplicates.
    p = make_producer(bootstrap, ALICE, **{"enable.idempotence": True, "stats_cb": pstats,
                                           "statistics.interval.ms": 200})
    c = make_consumer(bootstrap, BOB, **{"stats_cb": cstats, "statistics.interval.ms": 200})
    acked, failed, received = [], [], []

    def on_delivery(err, msg):
        (failed if err is not None else acked).append(err or msg.offset())

    def consume(timeout):
        for m in c.consume(num_messages=1000, timeout=timeout):
            if m.error() is None:
                received.append(m.value().decode())
            elif m.topic() is not None or m.error().fatal():
                raise KafkaException(m.error())

    try:
        c.assign([TopicPartition(topic, 0, 0)])
        # About ten records a second for more than three session lifetimes.
        produced = 0
        start = time.monotonic()
        while time.monotonic() - start < 3.5 * REAUTH_MS / 1000:
            p.produce(topic, value=f"r{produced}".encode(), partition=0, on_delivery=on_delivery)
            produced += 1
            p.poll(0)
            consume(0.1)
        assert p.flush(60) == 0, "records still undelivered"
        assert failed == [], f"delivery errors: {failed[:5]}"
        assert sorted(acked) == list(range(produced)), "every record acknowledged once, at consecutive offsets"
        wait_until(lambda: (consume(0.2), len(received) >= produced)[1], 30, interval=0,
                   message=f"{produced} records consumed")
        assert received == [f"r{i}" for i in range(produced)]
        # The broker did cut both clients off (and they came back): the limit was in force.
        wait_until(lambda: (p.poll(0.1), pstats.disconnects >= 2)[1], 10,
                   message="the producer to have been disconnected at least twice")
        wait_until(lambda: (consume(0.1), cstats.disconnects >= 2)[1], 10,
                   message="the consumer to have been disconnected at least twice")
    finally:
        c.close()
    assert ck.watermarks(broker.bootstrap, topic) == (0, produced)


# ---------------------------------------------------------------------------------------------
# 8. Brute force.


def test_brute_force_is_refused_while_clients_are_served(sasl_broker):
    broker = sasl_broker()
    port = broker.extra_listeners[SASL]
    bootstrap = broker.listener_bootstrap(SASL)
    topic = ck.create_topic(broker.bootstrap, unique_topic("sasl-brute"))

    acked, failed = [], []

    def on_delivery(err, msg):
        (failed if err is not None else acked).append(err or msg.offset())

    p = make_producer(bootstrap, ALICE)
    p.produce(topic, value=b"before", partition=0, on_delivery=on_delivery)
    assert p.flush(30) == 0 and acked == [0], (acked, failed)

    attempts_per_thread, threads_count = 125, 8
    refused_outcome = (0, SASL_AUTHENTICATION_FAILED, AUTH_FAILED_MESSAGE, "closed")
    outcomes, unexpected = [], []
    lock = threading.Lock()

    def attack(thread_no):
        for k in range(attempts_per_thread):
            try:
                with kw.Conn(port) as c:
                    hs, _ = handshake(c, "PLAIN")
                    res = authenticate(c, plain_token("mallory", f"guess-{thread_no}-{k}"), 1)
                    closed = c.wait_closed_or_response(10) if res["error"] != 0 else "left open"
                outcome = (hs, res["error"], res["message"], closed)
            except Exception as exc:  # noqa: BLE001 - reported below
                outcome = repr(exc)
            with lock:
                outcomes.append(outcome)
                if outcome != refused_outcome:
                    unexpected.append(outcome)
            if outcome != refused_outcome:
                return  # a broken broker must fail this test, not keep it busy for long

    threads = [threading.Thread(target=attack, args=(i,)) for i in range(threads_count)]
    for t in threads:
        t.start()
    values = [b"before"]
    while any(t.is_alive() for t in threads):
        value = f"during-{len(values)}".encode()
        p.produce(topic, value=value, partition=0, on_delivery=on_delivery)
        values.append(value)
        p.poll(0.005)
    for t in threads:
        t.join()
    assert p.flush(60) == 0, "records still undelivered"

    # Every attempt: handshake 0, then SASL_AUTHENTICATION_FAILED with Kafka's message, then closed.
    assert unexpected == [], f"attempts not refused as they should be: {unexpected[:5]}"
    total = attempts_per_thread * threads_count
    assert outcomes == [refused_outcome] * total

    assert failed == [], f"delivery errors: {failed[:5]}"
    assert len(values) > 1, "nothing was produced during the attack"
    assert sorted(acked) == list(range(len(values)))
    msgs = ck.consume_partition(bootstrap, topic, 0, 0, expected=len(values), **ALICE)
    assert [m.value() for m in msgs] == values

    lines = wait_until(lambda: len(audit_lines(broker, "mallory")) >= total and audit_lines(broker, "mallory"), 20,
                       message=f"{total} audit lines")
    assert len(lines) == total, f"expected one audit line per failed attempt, got {len(lines)}"
    broker.assert_alive()


# ---------------------------------------------------------------------------------------------
# 9. kcat.


def kcat_sasl(bootstrap, user, password, *args, input=None, timeout=60):
    cmd = [KCAT, "-b", bootstrap, "-X", "enable.idempotence=false",
           "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN",
           "-X", f"sasl.username={user}", "-X", f"sasl.password={password}", *args]
    return subprocess.run(cmd, input=input, capture_output=True, timeout=timeout)


@pytest.mark.skipif(KCAT is None, reason="kcat is not installed")
def test_kcat_over_sasl_plain(sasl_broker):
    broker = sasl_broker()
    bootstrap = broker.listener_bootstrap(SASL)
    topic = ck.create_topic(broker.bootstrap, unique_topic("sasl-kcat"))
    lines = [f"key{i}:kcat value {i}" for i in range(200)]
    res = kcat_sasl(bootstrap, "alice", USERS["alice"], "-P", "-t", topic, "-p", "0", "-K:",
                    input=("\n".join(lines) + "\n").encode())
    assert res.returncode == 0, res
    res = kcat_sasl(bootstrap, "bob", USERS["bob"], "-C", "-t", topic, "-p", "0", "-e", "-o", "beginning",
                    "-f", "%o|%k|%s\\n")
    assert res.returncode == 0, res
    assert res.stdout.decode().splitlines() == [f"{i}|key{i}|kcat value {i}" for i in range(200)]
    res = kcat_sasl(bootstrap, "alice", USERS["alice"], "-L")
    assert res.returncode == 0, res
    assert f"at 127.0.0.1:{broker.extra_listeners[SASL]}" in res.stdout.decode(), res.stdout


@pytest.mark.skipif(KCAT is None, reason="kcat is not installed")
def test_kcat_with_wrong_password_fails(sasl_broker):
    broker = sasl_broker()
    bootstrap = broker.listener_bootstrap(SASL)
    topic = ck.create_topic(broker.bootstrap, unique_topic("sasl-kcat-deny"))
    ck.produce_all(ck.producer(broker.bootstrap), [{"value": f"kcat-secret-{i}".encode()} for i in range(10)],
                   topic, partition=0)
    res = kcat_sasl(bootstrap, "alice", "not-alices-password", "-C", "-t", topic, "-e", "-o", "beginning",
                    "-m", "5")
    assert res.returncode != 0, res
    assert b"kcat-secret" not in res.stdout, "kcat was served data without authenticating"
    wait_until(lambda: audit_lines(broker, "alice"), 10, message="an audit line for alice")
