"""oxbow-streams against the real broker: a KTable-KTable foreign-key LEFT join (KIP-213).

The application is build/tests/streams_test_app --topology fk-join (tests/streams_app/main.cpp):
table "fk-left" leftJoin table "fk-right" on the foreign key before '|' in the left value (a value
without '|' has none), joiner `l + "+" + (r or "null")`, the result table written to "fk-output".
The input topics have 3 and 2 partitions on purpose: a foreign-key join needs no co-partitioning,
its subscriptions travel to the right table's partitions and the responses back through two
internal topics.

What comes out on the way depends on how the two sides and the internal topics interleave, so the
end state is checked: once everything is processed, the latest output per key is the relational
left join of the final tables (each final left row with its right row, or null), and a key whose
row is gone ends with a tombstone (or never had a result). Kafka's join promises that much: a
response is applied only while the row still has the value it answered (by hash), and the last
update of either side gives every row it concerns its last result.
"""

import random
import re
import shutil
import threading
import time

import pytest
from confluent_kafka import TopicPartition

import ck_helpers as ck
from harness import wait_until
from test_streams_apps import App, Reader, _create

LEFT, RIGHT, OUTPUT = "fk-left", "fk-right", "fk-output"
LEFT_PARTITIONS, RIGHT_PARTITIONS = 3, 2
# Event times start here: a producer takes timestamp 0 for "now".
BASE = 1_700_000_000_000
UPDATES = 3000
LEFT_KEYS = [f"o{i}" for i in range(150)]
RIGHT_KEYS = [f"c{i}" for i in range(25)]
# Foreign keys the right table never has: those rows always join null.
DANGLING = ["c-gone0", "c-gone1"]
BATCH = 100


class Tables:
    """The input, update by update, and the two tables it leaves."""

    def __init__(self, seed, n=UPDATES):
        rng = random.Random(seed)
        self.left, self.right = {}, {}
        self.updates = []  # (topic, key, value or None)
        for i in range(n):
            if rng.random() < 0.35:
                self._right(rng, i)
            else:
                self._left(rng, i)

    def _left(self, rng, i):
        key, roll = rng.choice(LEFT_KEYS), rng.random()
        if roll < 0.12:
            value = None  # a delete, of an absent row now and then
        elif roll < 0.2:
            value = f"nofk{i}"
        elif roll < 0.3 and key in self.left and "|" in self.left[key]:
            value = self.left[key].split("|")[0] + f"|l{i}"  # same foreign key, new payload
        else:
            value = f"{rng.choice(RIGHT_KEYS + DANGLING)}|l{i}"
        self._set(self.left, LEFT, key, value)

    def _right(self, rng, i):
        key = rng.choice(RIGHT_KEYS)
        self._set(self.right, RIGHT, key, None if rng.random() < 0.15 else f"r{i}")

    def _set(self, table, topic, key, value):
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value
        self.updates.append((topic, key, value))

    def joined(self):
        """The relational left join of the final tables."""
        out = {}
        for key, value in self.left.items():
            fk = value.split("|")[0] if "|" in value else None
            right = self.right.get(fk) if fk else None
            out[key] = f"{value}+{right if right is not None else 'null'}"
        return out


def _check_input(tables):
    """Every kind of final row, in numbers, so that the comparison means something."""
    joined = tables.joined()
    matched = sum(not v.endswith("+null") for v in joined.values())
    dangling = sum(v.split("|")[0] in DANGLING for v in tables.left.values())
    gone = set(LEFT_KEYS) - set(tables.left)
    assert matched > 50 and len(joined) - matched > 20 and dangling > 3 and len(gone) > 5, \
        (matched, len(joined), dangling, len(gone))


def _produce(producer, updates, offset):
    records = [{"key": key.encode(), "value": None if value is None else value.encode(),
                "timestamp": BASE + offset + i}
               for i, (_, key, value) in enumerate(updates)]
    for topic in (LEFT, RIGHT):
        mine = [r for r, (t, _, _) in zip(records, updates) if t == topic]
        if mine:
            ck.produce_all(producer, mine, topic)


def _producer(broker):
    # Java's partitioner, as Kafka's producers would place the keys; one idempotent producer keeps
    # each key's updates in order.
    return ck.producer(broker.bootstrap, partitioner="murmur2_random", enable_idempotence=True)


def _latest(messages):
    """The output folded into a table: the latest value per key, a tombstone removing it."""
    latest = {}
    for m in messages:
        key = m.key().decode()
        if m.value() is None:
            latest.pop(key, None)
        else:
            latest[key] = m.value().decode()
    return latest


def _diff(got, expected):
    wrong = {k: (got.get(k), v) for k, v in expected.items() if got.get(k) != v}
    extra = {k: v for k, v in got.items() if k not in expected}
    return (f"{len(wrong)} keys differ (got, expected), e.g. {dict(list(wrong.items())[:5])}; "
            f"{len(extra)} keys that should be gone, e.g. {dict(list(extra.items())[:5])}")


def _wait_joined(app, broker, expected, timeout, isolation):
    """Polls the output until its folded state is the expected join, then reads it once more from
    the start with a fresh consumer: the same."""
    reader = Reader(broker, OUTPUT, 1, isolation=isolation)
    try:
        wait_until(lambda: app.proc.poll() is not None or _latest(reader.poll()) == expected,
                   timeout, interval=0.1, message="the output to end at the reference join")
    except AssertionError as e:
        raise AssertionError(f"{e}: {_diff(_latest(reader.messages), expected)}\n{app.tail()}")
    finally:
        reader.close()
    assert app.proc.poll() is None, f"the application exited {app.proc.returncode}\n{app.tail()}"
    read = ck.consume_partition(broker.bootstrap, OUTPUT, 0, 0, timeout=30, **{"isolation.level": isolation})
    assert _latest(read) == expected, _diff(_latest(read), expected)


