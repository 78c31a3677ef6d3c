"""oxbow-streams against the real broker: behaviours so far covered only in the test driver.

The applications are build/tests/streams_test_app (tests/streams_app/main.cpp), one topology per
run: `tables` (a KTable read from its source topic, re-grouped and counted), `poison` (an Int64
value deserializer meeting bad bytes) and `fail` (a processor that throws, with the uncaught
exception handler's responses). The app prints every state change as "STATE <old> -> <new>",
exits 0 after SIGTERM and 3 when it reached ERROR. Expected results are computed here,
independently of the library, and what is checked is what Kafka Streams does.
"""

import json
import os
import pathlib
import random
import re
import shutil
import signal
import struct
import subprocess
import urllib.request

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import NewTopic

import ck_helpers as ck
from harness import OXBOW_BIN, free_port, track, wait_until

APP_BIN = os.environ.get("OXBOW_STREAMS_TEST_APP",
                         str(pathlib.Path(OXBOW_BIN).parent / "tests" / "streams_test_app"))

# KafkaStreams.State's transitions (Kafka 3.x): ERROR and NOT_RUNNING are final.
VALID_TRANSITIONS = {
    "CREATED": {"REBALANCING", "PENDING_SHUTDOWN"},
    "REBALANCING": {"RUNNING", "PENDING_SHUTDOWN", "PENDING_ERROR"},
    "RUNNING": {"REBALANCING", "PENDING_SHUTDOWN", "PENDING_ERROR"},
    "PENDING_SHUTDOWN": {"NOT_RUNNING"},
    "PENDING_ERROR": {"ERROR"},
    "NOT_RUNNING": set(),
    "ERROR": set(),
}
STATE_LINE = re.compile(r"STATE ([A-Z_]+) -> ([A-Z_]+)")


class App:
    """One streams_test_app process; stdout and stderr (the library's log) go to one file."""

    def __init__(self, broker, tmp_path, topology, name, app_id, guarantee="at_least_once",
                 state_dir=None, extra=()):
        self.log_path = tmp_path / f"{name}.log"
        self.state_dir = state_dir or tmp_path / f"state-{name}"
        self.cmd = [APP_BIN, "--topology", topology, "--bootstrap-server", broker.bootstrap,
                    "--application-id", app_id, "--state-dir", str(self.state_dir),
                    "--processing-guarantee", guarantee,
                    "--config", "commit.interval.ms=200",
                    # A failed instance's partitions move after 6 s rather than librdkafka's 45 s.
                    "--config", "consumer.session.timeout.ms=6000",
                    "--config", "consumer.heartbeat.interval.ms=500", *extra]
        self.proc = None
        self._offset = 0  # where this run's part of the log starts

    def start(self):
        if self.log_path.exists():
            self._offset = self.log_path.stat().st_size
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(self.cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL))
        return self

    def text(self):
        """This run's log."""
        with open(self.log_path, "rb") as f:
            f.seek(self._offset)
            return f.read().decode(errors="replace")

    def states(self):
        """This run's state changes, [(old, new), ...] in order."""
        return STATE_LINE.findall(self.text())

    def state(self):
        s = self.states()
        return s[-1][1] if s else None

    def wait_state(self, state, timeout=30):
        wait_until(lambda: self.state() == state or self.proc.poll() is not None, timeout,
                   message=f"{self.log_path.name} to reach {state}")
        assert self.state() == state, f"{self.log_path.name} exited {self.proc.returncode}\n{self.tail()}"

    def wait_exit(self, timeout=60):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.log_path.name} still running after {timeout}s\n{self.tail()}")

    def stop(self):
        """SIGTERM: a clean close, exit 0, ending PENDING_SHUTDOWN -> NOT_RUNNING."""
        self.proc.send_signal(signal.SIGTERM)
        code = self.wait_exit(60)
        assert code == 0, f"exit {code} after SIGTERM\n{self.tail()}"
        states = self.states()
        assert states[-2:] == [(states[-2][0], "PENDING_SHUTDOWN"), ("PENDING_SHUTDOWN", "NOT_RUNNING")], states
        assert_valid_sequence(states)

    def tail(self, n=4000):
        return self.text()[-n:]


def assert_valid_sequence(states):
    assert states and states[0] == ("CREATED", "REBALANCING"), states
    for (old, new), (next_old, _) in zip(states, states[1:]):
        assert next_old == new, f"state changes do not chain: {states}"
    for old, new in states:
        assert new in VALID_TRANSITIONS[old], f"{old} -> {new} is not a Kafka Streams transition: {states}"


class Reader:
    """Reads every partition of a topic from the start (manual assignment, no group)."""

    def __init__(self, broker, topic, partitions, isolation="read_committed"):
        self.consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused-reader",
                                  "enable.auto.commit": False, "isolation.level": isolation,
                                  "fetch.wait.max.ms": 50})
        self.consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        self.messages = []

    def poll(self):
        for m in self.consumer.consume(1000, 0.1):
            if m.error():
                assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                continue
            self.messages.append(m)
        return self.messages

    def wait_for(self, condition, timeout=60, message="output"):
        wait_until(lambda: condition(self.poll()), timeout, interval=0, message=message)

    def close(self):
        self.consumer.close()


def _create(broker, topics):
    admin = ck.admin(broker.bootstrap)
    for f in admin.create_topics([NewTopic(t, n, 1) for t, n in topics.items()]).values():
        f.result(20)
    for t, n in topics.items():
        ck.wait_for_topic(broker.bootstrap, t, n)


def _produce(broker, topic, records):
    return ck.produce_all(ck.producer(broker.bootstrap), records, topic)


def _committed(broker, group, topic, partitions):
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        return [tp.offset for tp in c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)]
    finally:
        c.close()


def _scrape(port):
    from prometheus_client.parser import text_string_to_metric_families
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    return [s for f in text_string_to_metric_families(text) for s in f.samples]


