"""Client quotas: producer_byte_rate and consumer_byte_rate of users and client ids, set with
AlterClientQuotas (raw, and through `oxbow quota`), listed with DescribeClientQuotas, persisted, and
enforced on real clients, which report the broker's throttle times."""

import struct
import subprocess
import time

from confluent_kafka import Consumer, Producer

import ck_helpers as ck
import kafka_wire as kw
from harness import OXBOW_BIN, metric_value, scrape_metrics, unique_topic

ALTER, DESCRIBE = 49, 48
INVALID_REQUEST = 42
UNSUPPORTED_VERSION = 35
EXACT, DEFAULT, SPECIFIED = 0, 1, 2


def entity_bytes(entity):
    out = struct.pack(">i", len(entity))
    for entity_type, name in entity:
        out += kw.string(entity_type) + kw.string(name)
    return out


def alter_body(entries, validate_only=False):
    """entries: [(entity [(type, name|None)], ops [(key, value, remove)])], AlterClientQuotas v0."""
    out = struct.pack(">i", len(entries))
    for entity, ops in entries:
        out += entity_bytes(entity) + struct.pack(">i", len(ops))
        for key, value, remove in ops:
            out += kw.string(key) + struct.pack(">d?", value, remove)
    return out + struct.pack(">?", validate_only)


def read_entity(r):
    """An entity as a tuple of (type, name) sorted by type, whatever order it came in."""
    return tuple(sorted((r.string(), r.string()) for _ in range(r.int32())))


def request(broker, api_key, body, conn=None):
    """One v0 request, on `conn` if given, else on a connection of its own."""
    if conn is not None:
        return kw.Reader(conn.request(api_key, 0, 1, body))
    with kw.Conn(broker.port) as own:
        return kw.Reader(own.request(api_key, 0, 1, body))


def alter(broker, entries, validate_only=False, conn=None):
    """[(error_code, error_message, entity)] of an AlterClientQuotas v0 request."""
    r = request(broker, ALTER, alter_body(entries, validate_only), conn)
    r.int32()  # throttle
    return [(r.int16(), r.string(), read_entity(r)) for _ in range(r.int32())]


def describe(broker, components, strict=False, conn=None):
    """(error_code, error_message, {entity: {key: value}}) of a DescribeClientQuotas v0 request."""
    body = struct.pack(">i", len(components))
    for entity_type, match_type, match in components:
        body += kw.string(entity_type) + struct.pack(">b", match_type) + kw.string(match)
    body += struct.pack(">?", strict)
    r = request(broker, DESCRIBE, body, conn)
    r.int32()
    error, message = r.int16(), r.string()
    n = r.int32()
    if n < 0:
        return error, message, None
    entries = {}
    for _ in range(n):
        entity = read_entity(r)
        entries[entity] = {r.string(): r.take(">d") for _ in range(r.int32())}
    return error, message, entries


def oxbow_quota(broker, *args):
    return subprocess.run([OXBOW_BIN, "quota", *args, "-b", broker.bootstrap], capture_output=True,
                          text=True, timeout=30)


ALICE = (("user", "alice"),)
ALICE_APP = (("client-id", "app"), ("user", "alice"))
ANY_USER = (("user", None),)
APP = (("client-id", "app"),)


