"""`oxbow streams reset` (Kafka's kafka-streams-application-reset) against the real broker, with the
word-count example (build/examples/wordcount) as the application being reset.

Committed offsets are read back with confluent-kafka (a consumer in the application's group that
never joins it), topics from the cluster's metadata; expected word counts are computed here.
"""

import os
import pathlib
import random
import re
import shutil
import signal
import struct
import subprocess
from datetime import datetime, timezone

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import NewTopic

import ck_helpers as ck
from harness import OXBOW_BIN, track, wait_until

WORDCOUNT = os.environ.get("OXBOW_WORDCOUNT", str(pathlib.Path(OXBOW_BIN).parent / "examples" / "wordcount"))
INPUT, OUTPUT = "streams-plaintext-input", "streams-wordcount-output"
VOCABULARY = ["kafka", "streams", "Oxbow", "reset", "TABLE", "offset", "x_1"]
NO_OFFSET = -1001  # what committed() says for a partition the group has no offset for


def _lines(rng, n):
    return [" ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(0, 6))) for _ in range(n)]


def _truth(lines):
    counts = {}
    for line in lines:
        for w in re.split(r"[^A-Za-z0-9_]+", line.lower()):
            if w:
                counts[w] = counts.get(w, 0) + 1
    return counts


class WordCount:
    """One word-count instance. Its cache is off, so every count change reaches the output topic and
    a recomputation shows each word's count from 1 again."""

    def __init__(self, broker, tmp_path, app_id, session_timeout_ms=6000):
        self.state_dir = tmp_path / f"state-{app_id}"
        self.log_path = tmp_path / f"{app_id}.log"
        self.cmd = [WORDCOUNT, "--bootstrap-server", broker.bootstrap, "--application-id", app_id,
                    "--state-dir", str(self.state_dir), "--commit-interval-ms", "200",
                    "--config", f"consumer.session.timeout.ms={session_timeout_ms}",
                    "--config", "consumer.heartbeat.interval.ms=1000",
                    "--config", "statestore.cache.max.bytes=0"]
        self.proc = None

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(self.cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL))
        return self

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(60)
        assert code == 0, f"wordcount exited {code} after SIGTERM\n{self.log_path.read_text()[-3000:]}"

    def kill(self):
        self.proc.kill()
        self.proc.wait()


class Output:
    """Reads the output topic from `start` ({partition: offset}, default 0), keeping every word's
    counts in log order (a word's updates all go to one partition)."""

    def __init__(self, broker, start=None):
        self.consumer = ck.consumer(broker.bootstrap)
        self.consumer.assign([TopicPartition(OUTPUT, p, (start or {}).get(p, 0)) for p in range(3)])
        self.counts = {}

    def latest(self):
        return {w: c[-1] for w, c in self.counts.items()}

    def read_until(self, expected, timeout=120):
        def caught_up():
            for m in self.consumer.consume(1000, 0.2):
                if m.error():
                    assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                    continue
                self.counts.setdefault(m.key().decode(), []).append(struct.unpack(">q", m.value())[0])
            return self.latest() == expected

        wait_until(caught_up, timeout, interval=0, message="word counts in the output topic")

    def close(self):
        self.consumer.close()


def reset(broker, app_id, *args, env=None):
    return subprocess.run([OXBOW_BIN, "streams", "reset", "--bootstrap-server", broker.bootstrap,
                           "--application-id", app_id, *args],
                          capture_output=True, text=True, timeout=60, env=env)


def _ok(result):
    assert result.returncode == 0, f"reset failed ({result.returncode}): {result.stderr}{result.stdout}"
    assert result.stdout.splitlines()[-1] == "Done.", result.stdout
    return result.stdout


def _one_line_error(result):
    assert result.returncode == 1, f"exit {result.returncode}: {result.stderr}{result.stdout}"
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("oxbow: error: "), result.stderr
    return lines[0]


def committed(broker, group, topic, partitions=3):
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        return [tp.offset for tp in c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)]
    finally:
        c.close()


def end_offsets(broker, topic, partitions=3):
    return [ck.watermarks(broker.bootstrap, topic, p)[1] for p in range(partitions)]


def topic_names(broker):
    return set(ck.admin(broker.bootstrap).list_topics(timeout=10).topics)


def internal_topics(broker, app_id):
    return {t for t in topic_names(broker)
            if t.startswith(app_id + "-") and (t.endswith("-changelog") or t.endswith("-repartition"))}


def members(broker, group):
    groups = ck.admin(broker.bootstrap).list_groups(group, timeout=10)
    return [m.id for g in groups for m in g.members]


def _produce(broker, topic, records):
    ck.produce_all(ck.producer(broker.bootstrap), records, topic)


@pytest.fixture
def wc_broker(make_broker):
    # No initial rebalance delay: each word-count start joins its group at once.
    b = make_broker(group_initial_rebalance_delay_ms=0)
    admin = ck.admin(b.bootstrap)  # kept alive until the topics are created
    for f in admin.create_topics([NewTopic(INPUT, 3, 1), NewTopic(OUTPUT, 3, 1)]).values():
        f.result(20)
    ck.wait_for_topic(b.bootstrap, INPUT, 3)
    return b


