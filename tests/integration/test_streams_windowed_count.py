"""oxbow-streams against the real broker: the windowed-count example (build/examples/windowed-count).

Records (key: UTF-8 string, value ignored, timestamp: event time) are counted per key and time
window. The expected output is computed here by a small reference of Kafka Streams' windowed count,
independently of the library:

- a partition's stream time is the largest record timestamp seen so far on it (this record
  included);
- a record belongs to every window [start, start + size) holding its timestamp, starts being the
  multiples of the advance (the size, for tumbling windows);
- it counts in such a window unless the window has closed: start + size <= stream time - grace;
- `--emit changes` writes every count change, in input order (windows of one record by start);
  `--emit final` writes once per window that closed, with its last count.

The output is read as a Java consumer would: the key in Kafka's time-windowed format (the key's
UTF-8 bytes, then the window start as 8 bytes big-endian), the value a big-endian int64; and the
record timestamp is the window's latest counted record's, as Kafka's.
"""

import collections
import os
import pathlib
import random
import re
import shutil
import signal
import struct
import subprocess
import threading
import time

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

import ck_helpers as ck
from harness import OXBOW_BIN, free_port, track, wait_until

WINDOWED_COUNT = os.environ.get(
    "OXBOW_WINDOWED_COUNT", str(pathlib.Path(OXBOW_BIN).parent / "examples" / "windowed-count"))
INPUT, OUTPUT = "windowed-count-input", "windowed-count-output"
# Event times start here: a producer takes timestamp 0 for "now".
BASE = 1_700_000_000_000
# Not only ASCII: the key's UTF-8 bytes are what the windowed key starts with.
KEYS = ["alpha", "beta", "gamma", "δέλτα"]


# ---------------------------------------------------------------------------------------------
# The reference


def _starts(ts, size, advance):
    """The starts of the windows holding ts, ascending: multiples of advance, none below 0."""
    last = ts - ts % advance
    starts = []
    start = last
    while start >= 0 and start + size > ts:
        starts.append(start)
        start -= advance
    return starts[::-1]


class Reference:
    """Kafka's windowed count over one partition's records, in that partition's order."""

    def __init__(self, size, advance, grace):
        self.size, self.advance, self.grace = size, advance, grace
        self.stream_time = None
        self.counts = {}  # (key, start) -> count
        self.latest = {}  # (key, start) -> the latest counted record's timestamp
        self.changes = []  # (key, start, count, timestamp), in emission order
        self.late = 0  # records dropped from every window they belong to
        self.partly_late = 0  # records dropped from some of their windows, counted in others
        self.within_grace = 0  # records counted in a window that had ended by stream time

    def add(self, key, ts):
        self.stream_time = ts if self.stream_time is None else max(self.stream_time, ts)
        dropped = counted = 0
        for start in _starts(ts, self.size, self.advance):
            end = start + self.size
            if end <= self.stream_time - self.grace:
                dropped += 1
                continue
            counted += 1
            if end <= self.stream_time:
                self.within_grace += 1
            w = (key, start)
            self.counts[w] = self.counts.get(w, 0) + 1
            self.latest[w] = max(self.latest.get(w, ts), ts)
            self.changes.append((key, start, self.counts[w], self.latest[w]))
        if dropped and not counted:
            self.late += 1
        elif dropped:
            self.partly_late += 1

    def closed(self):
        """{(key, start): (count, timestamp)} of the windows closed by the stream time so far."""
        return {w: (n, self.latest[w]) for w, n in self.counts.items()
                if w[1] + self.size <= self.stream_time - self.grace}


def _records(rng, n, keys, size, grace, step=25):
    """[(key, ts)]: time moves forward by up to `step` ms a record, each record's timestamp is up
    to size + 2 * grace ms behind (or 100 ms ahead of) the current time: some on time, some within
    the grace period, some too late."""
    out, now = [], 0
    for _ in range(n):
        now += rng.randint(0, step)
        out.append((rng.choice(keys), BASE + max(0, now + rng.randint(-(size + 2 * grace), 100))))
    return out


