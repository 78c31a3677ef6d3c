"""KIP-848 consumer groups (ConsumerGroupHeartbeat, ConsumerGroupDescribe, OffsetCommit v9 and
OffsetFetch v9) against the real broker, over raw requests: Debian's clients predate the protocol
(librdkafka 2.15's own tests, run against Oxbow, are in tests/COMPATIBILITY.md)."""
import struct
import uuid

import kafka_wire as kw
from ck_helpers import create_topic
from harness import metric_value, scrape_metrics, wait_until

HEARTBEAT, DESCRIBE, OFFSET_COMMIT, OFFSET_FETCH, LIST_GROUPS, JOIN_GROUP = 68, 69, 8, 9, 16, 11
NONE, UNKNOWN_MEMBER_ID, INVALID_REQUEST, GROUP_ID_NOT_FOUND = 0, 25, 42, 69
INCONSISTENT_GROUP_PROTOCOL, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID = 23, 110, 111
UNSUPPORTED_ASSIGNOR, STALE_MEMBER_EPOCH, UNSUPPORTED_VERSION, INVALID_REGEX = 112, 113, 35, 128

# Short sessions so that a test can watch one expire.
FAST = {"group.consumer.session.timeout.ms": "3000", "group.consumer.min.session.timeout.ms": "1000",
        "group.consumer.heartbeat.interval.ms": "500",
        "group.consumer.min.heartbeat.interval.ms": "100"}


def nullable_string(s):
    return b"\x00" if s is None else kw.compact_string(s)


def int32_array(values):
    return kw.uvarint(len(values) + 1) + b"".join(struct.pack(">i", v) for v in values)


def heartbeat(conn, group, member_id, epoch, topics=None, owned=None, rebalance_timeout=-1,
              instance_id=None, regex=None, assignor=None, version=1):
    """One ConsumerGroupHeartbeat: (error, message, member id, epoch, interval, assignment or None),
    the assignment as {topic id: sorted partitions}. `owned` is such a dict, or None."""
    body = kw.compact_string(group) + kw.compact_string(member_id) + struct.pack(">i", epoch)
    body += nullable_string(instance_id) + nullable_string(None)  # rack
    body += struct.pack(">i", rebalance_timeout)
    body += b"\x00" if topics is None else kw.compact_array([kw.compact_string(t) for t in topics])
    if version >= 1:
        body += nullable_string(regex)
    body += nullable_string(assignor)
    if owned is None:
        body += b"\x00"
    else:
        body += kw.compact_array([tid + int32_array(ps) + b"\x00" for tid, ps in owned.items()])
    r = kw.flexible_request(conn, HEARTBEAT, version, 1, body)
    r.int32()  # throttle
    error, message, member, member_epoch, interval = (r.int16(), r.compact_string(),
                                                      r.compact_string(), r.int32(), r.int32())
    assignment = None
    if r.int8() >= 0:
        def topic():
            tid = r.take("16s")
            parts = r.compact_array(r.int32)
            r.skip_tags()
            return tid, sorted(parts)
        assignment = dict(r.compact_array(topic))
        r.skip_tags()
    return error, message, member, member_epoch, interval, assignment


def describe(conn, group):
    """ConsumerGroupDescribe of one group: a dict of the group and its members."""
    r = kw.flexible_request(conn, DESCRIBE, 0, 2, kw.compact_array([kw.compact_string(group)]) + b"\x00")
    r.int32()

    def assignment():
        def topic():
            entry = (r.take("16s"), r.compact_string(), sorted(r.compact_array(r.int32)))
            r.skip_tags()
            return entry
        topics = r.compact_array(topic)
        r.skip_tags()
        return {name: parts for _, name, parts in topics}

    def member():
        m = {"id": r.compact_string(), "instance": r.compact_string(), "rack": r.compact_string(),
             "epoch": r.int32(), "client_id": r.compact_string(), "host": r.compact_string(),
             "topics": r.compact_array(r.compact_string), "regex": r.compact_string()}
        m["assignment"] = assignment()
        m["target"] = assignment()
        r.skip_tags()
        return m

    def group_entry():
        g = {"error": r.int16(), "message": r.compact_string(), "id": r.compact_string(),
             "state": r.compact_string(), "epoch": r.int32(), "assignment_epoch": r.int32(),
             "assignor": r.compact_string()}
        g["members"] = {m["id"]: m for m in r.compact_array(member)}
        r.int32()  # authorized operations
        r.skip_tags()
        return g
    return r.compact_array(group_entry)[0]