@pytest.fixture
def broker(make_broker):
    # No initial rebalance delay: each application start joins its group at once.
    return make_broker(group_initial_rebalance_delay_ms=0)


# ---------------------------------------------------------------------------------------------
# tables: builder.table(source) -> groupBy(region) -> count


USERS = [f"user{i}" for i in range(40)]
REGIONS = ["north", "south", "east", "west", "centre", "islands", "coast", "hills"]


class Regions:
    """The reference: each user's region, and the count per region of every region ever used."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.region_of = {}
        self.used = set()

    def operations(self, n):
        out = []
        for _ in range(n):
            user = self.rng.choice(USERS)
            roll = self.rng.random()
            if roll < 0.2:
                # A tombstone: removes the user (or deletes nothing, when the user has no region).
                self.region_of.pop(user, None)
                out.append({"key": user.encode(), "value": None})
            else:
                # Insert, move to another region or re-set the same one.
                region = self.region_of.get(user) if roll < 0.25 and user in self.region_of \
                    else self.rng.choice(REGIONS)
                self.region_of[user] = region
                self.used.add(region)
                out.append({"key": user.encode(), "value": region.encode()})
        return out

    def empty_a_region(self):
        """Moves or deletes every user of the most populated region: (that region, operations)."""
        region = max(self.counts().items(), key=lambda kv: kv[1])[0]
        out = []
        for i, user in enumerate(sorted(u for u, r in self.region_of.items() if r == region)):
            if i % 2:
                del self.region_of[user]
                out.append({"key": user.encode(), "value": None})
            else:
                self.region_of[user] = other = self.rng.choice([r for r in REGIONS if r != region])
                self.used.add(other)
                out.append({"key": user.encode(), "value": other.encode()})
        return region, out

    def counts(self):
        counts = {r: 0 for r in self.used}
        for region in self.region_of.values():
            counts[region] += 1
        return counts


def _latest_counts(messages):
    latest = {}
    for m in messages:
        (count,) = struct.unpack(">q", m.value())
        latest[m.key().decode()] = count
    return latest


def _matches(got, expected):
    """Every region's last count is the reference's. A region the reference counts 0 may be
    missing: with caching (on by default) a region a user joined and left between two commits
    may never have been forwarded, in Kafka too. One the output has shown must end at 0."""
    return set(got) <= set(expected) and all(got.get(r, 0) == c for r, c in expected.items())


def _wait_counts(reader, ref, timeout=60):
    expected = ref.counts()
    try:
        reader.wait_for(lambda msgs: _matches(_latest_counts(msgs), expected), timeout, "the reference counts")
    except AssertionError:
        got = _latest_counts(reader.messages)
        diff = {r: (got.get(r), c) for r, c in expected.items() if got.get(r, 0) != c}
        raise AssertionError(f"region counts (got, expected) that differ: {diff}; extra: "
                             f"{set(got) - set(expected)}")
    return _latest_counts(reader.messages)


def _changelogs(broker, app_id):
    topics = ck.admin(broker.bootstrap).list_topics(timeout=10).topics
    return sorted(t for t in topics if t.startswith(app_id + "-") and t.endswith("-changelog"))


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_table_group_by_count_matches_the_reference(broker, tmp_path, guarantee):
    """A KTable of user -> region re-grouped by region and counted: inserts, moves between
    regions, re-sets and tombstones leave each region's last output count equal to the reference
    (0 for an emptied region: the subtractor's result is emitted, not a tombstone). After a clean
    stop and a restart on the same state dir, more updates still count exactly. The source table's
    store has no changelog topic of its own (the source topic is its changelog): the count store's
    is the application's only one. Then again without local state: restored from the source topic
    and the count's changelog. (The input is written while the app runs: for input written before
    a start, see the test below.)"""
    _create(broker, {"tables-input": 3, "tables-output": 3})
    app_id = f"tables-{guarantee.replace('_', '-')}"
    ref = Regions(seed=7)
    app = App(broker, tmp_path, "tables", "tables", app_id, guarantee).start()
    app.wait_state("RUNNING")
    _produce(broker, "tables-input", ref.operations(300))
    reader = Reader(broker, "tables-output", 3)
    _wait_counts(reader, ref)
    # Emptied once its count was out: the subtractor's 0 is emitted (not a tombstone).
    emptied, operations = ref.empty_a_region()
    _produce(broker, "tables-input", operations)
    assert _wait_counts(reader, ref)[emptied] == 0
    app.stop()

    changelogs = _changelogs(broker, app_id)
    assert changelogs == [f"{app_id}-KTABLE-AGGREGATE-STATE-STORE-0000000004-changelog"], changelogs
    # The count store keeps a timestamp with each value, as Kafka's timestamped stores do, but its
    # changelog holds the plain counts a Java reader expects (8-byte longs, the timestamp as the
    # record's), ending at the counts the output shows.
    log = Reader(broker, changelogs[0], 3)
    log.wait_for(lambda msgs: _matches(_latest_counts([m for m in msgs if m.value() is not None]), ref.counts()),
                 30, "the changelog's last counts")
    assert all(len(m.value()) == 8 for m in log.messages if m.value() is not None)
    log.close()

    app.start()
    app.wait_state("RUNNING")
    _produce(broker, "tables-input", ref.operations(150))
    _wait_counts(reader, ref)
    app.stop()

    # Without local state: the source table is restored from the source topic, the counts from
    # their changelog, and the counting goes on from there.
    shutil.rmtree(app.state_dir)
    app.start()
    app.wait_state("RUNNING")
    assert re.search(r"restored [1-9]\d* records", app.text()), app.tail()
    _produce(broker, "tables-input", ref.operations(150))
    _wait_counts(reader, ref)
    app.stop()
    assert _changelogs(broker, app_id) == changelogs
    reader.close()


def test_table_restored_from_its_source_topic_up_to_the_committed_offset(broker, tmp_path):
    """Input written before the first start, then while the application is down (restart on its
    state dir), then again before a restart without state (a full restore): the source table is
    restored only up to the committed input offset, so all those updates are processed."""
    _create(broker, {"tables-input": 3, "tables-output": 3})
    ref = Regions(seed=11)
    _produce(broker, "tables-input", ref.operations(200))
    app = App(broker, tmp_path, "tables", "restore", "tables-restore").start()
    reader = Reader(broker, "tables-output", 3)
    _wait_counts(reader, ref, timeout=10)
    app.stop()

    _produce(broker, "tables-input", ref.operations(100))  # while the app is down
    app.start()
    _wait_counts(reader, ref, timeout=20)
    app.stop()

    _produce(broker, "tables-input", ref.operations(100))
    shutil.rmtree(app.state_dir)  # restored from the source topic and the count's changelog
    app.start()
    _wait_counts(reader, ref, timeout=20)
    app.stop()
    reader.close()


# ---------------------------------------------------------------------------------------------
# poison: Int64 values, some of them undecodable

BAD_VALUES = [b"abc", b"", b"123456789"]  # 3 bytes, empty, 9 bytes: LongDeserializer refuses all


def _poison_records(n, bad_every):
    """[(record, good value or None)]: good values are i * 10 as 8-byte big-endian."""
    out = []
    for i in range(n):
        if i % bad_every == bad_every - 1:
            out.append(({"key": f"k{i}".encode(), "value": BAD_VALUES[(i // bad_every) % 3]}, None))
        else:
            out.append(({"key": f"k{i}".encode(), "value": struct.pack(">q", i * 10)}, i * 10))
    return out


def _doubled(messages):
    return [(m.key().decode(), struct.unpack(">q", m.value())[0]) for m in messages]


def test_poison_records_log_and_continue(broker, tmp_path):
    """LogAndContinueExceptionHandler: every good record's doubled value reaches the output in
    order, the bad ones (3 bytes, empty, 9 bytes) are skipped and counted in the skipped-records
    metric, the log names a bad record's topic, partition and offset, and the app stays RUNNING."""
    _create(broker, {"poison-input": 1, "poison-output": 1})
    records = _poison_records(60, bad_every=5)
    reports = _produce(broker, "poison-input", [r for r, _ in records])
    bad_offsets = [offset for (_, offset), (_, good) in zip(reports, records) if good is None]
    expected = [(r["key"].decode(), 2 * good) for r, good in records if good is not None]
    port = free_port()
    app = App(broker, tmp_path, "poison", "continue", "poison-continue", extra=(
        "--config", "default.deserialization.exception.handler=LogAndContinueExceptionHandler",
        "--config", f"metrics.listener=127.0.0.1:{port}")).start()
    reader = Reader(broker, "poison-output", 1)
    reader.wait_for(lambda msgs: len(msgs) >= len(expected), 60, "every good record doubled")
    assert _doubled(reader.messages) == expected

    def skipped():
        return sum(s.value for s in _scrape(port)
                   if s.name == "oxbow_streams_task_skipped_records_total"
                   and s.labels.get("reason") == "deserialization")

    wait_until(lambda: skipped() == len(bad_offsets), 15, message=f"{len(bad_offsets)} skipped records in /metrics")
    log = app.text()
    assert re.search(rf"topic poison-input partition 0 offset {bad_offsets[0]}\b", log), app.tail()
    assert app.proc.poll() is None and app.state() == "RUNNING", app.tail()
    assert "ERROR" not in {new for _, new in app.states()}
    app.stop()
    reader.close()