# ---------------------------------------------------------------------------------------------
# Processes and topics


class App:
    """One windowed-count process; its stdout and stderr (the library's log) go to one file."""

    def __init__(self, broker, tmp_path, name, window_args, app_id="wcount", guarantee="at_least_once",
                 extra=()):
        self.log_path = tmp_path / f"{name}.log"
        self.state_dir = tmp_path / f"state-{name}"
        self.cmd = [WINDOWED_COUNT, *window_args, "--bootstrap-server", broker.bootstrap,
                    "--application-id", app_id, "--state-dir", str(self.state_dir),
                    "--commit-interval-ms", "200", "--processing-guarantee", guarantee,
                    # A killed instance's tasks move after 6 s rather than librdkafka's 45 s.
                    "--config", "consumer.session.timeout.ms=6000",
                    "--config", "consumer.heartbeat.interval.ms=1000", *extra]
        self.proc = None

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(self.cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL))
        return self

    def tail(self, n=3000):
        return self.log_path.read_text(errors="replace")[-n:]

    def wait_for(self, condition, timeout, message):
        """Polls condition() until it holds; fails at once if the application exits meanwhile."""
        wait_until(lambda: self.proc.poll() is not None or condition(), timeout, interval=0.05, message=message)
        assert self.proc.poll() is None, f"windowed-count exited {self.proc.returncode}\n{self.tail()}"

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(60)
        assert code == 0, f"windowed-count exited {code} after SIGTERM\n{self.tail()}"

    def kill(self):
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def broker(make_broker):
    # No initial rebalance delay: each application start joins its group at once.
    return make_broker(group_initial_rebalance_delay_ms=0)


def _create(broker, partitions):
    ck.create_topic(broker.bootstrap, INPUT, partitions)
    ck.create_topic(broker.bootstrap, OUTPUT, partitions)


def _producer(broker):
    # Idempotent: a retried batch can never land out of order, and input order is what is tested.
    return ck.producer(broker.bootstrap, enable_idempotence=True)


def _produce(producer, records, partition=0):
    ck.produce_all(producer, [{"key": k.encode(), "value": b"v", "timestamp": ts} for k, ts in records],
                   INPUT, partition=partition)


def _window(message):
    """(key, window start, count, timestamp) of an output record."""
    key = message.key()
    assert key is not None and len(key) > 8, key
    (start,) = struct.unpack(">q", key[-8:])
    assert len(message.value()) == 8, message.value()
    (count,) = struct.unpack(">q", message.value())
    return key[:-8].decode("utf-8"), start, count, message.timestamp()[1]


class Reader:
    """Reads every partition of the output topic from the start (manual assignment, no group)."""

    def __init__(self, broker, partitions, isolation="read_uncommitted"):
        self.consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused-reader",
                                  "enable.auto.commit": False, "isolation.level": isolation,
                                  "fetch.wait.max.ms": 50})
        self.consumer.assign([TopicPartition(OUTPUT, p, OFFSET_BEGINNING) for p in range(partitions)])
        self.messages = []

    def poll(self):
        for m in self.consumer.consume(1000, 0.1):
            if m.error():
                assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                continue
            self.messages.append(m)
        return self.messages

    def wait_for_count(self, n, timeout, app):
        app.wait_for(lambda: len(self.poll()) >= n, timeout, f"{n} output records")

    def close(self):
        self.consumer.close()


def _everything(broker, partitions, isolation="read_uncommitted"):
    """{partition: [(key, start, count, timestamp), ...]}: the whole output topic, read to its end
    (for read_committed, to its last stable offset), once nothing writes to it any more."""
    read = ck.consume_partitions(broker.bootstrap, [(OUTPUT, p, 0) for p in range(partitions)], timeout=60,
                                 **{"isolation.level": isolation})
    return {p: [_window(m) for m in read[(OUTPUT, p)]] for p in range(partitions)}