def _internal_topics(broker, app_id):
    topics = ck.admin(broker.bootstrap).list_topics(timeout=10).topics
    return {t: len(md.partitions) for t, md in topics.items() if t.startswith(app_id + "-")}


def _check_internal_topics(broker, app_id):
    """Subscriptions are partitioned as the right table, responses as the left one, and the
    subscription store has a changelog."""
    topics = _internal_topics(broker, app_id)
    registration = [t for t in topics if "SUBSCRIPTION-REGISTRATION" in t and t.endswith("-topic")]
    response = [t for t in topics if "SUBSCRIPTION-RESPONSE" in t and t.endswith("-topic")]
    store = [t for t in topics if "SUBSCRIPTION-STATE-STORE" in t and t.endswith("-changelog")]
    assert len(registration) == 1 and len(response) == 1 and len(store) == 1, topics
    assert topics[registration[0]] == RIGHT_PARTITIONS, topics
    assert topics[response[0]] == LEFT_PARTITIONS, topics


@pytest.fixture
def broker(make_broker):
    # No initial rebalance delay: each application start joins its group at once.
    return make_broker(group_initial_rebalance_delay_ms=0)


def _create_topics(broker):
    _create(broker, {LEFT: LEFT_PARTITIONS, RIGHT: RIGHT_PARTITIONS, OUTPUT: 1})


def test_foreign_key_left_join_ends_at_the_relational_join(broker, tmp_path):
    """Half the updates are written before the application starts, half while it runs (with the
    default cache, which coalesces updates between commits); the output ends at the left join of
    the final tables: rows joined with their current right row, rows without a foreign key or
    whose foreign row is missing or deleted joined with null, deleted rows tombstoned."""
    tables = Tables(seed=5)
    _check_input(tables)
    _create_topics(broker)
    producer = _producer(broker)
    half = len(tables.updates) // 2
    _produce(producer, tables.updates[:half], 0)
    app_id = "fk-join"
    app = App(broker, tmp_path, "fk-join", "fk", app_id).start()
    app.wait_state("RUNNING", timeout=30)
    for start in range(half, len(tables.updates), BATCH):
        _produce(producer, tables.updates[start:start + BATCH], start)
    _wait_joined(app, broker, tables.joined(), 45, "read_uncommitted")
    _check_internal_topics(broker, app_id)
    app.stop()


# With kills, the input is written over this long (the rest at once after the last restart): a
# killed instance's successor takes some 8 s to run (the dead member's 6 s session timeout).
WRITE_S = 30


class Committed:
    """The application's committed offsets on both inputs."""

    def __init__(self, broker, group):
        self.consumer = ck.consumer(broker.bootstrap, group_id=group)

    def total(self):
        tps = [TopicPartition(LEFT, p) for p in range(LEFT_PARTITIONS)] + \
              [TopicPartition(RIGHT, p) for p in range(RIGHT_PARTITIONS)]
        return sum(max(tp.offset, 0) for tp in self.consumer.committed(tps, timeout=10))

    def close(self):
        self.consumer.close()


@pytest.mark.serial  # its kills must come while input is paced in, which load from other tests can outlast
def test_foreign_key_left_join_exactly_once_across_kill_9(broker, tmp_path):
    """exactly_once_v2: while the input is still being written, the application is killed -9 at
    random points twice (the second time also losing its state directory, so the subscription
    store comes back from its changelog) and started again. The committed output still ends at
    the left join of the final tables."""
    seed = 99
    tables = Tables(seed)
    _check_input(tables)
    _create_topics(broker)
    app_id = "fk-join-eos"
    app = App(broker, tmp_path, "fk-join", "fk-eos", app_id, guarantee="exactly_once_v2",
              extra=("--config", "statestore.cache.max.bytes=0"))
    batches = [tables.updates[s:s + BATCH] for s in range(0, len(tables.updates), BATCH)]
    hurry, done, failure = threading.Event(), threading.Event(), []

    def produce():
        try:
            producer = _producer(broker)
            start = time.monotonic()
            for b, batch in enumerate(batches):
                _produce(producer, batch, b * BATCH)
                hurry.wait(start + (b + 1) * WRITE_S / len(batches) - time.monotonic())
        except Exception as e:  # noqa: BLE001 - reported by the test thread
            failure.append(e)
        finally:
            done.set()

    committed = Committed(broker, app_id)
    writer = threading.Thread(target=produce, daemon=True)
    app.start()
    writer.start()
    rng = random.Random(seed)
    killed_while_producing = 0
    try:
        for kill in range(2):
            # Once this instance has committed input of its own, at a random point after that.
            before = committed.total()
            wait_until(lambda: app.proc.poll() is not None or committed.total() > before, 40,
                       interval=0.1, message="the instance committing input of its own")
            assert app.proc.poll() is None, f"the application exited {app.proc.returncode}\n{app.tail()}"
            time.sleep(rng.random())
            app.proc.kill()
            app.proc.wait()
            killed_while_producing += not done.is_set()
            if kill == 1:
                shutil.rmtree(app.state_dir, ignore_errors=True)
            app.start()
        hurry.set()
        writer.join(60)
        assert not failure, failure
        assert done.is_set(), "the input is still being written"
        assert killed_while_producing == 2, "the input was all written before the kills came"
        _wait_joined(app, broker, tables.joined(), 45, "read_committed")
        assert re.search(r"restored [1-9]\d* records", app.text()), app.tail()
    finally:
        hurry.set()
        committed.close()
    _check_internal_topics(broker, app_id)
    app.stop()
