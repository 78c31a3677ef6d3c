"""The SQL engine end to end: `oxbow sql run` against a real broker, fed and read with confluent-kafka.

The two queries issue 42 opens with, with the data that makes them interesting: attempts in and
out of their windows, one late but within the grace period and one past it; and a user whose level
changes between clicks. Expected results are computed here from the input.
"""

import json
import random
import signal
import struct
import subprocess
import threading
import time

import ck_helpers as ck
from harness import OXBOW_BIN, track, wait_until
from test_streams_standby import murmur2_partition

STATEMENTS = """
CREATE STREAM authorization_attempts (card_number STRING KEY, amount DOUBLE)
  WITH (kafka_topic='authorization_attempts', value_format='json', partitions=2);
CREATE TABLE possible_fraud AS
  SELECT card_number, COUNT(*) AS attempts FROM authorization_attempts
  WINDOW TUMBLING (SIZE 5 SECONDS, GRACE PERIOD 2 SECONDS)
  GROUP BY card_number HAVING COUNT(*) > 3;

CREATE STREAM clickstream (userid STRING KEY, page STRING, action STRING)
  WITH (kafka_topic='clickstream', value_format='json', partitions=2);
CREATE TABLE users (userid STRING PRIMARY KEY, level STRING)
  WITH (kafka_topic='users', value_format='json', partitions=2);
CREATE STREAM vip_actions AS
  SELECT c.userid, page, action FROM clickstream c
  LEFT JOIN users u ON c.userid = u.userid
  WHERE u.level = 'Platinum';
"""

APP_PREFIX = "_confluent-ksql-default_query_"
# Event times are BASE + offset: a timestamp of 0 means "now" to librdkafka. BASE is a multiple of
# the windows' size.
BASE = 1_700_000_000_000


class SqlRun:
    def __init__(self, broker, tmp_path, statements, extra_config=(), name="sql"):
        self.file = tmp_path / "statements.sql"
        self.file.write_text(statements)
        self.log = tmp_path / f"{name}.log"
        cmd = [OXBOW_BIN, "sql", "run", str(self.file), "-b", broker.bootstrap,
               "--state-dir", str(tmp_path / "state"),
               "--streams-config", "commit.interval.ms=100",
               "--streams-config", "statestore.cache.max.bytes=0"]
        for c in extra_config:
            cmd += ["--streams-config", c]
        with open(self.log, "ab") as log:
            self.proc = track(subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL))

    def text(self):
        return self.log.read_text(errors="replace")

    def wait_running(self, count):
        wait_until(lambda: self.text().count("running ") >= count or self.proc.poll() is not None, 60,
                   message="queries running")
        assert self.proc.poll() is None, self.text()[-3000:]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(60) == 0, self.text()[-3000:]


