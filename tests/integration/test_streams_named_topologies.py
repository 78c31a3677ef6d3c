"""Named topologies against the real broker: two topologies in one KafkaStreams instance with two
stream threads (build/tests/streams_named_app, tests/streams_app/named_topologies.cpp): a
stateless map ("upper") and a stateful count behind a repartition topic ("count"), over
different topics, sharing the instance's threads, clients and group.

Outputs are checked against references computed here from the input. The count topology's
internal topics carry the prefix it was given (as the SQL server gives each query ksqlDB's
per-query application id); the group, its committed offsets and the state directory stay the
instance's. A kill -9 once everything is committed, then a restart on an empty state directory,
restores the count from its prefixed changelog and loses nothing (under at_least_once and
exactly_once_v2, whose transactional ids stay the instance's). A topology added to a running
instance (SIGUSR2) gets its tasks; one removed (SIGHUP) loses its tasks, state and offsets while
the others go on. Two instances share the tasks of both topologies.
"""

import collections
import os
import pathlib
import random
import re
import signal
import struct
import subprocess
import time

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import NewTopic

import ck_helpers as ck
from harness import OXBOW_BIN, track, wait_until

APP_BIN = os.environ.get("OXBOW_STREAMS_NAMED_APP",
                         str(pathlib.Path(OXBOW_BIN).parent / "tests" / "streams_named_app"))
APP_ID = "nt-app"
COUNT_PREFIX = "_confluent-ksql-ntquery_CTAS_COUNTS_1"
INPUTS = ["nt-upper-input", "nt-count-input"]
OUTPUTS = ["nt-upper-output", "nt-count-output", "nt-late-output"]
WORDS = ["alpha", "beta", "gamma", "delta", "x_1", "Kafka"]
STATE_LINE = re.compile(r"STATE ([A-Z_]+) -> ([A-Z_]+)")


class App:
    def __init__(self, broker, tmp_path, name, state, guarantee="at_least_once", extra=()):
        self.log_path = tmp_path / f"{name}.log"
        self.state_dir = tmp_path / state
        self.cmd = [APP_BIN, "--bootstrap-server", broker.bootstrap, "--application-id", APP_ID,
                    "--state-dir", str(self.state_dir), "--threads", "2",
                    "--processing-guarantee", guarantee,
                    "--prefix", f"count={COUNT_PREFIX}",
                    "--config", "commit.interval.ms=200",
                    "--config", "statestore.cache.max.bytes=0",
                    "--config", "consumer.session.timeout.ms=6000",
                    "--config", "consumer.heartbeat.interval.ms=500", *extra]
        self.proc = None

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(self.cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL))
        return self

    def text(self):
        return self.log_path.read_text(errors="replace")

    def wait_running(self, timeout=60):
        def running():
            assert self.proc.poll() is None, f"exited {self.proc.returncode}\n{self.text()[-4000:]}"
            states = STATE_LINE.findall(self.text())
            return states and states[-1][1] == "RUNNING"
        wait_until(running, timeout, message=f"{self.log_path.name} RUNNING")

    def queries(self):
        """One SIGUSR1's line of interactive queries: ({word: count}, what the unnamed lookup threw)."""
        before = self.text().count("IQ counts ")
        self.proc.send_signal(signal.SIGUSR1)
        wait_until(lambda: self.text().count("IQ counts ") > before, 20, message="the IQ line")
        line = [l for l in self.text().splitlines() if l.startswith("IQ counts ")][-1]
        counts_text, unnamed = line[len("IQ counts "):].split("; IQ unnamed ")
        counts = dict((k, int(v)) for k, v in (kv.split("=") for kv in counts_text.split(",") if kv))
        return counts, unnamed

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(60) == 0, self.text()[-4000:]

    def kill(self):
        self.proc.kill()
        self.proc.wait()


