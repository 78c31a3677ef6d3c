"""TLS: SSL and SASL_SSL listeners, client certificates (mTLS), and clients on the wrong kind of port.

Certificates are made fresh for the test module by gen_test_certs.sh (openssl).  Each broker keeps
the harness's PLAINTEXT listener on broker.port and gets its TLS listener(s) on their own ports.
Clients: confluent-kafka (librdkafka 2.0.2), kcat, and Python's ssl module for raw handshakes.
"""

import hashlib
import os
import shutil
import socket
import struct
import ssl
import subprocess
import time

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

import ck_helpers as ck
import kafka_wire as kw
from harness import OXBOW_BIN, metric_value, scrape_metrics, unique_topic, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
KCAT = shutil.which("kcat") or shutil.which("kafkacat")
API_VERSIONS = 18
PLAIN_USERS = {"alice": "alice-secret"}


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("certs")
    subprocess.run([os.path.join(HERE, "gen_test_certs.sh"), str(directory)], check=True, timeout=60)
    return directory


@pytest.fixture
def tls_broker(make_broker, certs):
    """tls_broker(listeners=("SSL",), overrides): PLAINTEXT on broker.port plus the TLS listeners."""

    def factory(listeners=("SSL",), overrides=None, start=True):
        merged = {"ssl.keystore.location": str(certs / "server-keystore.pem")}
        merged.update(overrides or {})
        b = make_broker(merged, start=False)
        for name in listeners:
            b.add_listener(name)
        return b.start() if start else b

    return factory


def tls_conf(broker, certs, listener="SSL", **extra):
    conf = {"bootstrap.servers": broker.listener_bootstrap(listener), "security.protocol": listener,
            "ssl.ca.location": str(certs / "ca.pem")}
    conf.update(extra)
    return conf


def client_cert(certs, name):
    return {"ssl.certificate.location": str(certs / f"{name}.pem"), "ssl.key.location": str(certs / f"{name}.key")}


def produce(conf, topic, records):
    p = Producer({**conf, "linger.ms": 5, "acks": "all", "message.timeout.ms": 30000})
    failures = []
    for key, value in records:
        p.produce(topic, key=key, value=value, on_delivery=lambda err, msg: err and failures.append(err))
        p.poll(0)
    assert p.flush(60) == 0, "records left undelivered"
    assert not failures, f"delivery failed: {failures[:3]}"