def test_a_restarted_fetcher_loses_and_repeats_nothing(broker, tmp_path):
    """A prefetch queue of 200 records fills with every fetch (16 KiB, some 500 records), so
    librdkafka 2.0.2's fetcher stalls over and over and the stream thread restarts it each time
    (seeking to its position): the output is still every input record doubled, once, in order,
    and the restarts show in /metrics."""
    _create(broker, {"poison-input": 1, "poison-output": 1})
    records = _poison_records(30000, bad_every=30001)  # no bad record
    _produce(broker, "poison-input", [r for r, _ in records])
    expected = [(r["key"].decode(), 2 * good) for r, good in records]
    port = free_port()
    app = App(broker, tmp_path, "poison", "restart", "fetch-restart", extra=(
        "--config", "consumer.queued.min.messages=200",
        "--config", "consumer.max.partition.fetch.bytes=16384",
        "--config", f"metrics.listener=127.0.0.1:{port}")).start()
    reader = Reader(broker, "poison-output", 1)
    reader.wait_for(lambda msgs: len(msgs) >= len(expected), 60, "every record doubled")
    assert _doubled(reader.messages) == expected

    def restarts():
        return sum(s.value for s in _scrape(port)
                   if s.name == "oxbow_streams_thread_fetch_restarts_total")

    wait_until(lambda: restarts() > 0, 15, message="fetch restarts in /metrics")
    app.stop()
    reader.close()