def _processed(broker, tmp_path, app_id, lines, **app_args):
    """A running instance that has counted `lines` and committed its progress through them."""
    # Spread over every partition, so that each has a committed offset to reset.
    _produce(broker, INPUT, [{"value": line.encode(), "partition": i % 3} for i, line in enumerate(lines)])
    app = WordCount(broker, tmp_path, app_id, **app_args).start()
    out = Output(broker)
    out.read_until(_truth(lines))
    out.close()
    ends = end_offsets(broker, INPUT)
    wait_until(lambda: committed(broker, app_id, INPUT) == ends, 30, message="the app's commit of its input")
    assert len(internal_topics(broker, app_id)) == 2, topic_names(broker)
    return app


def test_reset_then_a_restart_recomputes_every_count(wc_broker, tmp_path):
    b, app_id = wc_broker, "wc-reset"
    lines = _lines(random.Random(7), 3000)
    truth = _truth(lines)
    app = _processed(b, tmp_path, app_id, lines)
    doomed = internal_topics(b, app_id)
    assert {t.rsplit("-", 1)[1] for t in doomed} == {"changelog", "repartition"}, doomed
    app.stop()
    wait_until(lambda: not members(b, app_id), 30, message="the stopped instance out of the group")
    old_end = dict(enumerate(end_offsets(b, OUTPUT)))

    out = _ok(reset(b, app_id, "--input-topics", INPUT))
    for p in range(3):
        assert f"Topic: {INPUT} Partition: {p} Offset: 0" in out.splitlines(), out
    for t in doomed:
        assert f"Topic: {t} deleted" in out.splitlines(), out
    assert "KafkaStreams::cleanUp()" in out
    wait_until(lambda: not internal_topics(b, app_id), 15, message="internal topics deleted")
    assert committed(b, app_id, INPUT) == [0, 0, 0]
    assert end_offsets(b, OUTPUT) == list(old_end.values()), "the output topic is the user's"

    shutil.rmtree(app.state_dir)
    again = WordCount(b, tmp_path, app_id).start()
    recomputed = Output(b, start=old_end)
    recomputed.read_until(truth)
    again.stop()
    recomputed.close()
    # After the old records, every count is counted again from 1, once per occurrence.
    for word, n in truth.items():
        assert recomputed.counts[word] == list(range(1, n + 1)), (word, recomputed.counts[word][:10])
    assert internal_topics(b, app_id) == doomed, "the app creates its internal topics again"


def test_refused_while_an_instance_runs(wc_broker, tmp_path):
    b, app_id = wc_broker, "wc-running"
    app = _processed(b, tmp_path, app_id, _lines(random.Random(3), 500))
    ends = end_offsets(b, INPUT)
    doomed = internal_topics(b, app_id)

    error = _one_line_error(reset(b, app_id, "--input-topics", INPUT))
    assert f"Consumer group '{app_id}' is still active and has 1 member" in error, error
    assert members(b, app_id)[0] in error, error
    # A dry run of --force says what it would remove, and removes nothing.
    dry = _ok(reset(b, app_id, "--input-topics", INPUT, "--force", "--dry-run"))
    assert "Would remove the 1 active member" in dry, dry
    assert app.proc.poll() is None and len(members(b, app_id)) == 1
    assert committed(b, app_id, INPUT) == ends
    assert internal_topics(b, app_id) == doomed
    app.stop()


def test_dry_run_changes_nothing(wc_broker, tmp_path):
    b, app_id = wc_broker, "wc-dry"
    app = _processed(b, tmp_path, app_id, _lines(random.Random(5), 500))
    app.stop()
    wait_until(lambda: not members(b, app_id), 30, message="the stopped instance out of the group")
    ends = end_offsets(b, INPUT)
    doomed = internal_topics(b, app_id)

    out = _ok(reset(b, app_id, "--input-topics", INPUT, "--dry-run"))
    assert out.startswith("Dry run"), out
    for p in range(3):
        assert f"Topic: {INPUT} Partition: {p} Offset: 0" in out.splitlines(), out
    assert all(t in out for t in doomed) and "deleted" not in out, out
    assert committed(b, app_id, INPUT) == ends
    assert internal_topics(b, app_id) == doomed


def test_force_removes_the_members_of_a_killed_instance(wc_broker, tmp_path):
    b, app_id = wc_broker, "wc-force"
    # A long session: the killed instance stays a member for the whole test.
    app = _processed(b, tmp_path, app_id, _lines(random.Random(11), 300), session_timeout_ms=60000)
    app.kill()
    assert len(members(b, app_id)) == 1
    _one_line_error(reset(b, app_id, "--input-topics", INPUT))

    out = _ok(reset(b, app_id, "--input-topics", INPUT, "--force"))
    assert "Removing the 1 active member" in out, out
    assert not members(b, app_id)
    assert committed(b, app_id, INPUT) == [0, 0, 0]
    wait_until(lambda: not internal_topics(b, app_id), 15, message="internal topics deleted")


BASE = datetime(2021, 3, 4, 5, 6, 7, tzinfo=timezone.utc)
BASE_MS = int(BASE.timestamp() * 1000)


