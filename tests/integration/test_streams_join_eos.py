"""oxbow-streams against the real broker: a stream-stream LEFT join, exactly once across kill -9.

The application is build/tests/streams_test_app --topology stream-join (tests/streams_app/main.cpp):
"sj-left" leftJoin "sj-right" with JoinWindows.ofTimeDifferenceAndGrace(1 s, 500 ms), joiner
`l + "+" + (r or "null")`, written to "sj-output". The expected output is computed here,
independently of the library, in two ways that must agree:

- what a left join means: per key (and so per partition, both sides being partitioned alike),
  every left record l and right record r at most D ms apart give "l+r" at the later of their
  times; a left record with no such r gives "l+null" at its own time, once its window has closed;
- Kafka's KStreamKStreamJoin (3.1 on) record by record, over one task's records in the order it
  takes them: the join's stream time is the latest time either side has seen; a record looks the
  other side's store up in its window (not further back than the other store's latest time minus
  the retention before + after + grace); a left record that found nothing waits, or, when its
  window ended before stream time, comes out at once joined with null; a record at stream time
  first lets out, joined with null, every waiting record whose time + after + grace lies before
  stream time; a right record that finds a waiting left record takes it out of the waiting.

The input is made so that the two agree (checked here, before the run) for the orders the task may
take the two sides in (by timestamp, as a partition group does, or one side a whole written batch
ahead of the other) and wherever an instance is restarted (its stream times, kept in memory, start
again): timestamps trail the event clock by little, two batches plus that lag span less than the
grace period, and each partition ends with a far-future record, written once all the rest is
processed, that closes every window still open. So the output is a fixed multiset, whatever the
kills: compared as such, duplicates (a kill between writing results and committing their input,
with at_least_once) and losses show.
"""

import collections
import random
import re
import shutil
import signal
import threading
import time

import pytest
from confluent_kafka import Consumer, TopicPartition

import ck_helpers as ck
from harness import wait_until
from test_streams_apps import App, Reader, _create

LEFT, RIGHT, OUTPUT = "sj-left", "sj-right", "sj-output"
# As in the stream-join topology of tests/streams_app/main.cpp.
DIFFERENCE, GRACE = 1000, 500
# Event times start here: a producer takes timestamp 0 for "now".
BASE = 1_700_000_000_000
PARTITIONS = 3
# Records per side and partition (the backlog test: more than a partition group holds before it
# pauses a partition, partition_group.h).
PER_SIDE = 1000
BACKLOG_PER_SIDE = 2500
STEP = 40  # the event clock moves 0..STEP ms a record (both sides of a partition)
JITTER = 100  # a record's time trails the event clock by up to this
# The input is written a batch of event-clock time at a time. A side taken a batch ahead of the
# other moves stream time up to two batches past a record of the other side, which trails the
# clock by up to JITTER + STEP (a repeated time): 2 * BATCH_MS + JITTER + STEP < GRACE.
BATCH_MS = 150
KEYS = 40  # keys of a partition seen on both sides
GUARANTEE = "exactly_once_v2"
# With kills, the input is written over this long (less once the last instance is up): a killed
# instance's successor takes some 8 s to be running (the dead member's 6 s session timeout).
WRITE_S = 50


# ---------------------------------------------------------------------------------------------
# The input