def _wait_committed(broker, app_id, partitions, ends, app, timeout=60):
    """Waits until the application has committed its input up to `ends` (every record processed)."""
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": app_id, "enable.auto.commit": False})
    try:
        def done():
            committed = c.committed([TopicPartition(INPUT, p) for p in range(partitions)], timeout=10)
            return [tp.offset for tp in committed] == ends
        app.wait_for(done, timeout, f"input committed up to {ends}")
    finally:
        c.close()


# ---------------------------------------------------------------------------------------------
# The tests


def test_tumbling_changes_match_the_reference_record_for_record(broker, tmp_path):
    """Tumbling windows, --emit changes, caching off: out-of-order input on one partition (on
    time, within the grace period, too late) gives exactly the reference's count changes, in
    order, with Kafka's windowed keys, counts and timestamps."""
    size, grace = 1000, 400
    _create(broker, 1)
    rng = random.Random(1709)
    records = _records(rng, 1500, KEYS, size, grace)
    ref = Reference(size, size, grace)
    for key, ts in records:
        ref.add(key, ts)
    # The input exercises every case: late records dropped, records counted within the grace.
    assert ref.late > 50 and ref.within_grace > 50, (ref.late, ref.within_grace)
    _produce(_producer(broker), records)

    app = App(broker, tmp_path, "changes", ["--window", "tumbling", "--size-ms", str(size), "--grace-ms",
                                            str(grace), "--emit", "changes"],
              extra=("--config", "statestore.cache.max.bytes=0")).start()
    reader = Reader(broker, 1)
    reader.wait_for_count(len(ref.changes), 60, app)
    reader.close()
    _wait_committed(broker, "wcount", 1, [len(records)], app)
    app.stop()
    got = _everything(broker, 1)[0]
    assert len(got) == len(ref.changes)
    for i, (g, e) in enumerate(zip(got, ref.changes)):
        assert g == e, f"output record {i}: (key, start, count, timestamp) {g}, expected {e}"


def test_hopping_final_emits_each_closed_window_once(broker, tmp_path):
    """Hopping windows (the advance not dividing the size), --emit final, caching off: the output
    holds exactly one record per window the reference closed, with its final count, in the order
    of window ends; none for a window still open (the input ends with a far-future record, whose
    own windows stay open)."""
    size, advance, grace = 1000, 300, 250
    _create(broker, 1)
    rng = random.Random(4242)
    records = _records(rng, 1500, KEYS, size, grace)
    records.append(("zz-end", max(ts for _, ts in records) + 100 * size))
    ref = Reference(size, advance, grace)
    for key, ts in records:
        ref.add(key, ts)
    expected = ref.closed()
    assert ref.late > 20 and ref.partly_late > 20 and ref.within_grace > 50, \
        (ref.late, ref.partly_late, ref.within_grace)
    assert len(expected) == len(ref.counts) - len(_starts(records[-1][1], size, advance))
    _produce(_producer(broker), records)

    app = App(broker, tmp_path, "final", ["--window", "hopping", "--size-ms", str(size), "--advance-ms",
                                          str(advance), "--grace-ms", str(grace), "--emit", "final"],
              # Caching off: every count change reaches the suppression, which alone keeps them back.
              extra=("--config", "statestore.cache.max.bytes=0")).start()
    reader = Reader(broker, 1)
    reader.wait_for_count(len(expected), 60, app)
    reader.close()
    _wait_committed(broker, "wcount", 1, [len(records)], app)
    app.stop()  # a clean close flushes everything: the topic now holds all the app will write
    got = _everything(broker, 1)[0]

    windows = [(k, s) for k, s, _, _ in got]
    duplicates = [w for w, n in collections.Counter(windows).items() if n > 1]
    assert not duplicates, f"windows emitted more than once: {duplicates[:5]}"
    assert {(k, s): (n, t) for k, s, n, t in got} == expected
    ends = [s + size for _, s, _, _ in got]
    assert ends == sorted(ends), "final results out of window-end order"