def offset_commit_v9(conn, group, member_id, epoch, topic, partition, offset, version=9):
    body = kw.compact_string(group) + struct.pack(">i", epoch) + kw.compact_string(member_id)
    body += b"\x00"  # group instance id
    partition_entry = struct.pack(">iqi", partition, offset, -1) + kw.compact_string("") + b"\x00"
    body += kw.compact_array([kw.compact_string(topic) + kw.compact_array([partition_entry]) + b"\x00"])
    r = kw.flexible_request(conn, OFFSET_COMMIT, version, 3, body)
    r.int32()
    topics = r.compact_array(lambda: (r.compact_string(), r.compact_array(lambda: (r.int32(), r.int16(), r.skip_tags())[1]), r.skip_tags()))
    return topics[0][1][0]


def offset_fetch_v9(conn, group, member_id, epoch, topic, partition):
    """(group error, committed offset) of one partition."""
    wanted = kw.compact_array([kw.compact_string(topic) + int32_array([partition]) + b"\x00"])
    group_entry = kw.compact_string(group) + nullable_string(member_id) + struct.pack(">i", epoch) + wanted + b"\x00"
    r = kw.flexible_request(conn, OFFSET_FETCH, 9, 4, kw.compact_array([group_entry]) + b"\x00")
    r.int32()

    def part():
        entry = (r.int32(), r.int64(), r.int32(), r.compact_string(), r.int16())
        r.skip_tags()
        return entry

    def topic_entry():
        entry = (r.compact_string(), r.compact_array(part))
        r.skip_tags()
        return entry

    def group_out():
        entry = (r.compact_string(), r.compact_array(topic_entry), r.int16())
        r.skip_tags()
        return entry
    _, topics, error = r.compact_array(group_out)[0]
    return error, (topics[0][1][0][1] if topics else None)


def list_groups_v5(conn, types=()):
    body = kw.compact_array([]) + kw.compact_array([kw.compact_string(t) for t in types])
    r = kw.flexible_request(conn, LIST_GROUPS, 5, 5, body)
    r.int32()
    assert r.int16() == 0

    def entry():
        e = (r.compact_string(), r.compact_string(), r.compact_string(), r.compact_string())
        r.skip_tags()
        return e
    return {g[0]: g[1:] for g in r.compact_array(entry)}


def new_member_id():
    return uuid.uuid4().hex[:22]


def partitions_of(assignment):
    return sum(len(p) for p in (assignment or {}).values())


class Member:
    """A member heartbeating as a client does: it reports what it owns, takes what it is given."""

    def __init__(self, conn, group, member_id, epoch, owned):
        self.conn, self.group, self.id, self.epoch, self.owned = conn, group, member_id, epoch, owned

    def beat(self):
        error, _, _, self.epoch, _, assignment = heartbeat(self.conn, self.group, self.id,
                                                           self.epoch, owned=self.owned)
        assert error == NONE
        if assignment is not None:
            self.owned = assignment

    def wait_for_partitions(self, n, timeout, message):
        def owns_n():
            self.beat()
            return partitions_of(self.owned) == n
        wait_until(owns_n, timeout=timeout, interval=0.2, message=message)