class Outputs:
    """Both output topics from the start: upper's (key, value) records, count's latest per word."""

    def __init__(self, broker):
        self.consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"nt-reader-{time.time()}",
                                  "auto.offset.reset": "earliest", "enable.auto.commit": False,
                                  "isolation.level": "read_committed"})
        self.consumer.subscribe(OUTPUTS)
        self.upper = collections.Counter()
        self.late = collections.Counter()
        self.counts = {}

    def read_until(self, upper, counts, late=None, timeout=120):
        def caught_up():
            for m in self.consumer.consume(1000, 0.2):
                if m.error():
                    assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                elif m.topic() == "nt-upper-output":
                    self.upper[(m.key().decode(), m.value().decode())] += 1
                elif m.topic() == "nt-late-output":
                    self.late[(m.key().decode(), m.value().decode())] += 1
                else:
                    self.counts[m.key().decode()] = struct.unpack(">q", m.value())[0]
            return self.upper == upper and self.counts == counts and self.late == (late or {})

        try:
            wait_until(caught_up, timeout, interval=0, message="both topologies' outputs")
        except AssertionError as e:
            missing = upper - self.upper
            extra = self.upper - upper
            raise AssertionError(f"{e}: upper missing {list(missing.items())[:5]} ({len(missing)}), extra "
                                 f"{list(extra.items())[:5]} ({len(extra)}); counts {self.counts} vs {counts}") from None

    def close(self):
        self.consumer.close()


@pytest.fixture
def broker(make_broker):
    b = make_broker()
    admin = ck.admin(b.bootstrap)
    for f in admin.create_topics([NewTopic(t, 3, 1) for t in INPUTS + OUTPUTS + ["nt-late-input"]]).values():
        f.result(20)
    for t in INPUTS:
        ck.wait_for_topic(b.bootstrap, t, 3)
    return b


class Input:
    def __init__(self, broker):
        self.broker = broker
        self.rng = random.Random(43)
        self.upper = collections.Counter()
        self.upper_inputs = []
        self.counts = collections.Counter()
        self.n = 0

    def produce(self, n):
        p = ck.producer(self.broker.bootstrap)
        upper, count = [], []
        for _ in range(n):
            self.n += 1
            word = self.rng.choice(WORDS)
            upper.append({"key": f"k{self.n}".encode(), "value": f"{word}-{self.n}".encode()})
            self.upper[(f"k{self.n}", f"{word}-{self.n}".upper())] += 1
            self.upper_inputs.append((f"k{self.n}", f"{word}-{self.n}"))
            count.append({"key": f"u{self.n % 7}".encode(), "value": word.encode()})
            self.counts[word] += 1
        ck.produce_all(p, upper, "nt-upper-input")
        ck.produce_all(p, count, "nt-count-input")


def _topics(broker):
    return set(ck.admin(broker.bootstrap).list_topics(timeout=10).topics)


def _committed(broker, topics):
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": APP_ID, "enable.auto.commit": False})
    try:
        return c.committed([TopicPartition(t, p) for t in topics for p in range(3)], timeout=10)
    finally:
        c.close()


def _all_committed(broker, guarantee="at_least_once"):
    """Whether the instance's group has committed every input partition's end, the count's
    repartition topic's too: a kill -9 before its commit replays what the changelog already
    counted, which at_least_once allows and this test's exact counts would not. Under exactly-once
    the repartition topic's partitions end in a transaction's commit marker, which a committed
    position may stop before."""
    repartition = f"{COUNT_PREFIX}-counts-repartition"
    marker = 1 if guarantee.startswith("exactly_once") else 0
    pairs = [(tp.topic, tp.partition, tp.offset, ck.watermarks(broker.bootstrap, tp.topic, tp.partition)[1])
             for tp in _committed(broker, INPUTS + [repartition])]
    # An empty partition has nothing to commit.
    assert all(end - (marker if topic == repartition else 0) <= offset <= end or (end == 0 and offset < 0)
               for topic, _, offset, end in pairs), pairs
    return True