@pytest.mark.serial  # its kills must come while input is paced in, which load from other tests can outlast
def test_exactly_once_final_counts_across_kill_9(broker, tmp_path):
    """exactly_once_v2, tumbling windows, --emit final, three input partitions: while the input
    keeps arriving, the application is killed -9 at random points four times (once also losing
    its state directory) and started again. The committed output is exactly the reference's closed
    windows: each once, with its count, and per input partition in window-end order. (Under
    at_least_once the same run commits windows twice: killed between writing a window and
    committing its input, the application writes it again.)"""
    size, grace, partitions, kills = 200, 100, 3, 4
    _create(broker, partitions)
    rng = random.Random(31337)
    # Each partition its own keys: a window's count is one task's.
    inputs = {p: _records(rng, 3000, [f"p{p}-{k}" for k in KEYS], size, grace, step=10)
              for p in range(partitions)}
    end = max(ts for records in inputs.values() for _, ts in records) + 100 * size
    for p in range(partitions):
        inputs[p].append((f"p{p}-zz-end", end))
    expected = {}
    for p, records in inputs.items():
        ref = Reference(size, size, grace)
        for key, ts in records:
            ref.add(key, ts)
        assert ref.late > 20 and ref.within_grace > 20, (p, ref.late, ref.within_grace)
        expected.update(ref.closed())

    # The input arrives in small batches over half a minute, so that the kills come while the
    # application is processing (windows close every half second or so); once the last instance is
    # up, the rest is written at once.
    hurry, done, failure = threading.Event(), threading.Event(), []

    def produce():
        try:
            producer, batch = _producer(broker), 10
            slow_from = len(inputs[0]) * 4 // 5
            for i in range(0, len(inputs[0]), batch):
                for p, records in inputs.items():
                    _produce(producer, records[i:i + batch], partition=p)
                # The last fifth comes a batch a second while the kills go on, so that each new
                # instance has input of its own to commit even when kills run long: the one after
                # the lost state directory cannot fence its predecessor (a new transactional id) and
                # waits out that instance's open transaction (10 s) before it restores.
                hurry.wait(0.1 if i < slow_from else 1.0)
        except Exception as e:  # noqa: BLE001 - reported by the test thread
            failure.append(e)
        finally:
            done.set()

    args = ["--window", "tumbling", "--size-ms", str(size), "--grace-ms", str(grace), "--emit", "final"]

    def start():
        # Caching off: a window's final count is written as soon as it closes, not at the next
        # commit, so that a kill finds written output whose input is not committed yet.
        return App(broker, tmp_path, "eos", args, app_id="wcount-eos", guarantee="exactly_once_v2",
                   extra=("--config", "statestore.cache.max.bytes=0")).start()

    group = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "wcount-eos", "enable.auto.commit": False})

    def committed():
        """How many input records the application has committed, over all partitions."""
        offsets = group.committed([TopicPartition(INPUT, p) for p in range(partitions)], timeout=10)
        return sum(max(tp.offset, 0) for tp in offsets)

    reader = Reader(broker, partitions, isolation="read_committed")
    producer = threading.Thread(target=produce, daemon=True)
    app = start()
    producer.start()
    killed_while_producing = 0
    try:
        for i in range(kills):
            # Once this instance has processed and committed input of its own, at a random point.
            before = committed()
            app.wait_for(lambda: committed() > before, 90, "the instance committing input of its own")
            time.sleep(rng.random())
            app.kill()
            killed_while_producing += not done.is_set()
            if i == 1:
                shutil.rmtree(app.state_dir)  # restored from the changelogs
            app = start()
    finally:
        hurry.set()
        producer.join(120)
        group.close()
    assert not failure, failure
    assert killed_while_producing >= kills - 1, "the input was written before the kills came"

    reader.wait_for_count(len(expected), 120, app)
    reader.close()
    _wait_committed(broker, "wcount-eos", partitions, [len(inputs[p]) for p in range(partitions)], app)
    app.stop()
    got = _everything(broker, partitions, isolation="read_committed")

    flat = [w for records in got.values() for w in records]
    windows = collections.Counter((k, s) for k, s, _, _ in flat)
    duplicates = [w for w, n in windows.items() if n > 1]
    assert not duplicates, f"{len(duplicates)} windows committed more than once: {duplicates[:5]}"
    wrong = {(k, s): ((n, t), expected.get((k, s))) for k, s, n, t in flat if expected.get((k, s)) != (n, t)}
    assert not wrong, f"{len(wrong)} windows (got, expected) differ: {list(wrong.items())[:5]}"
    missing = set(expected) - set(windows)
    assert not missing, f"{len(missing)} closed windows missing: {sorted(missing)[:5]}"
    # Each task emits its windows as they close, by window end; its windows of one output partition
    # keep that order.
    for out_partition, records in got.items():
        for p in range(partitions):
            ends = [s + size for k, s, _, _ in records if k.startswith(f"p{p}-")]
            assert ends == sorted(ends), f"input partition {p}'s windows out of order in output {out_partition}"
    assert re.search(r"restored [1-9]\d* records", (tmp_path / "eos.log").read_text())