@pytest.fixture
def timed_topic(make_broker):
    """Topic "timed": partition 0 holds records 1 s apart from BASE, partition 1 records 2 s apart."""
    b = make_broker()
    ck.create_topic(b.bootstrap, "timed", partitions=2)
    p = ck.producer(b.bootstrap)
    for part, step in ((0, 1000), (1, 2000)):
        ck.produce_all(p, [{"value": b"r", "timestamp": BASE_MS + i * step} for i in range(10)], "timed", part)
    return b


def _reset_timed(b, *args, env=None):
    out = _ok(reset(b, "timed-app", "--input-topics", "timed", *args, env=env))
    return committed(b, "timed-app", "timed", partitions=2), out


def test_to_datetime_shift_by_and_other_scenarios(timed_topic):
    b = timed_topic
    # BASE + 5 s: the 6th record of partition 0, the 4th of partition 1 (at BASE + 6 s).
    assert _reset_timed(b, "--to-datetime", "2021-03-04T05:06:12.000Z")[0] == [5, 3]
    assert _reset_timed(b, "--to-datetime", "2021-03-04T06:06:12.500+01:00")[0] == [6, 3]
    # Without a zone the time is local; TZ="XYZ-2" is UTC+2 without needing a zone database.
    local = dict(os.environ, TZ="XYZ-2")
    assert _reset_timed(b, "--to-datetime", "2021-03-04T07:06:12.000", env=local)[0] == [5, 3]
    shifted, _ = _reset_timed(b, "--shift-by", "-2")
    assert shifted == [3, 1]
    shifted, out = _reset_timed(b, "--shift-by", "100")
    assert shifted == [10, 10] and "above the latest offset" in out, out
    assert _reset_timed(b, "--shift-by", "-100")[0] == [0, 0]
    after, out = _reset_timed(b, "--to-datetime", "2021-03-05T00:00:00Z")
    assert after == [10, 10] and "no record at or after that time" in out, out
    assert _reset_timed(b, "--to-offset", "7")[0] == [7, 7]
    assert _reset_timed(b, "--to-offset", "70")[0] == [10, 10]
    assert _reset_timed(b, "--to-earliest")[0] == [0, 0]
    assert _reset_timed(b, "--to-latest")[0] == [10, 10]
    assert _reset_timed(b)[0] == [0, 0], "--to-earliest is the default"


def test_by_duration_and_intermediate_topics(make_broker):
    b = make_broker()
    ck.create_topic(b.bootstrap, "aged", partitions=1)
    ck.create_topic(b.bootstrap, "between", partitions=2)
    now_ms = int(datetime.now(timezone.utc).timestamp() * 1000)
    hour = 3_600_000
    # Record i is 10 - i hours old.
    _produce(b, "aged", [{"value": b"r", "timestamp": now_ms - (10 - i) * hour, "partition": 0} for i in range(10)])
    _produce(b, "between", [{"value": b"r", "partition": i % 2} for i in range(7)])

    def by(duration):
        _ok(reset(b, "aged-app", "--input-topics", "aged", "--by-duration", duration))
        return committed(b, "aged-app", "aged", partitions=1)

    assert by("PT4H30M") == [6]
    assert by("P1D") == [0]
    assert by("pt9h59m59.5s") == [1]
    assert by("PT0S") == [10]
    out = _ok(reset(b, "aged-app", "--intermediate-topics", "between"))
    assert committed(b, "aged-app", "between", partitions=2) == [4, 3]
    assert "Topic: between Partition: 1 Offset: 3" in out.splitlines(), out


def test_bad_arguments_are_one_line_errors_and_change_nothing(make_broker):
    b = make_broker()
    ck.create_topic(b.bootstrap, "known", partitions=1)
    ck.create_topic(b.bootstrap, "bad-app-store-changelog", partitions=1)
    _produce(b, "known", [{"value": b"r"}] * 3)

    error = _one_line_error(reset(b, "bad-app", "--input-topics", "known,missing-one,missing-two"))
    assert "input topics not found: missing-one, missing-two" in error, error
    error = _one_line_error(reset(b, "bad-app", "--input-topics", "known", "--internal-topics", "known"))
    assert "not internal topics of application bad-app: known" in error, error
    error = _one_line_error(reset(b, "bad-app", "--input-topics", "known", "--to-datetime", "yesterday"))
    assert "invalid --to-datetime 'yesterday'" in error, error
    error = _one_line_error(reset(b, "bad-app", "--input-topics", "known", "--by-duration", "PT"))
    assert "invalid --by-duration 'PT'" in error, error
    assert committed(b, "bad-app", "known", partitions=1) == [NO_OFFSET]
    assert "bad-app-store-changelog" in topic_names(b)
    # Two scenarios at once, or no application id, are usage errors.
    both = reset(b, "bad-app", "--to-earliest", "--to-latest")
    assert both.returncode != 0 and "at most 1 options" in both.stderr, both
    missing = subprocess.run([OXBOW_BIN, "streams", "reset", "--bootstrap-servers", b.bootstrap],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "--application-id is required" in missing.stderr, missing.stderr