def test_poison_record_log_and_fail_then_continue_loses_nothing(broker, tmp_path):
    """LogAndFailExceptionHandler: the app fails at the first bad record (PENDING_ERROR -> ERROR,
    exit 3) without committing past it; restarted with LogAndContinueExceptionHandler it processes
    every good record after it."""
    _create(broker, {"poison-input": 1, "poison-output": 1})
    records = _poison_records(40, bad_every=20)  # bad at offsets 19 and 39
    reports = _produce(broker, "poison-input", [r for r, _ in records])
    first_bad = next(offset for (_, offset), (_, good) in zip(reports, records) if good is None)
    app = App(broker, tmp_path, "poison", "fail", "poison-fail", extra=(
        "--config", "default.deserialization.exception.handler=LogAndFailExceptionHandler")).start()
    code = app.wait_exit(60)
    states = app.states()
    assert code == 3, f"exit {code}\n{app.tail()}"
    assert states[-2:] == [(states[-2][0], "PENDING_ERROR"), ("PENDING_ERROR", "ERROR")], states
    assert_valid_sequence(states)
    assert re.search(rf"poison-input partition 0 offset {first_bad}\b", app.text()), app.tail()
    committed = _committed(broker, "poison-fail", "poison-input", 1)[0]
    assert committed <= first_bad, f"committed offset {committed} is past the bad record at {first_bad}"

    # Nothing after the bad record was processed: the output up to its end has none of it.
    after = {(r["key"].decode(), 2 * good) for r, good in records[first_bad + 1:] if good is not None}
    assert not after & set(_doubled(ck.consume_partition(broker.bootstrap, "poison-output", 0, 0)))

    reader = Reader(broker, "poison-output", 1)

    again = App(broker, tmp_path, "poison", "fail-then-continue", "poison-fail", extra=(
        "--config", "default.deserialization.exception.handler=LogAndContinueExceptionHandler")).start()
    reader.wait_for(lambda msgs: after <= set(_doubled(msgs)), 60, "the good records after the bad one")
    expected = [(r["key"].decode(), 2 * good) for r, good in records if good is not None]
    assert set(expected) == set(_doubled(reader.messages))
    again.stop()
    reader.close()


# ---------------------------------------------------------------------------------------------
# fail: a processor that throws, and the uncaught exception handler


def _values(messages):
    return [m.value().decode() for m in messages]


def _strings(prefix, r):
    return [{"key": f"k{i}".encode(), "value": f"{prefix}{i}".encode()} for i in r]


def _replaced(broker, tmp_path):
    """An app with REPLACE_THREAD whose mapValues throws once, on "boom", after 30 records;
    returns it once every record but "boom" is in the output, with the output's reader."""
    _create(broker, {"fail-input": 1, "fail-output": 1})
    records = _strings("a", range(30)) + [{"key": b"kb", "value": b"boom"}] + _strings("b", range(30))
    app = App(broker, tmp_path, "fail", "replace", "fail-replace",
              extra=("--on-error", "replace", "--fail-once")).start()
    app.wait_state("RUNNING")
    _produce(broker, "fail-input", records)
    reader = Reader(broker, "fail-output", 1)
    wanted = [r["value"].decode() for r in records if r["value"] != b"boom"]
    reader.wait_for(lambda msgs: set(wanted) <= set(_values(msgs)), 60, "every record but boom")
    assert "UNCAUGHT boom" in app.text(), app.tail()
    wait_until(lambda: app.state() == "RUNNING", 30, message="RUNNING after the replacement")
    return app, reader, wanted


def test_replace_thread_resumes_from_the_last_commit(broker, tmp_path):
    """REPLACE_THREAD: the failed thread is replaced by a new one (never PENDING_ERROR or ERROR)
    that resumes from the last commit: every record other than "boom", before and after it,
    reaches the output in order (at least once: repeats allowed), the input is committed to its
    end, and records written later are processed too."""
    app, reader, wanted = _replaced(broker, tmp_path)
    states = app.states()
    assert not {"PENDING_ERROR", "ERROR"} & {new for _, new in states}, states
    assert_valid_sequence(states)
    assert "fail-replace-StreamThread-2" in app.text(), app.tail()  # the replacement
    firsts = []
    for v in _values(reader.messages):
        if v not in firsts:
            firsts.append(v)
    assert [v for v in firsts if v != "boom"] == wanted

    more = _strings("c", range(10))
    _produce(broker, "fail-input", more)
    reader.wait_for(lambda msgs: {r["value"].decode() for r in more} <= set(_values(msgs)), 30, "later records")
    app.stop()
    end = ck.watermarks(broker.bootstrap, "fail-input", 0)[1]
    assert _committed(broker, "fail-replace", "fail-input", 1) == [end]
    reader.close()


def test_replace_thread_shows_a_rebalance(broker, tmp_path):
    """After the failure, the client state goes RUNNING -> REBALANCING -> RUNNING (the new thread
    joins the group), as Kafka's does."""
    app, reader, _ = _replaced(broker, tmp_path)
    text = app.text()
    later = STATE_LINE.findall(text[text.index("UNCAUGHT boom"):])
    assert later[:1] == [("RUNNING", "REBALANCING")] and later[-1] == ("REBALANCING", "RUNNING"), app.states()
    app.stop()
    reader.close()


@pytest.mark.parametrize("response", ["shutdown-client", None])
def test_shutdown_client_goes_to_error(broker, tmp_path, response):
    """SHUTDOWN_CLIENT (also the default response): CREATED -> REBALANCING -> RUNNING ... ->
    PENDING_ERROR -> ERROR and exit 3; the records before "boom" were processed."""
    _create(broker, {"fail-input": 1, "fail-output": 1})
    extra = ("--on-error", response) if response else ()
    app = App(broker, tmp_path, "fail", "shutdown", "fail-shutdown", extra=extra).start()
    app.wait_state("RUNNING")
    _produce(broker, "fail-input", _strings("a", range(10)) + [{"key": b"kb", "value": b"boom"}]
             + _strings("b", range(10)))
    code = app.wait_exit(60)
    states = app.states()
    assert code == 3, f"exit {code}\n{app.tail()}"
    assert states[:2] == [("CREATED", "REBALANCING"), ("REBALANCING", "RUNNING")], states
    assert states[-2:] == [("RUNNING", "PENDING_ERROR"), ("PENDING_ERROR", "ERROR")], states
    assert_valid_sequence(states)
    if response:
        assert "UNCAUGHT boom" in app.text()
    reader = Reader(broker, "fail-output", 1)
    reader.wait_for(lambda msgs: {f"a{i}" for i in range(10)} <= set(_values(msgs)), 30, "records before boom")
    assert not {f"b{i}" for i in range(10)} & set(_values(reader.poll()))
    reader.close()