def test_quotas_are_set_listed_by_filter_removed_and_persist(make_broker):
    broker = make_broker()
    results = alter(broker, [
        (ALICE, [("producer_byte_rate", 1048576, False), ("consumer_byte_rate", 2097152, False)]),
        (ALICE_APP, [("producer_byte_rate", 4096, False)]),
        (ANY_USER, [("consumer_byte_rate", 10485760, False)]),
        (APP, [("producer_byte_rate", 8192, False)]),
    ])
    assert [(code, entity) for code, _, entity in results] == [
        (0, ALICE), (0, ALICE_APP), (0, ANY_USER), (0, APP)]

    error, _, everything = describe(broker, [])
    assert error == 0 and len(everything) == 4
    assert everything[ALICE] == {"producer_byte_rate": 1048576.0, "consumer_byte_rate": 2097152.0}
    # Exact: entities naming alice, with other types too unless strict.
    assert set(describe(broker, [("user", EXACT, "alice")])[2]) == {ALICE, ALICE_APP}
    assert set(describe(broker, [("user", EXACT, "alice")], strict=True)[2]) == {ALICE}
    assert set(describe(broker, [("user", DEFAULT, None)])[2]) == {ANY_USER}
    # As Kafka, "any specified" asks only for the entity type, so the default user is listed too.
    assert set(describe(broker, [("user", SPECIFIED, None)], strict=True)[2]) == {ALICE, ANY_USER}
    assert set(describe(broker, [("client-id", SPECIFIED, None)])[2]) == {ALICE_APP, APP}
    assert describe(broker, [("user", EXACT, "nobody")])[2] == {}

    # validate_only changes nothing; removing a key that is not set is no error.
    assert alter(broker, [(APP, [("producer_byte_rate", 1, False)])], validate_only=True)[0][0] == 0
    assert describe(broker, [("client-id", EXACT, "app")], strict=True)[2][APP] == {
        "producer_byte_rate": 8192.0}
    assert alter(broker, [(APP, [("producer_byte_rate", 0, True), ("consumer_byte_rate", 0, True)])])[0][0] == 0
    assert APP not in describe(broker, [])[2]

    broker.restart(clean=False)
    _, _, after = describe(broker, [])
    assert set(after) == {ALICE, ALICE_APP, ANY_USER}
    assert after[ALICE_APP] == {"producer_byte_rate": 4096.0}


def test_invalid_alterations_are_refused_one_entry_at_a_time(make_broker):
    broker = make_broker()
    cases = [
        ((), [("producer_byte_rate", 1024, False)], "Invalid empty client quota entity"),
        ((("group", "g"),), [("producer_byte_rate", 1024, False)], "Unhandled client quota entity type: group"),
        ((("user", ""),), [("producer_byte_rate", 1024, False)], "Empty user not supported"),
        ((("ip", "10.0.0.1"), ("user", "u")), [("producer_byte_rate", 1, False)], "IP entity should not"),
        ((("ip", "10.0.0.1"),), [("producer_byte_rate", 10, False)], "Invalid configuration key producer_byte_rate"),
        ((("ip", "no-such-host.invalid"),), [("connection_creation_rate", 10, False)],
         "no-such-host.invalid is not a valid IP or resolvable host."),
        ((("ip", "10.0.0.2"),), [("connection_creation_rate", 3e9, False)], "too large for an INT."),
        ((("user", "u0"),), [("bytes_per_second", 1024, False)], "Invalid configuration key bytes_per_second"),
        ((("user", "u1"),), [("producer_byte_rate", 0, False)], "Quota producer_byte_rate must be greater than 0"),
        ((("user", "u2"),), [("consumer_byte_rate", 10.5, False)], "consumer_byte_rate cannot be a fractional value."),
        ((("user", "u3"),), [("request_percentage", float("inf"), False)], "must be a finite number"),
        ((("user", "u4"),), [("bogus", 0, True)], "Invalid configuration key bogus"),
    ]
    entries = [(entity, ops) for entity, ops, _ in cases] + [(APP, [("producer_byte_rate", 2048, False)])]
    results = alter(broker, entries)
    assert len(results) == len(entries)
    for (entity, _, needle), (code, message, echoed) in zip(cases, results):
        assert code == INVALID_REQUEST and needle in message, (entity, code, message)
        assert echoed == tuple(sorted(entity))
    # The valid entry of the same request is applied.
    assert results[-1][0] == 0
    assert describe(broker, [])[2] == {APP: {"producer_byte_rate": 2048.0}}
    # The same entity twice: the first is applied, the second refused.
    twice = alter(broker, [(ALICE, [("producer_byte_rate", 1000, False)]),
                           (ALICE, [("producer_byte_rate", 2000, False)])])
    assert twice[0][0] == 0 and twice[1][0] == INVALID_REQUEST
    assert describe(broker, [("user", EXACT, "alice")])[2][ALICE] == {"producer_byte_rate": 1000.0}


