"""ACL authorization (authorizer.class.name=...StandardAuthorizer): Kafka's ACL model on every API.

Each broker keeps the harness's PLAINTEXT listener, where the principal is User:ANONYMOUS and a
super user (the admin channel the tests set ACLs through), and has a SASL_PLAINTEXT listener whose
PLAIN users alice and bob hold only what their ACLs give.  Clients: confluent-kafka (librdkafka
2.0.2), kafka-python's ACL admin API, `oxbow acl`, and raw requests for exact error codes.
"""

import json
import struct
import subprocess
import zlib

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

import ck_helpers as ck
import kafka_wire as kw
from harness import OXBOW_BIN, metric_value, scrape_metrics, unique_topic, wait_until

AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30
CLUSTER_AUTHORIZATION_FAILED = 31
SECURITY_DISABLED = 54
INVALID_TOPIC_EXCEPTION = 17
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53


def jaas(users):
    return ("org.apache.kafka.common.security.plain.PlainLoginModule required "
            + " ".join(f'user_{u}="{p}"' for u, p in users.items()) + ";")


@pytest.fixture
def acl_broker(make_broker):
    def factory(overrides=None):
        merged = {"authorizer.class.name": AUTHORIZER, "super.users": "User:ANONYMOUS",
                  "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas(USERS),
                  "group.initial.rebalance.delay.ms": "0"}
        merged.update(overrides or {})
        b = make_broker(merged, start=False)
        b.add_listener("SASL_PLAINTEXT")
        return b.start()

    return factory