def _started(broker, tmp_path, name, state, records, guarantee="at_least_once", extra=()):
    """An instance RUNNING, `records` records in each input, both outputs caught up."""
    data = Input(broker)
    app = App(broker, tmp_path, name, state=state, guarantee=guarantee, extra=extra).start()
    app.wait_running()
    data.produce(records)
    out = Outputs(broker)
    out.read_until(data.upper, dict(data.counts))
    return data, app, out


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_two_named_topologies_in_one_instance_restart_and_restore(broker, tmp_path, guarantee):
    data, app, out = _started(broker, tmp_path, "first", "s1", 600, guarantee)

    # Internal topics under each topology's prefix; none under the application id alone.
    topics = _topics(broker)
    assert f"{COUNT_PREFIX}-counts-changelog" in topics, sorted(topics)
    assert f"{COUNT_PREFIX}-counts-repartition" in topics, sorted(topics)
    assert not [t for t in topics if t.startswith(f"{APP_ID}-") and "count" in t], sorted(topics)
    # Tasks are named after their topology; the stateful ones keep their state in the instance's
    # state directory under it.
    state = app.state_dir / APP_ID
    assert sorted(p.name for p in (state / "__count__").iterdir()) == ["1_0", "1_1", "1_2"]
    assert not (state / "__upper__").exists()
    assert re.search(r"task count__1_\d assigned", app.text()), app.text()[-3000:]
    assert re.search(r"task upper__0_\d assigned", app.text()), app.text()[-3000:]
    # Both topologies' input offsets are committed under the instance's group (its application id).
    wait_until(lambda: _all_committed(broker, guarantee), 30, message="the group's commits of both inputs")
    # Interactive queries name the topology; the store is not the unnamed topology's.
    counts, unnamed = app.queries()
    assert counts == dict(data.counts)
    assert unnamed == "UnknownStateStoreException"

    # A clean restart: processing resumes for both.
    app.stop()
    again = App(broker, tmp_path, "second", state="s1", guarantee=guarantee).start()
    again.wait_running()
    data.produce(300)
    out.read_until(data.upper, dict(data.counts))

    # kill -9 once all is committed, then a new instance with no local state: the count comes back
    # from its prefixed changelog, and the map goes on from the committed offsets.
    wait_until(lambda: _all_committed(broker, guarantee), 30, message="the group's commits of both inputs")
    again.kill()
    third = App(broker, tmp_path, "third", state="s2", guarantee=guarantee).start()
    third.wait_running()
    data.produce(300)
    out.read_until(data.upper, dict(data.counts))
    assert re.search(r"restored [1-9]\d* records", third.text()), third.text()[-3000:]
    counts, _ = third.queries()
    assert counts == dict(data.counts)
    third.stop()
    out.close()


def test_a_topology_added_and_one_removed_while_running(broker, tmp_path):
    """Step 3: addNamedTopology on a running instance (its tasks come with the rebalance it starts)
    and removeNamedTopology(count, resetOffsets=true): its tasks closed, its state deleted, its
    committed offsets gone, while the other topologies go on."""
    data, app, out = _started(broker, tmp_path, "live", "s", 200)

    app.proc.send_signal(signal.SIGUSR2)
    wait_until(lambda: "ADDED late" in app.text() or "ADD ERROR" in app.text(), 60, message="ADDED late")
    assert "ADDED late" in app.text(), app.text()[-3000:]
    assert f"{APP_ID}-late" not in "".join(_topics(broker))  # stateless: no internal topics
    late = collections.Counter()
    p = ck.producer(broker.bootstrap)
    ck.produce_all(p, [{"key": f"l{i}".encode(), "value": f"abc{i}".encode()} for i in range(200)], "nt-late-input")
    for i in range(200):
        late[(f"l{i}", f"abc{i}"[::-1])] += 1
    data.produce(100)
    out.read_until(data.upper, dict(data.counts), late)
    assert re.search(r"task late__0_\d assigned", app.text()), app.text()[-3000:]

    wait_until(lambda: _all_committed(broker), 30, message="the group's commits of both inputs")
    assert (app.state_dir / APP_ID / "__count__").exists()
    app.proc.send_signal(signal.SIGHUP)
    wait_until(lambda: "REMOVED count" in app.text() or "REMOVE ERROR" in app.text(), 90,
               message="REMOVED count")
    assert "REMOVED count" in app.text(), app.text()[-3000:]
    assert not (app.state_dir / APP_ID / "__count__").exists()
    gone = _committed(broker, ["nt-count-input", f"{COUNT_PREFIX}-counts-repartition"])
    assert all(tp.offset < 0 for tp in gone), gone
    # Its own group, which held its positions, went too.
    own = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": COUNT_PREFIX, "enable.auto.commit": False})
    try:
        positions = own.committed([TopicPartition("nt-count-input", p) for p in range(3)], timeout=10)
    finally:
        own.close()
    assert all(tp.offset < 0 for tp in positions), positions
    # The others go on; the count takes no more input.
    count_end = sum(ck.watermarks(broker.bootstrap, "nt-count-output", q)[1] for q in range(3))
    before = dict(data.counts)
    data.produce(100)
    out.read_until(data.upper, before, late)
    assert sum(ck.watermarks(broker.bootstrap, "nt-count-output", q)[1] for q in range(3)) == count_end
    app.wait_running()
    app.stop()
    out.close()