def _records(bootstrap, topic, expected_count, timeout=60):
    """Reads `topic` from the start until it holds `expected_count` records (or times out)."""
    consumer = ck.consumer(bootstrap, **{"group.id": f"reader-{topic}-{id(object())}",
                                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got = []
    try:
        def enough():
            for m in consumer.consume(500, 0.2):
                if m.error() is None:
                    got.append(m)
            return len(got) >= expected_count
        seen = lambda: [(m.key(), m.value()) for m in got]  # noqa: E731 - read at failure only
        try:
            wait_until(enough, timeout, message=f"{expected_count} records on {topic}")
        except AssertionError as e:
            raise AssertionError(f"{e}; got {len(got)}: {seen()}") from None
        return got
    finally:
        consumer.close()


def test_possible_fraud_counts_attempts_per_window_with_late_records(broker, tmp_path):
    run = SqlRun(broker, tmp_path, STATEMENTS)
    run.wait_running(2)
    # Keys where Java's default partitioner puts them, as Streams' own repartitioning does: each
    # card's attempts then reach its aggregation in the order they were produced.
    producer = ck.producer(broker.bootstrap, partitioner="murmur2_random")
    attempts = [  # (card, event time ms)
        ("c1", 0), ("c1", 1000), ("c2", 1100), ("c1", 2000), ("c1", 3000),  # c1: 4 in [0, 5000)
        ("c2", 1200), ("c2", 1300),                                          # c2: 3, not fraud
        ("c1", 6000), ("c1", 6100), ("c1", 6200),                            # c1: 3 in [5000, 10000)
        ("c1", 4500),       # late, within the 2 s grace: the first window's fifth
        ("c1", 9000),       # the second window's fourth; stream time 9000 closes the first (5000 + 2000)
        ("c1", 4800),       # too late: dropped
        ("c2", 4900),       # too late for c2 as well (stream time is the partition's)
    ]
    for card, t in attempts:
        producer.produce("authorization_attempts", key=card, value=b'{"amount": 1.0}', timestamp=BASE + t)
        producer.flush()
    # The reference: counts per window of the attempts not later than the window's close, each
    # partition's stream time advancing on its own.
    partition_of = {}
    counts, stream_time = {}, {}
    expected_updates = []
    md = ck.admin(broker.bootstrap).list_topics("authorization_attempts", timeout=10)
    assert len(md.topics["authorization_attempts"].partitions) == 2
    for card, t in attempts:
        p = murmur2_partition(card.encode(), 2)
        partition_of[card] = p
        stream_time[p] = max(stream_time.get(p, -1), t)
        start = t - t % 5000
        if stream_time[p] >= start + 5000 + 2000:
            continue  # the window has closed
        counts[(card, start)] = counts.get((card, start), 0) + 1
        if counts[(card, start)] > 3:
            expected_updates.append((card, start, counts[(card, start)]))
    assert expected_updates == [("c1", 0, 4), ("c1", 0, 5), ("c1", 5000, 4)], "the test's own reference"
    got = _records(broker.bootstrap, "POSSIBLE_FRAUD", len(expected_updates))
    decoded = []
    for m in got:
        key = m.key()
        card, start = key[:-8].decode(), struct.unpack(">q", key[-8:])[0] - BASE
        decoded.append((card, start, json.loads(m.value())["ATTEMPTS"]))
    assert decoded == expected_updates
    run.stop()


def test_vip_actions_follow_a_users_level_as_it_changes(broker, tmp_path):
    run = SqlRun(broker, tmp_path, STATEMENTS)
    run.wait_running(2)
    app = APP_PREFIX + "CSAS_VIP_ACTIONS_1"
    changelog = f"{app}-KafkaTopic_Right-Reduce-changelog"
    producer = ck.producer(broker.bootstrap, partitioner="murmur2_random")
    table_updates = 0

    def set_levels(levels, t):
        nonlocal table_updates
        for user, level in levels.items():
            producer.produce("users", key=user, value=('{"level": "%s"}' % level).encode(),
                             timestamp=BASE + t)
        producer.flush()
        table_updates += len(levels)
        # The join has the users table as of these updates once its store's changelog holds them.
        _records(broker.bootstrap, changelog, table_updates)

    clicks = 0

    def click(user, page, t):
        nonlocal clicks
        producer.produce("clickstream", key=user, value=('{"page": "%s", "action": "view"}' % page).encode(),
                         timestamp=BASE + t)
        producer.flush()
        clicks += 1

    def clicks_joined():
        # A level change produced right after a click may be fetched before it when the two sit in
        # different partitions (Kafka Streams' max.task.idle.ms = 0 orders only what was fetched),
        # so each round's clicks are joined, as their committed positions show, before the change.
        wait_until(lambda: ck.committed_total(broker.bootstrap, app, "clickstream", 2) >= clicks, 60,
                   message=f"{clicks} clicks processed")

    levels = {"alice": "Platinum", "bob": "Silver", "carol": "Gold"}
    set_levels(levels, 1)
    expected = []
    t = 10
    for round_ in range(3):
        for user in ["alice", "bob", "carol", "dave"]:  # dave has no row: left join, no level
            page = f"p{round_}-{user}"
            click(user, page, t)
            t += 1
            if levels.get(user) == "Platinum":
                expected.append((user, page))
        clicks_joined()
        # Mid-stream changes: bob promoted, alice demoted and promoted again, carol promoted.
        changes = [{"bob": "Platinum", "alice": "Gold"}, {"carol": "Platinum", "alice": "Platinum"},
                   {"bob": "Bronze"}][round_]
        levels.update(changes)
        set_levels(changes, t)
        t += 1
    got = _records(broker.bootstrap, "VIP_ACTIONS", len(expected))
    actual = sorted((m.key().decode(), json.loads(m.value())["PAGE"]) for m in got)
    assert actual == sorted(expected)
    run.stop()


def test_a_statement_that_does_not_bind_fails_with_one_line_and_runs_nothing(broker, tmp_path):
    statements = STATEMENTS.replace("SELECT c.userid, page", "SELECT userid, page")
    run = SqlRun(broker, tmp_path, statements)
    assert run.proc.wait(30) == 1
    assert "Column 'USERID' is ambiguous. Could be C.USERID or U.USERID." in run.text()
    assert "running" not in run.text()


def test_a_record_that_does_not_deserialize_goes_to_the_processing_log(broker, tmp_path):
    statements = STATEMENTS + """
CREATE STREAM errors AS SELECT logger, message->deserializationerror->errormessage AS reason
  FROM ksql_processing_log WHERE message->type = 0;
"""
    run = SqlRun(broker, tmp_path, statements)
    run.wait_running(3)
    producer = ck.producer(broker.bootstrap, partitioner="murmur2_random")
    producer.produce("clickstream", key="alice", value=b"{not json", timestamp=BASE)
    producer.produce("clickstream", key="alice", value=b'{"page": "home"}', timestamp=BASE + 1)
    producer.produce("users", key="alice", value=b'{"level": "Platinum"}', timestamp=BASE)
    producer.flush()
    [entry] = _records(broker.bootstrap, "default_ksql_processing_log", 1)
    logged = json.loads(entry.value())
    assert logged["LOGGER"] == "CSAS_VIP_ACTIONS_1.KsqlTopic.Source.deserializer"
    assert logged["LEVEL"] == "ERROR"
    assert logged["MESSAGE"]["TYPE"] == 0
    assert logged["MESSAGE"]["DESERIALIZATIONERROR"]["TARGET"] == "value"
    assert logged["MESSAGE"]["DESERIALIZATIONERROR"]["topic"] == "clickstream"
    # The log is a stream like any other: a query over it sees the entry.
    [derived] = _records(broker.bootstrap, "ERRORS", 1)
    assert json.loads(derived.value())["REASON"].startswith("Failed to deserialize value from topic: clickstream")
    run.stop()


def test_exactly_once_aggregations_across_kill_9(broker, tmp_path):
    """exactly_once_v2 through the SQL layer: two aggregations (one grouping by the key, one by a
    value column through the repartition topic and the internal row format) while `oxbow sql run`
    is killed -9 three times and started again. With caching off each input record is one update,
    so the committed updates of each group are exactly its counts 1, 2, 3, ... with no repeat and
    no gap, and the last one is the reference's."""
    statements = """
CREATE STREAM events (k STRING KEY, v INT) WITH (kafka_topic='events', value_format='json', partitions=2);
CREATE TABLE per_key AS SELECT k, COUNT(*) AS n, SUM(v) AS total FROM events GROUP BY k;
CREATE TABLE per_bucket AS SELECT v % 4 AS bucket, COUNT(*) AS n FROM events GROUP BY v % 4;
"""
    rng = random.Random(4242)
    records = [(f"k{rng.randrange(20)}", rng.randrange(100)) for _ in range(3000)]
    # A killed instance leaves the group after 6 s rather than 45.
    config = ["processing.guarantee=exactly_once_v2", "commit.interval.ms=100",
              "consumer.session.timeout.ms=6000", "consumer.heartbeat.interval.ms=1000"]

    instances = []

    def start():
        instances.append(SqlRun(broker, tmp_path, statements, extra_config=config,
                                name=f"sql{len(instances)}"))
        instances[-1].wait_running(2)
        return instances[-1]

    run = start()
    producer = ck.producer(broker.bootstrap, partitioner="murmur2_random")
    done = threading.Event()

    def produce():
        for i in range(0, len(records), 30):
            for k, v in records[i:i + 30]:
                producer.produce("events", key=k, value=json.dumps({"v": v}).encode(), timestamp=BASE + i)
            producer.flush()
            time.sleep(0.05)
        done.set()

    feeder = threading.Thread(target=produce)
    feeder.start()
    for _ in range(3):
        time.sleep(rng.uniform(1.0, 2.5))
        run.proc.kill()
        run.proc.wait()
        run = start()
    feeder.join()

    per_key, per_bucket = {}, {}
    for k, v in records:
        n, total = per_key.get(k, (0, 0))
        per_key[k] = (n + 1, total + v)
        per_bucket[v % 4] = per_bucket.get(v % 4, 0) + 1
    updates_key = _committed_updates(broker, "PER_KEY", len(records))
    updates_bucket = _committed_updates(broker, "PER_BUCKET", len(records))
    for group, counts in _by_group(updates_key, lambda m: m.key().decode()).items():
        assert [c["N"] for c in counts] == list(range(1, len(counts) + 1)), group
        assert (counts[-1]["N"], counts[-1]["TOTAL"]) == per_key[group]
    assert len(_by_group(updates_key, lambda m: m.key().decode())) == len(per_key)
    buckets = _by_group(updates_bucket, lambda m: struct.unpack(">i", m.key())[0])
    assert {b: c[-1]["N"] for b, c in buckets.items()} == per_bucket
    for bucket, counts in buckets.items():
        assert [c["N"] for c in counts] == list(range(1, len(counts) + 1)), bucket
    run.stop()


def _committed_updates(broker, topic, expected, timeout=120):
    """Every committed record of `topic` once it holds `expected` of them."""
    consumer = ck.consumer(broker.bootstrap, **{"group.id": f"eos-{topic}", "auto.offset.reset": "earliest",
                                                "isolation.level": "read_committed"})
    consumer.subscribe([topic])
    got = []
    try:
        def enough():
            got.extend(m for m in consumer.consume(1000, 0.2) if m.error() is None)
            return len(got) >= expected
        wait_until(enough, timeout, message=f"{expected} committed records on {topic}")
        # Anything more would be a duplicate: read what a second more brings too.
        got.extend(m for m in consumer.consume(1000, 1.0) if m.error() is None)
        return got
    finally:
        consumer.close()


def _by_group(messages, key_of):
    groups = {}
    for m in messages:
        groups.setdefault(key_of(m), []).append(json.loads(m.value()))
    return groups