def user_conf(broker, user, **extra):
    conf = {"bootstrap.servers": broker.listener_bootstrap("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": USERS[user]}
    conf.update(extra)
    return conf


def sasl_args(broker, user):
    return ["-b", broker.listener_bootstrap("SASL_PLAINTEXT"), "-X", "security.protocol=SASL_PLAINTEXT",
            "-X", "sasl.mechanism=PLAIN", "-X", f"sasl.username={user}", "-X", f"sasl.password={USERS[user]}"]


def oxbow_acl(broker, *args, check=True, via=None):
    connection = via or ["-b", broker.bootstrap]
    result = subprocess.run([OXBOW_BIN, "acl", *args, *connection], capture_output=True, text=True, timeout=30)
    if check:
        assert result.returncode == 0, f"oxbow acl {' '.join(args)} failed: {result.stderr}"
    return result


def produce_one(conf, topic, value=b"v", **extra):
    """Produces one record; returns the delivery error (None on success)."""
    outcome = []
    p = Producer({**conf, "message.timeout.ms": 10000, "enable.idempotence": False, "acks": "all", **extra})
    p.produce(topic, value=value, on_delivery=lambda err, msg: outcome.append(err))
    p.flush(15)
    assert outcome, "no delivery report"
    return outcome[0]


def fetch_error(conf, topic):
    """Assigns partition 0 of topic and returns the first consumer error (or the first record).

    librdkafka still looks up the coordinator of its group.id, which the user may not describe:
    that error is not what the caller asks about."""
    c = Consumer({**conf, "group.id": "unused", "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(topic, 0, 0)])
    try:
        def first():
            m = c.poll(0.5)
            if m is not None and m.error() and m.error().code() == KafkaError.GROUP_AUTHORIZATION_FAILED:
                return None
            return m

        return wait_until(first, 20, interval=0, message=f"a record or an error from {topic}")
    finally:
        c.close()


def audit_lines(broker, needle):
    return [line for line in broker.log_text().splitlines()
            if "authorization denied" in line and needle in line and not line.startswith("===== test harness")]


def test_read_on_one_topic_does_not_give_another_or_write(acl_broker):
    broker = acl_broker()
    a, b = unique_topic("acl-a"), unique_topic("acl-b")
    for t in (a, b):
        ck.create_topic(broker.bootstrap, t)
        ck.produce_all(ck.producer(broker.bootstrap), [{"key": b"k", "value": b"seed"}], t)
    oxbow_acl(broker, "add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", a)

    alice = user_conf(broker, "alice")
    m = fetch_error(alice, a)
    assert m.error() is None and m.value() == b"seed"
    err = produce_one(alice, a)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, err
    # READ implies DESCRIBE: alice's metadata shows a, not b, and asking for b is refused.
    topics = Producer(alice).list_topics(timeout=10).topics
    assert a in topics and b not in topics
    md = Producer(alice).list_topics(topic=b, timeout=10).topics[b]
    assert md.error is not None and md.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, md.error
    # Knowing b exists (DESCRIBE) is not reading it.
    oxbow_acl(broker, "add", "--allow-principal", "User:alice", "--operation", "Describe", "--topic", b)
    m = fetch_error(alice, b)
    assert m.error() is not None and m.error().code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, m.error()
    assert ck.watermarks(broker.bootstrap, a) == (0, 1), "the refused produce wrote nothing"
    wait_until(lambda: audit_lines(broker, f"READ on TOPIC '{b}'"), 10, message="an audit line for the denied fetch")
    line = audit_lines(broker, f"READ on TOPIC '{b}'")[0]
    assert "User:alice from 127.0.0.1" in line and "(Fetch v" in line, line
    metrics = scrape_metrics(broker)
    assert metric_value(metrics, "oxbow_authorization_denials_total", api="Fetch") >= 1
    assert metric_value(metrics, "oxbow_authorization_denials_total", api="Produce") >= 1  # her produce to a


def test_group_join_needs_group_read(acl_broker):
    broker = acl_broker()
    topic = ck.create_topic(broker.bootstrap, unique_topic("acl-group"))
    ck.produce_all(ck.producer(broker.bootstrap), [{"key": b"k", "value": b"x"}], topic)
    group = unique_topic("acl-grp")
    oxbow_acl(broker, "add", "--allow-principal", "User:alice", "--consumer", "--topic", topic)

    def subscribe_and_poll():
        c = Consumer({**user_conf(broker, "alice"), "group.id": group, "auto.offset.reset": "earliest",
                      "session.timeout.ms": 6000})
        c.subscribe([topic])
        try:
            return wait_until(lambda: c.poll(0.5), 30, interval=0, message="a record or an error")
        finally:
            c.close()

    m = subscribe_and_poll()
    assert m.error() is not None and m.error().code() == KafkaError.GROUP_AUTHORIZATION_FAILED, m.error()
    wait_until(lambda: audit_lines(broker, f"GROUP '{group}'"), 10, message="an audit line for the group")

    oxbow_acl(broker, "add", "--allow-principal", "User:alice", "--consumer", "--group", group)
    m = subscribe_and_poll()
    assert m.error() is None and m.value() == b"x"


def test_prefixed_acls_and_deny_beats_allow(acl_broker):
    broker = acl_broker()
    mine, other = unique_topic("alice-data"), unique_topic("shared")
    for t in (mine, other):
        ck.create_topic(broker.bootstrap, t)
    oxbow_acl(broker, "add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "alice-",
              "--resource-pattern-type", "prefixed")
    assert produce_one(user_conf(broker, "alice"), mine) is None
    err = produce_one(user_conf(broker, "alice"), other)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    # Everyone may write `other`, except bob: his deny wins over the wildcard allow.
    oxbow_acl(broker, "add", "--allow-principal", "User:*", "--operation", "Write", "--topic", other)
    oxbow_acl(broker, "add", "--deny-principal", "User:bob", "--operation", "Write", "--topic", other)
    assert produce_one(user_conf(broker, "alice"), other) is None
    err = produce_one(user_conf(broker, "bob"), other)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    # A deny through a prefix beats a literal allow too.
    oxbow_acl(broker, "add", "--allow-principal", "User:bob", "--operation", "Write", "--topic", mine)
    assert produce_one(user_conf(broker, "bob"), mine) is None
    oxbow_acl(broker, "add", "--deny-principal", "User:bob", "--operation", "All", "--topic", "alice-",
              "--resource-pattern-type", "prefixed")
    err = produce_one(user_conf(broker, "bob"), mine)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_acls_persist_and_cli_lists_and_removes_them(acl_broker):
    broker = acl_broker()
    topic = ck.create_topic(broker.bootstrap, unique_topic("acl-persist"))
    out = oxbow_acl(broker, "add", "--allow-principal", "User:alice", "--producer", "--topic", topic,
                    "--transactional-id", "alice-txn").stdout
    assert "added 5 ACLs" in out
    listed = oxbow_acl(broker, "list").stdout
    for op in ("WRITE", "DESCRIBE", "CREATE"):
        assert any(topic in line and op in line and "User:alice" in line for line in listed.splitlines()), listed
    assert "TRANSACTIONAL_ID" in listed and "alice-txn" in listed
    broker.stop()
    broker.start()
    assert produce_one(user_conf(broker, "alice"), topic) is None, "ACLs survive a restart"
    assert oxbow_acl(broker, "list", "--topic", topic).stdout.count("User:alice") == 3

    out = oxbow_acl(broker, "remove", "--topic", topic).stdout
    assert "removed 3 ACLs" in out
    assert topic not in oxbow_acl(broker, "list").stdout
    err = produce_one(user_conf(broker, "alice"), topic)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_only_the_cluster_alterer_manages_acls_and_the_cli_speaks_sasl(acl_broker):
    broker = acl_broker()
    result = oxbow_acl(broker, "add", "--allow-principal", "User:bob", "--operation", "Read", "--topic", "t",
                       check=False, via=sasl_args(broker, "bob"))
    assert result.returncode == 1 and "CLUSTER_AUTHORIZATION_FAILED" in result.stderr, result.stderr
    oxbow_acl(broker, "add", "--allow-principal", "User:bob", "--operation", "Alter", "--operation", "Describe",
              "--cluster")
    oxbow_acl(broker, "add", "--allow-principal", "User:bob", "--operation", "Read", "--topic", "t",
              via=sasl_args(broker, "bob"))
    assert "User:bob" in oxbow_acl(broker, "list", "--topic", "t", via=sasl_args(broker, "bob")).stdout
    # A wrong password stops the tool with the broker's reason.
    bad = sasl_args(broker, "bob")
    bad[-1] = "sasl.password=wrong"
    result = oxbow_acl(broker, "list", check=False, via=bad)
    assert result.returncode == 1 and "SASL_AUTHENTICATION_FAILED" in result.stderr, result.stderr


def test_kafka_python_manages_acls(acl_broker):
    from kafka import KafkaAdminClient
    from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType,
                             ResourcePattern, ResourcePatternFilter, ResourceType)
    broker = acl_broker()
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=15000)
    acls = [ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                ResourcePattern(ResourceType.TOPIC, "kp-", ACLResourcePatternType.PREFIXED)),
            ACL("User:bob", "10.0.0.1", ACLOperation.WRITE, ACLPermissionType.DENY,
                ResourcePattern(ResourceType.GROUP, "g1", ACLResourcePatternType.LITERAL))]
    created = admin.create_acls(acls)
    assert len(created["succeeded"]) == 2 and not created["failed"], created
    everything = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY,
                           permission_type=ACLPermissionType.ANY,
                           resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))
    found, error = admin.describe_acls(everything)
    assert error.errno == 0
    assert sorted((a.principal, a.resource_pattern.resource_name) for a in found) == [("User:alice", "kp-"),
                                                                                       ("User:bob", "g1")]
    # MATCH finds the prefixed ACL that applies to a concrete topic name.
    match = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
                      resource_pattern=ResourcePatternFilter(ResourceType.TOPIC, "kp-orders",
                                                             ACLResourcePatternType.MATCH))
    found, _ = admin.describe_acls(match)
    assert [a.principal for a in found] == ["User:alice"]
    deleted = admin.delete_acls([ACLFilter(principal="User:bob", host=None, operation=ACLOperation.ANY,
                                           permission_type=ACLPermissionType.ANY,
                                           resource_pattern=ResourcePatternFilter(ResourceType.ANY, None,
                                                                                  ACLResourcePatternType.ANY))])
    assert len(deleted) == 1 and len(deleted[0][1]) == 1 and deleted[0][1][0][0].principal == "User:bob"
    found, _ = admin.describe_acls(everything)
    assert [a.principal for a in found] == ["User:alice"]
    admin.close()