class SessionReference:
    """Kafka's session count over one partition's records, written out: stream time is the largest
    timestamp so far; a record at t joins its key's sessions [s, e] with e >= t - gap and s <= t +
    gap, merging them with [t, t]; if the merged session ends before stream time - gap - grace the
    record is dropped; otherwise (unless the merge is just [t, t]) each joined session is deleted,
    in order of end then start, and the merged one written with their counts plus one. Every change
    is emitted at its session's end."""

    def __init__(self, gap, grace):
        self.gap, self.grace = gap, grace
        self.stream_time = None
        self.sessions = {}  # key -> {(end, start): count}
        self.changes = []  # (key, start, end, count or None, timestamp)

    def add(self, key, t):
        self.stream_time = t if self.stream_time is None else max(self.stream_time, t)
        mine = self.sessions.setdefault(key, {})
        joined = sorted(se for se in mine if se[0] >= t - self.gap and se[1] <= t + self.gap)
        start = min([t] + [s for _, s in joined])
        end = max([t] + [e for e, _ in joined])
        if end < self.stream_time - self.gap - self.grace:
            return
        count = sum(mine[se] for se in joined) + 1
        if (start, end) != (t, t):
            for e, s in joined:
                self.changes.append((key, s, e, None, e))
                del mine[(e, s)]
        mine[(end, start)] = count
        self.changes.append((key, start, end, count, end))


def _session(message):
    """(key, start, end, count or None, timestamp) of a session-windowed output record."""
    key = message.key()
    end, start = struct.unpack(">qq", key[-16:])
    value = message.value()
    count = None if value is None else struct.unpack(">q", value)[0]
    return key[:-16].decode("utf-8"), start, end, count, message.timestamp()[1]


def test_session_changes_match_the_reference_record_for_record(broker, tmp_path):
    """Session windows, --emit changes, caching off: out-of-order input merging sessions gives
    exactly the reference's changes, a tombstone for each merged-away session, in Kafka's
    session-windowed key format (key, end, start)."""
    gap, grace = 300, 200
    _create(broker, 1)
    rng = random.Random(4242)
    records, now = [], 0
    for _ in range(1200):
        now += rng.randint(0, 120)
        records.append((rng.choice(KEYS), BASE + max(0, now - rng.randint(0, 700))))
    ref = SessionReference(gap, grace)
    for key, ts in records:
        ref.add(key, ts)
    deletes = sum(1 for c in ref.changes if c[3] is None)
    assert deletes > 20 and len(ref.changes) - deletes < len(records)  # merges and drops happened
    _produce(_producer(broker), records)
    app = App(broker, tmp_path, "sessions", ["--window", "session", "--gap-ms", str(gap),
                                             "--grace-ms", str(grace)],
              app_id="wcount-sessions", extra=("--config", "statestore.cache.max.bytes=0")).start()
    reader = Reader(broker, 1)
    reader.wait_for_count(len(ref.changes), 60, app)
    got = [_session(m) for m in reader.poll()]
    assert got == ref.changes
    app.stop()
    reader.close()


