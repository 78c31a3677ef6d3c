"""Client faults: what real networks and clients do to a broker, against the real broker.

Consumers killed with -9 while large fetch responses are on their way (PLAINTEXT, where they go out
with sendfile(2), SSL and SASL_SSL), connections reset (SO_LINGER 0, then close) in the middle of a
request and of a response for each kind of exchange, half-closed sockets, readers that stop
reading, clients that leave while a long poll or a join is waiting, and the admin HTTP listener cut
off mid-scrape. One broker serves the whole module; after every case it must still be alive and
answer a new client, and a producer with acks=all running beside all of it loses nothing.

Timing is random (seeded per run, the seed is printed on failure) and each case is bounded in
count; the number of faults injected is reported at the end of the run.
"""

import os
import random
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time

import pytest
from confluent_kafka import Producer

import ck_helpers as ck
import kafka_wire as kw
from harness import OXBOW_BIN, Broker, FAULTS, metric_value, scrape_metrics, unique_topic, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
KCAT = shutil.which("kcat") or shutil.which("kafkacat")
PY = sys.executable
SEED = int(os.environ.get("OXBOW_FAULT_SEED", time.time_ns() % 1_000_000))
rng = random.Random(SEED)
# One broker and one guard see every case in turn: under pytest-xdist the module runs in one worker.
pytestmark = pytest.mark.xdist_group("client_faults")

PRODUCE, FETCH, METADATA, JOIN_GROUP, SYNC_GROUP, SASL_HANDSHAKE, SASL_AUTHENTICATE = 0, 1, 3, 11, 14, 17, 36
USER, PASSWORD = "alice", "alice-secret"
JAAS = f'org.apache.kafka.common.security.plain.PlainLoginModule required user_{USER}="{PASSWORD}";'
RECORD_BYTES = 100 * 1024
BIG_RECORDS = 200
IDLE_MS = 4000


# ---------------------------------------------------------------------------------------------
# The broker, the topics and the guard.


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("certs")
    subprocess.run([os.path.join(HERE, "gen_test_certs.sh"), str(directory)], check=True, timeout=60)
    return directory


@pytest.fixture(scope="module")
def broker(tmp_path_factory, certs):
    b = Broker(tmp_path_factory.mktemp("faults"), {
        "ssl.keystore.location": str(certs / "server-keystore.pem"),
        "listener.name.sasl_ssl.plain.sasl.jaas.config": JAAS,
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "group.initial.rebalance.delay.ms": "0",
        "connections.max.idle.ms": str(IDLE_MS),
    }, extra_listeners=("SSL", "SASL_SSL", "SASL_PLAINTEXT"))
    b.start()
    yield b
    code = b.stop(check=False)
    assert code == 0, f"broker exited with {code} after SIGTERM\n{b.log_tail()}"


@pytest.fixture(scope="module")
def big_topic(broker):
    """BIG_RECORDS records of RECORD_BYTES each in one partition: every fetch answer is large."""
    topic = ck.create_topic(broker.bootstrap, unique_topic("faults-big"))
    value = os.urandom(RECORD_BYTES)
    ck.produce_all(ck.producer(broker.bootstrap, linger_ms=20),
                   [{"value": value, "key": str(i).encode()} for i in range(BIG_RECORDS)], topic, partition=0)
    return topic