class Input:
    """One partition's records on both sides: lists of (batch, key, value, timestamp) in the order
    they are written, and the far-future records that end them."""

    def __init__(self, rng, partition, per_side=PER_SIDE):
        p = partition
        keys = [f"p{p}-k{j}" for j in range(KEYS)]
        # Keys of the left side alone: always joined with null.
        lonely = [f"p{p}-lonely{j}" for j in range(5)]
        self.left, self.right = [], []
        now = 0
        while len(self.left) < per_side or len(self.right) < per_side:
            now += rng.randint(0, STEP)
            right = len(self.left) >= per_side or (len(self.right) < per_side and rng.random() < 0.5)
            side = self.right if right else self.left
            if side and rng.random() < 0.03:
                # Another record with the key and time of the side's previous one.
                _, key, _, ts = side[-1]
            else:
                key = rng.choice(keys if right or rng.random() < 0.95 else lonely)
                ts = BASE + max(0, now - rng.randint(0, JITTER))
            side.append((now // BATCH_MS, key, f"{'R' if right else 'L'}{p}.{len(side)}", ts))
        self.batches = now // BATCH_MS + 1
        end = max(r[3] for r in self.left + self.right) + 1000 * (DIFFERENCE + GRACE)
        self.left_end = (self.batches, f"p{p}-end-left", f"L{p}.end", end)
        self.right_end = (self.batches, f"p{p}-end-right", f"R{p}.end", end)

    def batch(self, side, b):
        return [r for r in side if r[0] == b]


def _inputs(seed, per_side=PER_SIDE):
    rng = random.Random(seed)
    return [Input(rng, p, per_side) for p in range(PARTITIONS)]


# ---------------------------------------------------------------------------------------------
# The references


def left_join_semantics(inp):
    """What the left join means, over one partition: a Counter of (key, value, timestamp)."""
    by_key = collections.defaultdict(list)
    for _, key, value, ts in inp.right:
        by_key[key].append((ts, value))
    out = collections.Counter()
    for _, key, value, ts in inp.left:
        partners = [(rt, rv) for rt, rv in by_key[key] if abs(rt - ts) <= DIFFERENCE]
        for rt, rv in partners:
            out[(key, f"{value}+{rv}", max(ts, rt))] += 1
        if not partners:
            out[(key, f"{value}+null", ts)] += 1
    # The far-future left record's window never closes: it comes out neither way.
    return out


class LeftJoinReference:
    """Kafka's KStreamKStreamJoin, left join, over one task's records in processing order."""

    def __init__(self, before, after, grace):
        self.before, self.after, self.grace = before, after, grace
        self.retention = before + after + grace
        self.stores = ({}, {})  # per side (0 left, 1 right): key -> [(time, value)]
        self.waiting = {}  # (time, key) -> [left values], the left records that found nothing yet
        self.out = collections.Counter()
        self.restart()

    def restart(self):
        """A new instance: the stores are as committed, the times kept in memory start again."""
        self.stream_time = -1
        self.observed = [-1, -1]  # each store's latest time

    def process(self, right, key, value, t):
        self.stream_time = max(self.stream_time, t)
        my_before, my_after = (self.after, self.before) if right else (self.before, self.after)
        if t == self.stream_time:
            for time_, k in sorted(self.waiting):
                if time_ + my_after + self.grace >= self.stream_time:
                    break
                for v in self.waiting.pop((time_, k)):
                    self.out[(k, f"{v}+null", time_)] += 1
        mine, other = (1, 0) if right else (0, 1)
        lo = max(0, t - my_before, self.observed[other] - self.retention + 1)
        hi = max(0, t + my_after)
        partners = [(ot, ov) for ot, ov in self.stores[other].get(key, []) if lo <= ot <= hi]
        for ot, ov in sorted(partners, key=lambda p: p[0]):
            if right:
                self.waiting.pop((ot, key), None)
                self.out[(key, f"{ov}+{value}", max(t, ot))] += 1
            else:
                self.out[(key, f"{value}+{ov}", max(t, ot))] += 1
        if not partners and not right:
            if hi < self.stream_time:
                self.out[(key, f"{value}+null", t)] += 1
            else:
                self.waiting.setdefault((t, key), []).append(value)
        self.stores[mine].setdefault(key, []).append((t, value))
        self.observed[mine] = max(self.observed[mine], t)


def _merged(left, right):
    """A partition group's order: the earlier head first (the left side on a tie)."""
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right) or (i < len(left) and left[i][3] <= right[j][3]):
            yield False, left[i]
            i += 1
        else:
            yield True, right[j]
            j += 1


def _ahead(inp, right_first):
    """One side taken a whole batch ahead of the other, batch after batch."""
    first, second = (inp.right, inp.left) if right_first else (inp.left, inp.right)
    yield from ((right_first, r) for r in inp.batch(first, 0))
    for b in range(inp.batches):
        yield from ((right_first, r) for r in inp.batch(first, b + 1))
        yield from ((not right_first, r) for r in inp.batch(second, b))


def _run(order, restart_every=None, rng=None):
    ref = LeftJoinReference(DIFFERENCE, DIFFERENCE, GRACE)
    for n, (right, (_, key, value, ts)) in enumerate(order):
        if restart_every and rng.randrange(restart_every) == 0:
            ref.restart()
        ref.process(right, key, value, ts)
    return ref


def expected_output(inputs):
    """The join's output over every partition, a Counter of (key, value, timestamp), checked to be
    the same for every processing order the test may meet."""
    expected = collections.Counter()
    rng = random.Random(7)
    for inp in inputs:
        meaning = left_join_semantics(inp)
        ends = [(False, inp.left_end), (True, inp.right_end)]
        orders = {
            "timestamp order": list(_merged(inp.left, inp.right)),
            "left a batch ahead": list(_ahead(inp, right_first=False)),
            "right a batch ahead": list(_ahead(inp, right_first=True)),
        }
        for name, order in orders.items():
            for restarts in (None, 150):
                ref = _run(order + ends, restarts, rng)
                assert ref.out == meaning, (
                    f"the input does not make the output independent of the order ({name}, "
                    f"restarts {restarts}): {len(ref.out - meaning)} extra, {len(meaning - ref.out)} missing")
                assert not ref.waiting.keys() - {(inp.left_end[3], inp.left_end[1])}
        expected += meaning
    return expected


# ---------------------------------------------------------------------------------------------
# The run


@pytest.fixture
def broker(make_broker):
    # No initial rebalance delay: each application start joins its group at once.
    return make_broker(group_initial_rebalance_delay_ms=0)


def _records(rows, partition):
    return [{"key": key.encode(), "value": value.encode(), "timestamp": ts, "partition": partition}
            for _, key, value, ts in rows]


def _produce_batch(producer, inputs, b):
    """Batch b of every partition: the left side's, then the right side's."""
    for topic, side in ((LEFT, "left"), (RIGHT, "right")):
        records = [r for p, inp in enumerate(inputs) for r in _records(inp.batch(getattr(inp, side), b), p)]
        if records:
            ck.produce_all(producer, records, topic)


class Committed:
    """The application's committed offsets on both inputs."""

    def __init__(self, broker, group):
        self.consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                                  "enable.auto.commit": False})

    def offsets(self):
        tps = [TopicPartition(t, p) for t in (LEFT, RIGHT) for p in range(PARTITIONS)]
        return [max(tp.offset, 0) for tp in self.consumer.committed(tps, timeout=10)]

    def close(self):
        self.consumer.close()