def test_processing_exception_handler_continues_past_a_failing_record(broker, tmp_path):
    """processing.exception.handler=LogAndContinueProcessingExceptionHandler (KIP-1033): the
    record the mapValues throws on is logged and dropped, the records after it are processed, the
    thread never fails."""
    _create(broker, {"fail-input": 1, "fail-output": 1})
    app = App(broker, tmp_path, "fail", "continue", "fail-continue",
              extra=("--config", "processing.exception.handler="
                     "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler")).start()
    app.wait_state("RUNNING")
    _produce(broker, "fail-input", _strings("a", range(10)) + [{"key": b"kb", "value": b"boom"}]
             + _strings("b", range(10)))
    reader = Reader(broker, "fail-output", 1)
    wanted = {f"a{i}" for i in range(10)} | {f"b{i}" for i in range(10)}
    reader.wait_for(lambda msgs: wanted <= set(_values(msgs)), 30, "records around boom")
    assert "boom" not in _values(reader.poll())
    text = app.text()
    assert "UNCAUGHT" not in text and "processor node KSTREAM-MAPVALUES-0000000001" in text, app.tail()
    assert app.state() == "RUNNING", app.states()
    app.stop()
    reader.close()


def test_shutdown_application_stops_every_instance(broker, tmp_path):
    """SHUTDOWN_APPLICATION: the instance whose thread failed asks the group to shut down, and
    every instance (also one that never failed) goes PENDING_ERROR -> ERROR and exits 3."""
    _create(broker, {"fail-input": 2, "fail-output": 2})
    first = App(broker, tmp_path, "fail", "app-a", "fail-app", extra=("--on-error", "shutdown-application"))
    # The second instance never throws: it can only stop because the first one asked.
    second = App(broker, tmp_path, "fail", "app-b", "fail-app",
                 extra=("--on-error", "shutdown-application", "--fail-value", "never-sent"))
    first.start()
    second.start()
    first.wait_state("RUNNING")
    second.wait_state("RUNNING")
    # Both instances have a task once the output shows records of both partitions.
    reader = Reader(broker, "fail-output", 2)
    for p in (0, 1):
        _produce(broker, "fail-input", [{**r, "partition": p} for r in _strings(f"p{p}-", range(5))])
    reader.wait_for(lambda msgs: {m.partition() for m in msgs} == {0, 1} and len(msgs) >= 10, 30, "both tasks")
    assert "assigned" in first.text() and "assigned" in second.text()
    for p in (0, 1):
        _produce(broker, "fail-input", [{"key": b"kb", "value": b"boom", "partition": p}])
    assert first.wait_exit(30) == 3, first.tail()
    assert second.wait_exit(20) == 3, second.tail()
    for app in (first, second):
        states = app.states()
        assert states[-2:] == [(states[-2][0], "PENDING_ERROR"), ("PENDING_ERROR", "ERROR")], states
        assert_valid_sequence(states)
    assert "UNCAUGHT" not in second.text()

    # The request does not outlive the instances it stopped: the application starts again.
    third = App(broker, tmp_path, "fail", "app-c", "fail-app", extra=("--fail-value", "never-sent")).start()
    third.wait_state("RUNNING")
    _produce(broker, "fail-input", _strings("after-", range(5)))
    reader.wait_for(lambda msgs: {f"after-{i}" for i in range(5)} <= set(_values(msgs)), 30, "records after a restart")
    third.stop()
    reader.close()


# ---------------------------------------------------------------------------------------------
# Consumed.withOffsetResetPolicy and close(timeout)

def _feed_until_output(broker, reader, values, message):
    """Writes one new record at a time until the application's output shows one: where a source
    starts without a committed offset is decided when its partition is first fetched, so records
    written before that moment may count as old."""
    for i, v in enumerate(values):
        _produce(broker, "poison-input", [{"key": b"new", "value": struct.pack(">q", v)}])
        try:
            reader.wait_for(lambda msgs: msgs, 1.0 if i < len(values) - 1 else 30, message)
            return
        except AssertionError:
            continue


@pytest.mark.parametrize("policy", ["latest", "earliest"])
def test_offset_reset_policy_of_a_source(broker, tmp_path, policy):
    """Consumed.withOffsetResetPolicy decides, for that source alone, where it starts without a
    committed offset, whatever the application's auto.offset.reset: `latest` never processes the
    records written before the start, `earliest` processes them."""
    _create(broker, {"poison-input": 1, "poison-output": 1})
    old = [{"key": b"old", "value": struct.pack(">q", v)} for v in range(1, 11)]
    _produce(broker, "poison-input", old)
    # The application's auto.offset.reset is the other policy each time: the source's decides.
    other = "earliest" if policy == "latest" else "latest"
    app = App(broker, tmp_path, "poison", f"reset-{policy}", f"reset-{policy}", extra=(
        "--offset-reset", policy, "--config", f"auto.offset.reset={other}")).start()
    app.wait_state("RUNNING")
    reader = Reader(broker, "poison-output", 1)
    _feed_until_output(broker, reader, range(1000, 1060), "the first new record's output")
    # One partition, processed in order: old records, when processed, come out before any new.
    old_out = [v for k, v in _doubled(reader.poll()) if k == "old"]
    assert old_out == ([2 * v for v in range(1, 11)] if policy == "earliest" else []), old_out
    app.stop()
    reader.close()