def test_describe_filter_errors_and_the_flexible_version(make_broker):
    broker = make_broker()
    assert describe(broker, [("user", EXACT, "a"), ("user", DEFAULT, None)])[:2] == (
        INVALID_REQUEST, "Entity type user cannot appear more than once in the filter.")
    assert describe(broker, [("user", EXACT, None)])[:2] == (
        INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but set match string to null.")
    assert describe(broker, [("user", DEFAULT, "x")])[0] == INVALID_REQUEST
    assert describe(broker, [("user", 7, None)])[:2] == (INVALID_REQUEST, "Unknown match type 7")
    error, _, entries = describe(broker, [("topic", SPECIFIED, None)])
    assert error == UNSUPPORTED_VERSION and entries is None
    assert describe(broker, [("ip", SPECIFIED, None), ("user", SPECIFIED, None)])[0] == INVALID_REQUEST

    alter(broker, [(ALICE, [("consumer_byte_rate", 4096, False)])])
    # DescribeClientQuotas v1: compact encodings and tagged fields (one byte ending the request
    # header, each struct and the body; one opening the response after the correlation id).
    body = (b"\x00" + kw.uvarint(2) + kw.uvarint(5) + b"user" + struct.pack(">b", EXACT) + kw.uvarint(6)
            + b"alice" + b"\x00" + b"\x00" + b"\x00")
    with kw.Conn(broker.port) as conn:
        r = kw.Reader(conn.request(DESCRIBE, 1, 1, body))
    assert r.int8() == 0
    r.int32()
    assert r.int16() == 0
    assert r.take(">b") == 0  # null error message
    assert r.take(">b") == 2  # one entry
    assert r.take(">b") == 2  # one entity part
    assert r.data[r.pos:r.pos + 5] == b"\x05user"


def test_oxbow_quota_cli(make_broker):
    broker = make_broker()
    assert oxbow_quota(broker, "set", "--user", "alice", "--client-id-default",
                       "producer_byte_rate=1024", "consumer_byte_rate=2048").returncode == 0
    assert oxbow_quota(broker, "set", "--client-id", "app", "producer_byte_rate=512").returncode == 0
    assert oxbow_quota(broker, "set", "--ip", "10.1.2.3", "connection_creation_rate=20").returncode == 0
    listing = [line.split() for line in oxbow_quota(broker, "list").stdout.splitlines()]
    assert listing[0] == ["USER", "CLIENT-ID", "IP", "QUOTA", "VALUE"]
    assert ["10.1.2.3", "connection_creation_rate", "20"] in listing
    assert ["alice", "<default>", "consumer_byte_rate", "2048"] in listing
    assert ["alice", "<default>", "producer_byte_rate", "1024"] in listing
    assert ["app", "producer_byte_rate", "512"] in listing
    only_app = [line.split() for line in oxbow_quota(broker, "list", "--client-id", "app").stdout.splitlines()]
    assert only_app[1:] == [["app", "producer_byte_rate", "512"]]

    refused = oxbow_quota(broker, "set", "--user", "alice", "producer_byte_rate=1.5")
    assert refused.returncode == 1
    assert refused.stderr.strip() == "oxbow: error: INVALID_REQUEST: producer_byte_rate cannot be a fractional value."
    assert "not a number" in oxbow_quota(broker, "set", "--user", "a", "producer_byte_rate=lots").stderr
    assert "--user, --client-id or --ip" in oxbow_quota(broker, "set", "producer_byte_rate=1").stderr
    mixed = oxbow_quota(broker, "set", "--ip", "10.1.2.3", "--user", "u", "connection_creation_rate=1")
    assert mixed.returncode == 1 and "IP entity should not be combined" in mixed.stderr

    assert oxbow_quota(broker, "delete", "--client-id", "app", "producer_byte_rate").returncode == 0
    assert "app" not in oxbow_quota(broker, "list").stdout


def test_a_producer_over_its_quota_is_throttled_and_others_are_not(make_broker):
    # Two 1-second samples: the rate is measured over about a second, so the test is short.
    broker = make_broker({"quota.window.num": "2", "quota.window.size.seconds": "1"})
    topic = ck.create_topic(broker.bootstrap, unique_topic("quota-produce"))
    assert oxbow_quota(broker, "set", "--client-id", "slow-producer", "producer_byte_rate=20000").returncode == 0

    def produce(client_id, count):
        throttles = []
        delivered = []
        producer = Producer({"bootstrap.servers": broker.bootstrap, "client.id": client_id, "linger.ms": 20,
                             "throttle_cb": lambda event: throttles.append(event.throttle_time)})
        for i in range(count):
            producer.produce(topic, value=b"x" * 1000, key=str(i).encode(),
                             on_delivery=lambda err, msg: delivered.append(err))
            producer.poll(0)
        assert producer.flush(60) == 0
        producer.poll(0.5)  # the last responses' throttle events
        return throttles, delivered

    throttles, delivered = produce("slow-producer", 100)
    assert delivered == [None] * 100  # throttled, and nothing lost
    assert any(t > 0 for t in throttles), throttles
    others, delivered = produce("free-producer", 100)
    assert delivered == [None] * 100
    assert all(t == 0 for t in others), others
    assert ck.watermarks(broker.bootstrap, topic) == (0, 200)
    samples = scrape_metrics(broker)
    # Every throttled response the client reported, and maybe a last one it had not yet.
    assert metric_value(samples, "oxbow_quota_throttled_total", api="Produce") >= len([t for t in throttles if t > 0])
    assert metric_value(samples, "oxbow_quota_throttle_seconds_total", api="Produce") > 0


def test_a_consumer_over_its_quota_is_throttled_and_still_reads_everything(make_broker):
    broker = make_broker({"quota.window.num": "2", "quota.window.size.seconds": "1"})
    topic = ck.create_topic(broker.bootstrap, unique_topic("quota-fetch"))
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(150):
        producer.produce(topic, value=b"y" * 1000, key=str(i).encode())
    assert producer.flush(30) == 0
    assert oxbow_quota(broker, "set", "--user", "ANONYMOUS", "consumer_byte_rate=40000").returncode == 0

    throttles = []
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": unique_topic("g"),
                         "auto.offset.reset": "earliest", "client.id": "slow-consumer",
                         "throttle_cb": lambda event: throttles.append(event.throttle_time)})
    consumer.subscribe([topic])
    keys = set()
    deadline = time.monotonic() + 60
    while len(keys) < 150 and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            keys.add(int(msg.key()))
    consumer.close()
    assert keys == set(range(150))
    assert any(t > 0 for t in throttles), throttles