def consume(conf, topic, count, timeout=60):
    c = Consumer({**conf, "group.id": "unused", "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    c.assign([TopicPartition(topic, 0, 0)])
    out = []
    try:
        def done():
            for m in c.consume(500, 0.5):
                assert m.error() is None, m.error()
                out.append((m.key(), m.value()))
            return len(out) >= count

        wait_until(done, timeout, interval=0, message=f"{count} records consumed from {topic}")
    finally:
        c.close()
    return out


def assert_refused(conf, what):
    """A librdkafka client with conf gets no metadata, and reports a transport or TLS error."""
    errors = []
    p = Producer({**conf, "error_cb": errors.append})
    with pytest.raises(KafkaException):
        p.list_topics(timeout=3)
    wait_until(lambda: (p.poll(0.1), errors)[1], 10, message=f"an error reported to the client {what}")
    codes = {e.code() for e in errors}
    assert codes & {KafkaError._TRANSPORT, KafkaError._SSL, KafkaError._ALL_BROKERS_DOWN, KafkaError._AUTHENTICATION}, \
        f"{what}: unexpected client errors {[e.str() for e in errors]}"


def log_lines(broker, needle):
    return [line for line in broker.log_text().splitlines()
            if needle in line and not line.startswith("===== test harness")]


def test_ssl_listener_serves_confluent_kafka_and_kcat(tls_broker, certs):
    broker = tls_broker()
    conf = tls_conf(broker, certs)
    md = Producer(conf).list_topics(timeout=10)
    port = int(broker.listener_bootstrap("SSL").split(":")[1])
    assert [(b.host, b.port) for b in md.brokers.values()] == [("127.0.0.1", port)], \
        "Metadata over the SSL listener advertises the SSL listener"

    topic = ck.create_topic(broker.bootstrap, unique_topic("tls"))
    records = [(f"k{i}".encode(), f"value-{i}".encode()) for i in range(2000)]
    produce(conf, topic, records)
    assert consume(conf, topic, len(records)) == records
    # Plaintext clients see the same log.
    assert ck.watermarks(broker.bootstrap, topic) == (0, len(records))

    if KCAT:
        tls_args = ["-b", broker.listener_bootstrap("SSL"), "-X", "security.protocol=ssl",
                    "-X", f"ssl.ca.location={certs / 'ca.pem'}"]
        subprocess.run([KCAT, "-P", *tls_args, "-t", topic, "-K", ":"], input=b"kk:from-kcat\n", check=True,
                       timeout=30)
        out = subprocess.run([KCAT, "-C", *tls_args, "-t", topic, "-o", str(len(records)), "-e", "-f", "%k=%s\n"],
                             capture_output=True, check=True, timeout=30).stdout
        assert out == b"kk=from-kcat\n"


def test_large_fetches_over_tls_arrive_intact(tls_broker, certs):
    """Fetch responses far larger than the broker's 256 KB TLS staging chunk, several segments."""
    broker = tls_broker(overrides={"log.segment.bytes": str(4 << 20)})
    conf = tls_conf(broker, certs)
    topic = ck.create_topic(broker.bootstrap, unique_topic("tls-big"))
    records = [(str(i).encode(), os.urandom(20000)) for i in range(1500)]  # 30 MB
    produce(conf, topic, records)
    got = consume(conf, topic, len(records), timeout=120)
    assert len(got) == len(records)
    digest = lambda rs: hashlib.sha256(b"".join(k + v for k, v in rs)).hexdigest()  # noqa: E731
    assert digest(got) == digest(records)


def test_client_certificates_when_required(tls_broker, certs):
    broker = tls_broker(overrides={"ssl.client.auth": "required", "ssl.truststore.location": str(certs / "ca.pem")})
    topic = ck.create_topic(broker.bootstrap, unique_topic("mtls"))
    alice = tls_conf(broker, certs, **client_cert(certs, "alice"))
    produce(alice, topic, [(b"a", b"from alice")])
    assert consume(alice, topic, 1) == [(b"a", b"from alice")]
    if KCAT:
        args = ["-b", broker.listener_bootstrap("SSL"), "-X", "security.protocol=ssl",
                "-X", f"ssl.ca.location={certs / 'ca.pem'}", "-X", f"ssl.certificate.location={certs / 'bob.pem'}",
                "-X", f"ssl.key.location={certs / 'bob.key'}"]
        out = subprocess.run([KCAT, "-C", *args, "-t", topic, "-o", "beginning", "-e", "-f", "%s\n"],
                             capture_output=True, check=True, timeout=30).stdout
        assert out == b"from alice\n"
        refused = subprocess.run([KCAT, "-C", *args[:4], "-t", topic, "-o", "beginning", "-e", "-m", "3"],
                                 capture_output=True, timeout=30)
        assert refused.returncode != 0, "kcat without a client certificate must not read"

    assert_refused(tls_conf(broker, certs), "without a client certificate")
    assert_refused(tls_conf(broker, certs, **client_cert(certs, "mallory")), "with an untrusted certificate")
    wait_until(lambda: len(log_lines(broker, "authentication failed: TLS handshake")) >= 2, 10,
               message="audit lines for the refused handshakes")
    assert metric_value(scrape_metrics(broker), "oxbow_authentication_failures_total", method="tls") >= 2
    assert ck.watermarks(broker.bootstrap, topic) == (0, 1), "nothing was written by refused clients"


def test_client_certificates_when_requested_are_optional(tls_broker, certs):
    broker = tls_broker(overrides={"ssl.client.auth": "requested", "ssl.truststore.location": str(certs / "ca.pem")})
    Producer(tls_conf(broker, certs)).list_topics(timeout=10)
    Producer(tls_conf(broker, certs, **client_cert(certs, "alice"))).list_topics(timeout=10)
    # A certificate that is sent must still verify.
    assert_refused(tls_conf(broker, certs, **client_cert(certs, "mallory")), "with an untrusted certificate")


def test_sasl_ssl_with_plain_and_scram(tls_broker, certs):
    jaas = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
            + " ".join(f'user_{u}="{p}"' for u, p in PLAIN_USERS.items()) + ";")
    broker = tls_broker(listeners=("SASL_SSL",),
                        overrides={"listener.name.sasl_ssl.plain.sasl.jaas.config": jaas})
    subprocess.run([OXBOW_BIN, "user", "create", "carol", "--password", "carol-secret", "--mechanism",
                    "SCRAM-SHA-512", "-b", broker.bootstrap], check=True, capture_output=True, timeout=30)
    topic = ck.create_topic(broker.bootstrap, unique_topic("sasl-ssl"))

    def sasl(mechanism, user, password):
        return tls_conf(broker, certs, "SASL_SSL", **{"sasl.mechanism": mechanism, "sasl.username": user,
                                                      "sasl.password": password})

    produce(sasl("PLAIN", "alice", "alice-secret"), topic, [(b"1", b"plain")])
    produce(sasl("SCRAM-SHA-512", "carol", "carol-secret"), topic, [(b"2", b"scram")])
    assert consume(sasl("SCRAM-SHA-512", "carol", "carol-secret"), topic, 2) == [(b"1", b"plain"), (b"2", b"scram")]
    if KCAT:
        for mechanism, user, password in (("PLAIN", "alice", "alice-secret"), ("SCRAM-SHA-512", "carol", "carol-secret")):
            args = ["-b", broker.listener_bootstrap("SASL_SSL"), "-X", "security.protocol=sasl_ssl",
                    "-X", f"ssl.ca.location={certs / 'ca.pem'}", "-X", f"sasl.mechanism={mechanism}",
                    "-X", f"sasl.username={user}", "-X", f"sasl.password={password}"]
            out = subprocess.run([KCAT, "-C", *args, "-t", topic, "-o", "beginning", "-e", "-f", "%s\n"],
                                 capture_output=True, check=True, timeout=30).stdout
            assert out == b"plain\nscram\n", f"kcat with {mechanism}: {out!r}"

    assert_refused(sasl("PLAIN", "alice", "wrong"), "with a wrong PLAIN password")
    assert_refused(sasl("SCRAM-SHA-512", "carol", "wrong"), "with a wrong SCRAM password")
    assert_refused(sasl("SCRAM-SHA-512", "nobody", "x"), "with an unknown SCRAM user")
    # SASL over a plaintext connection to the SASL_SSL port never gets as far as SASL.
    plain_conf = {"bootstrap.servers": broker.listener_bootstrap("SASL_SSL"), "security.protocol": "SASL_PLAINTEXT",
                  "sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"}
    assert_refused(plain_conf, "speaking plaintext to a SASL_SSL port")
    assert ck.watermarks(broker.bootstrap, topic) == (0, 2)


def test_clients_on_the_wrong_kind_of_port_get_nothing(tls_broker, certs):
    broker = tls_broker()
    ssl_port = int(broker.listener_bootstrap("SSL").split(":")[1])

    # Plaintext Kafka request to the TLS port: no Kafka answer, the connection is closed.
    with kw.Conn(ssl_port) as conn:
        conn.send(kw.request_frame(API_VERSIONS, 0, 1, b""))
        with pytest.raises((kw.ConnectionClosed, ConnectionResetError, AssertionError)):
            conn.recv_frame()
    wait_until(lambda: log_lines(broker, "authentication failed: TLS handshake"), 10,
               message="an audit line for the plaintext client on the TLS port")

    # TLS handshake on the plaintext port: it fails, and the broker says why.
    context = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as raw:
        with pytest.raises((ssl.SSLError, ConnectionResetError, OSError)):
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                tls.recv(1)
    wait_until(lambda: log_lines(broker, "a TLS handshake on PLAINTEXT listener"), 10,
               message="a log line for the TLS client on the plaintext port")
    assert_refused({"bootstrap.servers": broker.bootstrap, "security.protocol": "SSL",
                    "ssl.ca.location": str(certs / "ca.pem")}, "speaking TLS to the PLAINTEXT port")
    # The broker still serves both kinds of client.
    Producer(tls_conf(broker, certs)).list_topics(timeout=10)
    Producer({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10)


def raw_tls_handshake(port, certs, version):
    context = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    context.minimum_version = version
    context.maximum_version = version
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            tls.sendall(kw.request_frame(API_VERSIONS, 0, 1, b""))
            header = tls.recv(8)
            return tls.version(), header


def test_encrypted_key_inline_pem_and_tls_versions(tls_broker, certs):
    broker = tls_broker(overrides={
        "ssl.keystore.location": str(certs / "server-encrypted-keystore.pem"),
        "ssl.key.password": "keypass",
        "ssl.enabled.protocols": "TLSv1.3",
    })
    port = int(broker.listener_bootstrap("SSL").split(":")[1])
    version, header = raw_tls_handshake(port, certs, ssl.TLSVersion.TLSv1_3)
    assert version == "TLSv1.3" and header[4:8] == b"\x00\x00\x00\x01", "ApiVersions answered over TLS 1.3"
    with pytest.raises(ssl.SSLError):
        raw_tls_handshake(port, certs, ssl.TLSVersion.TLSv1_2)
    broker.stop()

    # The key and chain inline, for this listener only (listener.name.<name>.ssl.*), over TLS 1.2.
    inline = make_inline_broker(tls_broker, certs)
    port = int(inline.listener_bootstrap("SSL").split(":")[1])
    version, header = raw_tls_handshake(port, certs, ssl.TLSVersion.TLSv1_2)
    assert version == "TLSv1.2" and header[4:8] == b"\x00\x00\x00\x01"


def make_inline_broker(tls_broker, certs):
    return tls_broker(overrides={
        "ssl.keystore.location": str(certs / "does-not-exist.pem"),  # the listener's own keys win
        "listener.name.ssl.ssl.keystore.key": (certs / "server.key").read_text(),
        "listener.name.ssl.ssl.keystore.certificate.chain": (certs / "server.pem").read_text(),
    })


@pytest.mark.parametrize("overrides,message", [
    ({"ssl.keystore.location": None}, "ssl.keystore.location"),
    ({"ssl.keystore.location": "/nonexistent/keystore.pem"}, "listener SSL"),
    ({"ssl.keystore.type": "JKS"}, "ssl.keystore.type"),
    ({"ssl.client.auth": "required"}, "ssl.truststore.location"),
    ({"ssl.keystore.location": "ENCRYPTED", "ssl.key.password": "wrong"}, "listener SSL"),
    ({"ssl.principal.mapping.rules": "RULE:^CN=(.*)"}, "ssl.principal.mapping.rules"),
    ({"ssl.cipher.suites": "TLS_NO_SUCH_SUITE"}, "ssl.cipher.suites"),
    ({"listener.name.ssl.ssl.keystore.type": "JKS"}, "listener.name.ssl.ssl.keystore.type=JKS is not supported"),
])
def test_bad_tls_settings_stop_the_start_with_one_line(tls_broker, certs, overrides, message):
    broker = tls_broker(start=False)
    for key, value in overrides.items():
        if value is None:
            broker.overrides.pop(key, None)
        else:
            broker.overrides[key] = str(certs / "server-encrypted-keystore.pem") if value == "ENCRYPTED" else value
    broker.start(wait=False)
    wait_until(lambda: not broker.is_alive(), 20, message="the broker to refuse to start")
    assert broker.proc.returncode != 0
    errors = [line for line in log_lines(broker, message) if "error" in line.lower() or "invalid" in line.lower()]
    assert errors, f"a start-up error naming {message!r}:\n{broker.log_tail()}"


def test_client_certificate_principals_meet_acls(tls_broker, certs):
    """The principal of an mTLS client is its certificate's subject, mapped by ssl.principal.mapping.rules:
    eng's certificates become their CN (lower case), others keep the whole subject (DEFAULT)."""
    broker = tls_broker(overrides={
        "ssl.client.auth": "required", "ssl.truststore.location": str(certs / "ca.pem"),
        "ssl.principal.mapping.rules": "RULE:^CN=([^,]+),OU=eng,.*$/$1/L,DEFAULT",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS",
    })
    alice_topic = ck.create_topic(broker.bootstrap, unique_topic("mtls-alice"))
    bob_topic = ck.create_topic(broker.bootstrap, unique_topic("mtls-bob"))

    def acl(*args, via=None):
        return subprocess.run([OXBOW_BIN, "acl", *args, *(via or ["-b", broker.bootstrap])], capture_output=True,
                              text=True, timeout=30)

    assert acl("add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", alice_topic).returncode == 0
    assert acl("add", "--allow-principal", "User:CN=bob,OU=ops,O=Acme", "--operation", "Write",
               "--topic", bob_topic).returncode == 0

    def delivery(name, topic):
        outcome = []
        p = Producer({**tls_conf(broker, certs, **client_cert(certs, name)), "message.timeout.ms": 10000})
        p.produce(topic, value=name.encode(), on_delivery=lambda err, msg: outcome.append(err))
        p.flush(15)
        return outcome[0]

    assert delivery("alice", alice_topic) is None
    assert delivery("bob", bob_topic) is None
    err = delivery("alice", bob_topic)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    wait_until(lambda: [line for line in log_lines(broker, "authorization denied: User:alice from 127.0.0.1 on "
                                                          "listener SSL") if bob_topic in line],
               10, message="an audit line naming the mapped principal")

    # Oxbow's own tool over mTLS: it gets as far as the authorizer, which refuses alice.
    mtls = ["-b", broker.listener_bootstrap("SSL"), "-X", "security.protocol=SSL",
            "-X", f"ssl.certificate.location={certs / 'alice.pem'}", "-X", f"ssl.key.location={certs / 'alice.key'}"]
    result = acl("list", via=mtls + ["-X", f"ssl.ca.location={certs / 'ca.pem'}"])
    assert result.returncode == 1 and "CLUSTER_AUTHORIZATION_FAILED" in result.stderr, result.stderr
    # Without the CA it does not trust the broker.
    result = acl("list", via=mtls)
    assert result.returncode == 1 and "TLS handshake failed" in result.stderr, result.stderr


def closed_by_peer(sock):
    try:
        return sock.recv(1) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def test_idle_connections_are_closed_even_mid_handshake(tls_broker, certs):
    broker = tls_broker(overrides={"connections.max.idle.ms": "2000"})
    ssl_port = int(broker.listener_bootstrap("SSL").split(":")[1])
    # A client that never starts its TLS handshake.
    silent = socket.create_connection(("127.0.0.1", ssl_port), timeout=0.2)
    # A client that stops in the middle of a request.
    stalled = socket.create_connection(("127.0.0.1", broker.port), timeout=0.2)
    stalled.sendall(struct.pack(">i", 50) + b"\x00\x12\x00")
    # A plaintext client that stops talking after one request.
    quiet = kw.Conn(broker.port)
    quiet.request(API_VERSIONS, 0, 1, b"")
    quiet.sock.settimeout(0.2)
    # A client that keeps asking stays connected meanwhile.
    with kw.Conn(broker.port) as busy:
        deadline = time.monotonic() + 4
        correlation = 1
        while time.monotonic() < deadline:
            busy.request(API_VERSIONS, 0, correlation, b"")
            correlation += 1
            time.sleep(0.2)
        wait_until(lambda: closed_by_peer(silent), 20, interval=0, message="the silent TLS connection closed")
        wait_until(lambda: closed_by_peer(quiet.sock), 20, interval=0, message="the quiet connection closed")
        wait_until(lambda: closed_by_peer(stalled), 20, interval=0, message="the stalled connection closed")
        busy.request(API_VERSIONS, 0, correlation, b"")  # still served
    for sock in (silent, stalled):
        sock.close()
    quiet.close()


def test_cipher_suites_take_kafkas_iana_names(tls_broker, certs):
    broker = tls_broker(overrides={
        "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384"})
    port = int(broker.listener_bootstrap("SSL").split(":")[1])
    for version, expected in ((ssl.TLSVersion.TLSv1_2, "ECDHE-ECDSA-AES128-GCM-SHA256"),
                              (ssl.TLSVersion.TLSv1_3, "TLS_AES_256_GCM_SHA384")):
        context = ssl.create_default_context(cafile=str(certs / "ca.pem"))
        context.minimum_version = context.maximum_version = version
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                assert tls.cipher()[0] == expected


def test_mtls_sessions_resume(tls_broker, certs):
    """A client resuming its TLS 1.2 session on a client-certificate listener (as Java clients do)."""
    broker = tls_broker(overrides={"ssl.client.auth": "required", "ssl.truststore.location": str(certs / "ca.pem")})
    port = int(broker.listener_bootstrap("SSL").split(":")[1])
    context = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(str(certs / "alice.pem"), str(certs / "alice.key"))
    session = None
    for attempt in range(2):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="localhost", session=session) as tls:
                tls.sendall(kw.request_frame(API_VERSIONS, 0, 1, b""))
                assert tls.recv(8)[4:8] == b"\x00\x00\x00\x01", "ApiVersions answered"
                assert tls.session_reused == (attempt == 1)
                session = tls.session


def broker_cpu_seconds(broker):
    fields = open(f"/proc/{broker.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@pytest.mark.serial  # measures the broker's CPU time
def test_a_request_longer_than_the_idle_limit_neither_closes_nor_spins(make_broker):
    """A JoinGroup parked for the initial rebalance delay (3 s) outlives connections.max.idle.ms (200 ms):
    the connection stays, and the broker does not busy-loop re-checking it meanwhile."""
    broker = make_broker({"connections.max.idle.ms": "200", "group.initial.rebalance.delay.ms": "3000"})
    join_v0 = (kw.string("slow-group") + struct.pack(">i", 10000) + kw.string("") + kw.string("consumer")
               + struct.pack(">i", 1) + kw.string("range") + struct.pack(">i", 0))
    cpu_before = broker_cpu_seconds(broker)
    with kw.Conn(broker.port, timeout=20) as conn:
        r = kw.Reader(conn.request(11, 0, 1, join_v0))  # JoinGroup v0
        assert r.int16() == 0, "the join completes after the delay"
    cpu = broker_cpu_seconds(broker) - cpu_before
    assert cpu < 1.0, f"the broker used {cpu:.2f} s of CPU during a 3 s wait"


def test_pkcs12_keystore_and_truststore(tls_broker, certs):
    broker = tls_broker(overrides={
        "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(certs / "server.p12"),
        "ssl.keystore.password": "storepass",
        "ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(certs / "truststore.p12"),
        "ssl.truststore.password": "trustpass", "ssl.client.auth": "required",
    })
    topic = ck.create_topic(broker.bootstrap, unique_topic("p12"))
    alice = tls_conf(broker, certs, **client_cert(certs, "alice"))
    produce(alice, topic, [(b"k", b"over a PKCS12 keystore")])
    assert consume(alice, topic, 1) == [(b"k", b"over a PKCS12 keystore")]
    assert_refused(tls_conf(broker, certs, **client_cert(certs, "mallory")), "with an untrusted certificate")
    broker.stop()
    broker.overrides["ssl.keystore.password"] = "wrong"
    broker.start(wait=False)
    wait_until(lambda: not broker.is_alive(), 20, message="the broker to refuse a wrong keystore password")
    assert log_lines(broker, "not a PKCS12 store, or the password is wrong")