def test_close_with_a_timeout_answers_false_then_finishes(broker, tmp_path):
    """close(timeout) as Kafka's: while a thread is still busy past the timeout, false and the
    state stays PENDING_SHUTDOWN; a second close() waits for the thread and ends NOT_RUNNING."""
    _create(broker, {"fail-input": 1, "fail-output": 1})
    app = App(broker, tmp_path, "fail", "close", "close-timeout",
              extra=("--slow-ms", "3000", "--close-timeout-ms", "100")).start()
    app.wait_state("RUNNING")
    _produce(broker, "fail-input", [{"key": b"k", "value": b"slow"}])
    wait_until(lambda: "PROCESSING slow" in app.text(), 30, message="the record in processing")
    app.proc.send_signal(signal.SIGTERM)
    assert app.wait_exit(60) == 0, app.tail()
    closes = re.findall(r"CLOSE (true|false) ([A-Z_]+)", app.text())
    assert closes == [("false", "PENDING_SHUTDOWN"), ("true", "NOT_RUNNING")], app.tail()
    assert_valid_sequence(app.states())
    # The record in processing when close() was called was finished and written.
    reader = Reader(broker, "fail-output", 1)
    reader.wait_for(lambda msgs: [m.value() for m in msgs] == [b"slow"], 30, "the slow record's output")
    reader.close()


def test_a_thread_stuck_past_max_poll_interval_leaves_so_its_task_moves(broker, tmp_path):
    """A stream thread stuck in one record longer than max.poll.interval.ms leaves the group, as
    Kafka's consumer does: the other instance takes the task over and processes the record from
    the last commit while the stuck one is still busy; the stuck one then drops the task
    without committing and rejoins."""
    _create(broker, {"fail-input": 1, "fail-output": 1})
    poll_interval = ("--config", "max.poll.interval.ms=4000")
    stuck = App(broker, tmp_path, "fail", "stuck", "poll-interval",
                extra=("--slow-ms", "15000", *poll_interval)).start()
    stuck.wait_state("RUNNING")
    wait_until(lambda: "task 0_0 assigned" in stuck.text(), 30, message="the task on the first")
    other = App(broker, tmp_path, "fail", "other", "poll-interval", extra=poll_interval).start()
    other.wait_state("RUNNING")
    _produce(broker, "fail-input", [{"key": b"k", "value": b"slow"}])
    wait_until(lambda: "PROCESSING slow" in stuck.text(), 30, message="the record in processing")
    reader = Reader(broker, "fail-output", 1)
    reader.wait_for(lambda msgs: [m.value() for m in msgs] == [b"slow"], 60,
                    "the record's output from the other instance")
    assert "membership lost (max.poll.interval.ms exceeded)" in stuck.text(), stuck.tail()
    assert "task 0_0 assigned" in other.text(), other.tail()
    # Written while the stuck thread was still in its record: it drops the task only after.
    assert "task 0_0 revoked" not in stuck.text(), stuck.tail()
    wait_until(lambda: "task 0_0 revoked" in stuck.text(), 60,
               message="the stuck thread to drop its task once out of the record")
    # It rejoins: the group's next generation has both members (the task stays where it is).
    _produce(broker, "fail-input", [{"key": b"k", "value": b"after"}])
    reader.wait_for(lambda msgs: b"after" in [m.value() for m in msgs], 60, "the next record")
    def sizes():
        return re.findall(r"group poll-interval generation \d+ stable: (\d+) members",
                          broker.log_text())
    wait_until(lambda: sizes()[-1] == "2", 60, message="both instances in the group again")
    assert "".join(sizes()).find("212") >= 0, sizes()  # the stuck one left, then came back
    stuck.stop()
    other.stop()
    reader.close()


# ---------------------------------------------------------------------------------------------
# windowed: stream time across a restart

def test_windows_closed_before_a_restart_stay_closed_after_it(broker, tmp_path):
    """The task's stream time travels in its committed offsets' metadata (Kafka's partition time),
    so a record too late for its window before a restart is dropped after it too, as in Kafka;
    starting from no stream time would open the window again."""
    _create(broker, {"windowed-input": 1, "windowed-output": 1})
    app = App(broker, tmp_path, "windowed", "windowed", "windowed-time").start()
    app.wait_state("RUNNING")
    _produce(broker, "windowed-input", [{"key": b"a", "value": b"x", "timestamp": 10_000}])
    reader = Reader(broker, "windowed-output", 1)
    reader.wait_for(lambda msgs: [(m.key(), m.value()) for m in msgs] == [(b"a@10000", struct.pack(">q", 1))],
                    30, "the first window's count")
    app.stop()
    app.start()
    app.wait_state("RUNNING")
    # 5,000 falls in [5000, 6000), closed at stream time 10,000 (no grace); the marker is on time.
    _produce(broker, "windowed-input", [{"key": b"a", "value": b"late", "timestamp": 5_000},
                                        {"key": b"b", "value": b"marker", "timestamp": 10_500}])
    reader.wait_for(lambda msgs: any(m.key() == b"b@10000" for m in msgs), 30, "the marker's count")
    assert [m.key() for m in reader.poll()] == [b"a@10000", b"b@10000"], [m.key() for m in reader.messages]
    app.stop()
    reader.close()