def test_a_member_joins_gets_every_partition_and_is_described(broker):
    create_topic(broker.bootstrap, "cp-one", partitions=4)
    member = new_member_id()
    with kw.Conn(broker.port) as c:
        error, message, mid, epoch, interval, assignment = heartbeat(
            c, "cp-g1", member, 0, topics=["cp-one"], owned={}, rebalance_timeout=30000)
        assert (error, message, mid) == (NONE, None, member)
        assert epoch == 1 and interval == 5000  # group.consumer.heartbeat.interval.ms
        assert list(assignment.values()) == [[0, 1, 2, 3]]
        # Nothing changed: a light heartbeat carries no assignment.
        error, _, _, epoch2, _, assignment2 = heartbeat(c, "cp-g1", member, epoch)
        assert (error, epoch2, assignment2) == (NONE, 1, None)
        g = describe(c, "cp-g1")
        assert (g["error"], g["state"], g["epoch"], g["assignment_epoch"], g["assignor"]) == (
            0, "Stable", 1, 1, "uniform")
        m = g["members"][member]
        assert m["topics"] == ["cp-one"] and m["assignment"] == {"cp-one": [0, 1, 2, 3]}
        assert m["target"] == m["assignment"] and m["host"].startswith("/127.0.0.1")
        assert list_groups_v5(c)["cp-g1"] == ("consumer", "Stable", "consumer")
        assert "cp-g1" not in list_groups_v5(c, ["classic"])
        assert "cp-g1" in list_groups_v5(c, ["CONSUMER"])


def test_a_second_member_waits_for_the_first_to_revoke(broker):
    """The coordinator's reconciliation: the first member keeps its epoch and is asked to give up
    half; the second gets them only once the first reports them gone."""
    create_topic(broker.bootstrap, "cp-two", partitions=4)
    a, b = new_member_id(), new_member_id()
    with kw.Conn(broker.port) as c:
        _, _, _, epoch_a, _, assigned_a = heartbeat(c, "cp-g2", a, 0, ["cp-two"], {}, 30000)
        (tid,) = assigned_a
        error, _, _, epoch_b, _, assigned_b = heartbeat(c, "cp-g2", b, 0, ["cp-two"], {}, 30000)
        assert error == NONE and epoch_b == 2
        assert partitions_of(assigned_b) == 0  # all four still belong to a
        assert describe(c, "cp-g2")["state"] == "Reconciling"
        assert metric_value(scrape_metrics(broker), "oxbow_groups", state="Reconciling") == 1
        # a is told to keep two; it stays at its epoch until it has revoked the others.
        error, _, _, e, _, kept = heartbeat(c, "cp-g2", a, epoch_a, owned=assigned_a)
        assert error == NONE and e == epoch_a and partitions_of(kept) == 2
        error, _, _, e, _, _ = heartbeat(c, "cp-g2", a, epoch_a, owned=kept)
        assert (error, e) == (NONE, 2)
        # Released: b gets the other two.
        error, _, _, e, _, assigned_b = heartbeat(c, "cp-g2", b, epoch_b, owned={})
        assert (error, e) == (NONE, 2)
        assert sorted(kept[tid] + assigned_b[tid]) == [0, 1, 2, 3]
        assert describe(c, "cp-g2")["state"] == "Stable"