def test_transactional_and_idempotent_producers_need_their_acls(acl_broker):
    broker = acl_broker()
    topic = ck.create_topic(broker.bootstrap, unique_topic("acl-txn"))
    txn_id = unique_topic("alice-tx")

    def init(user):
        p = Producer({**user_conf(broker, user), "transactional.id": txn_id, "transaction.timeout.ms": 10000})
        try:
            p.init_transactions(15)
            return p, None
        except KafkaException as e:
            return p, e.args[0]

    _, err = init("alice")
    assert err is not None and err.code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, err
    oxbow_acl(broker, "add", "--allow-principal", "User:alice", "--producer", "--topic", topic,
              "--transactional-id", txn_id)
    p, err = init("alice")
    assert err is None, err
    p.begin_transaction()
    p.produce(topic, value=b"in-txn")
    p.commit_transaction(15)
    assert ck.watermarks(broker.bootstrap, topic)[1] == 2  # the record and the commit marker

    # bob may write nowhere: his idempotent producer is refused an id.
    # librdkafka raises the fatal error from poll() (or reports it to error_cb).
    errors = []
    p = Producer({**user_conf(broker, "bob"), "enable.idempotence": True, "error_cb": errors.append})

    def refused():
        for action in (lambda: p.poll(0.2), lambda: p.produce(topic, value=b"x")):
            try:
                action()
            except KafkaException as e:
                errors.append(e.args[0])
        return errors

    # The fatal error names its cause (error_cb may get it as _FATAL).
    wait_until(lambda: any("Cluster authorization failed" in e.str() for e in refused()), 20, interval=0,
               message="a cluster authorization error for bob's idempotent producer")