def test_tumbling_counts_through_the_broker_match_a_reference(broker, tmp_path):
    """Out-of-order input through the real runtime, caching off, compared record for record with
    Kafka's semantics written out here: stream time is the largest timestamp so far; a record
    whose 1 s window ended at or before it (no grace) is dropped, any other counts."""
    _create(broker, {"windowed-input": 1, "windowed-output": 1})
    rng = random.Random(25)
    records, now = [], 0
    for _ in range(2000):
        now += rng.randint(0, 40)
        # From a base: a producer takes timestamp 0 for "now".
        ts = 1_700_000_000_000 + max(0, now + rng.randint(-1500, 300))
        records.append((rng.choice("abcde"), ts))
    expected, counts, stream_time = [], {}, -1
    for key, ts in records:
        stream_time = max(stream_time, ts)
        start = ts - ts % 1000
        if start + 1000 <= stream_time:
            continue
        counts[(key, start)] = counts.get((key, start), 0) + 1
        expected.append((f"{key}@{start}", counts[(key, start)]))
    assert len(expected) < len(records)  # some were late
    _produce(broker, "windowed-input", [{"key": k.encode(), "value": b"x", "timestamp": ts} for k, ts in records])
    app = App(broker, tmp_path, "windowed", "reference", "windowed-reference",
              extra=("--config", "statestore.cache.max.bytes=0")).start()
    reader = Reader(broker, "windowed-output", 1)
    reader.wait_for(lambda msgs: len(msgs) >= len(expected), 60, f"{len(expected)} window counts")
    got = [(m.key().decode(), struct.unpack(">q", m.value())[0]) for m in reader.poll()]
    assert got == expected
    app.stop()
    reader.close()


# ---------------------------------------------------------------------------------------------
# join: clicks re-keyed by user, left-joined with the users' profiles

def test_joined_inputs_with_different_partition_counts_fail_at_start(broker, tmp_path):
    """Kafka refuses to run a join whose inputs are not co-partitioned; the error names both
    topics and their partition counts. (A re-keyed side's repartition topic is sized as the
    table's topic, so only user topics can disagree.)"""
    _create(broker, {"join-clicks": 2, "join-profiles": 3, "join-output": 1})
    app = App(broker, tmp_path, "join-direct", "copartition", "join-copartition").start()
    assert app.wait_exit(60) != 0
    text = app.text()
    assert "Topics not co-partitioned" in text, app.tail()
    assert "join-clicks (2 partitions)" in text and "join-profiles (3 partitions)" in text, app.tail()


def test_stream_table_left_join_through_the_broker(broker, tmp_path):
    """Profiles first, then clicks keyed by page whose value is the user: each click is
    repartitioned by user (into as many partitions as the profiles topic has, not the clicks
    topic's one) and joined with that user's profile, or with none."""
    _create(broker, {"join-clicks": 1, "join-profiles": 3, "join-output": 1})
    profiles = [{"key": f"u{i}".encode(), "value": f"profile{i}".encode()} for i in range(20)]
    # Co-partitioned means partitioned alike: Java's partitioner, which the library uses too.
    ck.produce_all(ck.producer(broker.bootstrap, partitioner="murmur2_random"), profiles, "join-profiles")
    app = App(broker, tmp_path, "join", "join", "join-app").start()
    app.wait_state("RUNNING")
    clicks = [{"key": f"page{i % 7}".encode(), "value": f"u{i % 25}".encode()} for i in range(200)]
    _produce(broker, "join-clicks", clicks)
    reader = Reader(broker, "join-output", 1)
    reader.wait_for(lambda msgs: len(msgs) >= len(clicks), 60, "a joined record per click")
    got = sorted((m.key().decode(), m.value().decode()) for m in reader.poll())
    expected = sorted((c["value"].decode(), c["value"].decode() + "/" +
                       (f"profile{c['value'].decode()[1:]}" if int(c["value"].decode()[1:]) < 20 else "unknown"))
                      for c in clicks)
    assert got == expected
    md = ck.admin(broker.bootstrap).list_topics(timeout=10)
    repartition = [t for t in md.topics if t.startswith("join-app-") and t.endswith("-repartition")]
    assert len(repartition) == 1 and len(md.topics[repartition[0]].partitions) == 3, repartition
    app.stop()
    reader.close()


# ---------------------------------------------------------------------------------------------
# global-join: orders enriched from a global table of users

def test_global_table_join_reads_every_partition_and_follows_updates(broker, tmp_path):
    """The users topic has 3 partitions and the orders topic 1, partitioned differently: a
    global table holds every partition on the instance, read to the end before processing starts,
    and follows later updates (a renamed user, a deleted one)."""
    _create(broker, {"gj-users": 3, "gj-orders": 1, "gj-output": 1})
    _produce(broker, "gj-users", [{"key": f"u{i}".encode(), "value": f"name{i}".encode()} for i in range(30)])
    app = App(broker, tmp_path, "global-join", "global", "global-join").start()
    app.wait_state("RUNNING")
    assert re.search(r"global thread: restored 30 records", app.text()), app.tail()
    orders = [{"key": f"o{i}".encode(), "value": f"u{i % 35}".encode()} for i in range(70)]
    _produce(broker, "gj-orders", orders)
    reader = Reader(broker, "gj-output", 1)
    reader.wait_for(lambda msgs: len(msgs) >= 70, 60, "an enriched order per order")
    got = [m.value().decode() for m in reader.poll()]
    assert got == [f"u{i % 35}:" + (f"name{i % 35}" if i % 35 < 30 else "null") for i in range(70)]
    # Updates reach the global table while the application runs.
    _produce(broker, "gj-users", [{"key": b"u1", "value": b"renamed"}, {"key": b"u2", "value": None},
                                  {"key": b"u31", "value": b"newcomer"}])

    def updated():
        _produce(broker, "gj-orders", [{"key": b"probe", "value": b"u31"}])
        return any(m.value() == b"u31:newcomer" for m in reader.poll())

    wait_until(updated, 30, interval=0.3, message="the global table to see the update")
    _produce(broker, "gj-orders", [{"key": b"x", "value": b"u1"}, {"key": b"y", "value": b"u2"}])
    reader.wait_for(lambda msgs: [m.value() for m in msgs][-2:] == [b"u1:renamed", b"u2:null"], 30,
                    "orders joined with the updated users")
    app.stop()
    reader.close()


# ---------------------------------------------------------------------------------------------
# punctuate: a Processor API processor with wall-clock and stream-time punctuation