def test_a_throttled_connection_is_muted_for_the_throttle_time(make_broker):
    broker = make_broker({"quota.window.num": "2", "quota.window.size.seconds": "1"})
    topic = ck.create_topic(broker.bootstrap, unique_topic("quota-mute"))
    assert alter(broker, [((("client-id", "oxbow-it"),), [("producer_byte_rate", 1000, False)])])[0][0] == 0
    batch = kw.build_record_batch([(None, b"z" * 5000, [])])
    with kw.Conn(broker.port) as conn:
        partitions, throttle_ms = kw.parse_produce_v8_response(
            conn.request(0, 8, 1, kw.produce_v8_body(topic, 0, batch, acks=1)))
        assert partitions[0]["error"] == 0
        assert throttle_ms > 0
        # The answer came at once; the next request waits the throttle time out.
        started = time.monotonic()
        conn.request(18, 0, 2, b"")
        assert time.monotonic() - started >= throttle_ms / 1000 * 0.9


def test_request_percentage_throttles_in_each_responses_own_throttle_field(make_broker):
    broker = make_broker({"quota.window.num": "2", "quota.window.size.seconds": "1"})
    topic = ck.create_topic(broker.bootstrap, unique_topic("quota-requests"))
    # A thousandth of a percent of a thread: any request is over it.
    assert alter(broker, [((("client-id", "oxbow-it"),), [("request_percentage", 0.001, False)])])[0][0] == 0
    assert describe(broker, [("client-id", EXACT, "oxbow-it")])[2] == {
        (("client-id", "oxbow-it"),): {"request_percentage": 0.001}}
    with kw.Conn(broker.port) as conn:
        # Metadata v3 has throttle_time_ms first: it is over quota, and the throttle is at most one
        # sample window (1 s), as Kafka caps request-time throttles.
        r = kw.Reader(conn.request(3, 3, 1, struct.pack(">i", -1)))
        first = r.int32()
        assert 0 < first <= 1000
        assert r.int32() == 1  # one broker follows, parsed from the right place
        # Produce v8 has it last, after the partitions, which still parse.
        batch = kw.build_record_batch([(None, b"v", [])])
        started = time.monotonic()
        partitions, throttle = kw.parse_produce_v8_response(
            conn.request(0, 8, 2, kw.produce_v8_body(topic, 0, batch, acks=1)))
        assert time.monotonic() - started >= first / 1000 * 0.9  # it waited out the first throttle
        assert partitions[0]["error"] == 0 and partitions[0]["base_offset"] == 0
        assert 0 < throttle <= 1000
    # Another client id is not covered.
    with kw.Conn(broker.port) as conn:
        for correlation_id in (1, 2):
            conn.send(kw.request_frame(3, 3, correlation_id, struct.pack(">i", -1), client_id="free"))
            r = kw.Reader(conn.recv_frame())
            assert r.int32() == correlation_id
            assert r.int32() == 0  # throttle_time_ms
    samples = scrape_metrics(broker)
    assert metric_value(samples, "oxbow_quota_throttled_total", api="Metadata") >= 1
    assert metric_value(samples, "oxbow_quota_throttled_total", api="Produce") >= 1