def _wait(app, condition, timeout, message):
    """Polls condition() until it holds; fails at once if the application exits meanwhile."""
    wait_until(lambda: app.proc.poll() is not None or condition(), timeout, interval=0.05, message=message)
    assert app.proc.poll() is None, f"the application exited {app.proc.returncode}\n{app.tail()}"


def _output(broker):
    """The committed output, read to its end: [(key, value, timestamp)]."""
    read = ck.consume_partitions(broker.bootstrap, [(OUTPUT, 0, 0)], timeout=60,
                                 **{"isolation.level": "read_committed"})
    return [(m.key().decode(), m.value().decode(), m.timestamp()[1]) for m in read[(OUTPUT, 0)]]


def _compare(got, expected, app=None):
    """`app`: an instance whose log the failure shows (what it logged of rebalances, aborts)."""
    counted = collections.Counter(got)
    duplicates = {r: n for r, n in counted.items() if n > 1}
    extra, missing = counted - expected, expected - counted
    log = f"\n{app.tail()}" if app and (duplicates or extra or missing) else ""
    assert not duplicates, (
        f"{len(duplicates)} results committed more than once: {list(duplicates.items())[:5]}{log}")
    assert not extra and not missing, (
        f"{len(extra)} results not expected, e.g. {list(extra)[:5]}; "
        f"{len(missing)} expected results missing, e.g. {list(missing)[:5]}{log}")