def test_punctuation_in_wall_clock_and_stream_time(broker, tmp_path):
    """Wall-clock punctuation runs about every 100 ms whether or not records come, and sees the
    processor's state; stream-time punctuation runs once stream time reaches each multiple of
    1000 ms, once however many multiples a record passes."""
    _create(broker, {"punct-input": 1, "punct-output": 1})
    app = App(broker, tmp_path, "punctuate", "punctuate", "punctuate").start()
    app.wait_state("RUNNING")
    reader = Reader(broker, "punct-output", 1)
    reader.wait_for(lambda msgs: sum(m.key() == b"wall" for m in msgs) >= 5, 30, "wall-clock ticks")
    base = 1_700_000_000_000
    _produce(broker, "punct-input", [{"key": b"k", "value": b"v", "timestamp": base + t}
                                     for t in (0, 500, 999, 1000, 1500, 4200, 4300, 3000)])

    def stream_ticks(msgs):
        return [int(m.value()) - base for m in msgs if m.key() == b"stream"]

    reader.wait_for(lambda msgs: stream_ticks(msgs) == [0, 1000, 4200], 30, "stream-time ticks")
    reader.wait_for(lambda msgs: any(m.key() == b"wall" and m.value() == b"8" for m in msgs), 30,
                    "a wall-clock tick seeing all 8 records")
    assert stream_ticks(reader.poll()) == [0, 1000, 4200]
    app.stop()
    reader.close()


# ---------------------------------------------------------------------------------------------
# emit-final: emitStrategy(onWindowClose) across a restart

def test_emit_on_close_writes_each_window_once_across_a_restart(broker, tmp_path):
    """Windows opened before a restart and closed after it are written once, with their whole
    count; windows closed before it are not written again."""
    _create(broker, {"ef-input": 1, "ef-output": 1})
    base = 1_700_000_000_000
    app = App(broker, tmp_path, "emit-final", "emit", "emit-final").start()
    app.wait_state("RUNNING")
    _produce(broker, "ef-input", [{"key": k.encode(), "value": b"v", "timestamp": base + t}
                                  for k, t in [("a", 100), ("b", 200), ("a", 900), ("a", 1100), ("b", 1500)]])
    reader = Reader(broker, "ef-output", 1)
    # Stream time 1500 closed [0, 1000): a twice, b once.
    reader.wait_for(lambda msgs: len(msgs) >= 2, 30, "the first window's results")
    app.stop()
    app.start()
    app.wait_state("RUNNING")
    _produce(broker, "ef-input", [{"key": k.encode(), "value": b"v", "timestamp": base + t}
                                  for k, t in [("a", 1700), ("c", 2500)]])
    # A marker closes [2000, 3000): its result comes after anything the restart could repeat.
    _produce(broker, "ef-input", [{"key": b"d", "value": b"v", "timestamp": base + 3500}])
    reader.wait_for(lambda msgs: any(m.key().startswith(b"c@") for m in msgs), 30, "the marker window")
    got = [(m.key().decode(), struct.unpack(">q", m.value())[0]) for m in reader.poll()]
    start = base - base % 1000
    assert got == [(f"a@{start}", 2), (f"b@{start}", 1), (f"a@{start + 1000}", 2),
                   (f"b@{start + 1000}", 1), (f"c@{start + 2000}", 1)], got
    app.stop()
    reader.close()


def test_an_avro_pipeline_through_the_registry(broker, tmp_path):
    """A Streams application reading and writing Avro in Confluent's wire format through the real
    registry (streams_test_app --topology avro, on serdes::Avro): records `oxbow produce` wrote
    with a schema of its own are read by the writer's schema, filtered and mapped to a new record
    registered as avro-output-value, and `oxbow consume` decodes them; a record that is not Avro
    is skipped, not fatal."""
    from test_registry import Registry, http
    registry = Registry(broker, tmp_path).start()
    _create(broker, {"avro-input": 2, "avro-output": 1})
    order = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"}, {"name": "amount", "type": "double"},
        {"name": "note", "type": ["null", "string"], "default": None}]}
    rng = random.Random(7)
    orders = [(i, rng.choice([-1.5, 0.0, 2.25, 19.99, 100.0])) for i in range(300)]
    lines = "".join(f'k{i % 7}:{{"id": {i}, "amount": {a}, "note": null}}\n' for i, a in orders)
    produced = subprocess.run(
        [OXBOW_BIN, "produce", "avro-input", "-b", broker.bootstrap, "--key-separator", ":",
         "--value-format", "avro", "--value-schema", json.dumps(order),
         "--schema-registry-url", registry.url], input=lines, capture_output=True, text=True, timeout=60)
    assert produced.returncode == 0, produced.stderr
    _produce(broker, "avro-input", [{"key": b"k1", "value": b"not avro at all"}])
    expected = sorted((i, round(a * 100)) for i, a in orders if a > 0)

    app = App(broker, tmp_path, "avro", "avro", "avro-app", extra=(
        "--registry-url", registry.url,
        "--config", "default.deserialization.exception.handler=LogAndContinueExceptionHandler")).start()
    reader = Reader(broker, "avro-output", 1)
    reader.wait_for(lambda msgs: len(msgs) >= len(expected), 60, "every positive order mapped")
    consumed = subprocess.run(
        [OXBOW_BIN, "consume", "avro-output", "-b", broker.bootstrap, "--from-beginning",
         "--max-messages", str(len(expected)), "--value-format", "avro",
         "--schema-registry-url", registry.url, "--timeout-ms", "10000"],
        capture_output=True, text=True, timeout=60)
    assert consumed.returncode == 0, consumed.stderr
    got = sorted((v["id"], v["cents"]) for v in map(json.loads, consumed.stdout.splitlines()))
    assert got == expected
    assert "avro-output-value" in json.loads(http("GET", registry.url + "/subjects")[1])
    assert app.state() == "RUNNING", app.tail()
    app.stop()
    reader.close()
    registry.stop()