class Guard:
    """A producer with acks=all beside the faults, and a new client after each case."""

    def __init__(self, broker):
        self.broker = broker
        self.topic = ck.create_topic(broker.bootstrap, unique_topic("faults-guard"))
        self.acked = []
        self.proc = subprocess.Popen([PY, os.path.join(HERE, "acked_producer.py"), broker.bootstrap, self.topic, "500"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "ready"
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.acked.append(int(line))

    def check(self, case):
        """The broker is alive, a new client is answered, and the producer is still being acked."""
        if not self.broker.is_alive():
            self.broker.fail(f"broker died during {case} (exit code {self.broker.proc.returncode}, seed {SEED})")
        with kw.Conn(self.broker.port) as c:
            c.send(metadata_frame(99))
            assert struct.unpack_from(">i", c.recv_frame())[0] == 99, f"metadata after {case}"
        before = len(self.acked)
        wait_until(lambda: len(self.acked) > before, 30, message=f"acks for the guard producer after {case}")

    def finish(self):
        self.proc.kill()
        self.proc.wait()
        self.reader.join(10)
        acked = set(self.acked)
        assert acked, "the guard producer was never acknowledged"
        msgs = ck.consume_partition(self.broker.bootstrap, self.topic, expected=len(acked), timeout=60)
        stored = {int(m.value()) for m in msgs}
        lost = acked - stored
        assert not lost, f"{len(lost)} acknowledged records lost, e.g. {sorted(lost)[:10]}"


@pytest.fixture(scope="module")
def guard(broker):
    g = Guard(broker)
    yield g
    g.finish()


def fault(kind, n=1):
    FAULTS[kind] += n


# ---------------------------------------------------------------------------------------------
# Raw requests.


def metadata_frame(correlation_id, topics=()):
    body = struct.pack(">i", len(topics)) + b"".join(kw.string(t) for t in topics)
    return kw.request_frame(METADATA, 1, correlation_id, body)


def fetch_frame(correlation_id, topic, offset=0, max_wait_ms=0, min_bytes=0, max_bytes=64 << 20):
    """Fetch v4 of partition 0 from `offset`."""
    body = struct.pack(">iiiib", -1, max_wait_ms, min_bytes, max_bytes, 0)
    body += struct.pack(">i", 1) + kw.string(topic) + struct.pack(">i", 1) + struct.pack(">iqi", 0, offset, max_bytes)
    return kw.request_frame(FETCH, 4, correlation_id, body)


def produce_frame(correlation_id, topic, values):
    batch = kw.build_record_batch([(None, v, ()) for v in values])
    return kw.request_frame(PRODUCE, 3, correlation_id, kw.produce_body(topic, 0, batch, 3))


def join_body(group, member_id="", session_ms=6000, rebalance_ms=5000):
    """JoinGroup v2 (no member id round trip) with one "range" protocol."""
    body = kw.string(group) + struct.pack(">ii", session_ms, rebalance_ms) + kw.string(member_id)
    return body + kw.string("consumer") + struct.pack(">i", 1) + kw.string("range") + struct.pack(">i", 0)


def join_frame(correlation_id, group, member_id=""):
    return kw.request_frame(JOIN_GROUP, 2, correlation_id, join_body(group, member_id))


def parse_join(body):
    r = kw.Reader(body)
    r.int32()  # throttle
    error, generation = r.int16(), r.int32()
    r.string()  # protocol
    leader, member = r.string(), r.string()
    return error, generation, leader, member


def sync_frame(correlation_id, group, generation, member_id):
    body = kw.string(group) + struct.pack(">i", generation) + kw.string(member_id)
    body += struct.pack(">i", 1) + kw.string(member_id) + struct.pack(">i", 0)
    return kw.request_frame(SYNC_GROUP, 1, correlation_id, body)


def sasl_handshake_frame(correlation_id):
    return kw.request_frame(SASL_HANDSHAKE, 1, correlation_id, kw.string("PLAIN"))


def sasl_authenticate_frame(correlation_id, password=PASSWORD):
    token = f"\0{USER}\0{password}".encode()
    return kw.request_frame(SASL_AUTHENTICATE, 1, correlation_id, struct.pack(">i", len(token)) + token)


def reset(sock):
    """Closes with SO_LINGER 0: the peer sees a RST, not a FIN."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


def connect(port, rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    return s


def recv_some(sock, limit):
    """Reads up to `limit` bytes of whatever arrives: waits for the answer to begin, then stops at
    the first pause."""
    got = b""
    sock.settimeout(2)
    try:
        while len(got) < limit:
            chunk = sock.recv(min(65536, limit - len(got)))
            if not chunk:
                break
            got += chunk
            sock.settimeout(0.05)
    except (socket.timeout, ConnectionError):
        pass
    return got


def send_prelude(sock, frames):
    """Each frame sent whole and its answer read."""
    for frame in frames:
        sock.sendall(frame)
        (size,) = struct.unpack(">i", recv_exact(sock, 4))
        recv_exact(sock, size)


def recv_exact(sock, n):
    got = b""
    while len(got) < n:
        chunk = sock.recv(n - len(got))
        assert chunk, f"connection closed after {len(got)} of {n} bytes"
        got += chunk
    return got


def reset_mid_request(port, frame, prelude=()):
    """Sends the prelude frames whole (answers read), then a random strict prefix of `frame`, then RST."""
    s = connect(port)
    send_prelude(s, prelude)
    s.sendall(frame[:rng.randrange(1, len(frame))])
    if rng.random() < 0.5:
        time.sleep(rng.uniform(0, 0.05))
    reset(s)
    fault("reset mid-request")


def reset_mid_response(port, frame, prelude=(), max_read=None):
    """Sends `frame` whole, reads a random part of the answer (maybe none of it), then RST."""
    s = connect(port, rcvbuf=rng.choice([None, 4096]))
    send_prelude(s, prelude)
    s.sendall(frame)
    want = rng.randrange(0, max_read or 64)
    if want:
        recv_some(s, want)
    elif rng.random() < 0.5:
        time.sleep(rng.uniform(0, 0.05))
    reset(s)
    fault("reset mid-response")


def broker_side_open(broker_port, client_port):
    """Whether the broker still holds its end of the connection from client_port open."""
    out = subprocess.run(["ss", "-Htn", "state", "established", f"( sport = :{broker_port} and dport = :{client_port} )"],
                         capture_output=True, text=True, check=True).stdout
    return bool(out.strip())


# ---------------------------------------------------------------------------------------------
# 1. Consumers killed with -9 while large fetch answers are on their way.


def kcat_security(broker, certs, listener):
    args = ["-b", broker.listener_bootstrap(listener) if listener != "PLAINTEXT" else broker.bootstrap]
    if listener in ("SSL", "SASL_SSL"):
        args += ["-X", f"security.protocol={listener}", "-X", f"ssl.ca.location={certs / 'ca.pem'}"]
    if listener == "SASL_SSL":
        args += ["-X", "sasl.mechanisms=PLAIN", "-X", f"sasl.username={USER}", "-X", f"sasl.password={PASSWORD}"]
    return args


@pytest.mark.parametrize("listener", ["PLAINTEXT", "SSL", "SASL_SSL"])
def test_consumers_killed_mid_fetch(broker, big_topic, guard, certs, listener):
    for _ in range(8):
        # A slow reader makes the broker block in the middle of a large answer when the kill comes.
        kcat = subprocess.Popen([KCAT, "-C", *kcat_security(broker, certs, listener), "-t", big_topic, "-p", "0",
                                 "-o", "beginning", "-e", "-q", "-f", "%o\n",
                                 "-X", "fetch.message.max.bytes=16777216", "-X", "fetch.max.bytes=33554432",
                                 "-X", "socket.receive.buffer.bytes=" + rng.choice(["4096", "0"])],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.05, 0.6))
        kcat.kill()
        kcat.wait()
        fault("consumer killed -9")
        guard.check(f"kill -9 of a kcat consumer on {listener}")


def test_raw_readers_reset_mid_fetch(broker, big_topic, guard):
    for _ in range(20):
        reset_mid_response(broker.port, fetch_frame(1, big_topic, offset=rng.randrange(0, BIG_RECORDS)),
                           max_read=8 << 20)
    for _ in range(10):
        reset_mid_request(broker.port, fetch_frame(1, big_topic))
    guard.check("resets of fetches")


# ---------------------------------------------------------------------------------------------
# 2. Resets mid-request and mid-response, exchange by exchange.


def test_resets_around_produce_and_metadata(broker, guard):
    topic = ck.create_topic(broker.bootstrap, unique_topic("faults-produce"))
    for _ in range(20):
        frame = produce_frame(1, topic, [os.urandom(rng.randrange(1, 20000)) for _ in range(rng.randrange(1, 20))])
        reset_mid_request(broker.port, frame)
        reset_mid_response(broker.port, frame)
        reset_mid_request(broker.port, metadata_frame(2, [topic]))
        reset_mid_response(broker.port, metadata_frame(2, [topic]))
    guard.check("resets around produce and metadata")
    # Whole produce requests that were answered or not are each in the log at most once, whole.
    msgs = ck.consume_partition(broker.bootstrap, topic, timeout=30)
    assert len(msgs) <= 20 * 20


def test_resets_around_join_and_sync_group(broker, guard):
    for i in range(15):
        # A group each, so that no join waits for a reset member to rejoin.
        group = f"faults-group-{SEED}-{i}"
        reset_mid_request(broker.port, join_frame(1, group + "-a"))
        reset_mid_response(broker.port, join_frame(1, group + "-b"))
        # A member that joined, then reset in the middle of its SyncGroup.
        with kw.Conn(broker.port) as c:
            error, generation, _leader, member = parse_join(c.request(JOIN_GROUP, 2, 3, join_body(group)))
        assert error == 0, f"join of {group}: error {error}"
        reset_mid_request(broker.port, sync_frame(4, group, generation, member))
        reset_mid_response(broker.port, sync_frame(4, group, generation, member))
    guard.check("resets around JoinGroup and SyncGroup")


def test_resets_around_sasl(broker, guard):
    port = broker.extra_listeners["SASL_PLAINTEXT"]
    for _ in range(15):
        reset_mid_request(port, sasl_handshake_frame(1))
        reset_mid_response(port, sasl_handshake_frame(1))
        reset_mid_request(port, sasl_authenticate_frame(2), prelude=[sasl_handshake_frame(1)])
        reset_mid_response(port, sasl_authenticate_frame(2), prelude=[sasl_handshake_frame(1)])
        reset_mid_response(port, sasl_authenticate_frame(2, "wrong"), prelude=[sasl_handshake_frame(1)])
    guard.check("resets around the SASL handshake")
    # The listener still authenticates.
    with kw.Conn(port) as c:
        c.send(sasl_handshake_frame(1))
        c.recv_frame()
        c.send(sasl_authenticate_frame(2))
        assert kw.Reader(c.recv_frame()[4:]).int16() == 0


def client_hello(certs):
    ctx = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


@pytest.mark.parametrize("listener", ["SSL", "SASL_SSL"])
def test_resets_during_tls_handshakes(broker, guard, certs, listener):
    port = broker.extra_listeners[listener]
    for _ in range(20):
        hello = client_hello(certs)
        reset_mid_request(port, hello)
        reset_mid_response(port, hello, max_read=4096)
        # Hung up politely in the middle of the handshake.
        s = connect(port)
        s.sendall(hello[:rng.randrange(1, len(hello))])
        s.close()
        fault("close mid-handshake")
    guard.check(f"resets during {listener} handshakes")
    ctx = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            assert tls.version() is not None


# ---------------------------------------------------------------------------------------------
# 3. Half-closed sockets, and readers that stop reading.


def test_half_closed_sockets_with_a_request_outstanding(broker, big_topic, guard):
    for i in range(20):
        s = connect(broker.port)
        frame = rng.choice([metadata_frame(1), fetch_frame(1, big_topic, max_wait_ms=200, min_bytes=1),
                            fetch_frame(1, big_topic, offset=BIG_RECORDS, max_wait_ms=300, min_bytes=1)])
        s.sendall(frame)
        s.shutdown(socket.SHUT_WR)
        fault("half-close with a request outstanding")
        # The broker ends its side too (after or instead of the answer): the read comes to an end.
        s.settimeout(30)
        try:
            while s.recv(1 << 20):
                pass
        except ConnectionResetError:
            pass
        s.close()
    guard.check("half-closed sockets")


def test_a_reader_that_stops_is_closed_when_idle(broker, big_topic, guard):
    s = connect(broker.port, rcvbuf=4096)
    for i in range(4):
        s.sendall(fetch_frame(i, big_topic, max_bytes=32 << 20))
    client_port = s.getsockname()[1]
    fault("stalled reader")
    # While its answers back up, other clients are served.
    for i in range(5):
        with kw.Conn(broker.port) as c:
            c.send(fetch_frame(7, big_topic, max_bytes=1 << 20))
            assert struct.unpack_from(">i", c.recv_frame())[0] == 7
    guard.check("a stalled reader")
    # Once nothing has moved for connections.max.idle.ms the broker lets it go.
    wait_until(lambda: not broker_side_open(broker.port, client_port), IDLE_MS / 1000 * 4,
               message="the broker to close a connection whose reader stopped")
    s.close()


# ---------------------------------------------------------------------------------------------
# 4. Clients that leave while their request waits.


def test_disconnect_during_long_poll_fetch(broker, guard):
    topic = ck.create_topic(broker.bootstrap, unique_topic("faults-poll"))
    p = ck.producer(broker.bootstrap, linger_ms=0)
    for i in range(20):
        s = connect(broker.port)
        s.sendall(fetch_frame(1, topic, offset=i, max_wait_ms=3000, min_bytes=1))
        time.sleep(rng.uniform(0, 0.2))
        (reset if rng.random() < 0.5 else socket.socket.close)(s)
        fault("disconnect during long poll")
        if rng.random() < 0.7:
            # Data arriving while the broker still holds the parked fetch of a gone client.
            ck.produce_all(p, [{"value": str(i).encode()}], topic, partition=0)
    guard.check("disconnects during long-poll fetches")


def test_disconnect_during_a_waiting_join(broker, guard):
    for i in range(10):
        group = f"faults-rejoin-{SEED}-{i}"
        a = kw.Conn(broker.port, timeout=20)
        error, generation, _leader, member_a = parse_join(a.request(JOIN_GROUP, 2, 1, join_body(group)))
        assert error == 0
        # B's join starts a rebalance and waits for A to rejoin; B then vanishes.
        b = connect(broker.port)
        b.sendall(join_frame(1, group))
        time.sleep(rng.uniform(0, 0.2))
        reset(b)
        fault("disconnect during a waiting join")
        # A's rejoin is answered, as the broker goes on without B's socket.
        error, _gen, _leader, _member = parse_join(a.request(JOIN_GROUP, 2, 2, join_body(group, member_a)))
        assert error == 0, f"rejoin of {member_a} in {group}: error {error}"
        a.close()
    guard.check("disconnects during waiting joins")


# ---------------------------------------------------------------------------------------------
# 5. The admin HTTP listener.


def test_scrapes_cut_off_mid_response(broker, guard):
    # Enough partitions that /metrics is a sizable answer.
    ck.create_topic(broker.bootstrap, unique_topic("faults-wide"), partitions=200)
    request = f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{broker.admin_port}\r\n\r\n".encode()
    for _ in range(25):
        reset_mid_request(broker.admin_port, request)
        s = connect(broker.admin_port, rcvbuf=4096)
        s.sendall(request)
        recv_some(s, rng.randrange(0, 16384))
        (reset if rng.random() < 0.5 else socket.socket.close)(s)
        fault("scrape cut off")
    guard.check("scrapes cut off")
    assert scrape_metrics(broker)


# ---------------------------------------------------------------------------------------------
# 6. After all of it: nothing leaked.


def test_connections_are_released(broker, guard):
    guard.check("the whole suite")

    def settled():
        open_now = metric_value(scrape_metrics(broker), "oxbow_active_connections")
        # The guard producer and a few librdkafka clients closing down.
        return open_now <= 6

    wait_until(settled, IDLE_MS / 1000 * 4, interval=0.2, message="active connections to fall back after the faults")


# ---------------------------------------------------------------------------------------------
# 7. The client tools: a reader of their output that goes away ends them quietly.


def test_tools_whose_reader_goes_away_end_quietly(broker, big_topic):
    perf = ["perf", "consume", "--topic", big_topic, "--num-records", str(BIG_RECORDS)]
    for args, read in ((["consume", big_topic, "--from-beginning"], rng.randrange(1, 4096)), (perf, 0)):
        tool = subprocess.Popen([OXBOW_BIN, *args, "--bootstrap-server", broker.bootstrap],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if read:
            tool.stdout.read(read)
        tool.stdout.close()  # as `| head -c N` does
        fault("tool reader gone")
        _out, err = tool.communicate(timeout=60)
        assert tool.returncode == 0, f"oxbow {' '.join(args)} exited {tool.returncode}: {err.decode()[-500:]}"
        assert b"error" not in err.lower(), err.decode()[-500:]