def test_two_instances_share_the_tasks_of_both_topologies(broker, tmp_path):
    """Two instances with one application id and the same named topologies: the group's
    assignment (named task ids in Kafka Streams' bytes) spreads the tasks of both topologies
    over them, and the outputs are complete; when one stops, the other takes all its tasks."""
    data, first, out = _started(broker, tmp_path, "one", "s1", 100)
    second = App(broker, tmp_path, "two", state="s2").start()
    wait_until(lambda: re.search(r"task (count|upper)__\d_\d assigned", second.text()), 60,
               message="the second instance's first tasks")
    second.wait_running()
    data.produce(600)
    out.read_until(data.upper, dict(data.counts))
    names = set(re.findall(r"task ((?:count|upper)__\d_\d) assigned", second.text()))
    # Tasks of both topologies moved (stateless ones first: the count's stateful tasks stay
    # where their state is, without standbys to warm up elsewhere).
    assert len(names) >= 2 and {n.split("__")[0] for n in names} == {"count", "upper"}, names
    second.stop()
    data.produce(300)
    out.read_until(data.upper, dict(data.counts))
    first.stop()
    out.close()


def _own_positions_at_ends(broker, group, topics, guarantee):
    """Whether `group` (a named topology's own) has committed every partition's end of `topics`
    (under exactly-once a repartition topic's partitions end in a commit marker, which the
    committed position may stop before)."""
    marker = 1 if guarantee.startswith("exactly_once") else 0
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        committed = c.committed([TopicPartition(t, p) for t in topics for p in range(3)], timeout=10)
    finally:
        c.close()
    pairs = [(tp.topic, tp.partition, tp.offset, ck.watermarks(broker.bootstrap, tp.topic, tp.partition)[1])
             for tp in committed]
    assert all(end - (marker if "repartition" in topic else 0) <= offset <= end or (end == 0 and offset < 0)
               for topic, _, offset, end in pairs), (group, pairs)
    return True


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_a_topology_added_on_a_topic_another_reads_starts_from_its_own_position(broker, tmp_path, guarantee):
    """late reads nt-upper-input, which upper reads too: one partition feeds both topologies'
    tasks. Added while running, with no position of its own, late reads the topic from its start
    (the consumer goes back for it) while upper goes on without repeating a record. Each keeps its
    positions in a group of its own, named by its prefix; after a kill -9, both resume from them."""
    extra = ("--late-input", "nt-upper-input")
    data, app, out = _started(broker, tmp_path, "first", "s1", 300, guarantee, extra)

    def reversed_upper():
        return collections.Counter((k, v[::-1]) for k, v in data.upper_inputs)

    app.proc.send_signal(signal.SIGUSR2)
    wait_until(lambda: "ADDED late" in app.text() or "ADD ERROR" in app.text(), 60, message="ADDED late")
    assert "ADDED late" in app.text(), app.text()[-3000:]
    data.produce(100)
    out.read_until(data.upper, dict(data.counts), reversed_upper())
    # The tasks of a partition of the shared topic are on one thread.
    for p in range(3):
        assert re.search(rf"task late__0_{p} assigned", app.text()), app.text()[-3000:]

    for group, topics in [(f"{APP_ID}-upper", ["nt-upper-input"]), (f"{APP_ID}-late", ["nt-upper-input"]),
                          (COUNT_PREFIX, ["nt-count-input", f"{COUNT_PREFIX}-counts-repartition"])]:
        wait_until(lambda: _own_positions_at_ends(broker, group, topics, guarantee), 30,
                   message=f"{group}'s commits")
    app.kill()
    again = App(broker, tmp_path, "second", state="s1", guarantee=guarantee,
                extra=extra + ("--late-at-start", "yes")).start()
    again.wait_running()
    data.produce(100)
    out.read_until(data.upper, dict(data.counts), reversed_upper())
    again.stop()
    out.close()