def test_epoch_and_request_checks_answer_as_kafka(broker):
    create_topic(broker.bootstrap, "cp-three", partitions=1)
    member = new_member_id()
    with kw.Conn(broker.port) as c:
        assert heartbeat(c, "cp-g3", "", 0, ["cp-three"], {}, 30000)[:2] == (
            INVALID_REQUEST, "MemberId can't be empty.")
        assert heartbeat(c, "cp-g3", member, 0, ["cp-three"], {}, -1)[:2] == (
            INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
        assert heartbeat(c, "cp-g3", member, 0, None, {}, 30000)[:2] == (
            INVALID_REQUEST, "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
        assert heartbeat(c, "cp-g3", member, 0, ["cp-three"], None, 30000)[:2] == (
            INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining.")
        assert heartbeat(c, "cp-g3", member, -3)[:2] == (INVALID_REQUEST, "MemberEpoch is invalid.")
        error, message, *_ = heartbeat(c, "cp-g3", member, 0, ["cp-three"], {}, 30000, assignor="sticky")
        assert error == UNSUPPORTED_ASSIGNOR and "uniform, range" in message
        assert heartbeat(c, "cp-g3", member, 0, ["cp-three"], {}, 30000, regex="(")[0] == INVALID_REGEX
        # v0: the coordinator names the member.
        error, _, generated, *_ = heartbeat(c, "cp-g3", "", 0, ["cp-three"], {}, 30000, version=0)
        assert error == NONE and len(generated) == 22
        _, _, _, epoch, _, _ = heartbeat(c, "cp-g3", member, 0, ["cp-three"], {}, 30000)
        error, message, *_ = heartbeat(c, "cp-g3", member, epoch + 1)
        assert error == FENCED_MEMBER_EPOCH and "greater member epoch" in message
        assert heartbeat(c, "cp-g3", new_member_id(), 3)[0] == UNKNOWN_MEMBER_ID
        # Leaving: epoch -1 answers -1, and the member is gone.
        assert heartbeat(c, "cp-g3", member, -1)[:4] == (NONE, None, member, -1)
        assert member not in describe(c, "cp-g3")["members"]
        assert heartbeat(c, "cp-nothing", member, -1)[0] == GROUP_ID_NOT_FOUND


def test_offsets_are_committed_and_fetched_with_the_member_epoch(broker):
    create_topic(broker.bootstrap, "cp-four", partitions=1)
    member = new_member_id()
    with kw.Conn(broker.port) as c:
        _, _, _, epoch, _, _ = heartbeat(c, "cp-g4", member, 0, ["cp-four"], {}, 30000)
        assert offset_commit_v9(c, "cp-g4", member, epoch + 5, "cp-four", 0, 7) == STALE_MEMBER_EPOCH
        assert offset_commit_v9(c, "cp-g4", "stranger", epoch, "cp-four", 0, 7) == UNKNOWN_MEMBER_ID
        assert offset_commit_v9(c, "cp-g4", member, epoch, "cp-four", 0, 7, version=8) == UNSUPPORTED_VERSION
        assert offset_commit_v9(c, "cp-g4", "", -1, "cp-four", 0, 7) == UNKNOWN_MEMBER_ID  # not empty
        assert offset_commit_v9(c, "cp-g4", member, epoch, "cp-four", 0, 42) == NONE
        assert offset_fetch_v9(c, "cp-g4", member, epoch, "cp-four", 0) == (NONE, 42)
        assert offset_fetch_v9(c, "cp-g4", member, epoch + 1, "cp-four", 0)[0] == STALE_MEMBER_EPOCH
        assert offset_fetch_v9(c, "cp-g4", None, -1, "cp-four", 0) == (NONE, 42)  # an admin's fetch
        # Once the group is empty, a commit without membership is taken again.
        heartbeat(c, "cp-g4", member, -1)
        assert offset_commit_v9(c, "cp-g4", "", -1, "cp-four", 0, 50) == NONE


def test_session_timeout_removes_a_member_and_its_partitions_move(make_broker):
    broker = make_broker(FAST)
    create_topic(broker.bootstrap, "cp-five", partitions=2)
    a, b = new_member_id(), new_member_id()
    with kw.Conn(broker.port) as c:
        heartbeat(c, "cp-g5", a, 0, ["cp-five"], {}, 30000)
        _, _, _, epoch_b, interval, _ = heartbeat(c, "cp-g5", b, 0, ["cp-five"], {}, 30000)
        assert interval == 500
        # a never heartbeats again; b keeps heartbeating and ends up with both partitions.
        Member(c, "cp-g5", b, epoch_b, {}).wait_for_partitions(2, 20, "b owns both partitions")
        assert list(describe(c, "cp-g5")["members"]) == [b]


def test_static_member_comes_back_with_its_partitions(broker):
    create_topic(broker.bootstrap, "cp-six", partitions=2)
    first, second, other = new_member_id(), new_member_id(), new_member_id()
    with kw.Conn(broker.port) as c:
        _, _, _, epoch, _, assigned = heartbeat(c, "cp-g6", first, 0, ["cp-six"], {}, 30000, instance_id="i-1")
        assert partitions_of(assigned) == 2
        # While it is in the group, no one else may take its instance id.
        assert heartbeat(c, "cp-g6", other, 0, ["cp-six"], {}, 30000, instance_id="i-1")[0] == UNRELEASED_INSTANCE_ID
        assert heartbeat(c, "cp-g6", first, -2, instance_id="i-1")[:4] == (NONE, None, first, -2)
        error, _, mid, epoch2, _, assigned2 = heartbeat(c, "cp-g6", second, 0, ["cp-six"], {}, 30000, instance_id="i-1")
        assert (error, mid, epoch2, assigned2) == (NONE, second, epoch, assigned)  # no rebalance
        assert list(describe(c, "cp-g6")["members"]) == [second]


def test_regex_subscription_follows_new_topics(broker):
    """As in Kafka, a new regex is resolved apart from the heartbeat that brings it (the literal
    topics come first), and again every 10 s, when it picks up topics created since."""
    create_topic(broker.bootstrap, "cp-rx-a", partitions=1)
    create_topic(broker.bootstrap, "cp-other", partitions=1)
    member = new_member_id()
    with kw.Conn(broker.port) as c:
        _, _, _, epoch, _, owned = heartbeat(c, "cp-g7", member, 0, ["cp-other"], {}, 30000,
                                             regex="cp-rx-.*")
        assert partitions_of(owned) == 1  # cp-other only
        m = Member(c, "cp-g7", member, epoch, owned)
        m.wait_for_partitions(2, 10, "the regex's topic assigned")
        create_topic(broker.bootstrap, "cp-rx-b", partitions=2)
        m.wait_for_partitions(4, 25, "the new matching topic assigned")
        assignment = describe(c, "cp-g7")["members"][member]["assignment"]
        assert set(assignment) == {"cp-other", "cp-rx-a", "cp-rx-b"}, assignment


def test_classic_and_consumer_protocols_keep_to_their_groups(broker):
    create_topic(broker.bootstrap, "cp-eight", partitions=1)
    member = new_member_id()
    with kw.Conn(broker.port) as c:
        heartbeat(c, "cp-g8", member, 0, ["cp-eight"], {}, 30000)
        # A classic JoinGroup to a consumer group in use is refused.
        join = kw.string("cp-g8") + struct.pack(">ii", 10000, 30000) + kw.string("") + kw.string("consumer")
        join += struct.pack(">i", 1) + kw.string("range") + struct.pack(">i", 0)
        r = kw.Reader(c.request(JOIN_GROUP, 1, 3, join))
        assert r.int16() == INCONSISTENT_GROUP_PROTOCOL
        # ConsumerGroupDescribe of a group that is not a consumer group.
        g = describe(c, "cp-unknown")
        assert (g["error"], g["message"]) == (GROUP_ID_NOT_FOUND, "Group cp-unknown not found.")


def test_a_restart_keeps_members_epochs_and_assignments(make_broker):
    """Membership is kept in __consumer_offsets (Kafka's records): after a crash a hand-over in
    progress goes on where it stopped, and after a clean restart the group is as it was."""
    broker = make_broker()
    create_topic(broker.bootstrap, "cp-nine", partitions=2)
    first, second = new_member_id(), new_member_id()
    with kw.Conn(broker.port) as c:
        _, _, _, epoch_a, _, owned_a = heartbeat(c, "cp-g9", first, 0, ["cp-nine"], {}, 30000)
        error, _, _, epoch_b, _, owned_b = heartbeat(c, "cp-g9", second, 0, ["cp-nine"], {}, 30000)
        assert (error, epoch_a, epoch_b, partitions_of(owned_a), partitions_of(owned_b)) == (NONE, 1, 2, 2, 0)
        assert offset_commit_v9(c, "cp-g9", first, epoch_a, "cp-nine", 0, 9) == NONE
    broker.restart(clean=False)
    with kw.Conn(broker.port) as c:
        # The first member, at its old epoch, is asked to give up one partition...
        error, _, _, epoch, _, kept = heartbeat(c, "cp-g9", first, epoch_a, owned=owned_a)
        assert (error, epoch, partitions_of(kept)) == (NONE, 1, 1)
        error, _, _, epoch, _, _ = heartbeat(c, "cp-g9", first, epoch, owned=kept)
        assert (error, epoch) == (NONE, 2)
        # ...which then goes to the second, still at the epoch it had before the crash.
        error, _, _, epoch, _, got = heartbeat(c, "cp-g9", second, epoch_b, owned={})
        assert (error, epoch, partitions_of(got)) == (NONE, 2, 1)
        assert offset_fetch_v9(c, "cp-g9", second, 2, "cp-nine", 0) == (NONE, 9)
        before = describe(c, "cp-g9")
    assert (before["state"], before["epoch"], before["assignment_epoch"]) == ("Stable", 2, 2)
    broker.restart(clean=True)
    with kw.Conn(broker.port) as c:
        after = describe(c, "cp-g9")
        assert (after["state"], after["epoch"]) == ("Stable", 2)
        assert {m: (v["epoch"], v["assignment"]) for m, v in after["members"].items()} == \
            {m: (v["epoch"], v["assignment"]) for m, v in before["members"].items()}
        assert heartbeat(c, "cp-g9", second, 2)[:4:3] == (NONE, 2)


def test_consumer_group_settings_are_checked_at_start(make_broker):
    broker = make_broker({"group.consumer.heartbeat.interval.ms": "50000"}, start=False)
    broker.start(wait=False)
    wait_until(lambda: not broker.is_alive(), 20, message="the broker to refuse to start")
    assert broker.proc.returncode != 0
    assert ("group.consumer.heartbeat.interval.ms (50000) must be between "
            "group.consumer.min.heartbeat.interval.ms (5000) and "
            "group.consumer.max.heartbeat.interval.ms (15000)") in broker.log_text()


def test_cli_describes_a_consumer_protocol_group(broker):
    """`oxbow group describe` (librdkafka 2.0's DescribeGroups sees such a group as Dead) asks
    ConsumerGroupDescribe and shows the members' partitions with the committed offsets."""
    import subprocess
    from harness import OXBOW_BIN
    create_topic(broker.bootstrap, "cp-ten", partitions=2)
    member = new_member_id()
    with kw.Conn(broker.port) as c:
        _, _, _, epoch, _, _ = heartbeat(c, "cp-g10", member, 0, ["cp-ten"], {}, 30000)
        assert offset_commit_v9(c, "cp-g10", member, epoch, "cp-ten", 1, 0) == NONE
        out = subprocess.run([OXBOW_BIN, "group", "describe", "cp-g10", "-b", broker.bootstrap],
                             capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "state Stable, 1 member, assignor uniform (consumer protocol, group epoch 1)" in out.stdout, out.stdout
    rows = [line.split() for line in out.stdout.splitlines() if line.startswith("cp-g10")]
    assert [(r[1], r[2], r[3], r[6]) for r in rows] == [
        ("cp-ten", "0", "-", member), ("cp-ten", "1", "0", member)], out.stdout


def test_heartbeat_needs_read_on_the_group_and_describe_on_its_topics(make_broker):
    """As Kafka: GROUP_AUTHORIZATION_FAILED without READ on the group, TOPIC_AUTHORIZATION_FAILED
    while a subscribed topic may not be described. The raw requests come in as User:ANONYMOUS; alice
    (a super user over SASL) grants the ACLs."""
    import subprocess
    from harness import OXBOW_BIN
    from test_acls import AUTHORIZER, USERS, jaas, sasl_args
    broker = make_broker({"authorizer.class.name": AUTHORIZER, "super.users": "User:alice",
                          "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas(USERS)}, start=False)
    broker.add_listener("SASL_PLAINTEXT")
    broker.start()

    def acl_add(*args):
        result = subprocess.run([OXBOW_BIN, "acl", "add", "--allow-principal", "User:ANONYMOUS", *args,
                                 *sasl_args(broker, "alice")], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
    result = subprocess.run([OXBOW_BIN, "topic", "create", "cp-acl", *sasl_args(broker, "alice")],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    member = new_member_id()
    with kw.Conn(broker.port) as c:
        join = lambda: heartbeat(c, "cp-acl-g", member, 0, ["cp-acl"], {}, 30000)[:2]  # noqa: E731
        assert join() == (30, None)  # GROUP_AUTHORIZATION_FAILED
        acl_add("--operation", "Read", "--group", "cp-acl-g")
        assert join() == (29, None)  # TOPIC_AUTHORIZATION_FAILED
        acl_add("--operation", "Describe", "--topic", "cp-acl")
        assert join()[0] == NONE
