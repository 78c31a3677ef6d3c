"""oxbow-streams' word count at scale against the real broker: instances killed with -9 and
restarted at random points, added and removed, scaled 1 -> 3 -> 1, and the broker itself stopped
and started again under a running application.

The reference is computed here from the input lines. Under exactly_once_v2 the committed output
(read_committed) must end at exactly the true counts and no committed count may go backwards,
which is also what fencing guarantees: a task processed by two instances at once would double
count or commit a stale count.
"""

import random
import re
import time

import pytest
from confluent_kafka.admin import NewTopic

import ck_helpers as ck
from harness import wait_until
from test_streams_wordcount import INPUT, OUTPUT, App, Output, _produce, _truth

PARTITIONS = 6
WORDS = [f"{a}{b}" for a in ("kafka", "stream", "table", "log", "oxbow", "Commit") for b in range(40)]


def _lines(rng, n):
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 9))) + rng.choice(["", "!", ", x_1"])
            for _ in range(n)]


@pytest.fixture
def broker(make_broker):
    b = make_broker()
    admin = ck.admin(b.bootstrap)
    for f in admin.create_topics([NewTopic(INPUT, PARTITIONS, 1), NewTopic(OUTPUT, PARTITIONS, 1)]).values():
        f.result(20)
    ck.wait_for_topic(b.bootstrap, INPUT, PARTITIONS)
    return b