def _run_app(broker, tmp_path, seed, kills):
    inputs = _inputs(seed)
    expected = expected_output(inputs)
    nulls = sum(n for (_, v, _), n in expected.items() if v.endswith("+null"))
    matches = sum(expected.values()) - nulls
    # Both kinds of result, in numbers, and all distinct (values are unique per input record).
    assert nulls > 300 and matches > 1000, (nulls, matches)
    assert set(expected.values()) == {1}
    _create(broker, {LEFT: PARTITIONS, RIGHT: PARTITIONS, OUTPUT: 1})
    batches = max(inp.batches for inp in inputs)
    app_id = f"sj-{seed}"

    # The input arrives in batches over WRITE_S seconds, so that kills come mid-stream; once the
    # last instance is up (or at once, without kills) the rest is written without pauses.
    hurry, done, failure = threading.Event(), threading.Event(), []
    if not kills:
        hurry.set()

    def produce():
        try:
            # Idempotent: a retried batch never lands out of order.
            producer = ck.producer(broker.bootstrap, enable_idempotence=True)
            start = time.monotonic()
            for b in range(batches):
                _produce_batch(producer, inputs, b)
                hurry.wait(start + (b + 1) * WRITE_S / batches - time.monotonic())
        except Exception as e:  # noqa: BLE001 - reported by the test thread
            failure.append(e)
        finally:
            done.set()

    app = App(broker, tmp_path, "stream-join", "sj", app_id, guarantee=GUARANTEE,
              extra=("--config", "statestore.cache.max.bytes=0"))
    committed = Committed(broker, app_id)
    producer = threading.Thread(target=produce, daemon=True)
    app.start()
    producer.start()
    rng = random.Random(seed)
    killed_while_producing = 0
    try:
        for i in range(kills):
            # Once this instance has processed and committed input of its own, at a random point.
            before = sum(committed.offsets())
            _wait(app, lambda: sum(committed.offsets()) > before, 90,
                  "the instance committing input of its own")
            time.sleep(rng.random())
            app.proc.kill()
            app.proc.wait()
            killed_while_producing += not done.is_set()
            if i == 1:
                shutil.rmtree(app.state_dir, ignore_errors=True)  # restored from the changelogs
            app.start()
        hurry.set()
        producer.join(120)
        assert not failure, failure
        assert done.is_set(), "the input is still being written"
        assert killed_while_producing >= kills - 1, "the input was written before the kills came"

        # Everything processed, then the far-future records close the windows still open.
        ends = [len(inp.left) for inp in inputs] + [len(inp.right) for inp in inputs]
        _wait(app, lambda: committed.offsets() == ends, 90, f"the input committed up to {ends}")
        last = ck.producer(broker.bootstrap)
        ck.produce_all(last, [r for p, inp in enumerate(inputs) for r in _records([inp.left_end], p)], LEFT)
        ck.produce_all(last, [r for p, inp in enumerate(inputs) for r in _records([inp.right_end], p)], RIGHT)
        ends = [n + 1 for n in ends]

        reader = Reader(broker, OUTPUT, 1, isolation="read_committed")
        _wait(app, lambda: len(reader.poll()) >= sum(expected.values()), 90,
              f"{sum(expected.values())} committed results")
        reader.close()
        _wait(app, lambda: committed.offsets() == ends, 60, f"the input committed up to {ends}")
    finally:
        hurry.set()
        committed.close()
    app.stop()
    _compare(_output(broker), expected)
    return app