def _sliding_windows(times, d):
    """{start: (count, latest)} of one key's sliding windows, by definition: one ending at each
    record, [t - d, t], and one starting just after each record, [t + 1, t + 1 + d], when a later
    record falls in it; each holds the records within its bounds, both inclusive."""
    times = sorted(times)
    starts = set()
    for t in times:
        starts.add(t - d)
        if any(t < u <= t + 1 + d for u in times):
            starts.add(t + 1)
    out = {}
    for s in starts:
        inside = [u for u in times if s <= u <= s + d]
        out[s] = (len(inside), max(inside))
    return out


def test_sliding_windows_end_in_the_windows_their_definition_gives(broker, tmp_path):
    """Sliding windows, caching off, grace wide enough to keep every record: after out-of-order
    input, the last count written for each window is that window's by definition, and no other
    window was written."""
    d = 500
    _create(broker, 1)
    rng = random.Random(77)
    records, now = [], 100_000
    for _ in range(600):
        now += rng.randint(0, 150)
        records.append((rng.choice(KEYS), BASE + now - rng.randint(0, 2 * d)))
    expected = {}
    for key in KEYS:
        for start, value in _sliding_windows([ts for k, ts in records if k == key], d).items():
            expected[(key, start)] = value
    _produce(_producer(broker), records)
    app = App(broker, tmp_path, "sliding", ["--window", "sliding", "--size-ms", str(d),
                                            "--grace-ms", "100000000"],
              app_id="wcount-sliding", extra=("--config", "statestore.cache.max.bytes=0")).start()
    reader = Reader(broker, 1)
    latest = {}

    def settled():
        for key, start, count, ts in (_window(m) for m in reader.poll()[len(latest_seen):]):
            latest[(key, start)] = (count, ts)
            latest_seen.append(1)
        return latest == expected

    latest_seen = []
    app.wait_for(settled, 60, "every sliding window at its defined count")
    app.stop()
    reader.close()


@pytest.mark.parametrize("args, message", [
    (["--window", "triangular"], "--window must be tumbling, hopping, sliding or session"),
    (["--size-ms", "0"], "--size-ms needs a positive number"),
    (["--window", "hopping", "--size-ms", "1000"], "--window hopping needs --advance-ms"),
    (["--window", "hopping", "--size-ms", "100", "--advance-ms", "200"], "--advance-ms cannot be more"),
    (["--size-ms", "1000", "--emit", "sometimes"], "--emit must be changes or final"),
    (["--size-ms", "1000", "--grace-ms", "-1"], "--grace-ms needs a non-negative number"),
    (["--size-ms", "1000", "--no-such-flag", "1"], "unknown flag --no-such-flag"),
    (["--window", "sliding"], "--window sliding needs --size-ms"),
    (["--window", "session"], "--window session needs --gap-ms"),
    (["--window", "session", "--gap-ms", "10", "--size-ms", "10"], "--size-ms does not apply"),
])
def test_bad_flags_exit_2_with_one_line(args, message):
    """A command line the example cannot run with: exit 2 and one line on stderr naming the
    problem, before any connection (the bootstrap server does not exist)."""
    done = subprocess.run([WINDOWED_COUNT, *args, "--bootstrap-server", f"127.0.0.1:{free_port()}"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("windowed-count: ") and message in lines[0], done.stderr
    assert done.stdout == ""