def _chaos(b, tmp_path, guarantee, lines, rng, out):
    """Three instances; each killed -9 and restarted twice at random points while the input
    arrives in chunks; a fourth added midway and one removed (SIGTERM) later."""
    n = 0

    def app(name):
        nonlocal n
        n += 1
        # Kafka Streams' default cache (the example turns it off), flushed at commits: a restart
        # after kill -9 has changelog records past its checkpoint to restore.
        return App(b, tmp_path, f"{name}-{n}", guarantee=guarantee, state=name,
                   extra=("--config", "statestore.cache.max.bytes=10485760")).start()

    apps = {name: app(name) for name in ("a", "b", "c")}
    chunks = [lines[i:i + len(lines) // 8] for i in range(0, len(lines), len(lines) // 8)]
    victims = ["a", "b", "c", "a", "b", "c"]
    rng.shuffle(victims)
    done = []
    for i, chunk in enumerate(chunks):
        _produce(b, chunk)
        # The earlier chunks are through; the kill below falls at a random point of this one.
        out.read_until(_truth(done), timeout=300, at_least=True)
        done += chunk
        time.sleep(rng.random() * 1.5)
        if i == 2:
            apps["d"] = app("d")  # scale out
        if i == 5:
            apps.pop("d").stop()  # scale in: clean removal
        if victims:
            v = victims.pop()
            apps[v].kill()
            apps[v] = app(v)
    return apps


def test_exactly_once_200k_lines_through_kills_and_scaling(broker, tmp_path):
    rng = random.Random(200)
    lines = _lines(rng, 200_000)
    out = Output(broker, isolation="read_committed")
    apps = _chaos(broker, tmp_path, "exactly_once_v2", lines, rng, out)
    out.read_until(_truth(lines), timeout=300)
    for a in apps.values():
        a.stop()
    assert not out.backwards, f"committed counts went backwards: {out.backwards[:5]}"
    out.close()
    logs = "".join(p.read_text() for p in tmp_path.glob("*.log"))
    assert re.search(r"restored [1-9]\d* records", logs), "no task was ever restored from a changelog"


def test_at_least_once_through_kills_and_scaling_then_exact_after_a_clean_run(broker, tmp_path):
    rng = random.Random(100)
    lines = _lines(rng, 200_000)  # as the exactly-once run
    out = Output(broker)
    apps = _chaos(broker, tmp_path, "at_least_once", lines, rng, out)
    truth = _truth(lines)
    out.read_until(truth, timeout=300, at_least=True)  # reprocessing may count twice
    for a in apps.values():
        a.stop()
    out.close()
    # The same input through a fresh application with no failures counts exactly.
    clean = Output(broker)
    app = App(broker, tmp_path, "clean", app_id="wc-clean").start()
    clean.latest.clear()
    clean.read_until(truth, timeout=300)
    app.stop()
    clean.close()


def test_scaling_one_three_one_moves_only_what_it_must_and_stays_exact(broker, tmp_path):
    rng = random.Random(13)
    lines = _lines(rng, 60_000)
    out = Output(broker, isolation="read_committed")
    eos = dict(guarantee="exactly_once_v2")
    first = App(broker, tmp_path, "one", **eos).start()
    _produce(broker, lines[:20_000])
    out.read_until(_truth(lines[:20_000]))
    more = [App(broker, tmp_path, name, **eos).start() for name in ("two", "three")]
    # Scaled out once the group has given the new instances their counting tasks: restored from
    # the changelog when it is within acceptable.recovery.lag (10,000), or else warmed up first
    # (KIP-441) and handed over once caught up.
    for a in more:
        wait_until(lambda: re.search(r"task 1_\d assigned", a.log_path.read_text()), 120,
                   message=f"{a.log_path.name}: a counting task")
    _produce(broker, lines[20_000:40_000])
    out.read_until(_truth(lines[:40_000]))
    for a in more:
        a.stop()
    _produce(broker, lines[40_000:])
    out.read_until(_truth(lines))
    first.stop()
    assert not out.backwards, f"committed counts went backwards: {out.backwards[:5]}"
    out.close()
    for name in ("two", "three"):
        log = (tmp_path / f"{name}.log").read_text()
        taken = re.findall(r"task (1_\d) assigned", log)
        assert taken, f"{name} never took a counting task"
        # Its state came from somewhere: a restoration, or a warm-up of that very task first.
        for task in taken:
            warmed = log.find(f"standby task {task} opened")
            assert re.search(r"restored [1-9]\d* records", log) or (
                0 <= warmed < log.find(f"task {task} assigned")), f"{name}: {task} from nothing"
    # Sticky: of its 12 tasks the first instance gave away only the 8 the newcomers took (a third
    # each) and kept 4 that never stopped; scaling in gave it back exactly those 8, each once.
    moved = set()
    for name in ("two", "three"):
        moved |= set(re.findall(r"task (\d_\d) assigned", (tmp_path / f"{name}.log").read_text()))
    log = (tmp_path / "one.log").read_text().split("to PENDING_SHUTDOWN")[0]
    assigned = re.findall(r"task (\d_\d) assigned", log)
    revoked = re.findall(r"task (\d_\d) revoked", log)
    assert len(moved) == 8, moved
    assert sorted(revoked) == sorted(moved), (revoked, moved)
    assert len(assigned) == 12 + 8 and set(assigned[12:]) == moved, assigned


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_broker_going_away_and_back(broker, tmp_path, guarantee):
    rng = random.Random(7)
    lines = _lines(rng, 40_000)
    out = Output(broker, isolation="read_committed" if guarantee == "exactly_once_v2" else "read_uncommitted")
    app = App(broker, tmp_path, "g", guarantee=guarantee).start()
    _produce(broker, lines[:20_000])
    out.read_until(_truth(lines[:20_000]))
    broker.stop()
    time.sleep(3)  # the application sees no broker for a while
    broker.start()
    _produce(broker, lines[20_000:])
    out.read_until(_truth(lines), timeout=180)
    assert app.proc.poll() is None, "the application died while the broker was away"
    app.stop()
    out.close()


def test_static_membership_gives_a_restarted_instance_its_tasks_back(broker, tmp_path):
    """group.instance.id (KIP-345): an instance killed -9 and started again within the session
    timeout rejoins as the same static member, gets the same tasks and recovers them from its
    local state, not from the whole changelog."""
    rng = random.Random(45)
    lines = _lines(rng, 40_000)
    out = Output(broker)

    def app(name, n):
        return App(broker, tmp_path, f"{name}{n}", state=name,
                   extra=("--config", f"group.instance.id=wc-{name}")).start()

    a, b = app("a", 1), app("b", 1)
    _produce(broker, lines[:20_000])
    out.read_until(_truth(lines[:20_000]))
    a.kill()
    a = app("a", 2)
    _produce(broker, lines[20_000:])
    out.read_until(_truth(lines), at_least=True)
    a.stop()
    b.stop()
    out.close()

    def last_tasks(log):
        """The tasks of the instance's last assignment."""
        return set(re.findall(r"task (\d_\d) assigned", log.split("to REBALANCING")[-1]))

    first, second = (tmp_path / "a1.log").read_text(), (tmp_path / "a2.log").read_text()
    assert last_tasks(first) and last_tasks(second) == last_tasks(first), (last_tasks(first), last_tasks(second))
    # The other instance never rebalanced: the static member's return changed nothing for it.
    assert (tmp_path / "b1.log").read_text().count("to REBALANCING") == 1
    restored = sum(int(n) for n in re.findall(r"restored (\d+) records", second))
    changelog = sum(ck.watermarks(broker.bootstrap, "wc-counts-store-changelog", p)[1] for p in range(PARTITIONS))
    assert restored < changelog / 2, (restored, changelog)