def test_super_users_and_allow_everyone_if_no_acl_found(acl_broker):
    broker = acl_broker({"super.users": "User:ANONYMOUS;User:bob", "allow.everyone.if.no.acl.found": "true"})
    open_topic, guarded = unique_topic("acl-open"), unique_topic("acl-guarded")
    for t in (open_topic, guarded):
        ck.create_topic(broker.bootstrap, t)
    oxbow_acl(broker, "add", "--allow-principal", "User:carol", "--operation", "Write", "--topic", guarded)
    assert produce_one(user_conf(broker, "alice"), open_topic) is None, "no ACL on the topic: everyone may"
    err = produce_one(user_conf(broker, "alice"), guarded)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, "an ACL exists: only carol may"
    assert produce_one(user_conf(broker, "bob"), guarded) is None, "bob is a super user"


def raw_request(port, api_key, version, body):
    with kw.Conn(port) as conn:
        return kw.Reader(conn.request(api_key, version, 1, body))


def test_raw_error_codes(acl_broker, make_broker):
    # Without an authorizer, the ACL APIs answer SECURITY_DISABLED.
    plain = make_broker()
    describe_all = struct.pack(">b", 1) + kw.string(None) + struct.pack(">b", 1) + kw.string(None) + kw.string(None) \
        + struct.pack(">bb", 1, 1)  # DescribeAcls v1: ANY type, null name, ANY pattern, null principal/host, ANY, ANY
    r = raw_request(plain.port, 29, 1, describe_all)
    r.int32()  # throttle
    assert r.int16() == SECURITY_DISABLED
    result = subprocess.run([OXBOW_BIN, "acl", "list", "-b", plain.bootstrap], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 1 and "SECURITY_DISABLED" in result.stderr

    broker = acl_broker({"super.users": ""})  # ANONYMOUS is nobody now
    r = raw_request(broker.port, 29, 1, describe_all)
    r.int32()
    assert r.int16() == CLUSTER_AUTHORIZATION_FAILED
    # CreateTopics v2 of one topic: TOPIC_AUTHORIZATION_FAILED for that topic.
    body = (struct.pack(">i", 1) + kw.string("denied-topic") + struct.pack(">ihi", 1, -1, 0) + struct.pack(">i", 0)
            + struct.pack(">i", 10000) + b"\x00")
    r = raw_request(broker.port, 19, 2, body)
    r.int32()  # throttle
    assert r.int32() == 1 and r.string() == "denied-topic"
    assert r.int16() == TOPIC_AUTHORIZATION_FAILED
    # OffsetFetch v1 of a group: GROUP_AUTHORIZATION_FAILED.
    r = raw_request(broker.port, 9, 3, kw.string("some-group") + struct.pack(">i", -1))
    r.int32()
    assert r.int32() == 0 and r.int16() == GROUP_AUTHORIZATION_FAILED
    # ElectLeaders v1 and the reassignment APIs need ALTER (listing: DESCRIBE) on the cluster. The
    # reassignment APIs are flexible: a tagged-field byte ends the request header, the body and
    # each struct, and opens the response after the correlation id.
    r = raw_request(broker.port, 43, 1, struct.pack(">bii", 0, -1, 10000))
    r.int32()
    assert r.int16() == CLUSTER_AUTHORIZATION_FAILED
    move = (b"\x00" + struct.pack(">i", 10000) + kw.uvarint(2) + kw.uvarint(len("t") + 1) + b"t" + kw.uvarint(2)
            + struct.pack(">i", 0) + kw.uvarint(2) + struct.pack(">i", 0) + b"\x00" + b"\x00" + b"\x00")
    listing = b"\x00" + struct.pack(">i", 10000) + kw.uvarint(0) + b"\x00"
    for api_key, body in ((45, move), (46, listing)):
        r = raw_request(broker.port, api_key, 0, body)
        assert r.int8() == 0  # the response header's tagged fields
        r.int32()  # throttle
        assert r.int16() == CLUSTER_AUTHORIZATION_FAILED, api_key
    # Client quotas: DescribeClientQuotas needs DESCRIBE_CONFIGS on the cluster, AlterClientQuotas
    # ALTER_CONFIGS (each entry refused).
    r = raw_request(broker.port, 48, 0, struct.pack(">i?", 0, False))
    r.int32()
    assert r.int16() == CLUSTER_AUTHORIZATION_FAILED
    r.string()
    assert r.int32() == -1  # no entries
    set_quota = (struct.pack(">ii", 1, 1) + kw.string("user") + kw.string("u") + struct.pack(">i", 1)
                 + kw.string("producer_byte_rate") + struct.pack(">d??", 1024, False, False))
    r = raw_request(broker.port, 49, 0, set_quota)
    r.int32()
    assert r.int32() == 1 and r.int16() == CLUSTER_AUTHORIZATION_FAILED


def test_transactional_batches_need_the_transactional_id_and_internal_topics_are_refused(acl_broker):
    # ANONYMOUS (the plaintext listener) holds only its ACLs; alice, the super user, grants them.
    broker = acl_broker({"super.users": "User:alice"})
    topic = unique_topic("acl-rawtxn")
    oxbow_acl(broker, "add", "--allow-principal", "User:ANONYMOUS", "--operation", "Write", "--operation", "Create",
              "--operation", "Describe", "--topic", topic, via=sasl_args(broker, "alice"))
    oxbow_acl(broker, "add", "--allow-principal", "User:ANONYMOUS", "--operation", "Write", "--operation", "Describe",
              "--topic", "__consumer_offsets", via=sasl_args(broker, "alice"))
    ck.create_topic(broker.bootstrap, topic)

    # A batch flagged transactional, in a request naming no transactional id: refused whole.
    batch = kw.build_record_batch([(b"k", b"v", [])], attributes=0x10)
    with kw.Conn(broker.port) as conn:
        r = conn.request(0, 8, 1, kw.produce_v8_body(topic, 0, batch))
    assert kw.parse_produce_v8_response(r)[0][0]["error"] == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    # A magic 1 message set (Produce v0-v2) has no transactional flag, though its timestamp's bytes
    # sit where magic 2 keeps it: it needs no transactional id, and is taken (converted to a v2 batch).
    value = b"v" * 40  # a set longer than a magic 2 batch header
    body = struct.pack(">bbq", 1, 0, 0x0000019A10000000) + struct.pack(">i", 1) + b"k" + struct.pack(">i", 40) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    legacy = struct.pack(">qi", 0, len(message)) + message
    assert legacy[22] & 0x10
    with kw.Conn(broker.port) as conn:
        r = conn.request(0, 2, 3, kw.produce_body(topic, 0, legacy, 2))
    assert kw.parse_produce_response(r, 2)[0][0]["error"] == 0
    # Clients never write the coordinators' topics, whatever their ACLs.
    plain = kw.build_record_batch([(b"k", b"v", [])])
    with kw.Conn(broker.port) as conn:
        r = conn.request(0, 8, 2, kw.produce_v8_body("__consumer_offsets", 0, plain))
    assert kw.parse_produce_v8_response(r)[0][0]["error"] == INVALID_TOPIC_EXCEPTION
    assert ck.watermarks(broker.bootstrap, topic) == (0, 1)  # the magic 1 message only


def test_offset_fetch_v1_denial_is_on_each_partition(acl_broker):
    broker = acl_broker({"super.users": ""})
    body = kw.string("some-group") + struct.pack(">i", 1) + kw.string("t") + struct.pack(">iii", 2, 0, 1)
    r = raw_request(broker.port, 9, 1, body)
    assert r.int32() == 1 and r.string() == "t" and r.int32() == 2
    for partition in (0, 1):
        assert r.int32() == partition and r.int64() == -1
        r.string()  # metadata
        assert r.int16() == GROUP_AUTHORIZATION_FAILED


def test_host_acls_match_ipv4_clients_of_a_wildcard_listener(make_broker):
    """A listener bound to every interface sees IPv4 clients as ::ffff:a.b.c.d; ACLs name a.b.c.d."""
    broker = make_broker(start=False)
    broker.overrides.update({
        "listeners": f"PLAINTEXT://:{broker.port}", "advertised.listeners": f"PLAINTEXT://127.0.0.1:{broker.port}",
        "authorizer.class.name": AUTHORIZER,
    })
    broker.data_dir.mkdir(parents=True, exist_ok=True)
    acl = {"resource_type": "CLUSTER", "resource_name": "kafka-cluster", "pattern_type": "LITERAL",
           "principal": "User:ANONYMOUS", "host": "127.0.0.1", "permission": "ALLOW"}
    acls = [dict(acl, operation=op) for op in ("CREATE", "DESCRIBE")]
    acls.append(dict(acl, resource_type="TOPIC", resource_name="*", operation="DESCRIBE"))
    (broker.data_dir / "oxbow-acls.json").write_text(json.dumps({"version": 1, "acls": acls}))
    broker.start()
    ck.create_topic(broker.bootstrap, unique_topic("acl-host"))  # CREATE, then DESCRIBE in metadata
    assert not audit_lines(broker, "::ffff:")