def test_left_join_matches_the_reference(broker, tmp_path):
    """The control: one instance, no kills, the input written while it runs; the committed output
    is exactly the reference's, each matched pair once and each unmatched left record once."""
    _run_app(broker, tmp_path, seed=11, kills=0)


@pytest.mark.serial  # its kills must come while input is paced in, which load from other tests can outlast
def test_left_join_exactly_once_across_kill_9(broker, tmp_path):
    """exactly_once_v2: while the input keeps arriving, the application is killed -9 at random
    points four times (once also losing its state directory, restored from the changelogs) and
    started again. The committed output is still exactly the reference's: no result twice, none
    missing, no "+null" for a left record that has a partner, nothing else. (Under at_least_once
    the same run commits results twice.)"""
    _run_app(broker, tmp_path, seed=1234, kills=4)
    assert re.search(r"restored [1-9]\d* records", (tmp_path / "sj.log").read_text())


def _run_over_a_backlog(broker, tmp_path, stall=None):
    """Writes the whole input, then runs one instance over it until every result is committed;
    `stall` (process, seconds), if given, is stopped that long once a tenth of them are."""
    inputs = _inputs(77, per_side=BACKLOG_PER_SIDE)
    expected = expected_output(inputs)
    assert sum(n for (_, v, _), n in expected.items() if v.endswith("+null")) > 300
    _create(broker, {LEFT: PARTITIONS, RIGHT: PARTITIONS, OUTPUT: 1})
    producer = ck.producer(broker.bootstrap, enable_idempotence=True)
    for b in range(max(inp.batches for inp in inputs)):
        _produce_batch(producer, inputs, b)
    ck.produce_all(producer, [r for p, inp in enumerate(inputs) for r in _records([inp.left_end], p)], LEFT)
    ck.produce_all(producer, [r for p, inp in enumerate(inputs) for r in _records([inp.right_end], p)], RIGHT)
    app = App(broker, tmp_path, "stream-join", "backlog", "sj-backlog", guarantee=GUARANTEE,
              extra=("--config", "statestore.cache.max.bytes=0")).start()
    reader = Reader(broker, OUTPUT, 1, isolation="read_committed")
    total = sum(expected.values())
    if stall:
        who, seconds = stall
        _wait(app, lambda: len(reader.poll()) >= total // 10, 120, f"{total // 10} committed results")
        proc = broker.proc if who == "broker" else app.proc
        proc.send_signal(signal.SIGSTOP)
        try:
            time.sleep(seconds)  # the fault itself: a process that does not run for this long
        finally:
            proc.send_signal(signal.SIGCONT)
    _wait(app, lambda: len(reader.poll()) >= total, 120, f"{total} committed results")
    reader.close()
    app.stop()
    _compare(_output(broker), expected, app)


def test_left_join_over_a_backlog_matches_the_reference(broker, tmp_path):
    """All the input is written before the application starts, thousands of records a partition:
    the task must still take both sides in timestamp order (a full partition is paused, never
    overtaken), so the output is exactly the reference's."""
    _run_over_a_backlog(broker, tmp_path)


@pytest.mark.parametrize("who", ["broker", "app"])
def test_left_join_through_a_stall_past_the_timeouts_matches_the_reference(broker, tmp_path, who):
    """The broker, or the application, stops for 11 s mid-backlog: past the member's 6 s session
    and the transaction's 10 s timeout, so the member is dropped from the group, writes in flight
    time out and the open transaction can only be aborted. The thread must not fail: it aborts,
    takes its tasks back from their last commit and ends with exactly the reference's output (as
    Kafka Streams goes on after a TaskMigratedException or TaskCorruptedException)."""
    _run_over_a_backlog(broker, tmp_path, stall=(who, 11))