def create_topics_v2(conn, correlation_id, name, partitions):
    """CreateTopics v2 (permissive for controller_mutation_rate): (error_code, throttle_ms)."""
    body = (struct.pack(">i", 1) + kw.string(name) + struct.pack(">ih", partitions, -1) + struct.pack(">ii", 0, 0)
            + struct.pack(">i", 10000) + b"\x00")
    r = kw.Reader(conn.request(19, 2, correlation_id, body))
    throttle = r.int32()
    assert r.int32() == 1 and r.string() == name
    return r.int16(), throttle


def delete_topics_v5(conn, correlation_id, name):
    """DeleteTopics v5 (flexible; strict for controller_mutation_rate): (error_code, throttle_ms)."""
    body = (b"\x00" + kw.uvarint(2) + kw.uvarint(len(name) + 1) + name.encode() + struct.pack(">i", 10000)
            + b"\x00")
    r = kw.Reader(conn.request(20, 5, correlation_id, body))
    assert r.int8() == 0  # the response header's tagged fields
    throttle = r.int32()
    assert r.take(">b") == 2  # one result
    assert r.data[r.pos:r.pos + 1 + len(name)] == kw.uvarint(len(name) + 1) + name.encode()
    r.pos += 1 + len(name)
    return r.int16(), throttle


THROTTLING_QUOTA_EXCEEDED = 89


def test_controller_mutation_rate_throttles_old_versions_and_refuses_new_ones(make_broker):
    # A burst of 1 partition/s x 2 samples x 1 s = 2 partitions.
    broker = make_broker({"controller.quota.window.num": "2", "controller.quota.window.size.seconds": "1"})
    assert alter(broker, [((("client-id", "oxbow-it"),), [("controller_mutation_rate", 1, False)])])[0][0] == 0
    first, second = unique_topic("mutate"), unique_topic("mutate")
    with kw.Conn(broker.port) as conn:
        # Permissive (CreateTopics v2): five partitions are created, and the bucket is 3 below zero.
        error, throttle = create_topics_v2(conn, 1, first, 5)
        assert error == 0 and 2900 <= throttle <= 3000
    with kw.Conn(broker.port) as conn:
        error, throttle = create_topics_v2(conn, 1, second, 1)
        assert error == 0 and throttle > 3000
    with kw.Conn(broker.port) as conn:
        # Strict (DeleteTopics v5): below zero, the deletion is refused, with the time to wait.
        error, throttle = delete_topics_v5(conn, 1, first)
        assert error == THROTTLING_QUOTA_EXCEEDED and throttle > 0
    assert len(ck.topic_metadata(broker.bootstrap, first).partitions) == 5  # still there
    # A topic that Metadata creates is charged too, permissively: served, and throttled.
    third = unique_topic("mutate")
    with kw.Conn(broker.port) as conn:
        r = kw.Reader(conn.request(3, 3, 1, struct.pack(">i", 1) + kw.string(third)))
        assert r.int32() > 0
    assert len(ck.topic_metadata(broker.bootstrap, third).partitions) == 1
    # Another client id has no quota: it deletes at once.
    admin = ck.admin(broker.bootstrap)
    for future in admin.delete_topics([first, second]).values():
        future.result(10)
